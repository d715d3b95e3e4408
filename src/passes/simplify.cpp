// Constant folding and algebraic simplification.
#include "ingot/passes/simplify.hpp"

#include <bit>
#include <string>
#include <utility>

#include "ingot/scalar_eval.hpp"

namespace ingot::passes {

namespace {

using ir::ExprId;
using ir::Node;
using ir::Op;

class Simplifier {
 public:
  explicit Simplifier(const ir::Kernel& in) : in_(in) {}

  ir::Kernel run() {
    out_.name = in_.name;
    out_.bounds = in_.bounds;
    out_.vars = in_.vars;
    out_.shared = in_.shared;
    map_.assign(in_.exprs.size(), ir::kNoExpr);
    let_value_.assign(in_.vars.size(), ir::kNoExpr);
    find_lets(in_.body);
    for (ExprId id = 0; id < in_.exprs.size(); ++id) map_[id] = rebuild(in_.exprs[id]);
    out_.params = in_.params;
    for (auto& p : out_.params) {
      if (p.extent != ir::kNoExpr) p.extent = map_[p.extent];
    }
    for (ExprId e : in_.preconditions) out_.preconditions.push_back(map_[e]);
    out_.body = block(in_.body);
    ir::renumber(out_);
    return std::move(out_);
  }

 private:
  [[nodiscard]] const Node& n(ExprId e) const { return out_.exprs[e]; }
  [[nodiscard]] bool is_const(ExprId e) const { return n(e).op == Op::Const; }
  [[nodiscard]] bool const_is(ExprId e, double v) const {
    return is_const(e) && !is_float(n(e).type) && ir::int_of_bits(n(e).type, n(e).imm) == static_cast<std::int64_t>(v);
  }
  [[nodiscard]] bool f32_bits_are(ExprId e, float v) const {
    return is_const(e) && n(e).type == DType::f32 && n(e).imm == std::bit_cast<std::uint32_t>(v);
  }
  [[nodiscard]] bool is_zero(ExprId e) const { return const_is(e, 0); }
  [[nodiscard]] bool is_one(ExprId e) const { return const_is(e, 1) || f32_bits_are(e, 1.0f); }

  ExprId constant(DType t, std::uint64_t bits) { return out_.exprs.constant(t, bits); }

  ExprId rebuild(const Node& old) {
    Node m = old;
    if (m.a != ir::kNoExpr) m.a = map_[m.a];
    if (m.b != ir::kNoExpr) m.b = map_[m.b];
    if (m.c != ir::kNoExpr) m.c = map_[m.c];
    const auto& info = ir::op_info(m.op);
    // An immutable variable bound to a constant is that constant (its value node precedes every
    // read of the variable in the arena, so it is already rebuilt).
    if (m.op == Op::VarRef && m.imm < let_value_.size() && let_value_[m.imm] != ir::kNoExpr &&
        map_[let_value_[m.imm]] != ir::kNoExpr && is_const(map_[let_value_[m.imm]])) {
      return map_[let_value_[m.imm]];
    }
    if (info.arity == 0 || m.op == Op::Load) return out_.exprs.make(m);

    // constant folding
    bool all_const = true;
    for (ExprId o : {m.a, m.b, m.c}) {
      if (o != ir::kNoExpr && !is_const(o)) all_const = false;
    }
    if (all_const) {
      std::string err;
      const auto v = ir::eval_op(m.op, m.type, n(m.a).type, n(m.a).imm, m.b != ir::kNoExpr ? n(m.b).imm : 0,
                                 m.c != ir::kNoExpr ? n(m.c).imm : 0, &err);
      if (v) return constant(m.type, *v);
      return out_.exprs.make(m);  // a run-time error stays a run-time error
    }
    const bool integer = is_integer(m.type);
    const bool unsigned_cmp = m.a != ir::kNoExpr && (n(m.a).type == DType::u32);
    switch (m.op) {
      case Op::Add:
        if (integer && is_zero(m.b)) return m.a;
        if (integer && is_zero(m.a)) return m.b;
        if (f32_bits_are(m.b, -0.0f)) return m.a;
        if (f32_bits_are(m.a, -0.0f)) return m.b;
        break;
      case Op::Sub:
        if (integer && is_zero(m.b)) return m.a;
        if (integer && m.a == m.b) return constant(m.type, 0);
        if (f32_bits_are(m.b, 0.0f)) return m.a;
        break;
      case Op::Mul:
        if (is_one(m.b)) return m.a;
        if (is_one(m.a)) return m.b;
        if (integer && (is_zero(m.a) || is_zero(m.b))) return constant(m.type, 0);
        break;
      case Op::Div:
        if (is_one(m.b)) return m.a;
        break;
      case Op::Mod:
        if (integer && is_one(m.b)) return constant(m.type, 0);
        break;
      case Op::Min:
      case Op::Max:
        if (m.a == m.b) return m.a;
        break;
      case Op::BitAnd:
        if (is_zero(m.a) || is_zero(m.b)) return constant(m.type, 0);
        if (m.a == m.b) return m.a;
        break;
      case Op::BitXor:
        if (m.a == m.b) return constant(m.type, 0);
        [[fallthrough]];
      case Op::BitOr:
        if (is_zero(m.b)) return m.a;
        if (is_zero(m.a)) return m.b;
        break;
      case Op::Shl:
      case Op::Shr:
        if (is_zero(m.b)) return m.a;
        break;
      case Op::Lt:
        if (unsigned_cmp && is_zero(m.b)) return constant(DType::boolean, 0);
        if (integer_operands(m) && m.a == m.b) return constant(DType::boolean, 0);
        break;
      case Op::Ge:
        if (unsigned_cmp && is_zero(m.b)) return constant(DType::boolean, 1);
        if (integer_operands(m) && m.a == m.b) return constant(DType::boolean, 1);
        break;
      case Op::Eq:
      case Op::Le:
        if (integer_operands(m) && m.a == m.b) return constant(DType::boolean, 1);
        break;
      case Op::Ne:
      case Op::Gt:
        if (integer_operands(m) && m.a == m.b) return constant(DType::boolean, 0);
        break;
      case Op::And:
        if (const_is(m.a, 1)) return m.b;
        if (const_is(m.b, 1)) return m.a;
        if (const_is(m.a, 0) || const_is(m.b, 0)) return constant(DType::boolean, 0);
        if (m.a == m.b) return m.a;
        break;
      case Op::Or:
        if (const_is(m.a, 0)) return m.b;
        if (const_is(m.b, 0)) return m.a;
        if (const_is(m.a, 1) || const_is(m.b, 1)) return constant(DType::boolean, 1);
        if (m.a == m.b) return m.a;
        break;
      case Op::Not:
        if (n(m.a).op == Op::Not) return n(m.a).a;
        break;
      case Op::Select:
        if (is_const(m.a)) return (n(m.a).imm & 1u) ? m.b : m.c;
        if (m.b == m.c) return m.b;
        if (const ExprId narrowed = select_before_widening(m); narrowed != ir::kNoExpr) return narrowed;
        break;
      case Op::Cast:
        if (n(m.a).type == m.type) return m.a;
        break;
      default: break;
    }
    return out_.exprs.make(m);
  }

  // select(c, cast<f32>(x), +0.0f) with x an f16/bf16 value (either arm order) is
  // cast<f32>(select(c, x, +0)): +0 widens to +0.0f, so the value is the same for every x, NaN
  // included. The select then picks raw 16-bit values and the conversion is unconditional: a
  // backend whose conversion is an instruction the compiler will not speculate (CUDA f16: inline
  // PTX) otherwise branches around it, and sinks the element's load into the branch with it.
  ExprId select_before_widening(const Node& m) {
    if (m.type != DType::f32) return ir::kNoExpr;
    const auto widened16 = [&](ExprId x) { return n(x).op == Op::Cast && is_16bit_float(n(n(x).a).type); };
    ExprId cast = ir::kNoExpr;
    bool cast_first = true;
    if (widened16(m.b) && f32_bits_are(m.c, 0.0f)) {
      cast = m.b;
    } else if (widened16(m.c) && f32_bits_are(m.b, 0.0f)) {
      cast = m.c;
      cast_first = false;
    } else {
      return ir::kNoExpr;
    }
    Node widen = n(cast);
    const ExprId x = widen.a;
    const DType t = n(x).type;
    const ExprId zero = constant(t, 0);
    widen.a = out_.exprs.make({Op::Select, t, m.a, cast_first ? x : zero, cast_first ? zero : x, 0});
    return out_.exprs.make(widen);
  }

  [[nodiscard]] bool integer_operands(const Node& m) const {
    return is_integer(n(m.a).type) || n(m.a).type == DType::boolean;
  }

  ExprId e(ExprId old) const { return old == ir::kNoExpr ? old : map_[old]; }

  ir::Block block(const ir::Block& b) {
    ir::Block out;
    for (const ir::Stmt& s : b) {
      ir::Stmt t = s;
      ir::for_each_operand(t, [&](ExprId& x) { x = e(x); });
      t.body.clear();
      t.else_body.clear();
      switch (s.kind) {
        case ir::StmtKind::If:
          if (is_const(t.a)) {
            ir::Stmt blk;
            blk.kind = ir::StmtKind::Block;
            blk.body = block((n(t.a).imm & 1u) ? s.body : s.else_body);
            if (!blk.body.empty()) out.push_back(std::move(blk));
            continue;
          }
          t.body = block(s.body);
          t.else_body = block(s.else_body);
          break;
        case ir::StmtKind::For: {
          if (is_const(t.a) && is_const(t.b)) {
            std::string err;
            const auto lt = ir::eval_op(Op::Lt, DType::boolean, n(t.a).type, n(t.a).imm, n(t.b).imm, 0, &err);
            if (lt && !(*lt & 1u)) continue;  // empty range
          }
          t.body = block(s.body);
          break;
        }
        case ir::StmtKind::Block: t.body = block(s.body); break;
        default: break;
      }
      out.push_back(std::move(t));
    }
    return out;
  }

  // The value of every immutable variable declared by a Let.
  void find_lets(const ir::Block& b) {
    for (const ir::Stmt& st : b) {
      if (st.kind == ir::StmtKind::Let && st.var < in_.vars.size() && !in_.vars[st.var].is_mutable &&
          st.a < in_.exprs.size()) {
        let_value_[st.var] = st.a;
      }
      find_lets(st.body);
      find_lets(st.else_body);
    }
  }

  const ir::Kernel& in_;
  ir::Kernel out_;
  std::vector<ExprId> map_;
  std::vector<ExprId> let_value_;
};

}  // namespace

ir::Kernel simplify(const ir::Kernel& k) { return Simplifier(k).run(); }

}  // namespace ingot::passes
