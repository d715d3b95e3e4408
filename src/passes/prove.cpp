// The proof pass: every access in range, no index arithmetic wrapping (see prove.hpp).
//
// One walk over the statement tree keeps, for the current point: the value of every variable as
// a Z3 bit-vector term (bool as a Z3 Bool), its interval, and the path condition. Each access and
// each piece of index arithmetic becomes an obligation; interval arithmetic proves what it can
// without a solver, and the rest is asked of Z3 as "path and not obligation" in QF_BV.
#include "ingot/passes/prove.hpp"

#include <z3++.h>

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "ingot/ir_print.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::passes {

namespace {

using ir::ExprId;
using ir::Node;
using ir::Op;
using ir::Stmt;
using ir::StmtKind;
using ir::VarId;
using i128 = __int128;

// Width of the exact (never wrapping) arithmetic of extents and bounds.
constexpr unsigned kExact = 128;
// Bounds a witness keeps to where it can: free integer scalars (as unsigned bits) and work-groups per axis.
constexpr std::uint64_t kSmallScalar = 4096, kSmallGroups = 64;
// Each query goes first to one incremental solver, fast on the linear index arithmetic of fixed sizes (the library's
// cases); what it cannot settle in this time goes to a solver of its own, whose QF_BV preprocessing copes better
// with products of unknowns, with the full timeout.
constexpr unsigned kIncrementalMs = 1000;

// A closed interval of exact integer values.
struct Interval {
  i128 lo = 0, hi = 0;
};

i128 type_min(DType t) {
  if (t == DType::boolean) return 0;
  return is_signed_integer(t) ? -(static_cast<i128>(1) << (dtype_bits(t) - 1)) : 0;
}
i128 type_max(DType t) {
  if (t == DType::boolean) return 1;
  return is_signed_integer(t) ? (static_cast<i128>(1) << (dtype_bits(t) - 1)) - 1
                              : (static_cast<i128>(1) << dtype_bits(t)) - 1;
}
Interval full(DType t) { return {type_min(t), type_max(t)}; }
// The range of an unknown value of type t (floats: their bits, never an index).
Interval unknown(DType t) { return full(is_integer(t) || t == DType::boolean ? t : DType::u32); }
bool fits(const Interval& v, DType t) { return v.lo >= type_min(t) && v.hi <= type_max(t); }

bool is_arith_int(const Node& n) { return is_integer(n.type); }

class Prover {
 public:
  Prover(const ir::Kernel& k, const ProveOptions& o) : k_(k), o_(o) {}

  ProofReport run() {
    setup_launch();
    find_index_values();
    if (!launchable()) return std::move(report_);
    block(k_.body);
    return std::move(report_);
  }

 private:
  // ------------------------------------------------------------------ the launch and scalars
  void setup_launch() {
    for (int a = 0; a < 3; ++a) {
      if (o_.group_size[a] == 0) throw std::invalid_argument("prove: work-group size 0 on axis " + std::to_string(a));
      if (o_.groups && (*o_.groups)[a] == 0)
        throw std::invalid_argument("prove: 0 work-groups on axis " + std::to_string(a));
    }
    for (const auto& [name, bits] : o_.scalars) {
      const auto it = std::find_if(k_.params.begin(), k_.params.end(), [&](const ir::Param& p) {
        return p.name == name && p.kind == ir::ParamKind::Scalar;
      });
      if (it == k_.params.end()) {
        throw std::invalid_argument("prove: kernel '" + k_.name + "' has no scalar parameter '" + name + "'");
      }
      (void)bits;
    }
    for (int a = 0; a < 3; ++a) {
      gs_.push_back(ctx_.bv_val(o_.group_size[a], 32));
      gid_.push_back(ctx_.bv_const(("group_id" + std::to_string(a)).c_str(), 32));
      lid_.push_back(ctx_.bv_const(("local_id" + std::to_string(a)).c_str(), 32));
      if (o_.groups) {
        ng_.push_back(ctx_.bv_val((*o_.groups)[a], 32));
        ng_iv_[a] = {(*o_.groups)[a], (*o_.groups)[a]};
      } else {
        ng_.push_back(ctx_.bv_const(("groups" + std::to_string(a)).c_str(), 32));
        base_.push_back(z3::ugt(ng_[a], ctx_.bv_val(0, 32)));
        small_.push_back(z3::ule(ng_[a], ctx_.bv_val(kSmallGroups, 32)));
        base_.push_back(z3::ule(z3::zext(ng_[a], 32) * ctx_.bv_val(o_.group_size[a], 64),
                                ctx_.bv_val(static_cast<std::uint64_t>(1) << 32, 64)));
        ng_iv_[a] = {1, (static_cast<i128>(1) << 32) / o_.group_size[a]};
      }
      base_.push_back(z3::ult(gid_[a], ng_[a]));
      base_.push_back(z3::ult(lid_[a], gs_[a]));
    }
    scalar_.assign(k_.params.size(), std::nullopt);
    scalar_iv_.assign(k_.params.size(), Interval{});
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const ir::Param& p = k_.params[i];
      if (p.kind != ir::ParamKind::Scalar) continue;
      const auto fixed = o_.scalars.find(p.name);
      if (p.type == DType::boolean) {
        scalar_[i] = fixed != o_.scalars.end() ? ctx_.bool_val(fixed->second != 0) : ctx_.bool_const(p.name.c_str());
        scalar_iv_[i] =
            fixed != o_.scalars.end() ? Interval{i128(fixed->second != 0), i128(fixed->second != 0)} : full(p.type);
        continue;
      }
      const unsigned bits = static_cast<unsigned>(dtype_bits(p.type));
      if (fixed != o_.scalars.end()) {
        scalar_[i] = ctx_.bv_val(static_cast<std::uint64_t>(fixed->second), bits);
        const i128 v = is_integer(p.type) ? ir::int_of_bits(p.type, fixed->second) : 0;
        scalar_iv_[i] = is_integer(p.type) ? Interval{v, v} : full(DType::u32);
      } else {
        scalar_[i] = ctx_.bv_const(("scalar_" + p.name).c_str(), bits);
        if (is_integer(p.type)) small_.push_back(z3::ule(*scalar_[i], ctx_.bv_val(kSmallScalar, bits)));
        scalar_iv_[i] = is_integer(p.type) ? full(p.type) : full(DType::u32);
      }
    }
    // Preconditions hold on every launch (check_args refuses the others), and so does every buffer's extent: exact
    // arithmetic gives a value of its own type, with no division by zero.
    for (ExprId e : k_.preconditions) base_.push_back(value(e));
    extent_.assign(k_.params.size(), std::nullopt);
    extent_iv_.assign(k_.params.size(), Interval{});
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const ir::Param& p = k_.params[i];
      if (!ir::is_buffer(p.kind) || p.extent == ir::kNoExpr) continue;
      const z3::expr x = exact(p.extent);
      const DType t = k_.exprs[p.extent].type;
      base_.push_back(z3::sge(x, wide(type_min(t))) && z3::sle(x, wide(type_max(t))));
      extent_[i] = x;
      extent_iv_[i] = fixed_extent(p.extent);
    }
  }

  z3::expr wide(i128 v) {
    const auto u = static_cast<unsigned __int128>(v);
    const z3::expr hi = ctx_.bv_val(static_cast<std::uint64_t>(u >> 64), 64);
    const z3::expr lo = ctx_.bv_val(static_cast<std::uint64_t>(u), 64);
    return z3::concat(hi, lo);
  }
  z3::expr widen(const z3::expr& e, DType t) {
    const unsigned bits = e.get_sort().bv_size();
    return is_signed_integer(t) ? z3::sext(e, kExact - bits) : z3::zext(e, kExact - bits);
  }

  // Extents as check_args evaluates them: exactly, in 128 bits.
  z3::expr exact(ExprId e) {
    const Node& n = k_.exprs[e];
    switch (n.op) {
      case Op::Const: return wide(ir::int_of_bits(n.type, n.imm));
      case Op::ParamRef: return widen(*scalar_[n.imm], n.type);
      case Op::Cast: return exact(n.a);
      case Op::Add: return exact(n.a) + exact(n.b);
      case Op::Sub: return exact(n.a) - exact(n.b);
      case Op::Mul: return exact(n.a) * exact(n.b);
      case Op::Div:
      case Op::Mod: {
        const z3::expr d = exact(n.b);
        base_.push_back(d != wide(0));
        return n.op == Op::Div ? z3::expr(ctx_, Z3_mk_bvsdiv(ctx_, exact(n.a), d)) : z3::srem(exact(n.a), d);
      }
      case Op::Min: return z3::ite(z3::slt(exact(n.a), exact(n.b)), exact(n.a), exact(n.b));
      case Op::Max: return z3::ite(z3::sgt(exact(n.a), exact(n.b)), exact(n.a), exact(n.b));
      case Op::Select: return z3::ite(value(n.a), exact(n.b), exact(n.c));
      default: break;
    }
    throw std::invalid_argument("prove: extent uses op '" + std::string(ir::op_info(n.op).name) + "'");
  }

  // ------------------------------------------------------------------ which values are indexes
  // Index values: the integer expressions that compute an access's index, through the variables
  // they read (their lets, assignments and loop bounds), never through a comparison or a Select's
  // condition (a guard computed with wrap-around is evaluated faithfully; it does not move an index).
  void find_index_values() {
    index_var_.assign(k_.vars.size(), false);
    std::unordered_map<VarId, std::vector<ExprId>> defs;
    std::vector<ExprId> roots;
    std::function<void(const ir::Block&)> scan = [&](const ir::Block& b) {
      for (const Stmt& s : b) {
        switch (s.kind) {
          case StmtKind::Let:
            if (k_.exprs[s.a].op == Op::Load) {
              roots.push_back(k_.exprs[s.a].a);
            } else {
              defs[s.var].push_back(s.a);
              if (!k_.vars[s.var].is_mutable && !depends_on_mutable(s.a)) let_def_.emplace(s.var, s.a);
            }
            break;
          case StmtKind::Assign: defs[s.var].push_back(s.a); break;
          case StmtKind::For: defs[s.var].insert(defs[s.var].end(), {s.a, s.b, s.c}); break;
          case StmtKind::Store:
          case StmtKind::Atomic:
          case StmtKind::LoadVec:
          case StmtKind::StoreVec:
          case StmtKind::LoadMatrix: roots.push_back(s.a); break;
          case StmtKind::CopyAsync:
            roots.push_back(s.a);
            roots.push_back(s.b);
            break;
          default: break;
        }
        scan(s.body);
        scan(s.else_body);
      }
    };
    scan(k_.body);
    std::vector<char> seen(k_.exprs.size(), 0);
    while (!roots.empty()) {
      const ExprId e = roots.back();
      roots.pop_back();
      if (seen[e]) continue;
      seen[e] = 1;
      const Node& n = k_.exprs[e];
      if (!is_arith_int(n)) continue;
      if (n.op == Op::VarRef) {
        if (!index_var_[n.imm]) {
          index_var_[n.imm] = true;
          for (ExprId d : defs[static_cast<VarId>(n.imm)]) roots.push_back(d);
        }
        continue;
      }
      if (n.op == Op::Select) {
        roots.push_back(n.b);
        roots.push_back(n.c);
        continue;
      }
      for (ExprId o : {n.a, n.b, n.c})
        if (o != ir::kNoExpr) roots.push_back(o);
    }
  }

  // ------------------------------------------------------------------ values
  z3::expr fresh(DType t, const std::string& hint) {
    const std::string name = hint + "!" + std::to_string(fresh_count_++);
    if (t == DType::boolean) return ctx_.bool_const(name.c_str());
    return ctx_.bv_const(name.c_str(), static_cast<unsigned>(dtype_bits(t)));
  }

  bool depends_on_mutable(ExprId e) {
    if (mutable_dep_.size() < k_.exprs.size()) mutable_dep_.resize(k_.exprs.size(), -1);
    if (mutable_dep_[e] >= 0) return mutable_dep_[e] != 0;
    const Node& n = k_.exprs[e];
    bool r = n.op == Op::VarRef && k_.vars[n.imm].is_mutable;
    for (ExprId o : {n.a, n.b, n.c})
      if (!r && o != ir::kNoExpr && n.op != Op::Load) r = depends_on_mutable(o);
    mutable_dep_[e] = r ? 1 : 0;
    return r;
  }

  z3::expr builtin(const Node& n) {
    const int a = static_cast<int>(n.imm);
    z3::expr v = gid_[a];
    if (n.op == Op::ProgramId && dtype_bits(n.type) > 32) {  // program_id<i64>: exact in 64 bits for any launch
      const auto bits = static_cast<unsigned>(dtype_bits(n.type) - 32);
      return z3::zext(gid_[a], bits) * z3::zext(gs_[a], bits) + z3::zext(lid_[a], bits);
    }
    switch (n.op) {
      // A u32 program id: groups * size <= 2^32 on its axis (check_launch_bounds refuses larger launches).
      case Op::ProgramId: v = gid_[a] * gs_[a] + lid_[a]; break;
      case Op::LocalId: v = lid_[a]; break;
      case Op::GroupId: v = gid_[a]; break;
      case Op::GroupSize: v = gs_[a]; break;
      default: v = ng_[a]; break;
    }
    const unsigned bits = static_cast<unsigned>(dtype_bits(n.type));
    return bits > 32 ? z3::zext(v, bits - 32) : v;
  }

  // The value of an expression at the current point, as a Z3 term.
  z3::expr value(ExprId e) {
    const bool cacheable = !depends_on_mutable(e);
    if (cacheable) {
      const auto it = cache_.find(e);
      if (it != cache_.end()) return it->second;
    }
    z3::expr r = compute(e);
    if (cacheable) cache_.emplace(e, r);
    return r;
  }

  z3::expr compute(ExprId e) {
    const Node& n = k_.exprs[e];
    const DType t = n.type;
    if (is_float(t) && n.op != Op::Select && n.op != Op::VarRef && n.op != Op::ParamRef)
      return fresh(t, "float");  // float values are unknowns; only integer arithmetic moves indexes
    switch (n.op) {
      case Op::Const:
        if (t == DType::boolean) return ctx_.bool_val(n.imm != 0);
        return ctx_.bv_val(static_cast<std::uint64_t>(n.imm), static_cast<unsigned>(dtype_bits(t)));
      case Op::ParamRef: return *scalar_[n.imm];
      case Op::VarRef: {
        const auto it = var_.find(static_cast<VarId>(n.imm));
        if (it == var_.end()) throw std::logic_error("prove: variable read before its definition");
        return it->second;
      }
      case Op::ProgramId:
      case Op::LocalId:
      case Op::GroupId:
      case Op::GroupSize:
      case Op::NumGroups: return builtin(n);
      case Op::Load: return fresh(t, "load");
      default: break;
    }
    const DType ot = n.a != ir::kNoExpr ? k_.exprs[n.a].type : t;
    const bool sgn = is_signed_integer(ot);
    if (ir::op_info(n.op).rule == ir::TypeRule::Compare) {
      if (is_float(ot)) return fresh(DType::boolean, "fcmp");
      const z3::expr a = value(n.a), b = value(n.b);
      switch (n.op) {
        case Op::Lt: return sgn ? z3::slt(a, b) : z3::ult(a, b);
        case Op::Le: return sgn ? z3::sle(a, b) : z3::ule(a, b);
        case Op::Gt: return sgn ? z3::sgt(a, b) : z3::ugt(a, b);
        case Op::Ge: return sgn ? z3::sge(a, b) : z3::uge(a, b);
        case Op::Eq: return a == b;
        default: return a != b;
      }
    }
    switch (n.op) {
      case Op::And: return value(n.a) && value(n.b);
      case Op::Or: return value(n.a) || value(n.b);
      case Op::Not: return !value(n.a);
      case Op::Select: return z3::ite(value(n.a), value(n.b), value(n.c));
      case Op::Cast: return cast(value(n.a), ot, t);
      case Op::Bitcast:
        if (is_integer(ot) && is_integer(t)) return value(n.a);
        return fresh(t, "bitcast");
      default: break;
    }
    if (!is_integer(t)) return fresh(t, "value");
    const z3::expr a = value(n.a);
    switch (n.op) {
      case Op::Neg: return -a;
      case Op::Abs: return z3::ite(z3::slt(a, ctx_.bv_val(0, a.get_sort().bv_size())), -a, a);
      case Op::BitNot: return ~a;
      default: break;
    }
    const z3::expr b = value(n.b);
    switch (n.op) {
      case Op::Add: return a + b;
      case Op::Sub: return a - b;
      case Op::Mul: return a * b;
      case Op::Div: return sgn ? z3::expr(ctx_, Z3_mk_bvsdiv(ctx_, a, b)) : z3::udiv(a, b);
      case Op::Mod: return sgn ? z3::srem(a, b) : z3::urem(a, b);
      case Op::Min: return z3::ite(sgn ? z3::slt(a, b) : z3::ult(a, b), a, b);
      case Op::Max: return z3::ite(sgn ? z3::sgt(a, b) : z3::ugt(a, b), a, b);
      case Op::BitAnd: return a & b;
      case Op::BitOr: return a | b;
      case Op::BitXor: return a ^ b;
      case Op::Shl: return z3::shl(a, b);
      case Op::Shr: return sgn ? z3::ashr(a, b) : z3::lshr(a, b);
      default: break;
    }
    return fresh(t, "value");
  }

  z3::expr cast(const z3::expr& v, DType from, DType to) {
    if (to == DType::boolean) {
      if (from == DType::boolean) return v;
      if (is_integer(from)) return v != ctx_.bv_val(0, v.get_sort().bv_size());
      return fresh(to, "cast");
    }
    if (!is_integer(to)) return fresh(to, "cast");
    const unsigned bits = static_cast<unsigned>(dtype_bits(to));
    if (from == DType::boolean) return z3::ite(v, ctx_.bv_val(1, bits), ctx_.bv_val(0, bits));
    if (!is_integer(from)) return fresh(to, "cast");
    const unsigned fb = v.get_sort().bv_size();
    if (fb == bits) return v;
    if (fb > bits) return v.extract(bits - 1, 0);
    return is_signed_integer(from) ? z3::sext(v, bits - fb) : z3::zext(v, bits - fb);
  }

  // ------------------------------------------------------------------ intervals
  Interval interval(ExprId e) {
    const Node& n = k_.exprs[e];
    if (!is_integer(n.type)) return full(n.type == DType::boolean ? DType::boolean : DType::u32);
    const bool cacheable = !depends_on_mutable(e);
    if (cacheable) {
      const auto it = iv_cache_.find(e);
      if (it != iv_cache_.end()) return it->second;
    }
    Interval r = exact_interval(e);
    if (!fits(r, n.type)) r = full(n.type);
    if (cacheable) iv_cache_.emplace(e, r);
    return r;
  }

  // The exact (unwrapped) range of an integer node, from its operands' ranges.
  Interval exact_interval(ExprId e) {
    const Node& n = k_.exprs[e];
    const DType t = n.type;
    const int ax = static_cast<int>(n.imm);
    switch (n.op) {
      case Op::Const: {
        const i128 v = ir::int_of_bits(t, n.imm);
        return {v, v};
      }
      case Op::ParamRef: return scalar_iv_[n.imm];
      case Op::VarRef: {
        const auto it = var_iv_.find(static_cast<VarId>(n.imm));
        return it == var_iv_.end() ? full(t) : it->second;
      }
      case Op::LocalId: return {0, o_.group_size[ax] - 1};
      case Op::GroupSize: return {o_.group_size[ax], o_.group_size[ax]};
      case Op::GroupId: return {0, ng_iv_[ax].hi - 1};
      case Op::NumGroups: return ng_iv_[ax];
      case Op::ProgramId: return {0, ng_iv_[ax].hi * o_.group_size[ax] - 1};
      default: break;
    }
    const auto opd = [&](ExprId o) { return interval(o); };
    switch (n.op) {
      case Op::Add: {
        const Interval a = opd(n.a), b = opd(n.b);
        return {a.lo + b.lo, a.hi + b.hi};
      }
      case Op::Sub: {
        const Interval a = opd(n.a), b = opd(n.b);
        return {a.lo - b.hi, a.hi - b.lo};
      }
      case Op::Mul: {
        const Interval a = opd(n.a), b = opd(n.b);
        const i128 c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
        return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      }
      case Op::Div: {
        const Interval a = opd(n.a), b = opd(n.b);
        if (b.lo > 0 && a.lo >= 0) return {a.lo / b.hi, a.hi / b.lo};
        return full(t);
      }
      case Op::Mod: {
        const Interval a = opd(n.a), b = opd(n.b);
        if (b.lo > 0 && a.lo >= 0) return {0, std::min(a.hi, b.hi - 1)};
        return full(t);
      }
      case Op::Min: {
        const Interval a = opd(n.a), b = opd(n.b);
        return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      }
      case Op::Max: {
        const Interval a = opd(n.a), b = opd(n.b);
        return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      }
      case Op::Select: {
        const Interval b = refine(n.b, n.a, true, opd(n.b)), c = refine(n.c, n.a, false, opd(n.c));
        return {std::min(b.lo, c.lo), std::max(b.hi, c.hi)};
      }
      case Op::BitAnd: {
        const Interval a = opd(n.a), b = opd(n.b);
        if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
        return full(t);
      }
      case Op::Shr: {
        const Interval a = opd(n.a), b = opd(n.b);
        if (a.lo >= 0 && b.lo == b.hi && b.lo >= 0 && b.lo < dtype_bits(t)) return {a.lo >> b.lo, a.hi >> b.lo};
        return full(t);
      }
      case Op::Shl: {
        const Interval a = opd(n.a), b = opd(n.b);
        if (a.lo >= 0 && b.lo == b.hi && b.lo >= 0 && b.lo < dtype_bits(t)) return {a.lo << b.lo, a.hi << b.lo};
        return {0, type_max(t) + 1};  // outside the type: not proven not to wrap
      }
      case Op::Cast: {
        const DType from = k_.exprs[n.a].type;
        if (from == DType::boolean) return {0, 1};
        if (is_integer(from)) return opd(n.a);
        return full(t);
      }
      default: break;
    }
    return full(t);
  }

  // The range of x where condition `cond` is `holds`, from the comparisons of x it makes (x < b, x <= b, b > x, ...
  // and their conjunctions): select(i < n, i, 0) is below n, as is i under if (i < n).
  Interval refine(ExprId x, ExprId cond, bool holds, Interval iv) {
    const Node& c = k_.exprs[cond];
    if (c.op == Op::VarRef) {  // a named condition: `let ok = p < 5; select(ok, p, 0)`
      const auto d = let_def_.find(static_cast<VarId>(c.imm));
      return d == let_def_.end() ? iv : refine(x, d->second, holds, iv);
    }
    if (c.op == Op::Not) return refine(x, c.a, !holds, iv);
    if (c.op == Op::And && holds) return refine(x, c.b, true, refine(x, c.a, true, iv));
    if (c.op == Op::Or && !holds) return refine(x, c.b, false, refine(x, c.a, false, iv));
    if (ir::op_info(c.op).rule != ir::TypeRule::Compare || !is_integer(k_.exprs[c.a].type)) return iv;
    const Node& xn = k_.exprs[x];
    if (xn.op == Op::Cast && is_integer(k_.exprs[xn.a].type) && c.a != x && c.b != x) {
      // x converts y, which the condition compares (select(p >= 0, cast<u32>(p), 0u)): where y's range fits x's
      // type the conversion keeps the value.
      const Interval y = refine(xn.a, cond, holds, interval(xn.a));
      if (fits(y, xn.type)) {
        iv.lo = std::max(iv.lo, y.lo);
        iv.hi = std::min(iv.hi, y.hi);
      }
      return iv;
    }
    Op op = c.op;
    ExprId other = c.b;
    if (c.b == x && c.a != x) {  // b OP x: the mirrored comparison x OP' b
      other = c.a;
      op = op == Op::Lt ? Op::Gt : op == Op::Le ? Op::Ge : op == Op::Gt ? Op::Lt : op == Op::Ge ? Op::Le : op;
    } else if (c.a != x) {
      return iv;
    }
    if (!holds) {  // not (x < b) is x >= b, ...
      op = op == Op::Lt ? Op::Ge : op == Op::Le ? Op::Gt : op == Op::Gt ? Op::Le : op == Op::Ge ? Op::Lt : op;
      if (op == Op::Eq || op == Op::Ne) return iv;
    }
    if (depends_on_mutable(other)) return iv;
    const Interval o = interval(other);
    switch (op) {
      case Op::Lt: iv.hi = std::min(iv.hi, o.hi - 1); break;
      case Op::Le: iv.hi = std::min(iv.hi, o.hi); break;
      case Op::Gt: iv.lo = std::max(iv.lo, o.lo + 1); break;
      case Op::Ge: iv.lo = std::max(iv.lo, o.lo); break;
      case Op::Eq:
        iv.lo = std::max(iv.lo, o.lo);
        iv.hi = std::min(iv.hi, o.hi);
        break;
      default: break;
    }
    return iv;
  }

  // Whether any launch satisfies the base assumptions; an issue when none does.
  bool launchable() {
    ++report_.obligations;
    ++report_.smt_queries;
    z3::solver s(ctx_, "QF_BV");
    z3::params p(ctx_);
    p.set("timeout", o_.smt_timeout_ms);
    s.set(p);
    for (const auto& b : base_) s.add(b);
    const z3::check_result r = s.check();
    if (r == z3::sat) return true;
    ProofIssue is;
    is.kind = ObligationKind::Launchable;
    is.status = r == z3::unsat ? ProofStatus::Refuted : ProofStatus::Unknown;
    is.stmt = "kernel " + k_.name;
    is.expr = "preconditions and extents";
    is.detail = r == z3::unsat ? "no launch satisfies the preconditions with every extent fitting its type: every "
                                 "launch of these scalars is refused"
                               : "the solver gave no answer on whether any launch is possible";
    report_.issues.push_back(std::move(is));
    return false;
  }

  // ------------------------------------------------------------------ obligations
  // Whether the path and ~claim can hold together; fills *model when they can.
  ProofStatus ask(const z3::expr& claim, std::optional<z3::model>* model) {
    // Unrolled code asks the same question under the same guards many times. Terms stay alive in keep_, so their ids
    // are never reused for other terms.
    std::vector<unsigned> key{claim.id()};
    for (const auto& c : path_) key.push_back(c.id());
    if (proved_.count(key)) return ProofStatus::Proved;
    keep_.push_back(claim);
    for (const auto& c : path_) keep_.push_back(c);
    ++report_.smt_queries;
    // One incremental solver: the base and the enclosing guards stay asserted (and their terms bit-blasted) across
    // queries; each query is a push, the negated claim, a check and a pop.
    if (!solver_) {
      solver_.emplace(ctx_);
      z3::params p(ctx_);
      p.set("timeout", std::min(o_.smt_timeout_ms, kIncrementalMs));
      solver_->set(p);
      for (const auto& b : base_) solver_->add(b);
    }
    while (asserted_ > path_.size()) {
      solver_->pop();
      --asserted_;
    }
    // The asserted prefix may differ from the current path past a sibling If; re-assert from where they differ.
    std::size_t same = 0;
    while (same < asserted_ && z3::eq(asserted_path_[same], path_[same])) ++same;
    while (asserted_ > same) {
      solver_->pop();
      --asserted_;
    }
    asserted_path_.erase(asserted_path_.begin() + static_cast<std::ptrdiff_t>(asserted_), asserted_path_.end());
    while (asserted_ < path_.size()) {
      solver_->push();
      solver_->add(path_[asserted_]);
      asserted_path_.push_back(path_[asserted_]);
      ++asserted_;
    }
    z3::solver& s = *solver_;
    s.push();
    s.add(!claim);
    const z3::check_result r = s.check();
    if (r == z3::unsat) {
      s.pop();
      proved_.insert(std::move(key));
      return ProofStatus::Proved;
    }
    if (r != z3::sat) {
      s.pop();
      return ask_fresh(claim, model, key);
    }
    *model = s.get_model();
    // Prefer a witness that replays in moments: small free scalars and few work-groups.
    if (!small_.empty()) {
      for (const auto& c : small_) s.add(c);
      if (s.check() == z3::sat) *model = s.get_model();
    }
    s.pop();
    return ProofStatus::Refuted;
  }

  // The same question of a solver of its own, whose QF_BV preprocessing copes with products of unknowns better than
  // the incremental one's.
  ProofStatus ask_fresh(const z3::expr& claim, std::optional<z3::model>* model, std::vector<unsigned>& key) {
    z3::solver s(ctx_, "QF_BV");
    z3::params p(ctx_);
    p.set("timeout", o_.smt_timeout_ms);
    s.set(p);
    for (const auto& b : base_) s.add(b);
    for (const auto& c : path_) s.add(c);
    s.add(!claim);
    switch (s.check()) {
      case z3::unsat: proved_.insert(std::move(key)); return ProofStatus::Proved;
      case z3::sat: break;
      default: return ProofStatus::Unknown;
    }
    *model = s.get_model();
    if (!small_.empty()) {
      for (const auto& c : small_) s.add(c);
      if (s.check() == z3::sat) *model = s.get_model();
    }
    return ProofStatus::Refuted;
  }

  std::uint64_t bits_of(const z3::model& m, const z3::expr& e) {
    const z3::expr v = m.eval(e, true);
    std::uint64_t out = 0;
    if (v.is_bool()) return v.is_true() ? 1 : 0;
    if (v.is_numeral() && v.get_sort().bv_size() <= 64) v.is_numeral_u64(out);
    return out;
  }

  Witness witness(const z3::model& m) {
    Witness w;
    for (int a = 0; a < 3; ++a) {
      w.groups[a] = static_cast<std::uint32_t>(bits_of(m, ng_[a]));
      w.group_id[a] = static_cast<std::uint32_t>(bits_of(m, gid_[a]));
      w.local_id[a] = static_cast<std::uint32_t>(bits_of(m, lid_[a]));
    }
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      if (scalar_[i]) w.scalars[k_.params[i].name] = bits_of(m, *scalar_[i]);
    }
    return w;
  }

  std::string describe_witness(const Witness& w) {
    std::string s = "thread group_id (" + std::to_string(w.group_id[0]) + "," + std::to_string(w.group_id[1]) + "," +
                    std::to_string(w.group_id[2]) + ") local_id (" + std::to_string(w.local_id[0]) + "," +
                    std::to_string(w.local_id[1]) + "," + std::to_string(w.local_id[2]) + ") of a grid of " +
                    std::to_string(w.groups[0]) + "x" + std::to_string(w.groups[1]) + "x" +
                    std::to_string(w.groups[2]) + " groups";
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const auto it = w.scalars.find(k_.params[i].name);
      if (it != w.scalars.end()) s += ", " + it->first + " = " + ir::format_bits(k_.params[i].type, it->second);
    }
    return s;
  }

  // Whether an expression reads a value the walk only approximates (a mutable variable carried
  // through a loop or merged): a witness through one may not be a real execution.
  bool approximate(ExprId e) {
    const Node& n = k_.exprs[e];
    if (n.op == Op::VarRef) return approx_var_.count(static_cast<VarId>(n.imm)) != 0;
    if (n.op == Op::Load) return false;
    for (ExprId o : {n.a, n.b, n.c})
      if (o != ir::kNoExpr && approximate(o)) return true;
    return false;
  }

  void issue(ProofIssue is, ProofStatus st, const std::optional<z3::model>& m, ExprId about, const std::string& what,
             const std::function<void(Witness&, const z3::model&)>& fill) {
    is.status = st;
    if (st == ProofStatus::Refuted && m) {
      Witness w = witness(*m);
      fill(w, *m);
      is.detail = what + " for " + describe_witness(w);
      if (approximate(about)) {
        is.status = ProofStatus::Unknown;
        is.detail += " (possibly spurious: the index reads a mutable variable the proof does not track through loops)";
      }
      is.witness = w;
    } else {
      is.status = ProofStatus::Unknown;
      is.detail = what + ": the solver gave no answer within " + std::to_string(o_.smt_timeout_ms) + " ms";
    }
    report_.issues.push_back(std::move(is));
  }

  // An access of `width` elements at `index` of memory m.
  void access(const Stmt& s, ir::MemRef m, ExprId index, std::uint32_t width, bool aligned) {
    check_wrap(s, index);
    const DType it = k_.exprs[index].type;
    const std::string buffer = k_.mem_name(m);
    // Extent: the shared array's count or the buffer's declared extent (exact).
    Interval ext_iv{0, 0};
    z3::expr ext = wide(0);
    if (m.space == ir::Space::Shared) {
      const std::uint32_t c = k_.shared.at(m.id).count;
      ext_iv = {c, c};
      ext = wide(c);
    } else {
      ext = *extent_.at(m.id);
      ext_iv = extent_iv_.at(m.id);
    }
    ++report_.obligations;
    Interval iv = interval(index);
    // A guard bounds the index only if neither has changed since the If (no mutable variable in either; refine
    // checks the bound).
    if (!depends_on_mutable(index))
      for (const auto& [cond, holds] : guards_) iv = refine(index, cond, holds, iv);
    bool in_range = false;
    if (iv.lo >= 0 && iv.hi + width <= ext_iv.lo) {
      ++report_.by_intervals;
      in_range = true;
    }
    const z3::expr idx = value(index);
    const z3::expr widx = widen(idx, it);
    if (!in_range) {
      const z3::expr claim = z3::sge(widx, wide(0)) && z3::sle(widx + wide(width), ext);
      std::optional<z3::model> model;
      const ProofStatus st = ask(claim, &model);
      if (st != ProofStatus::Proved) {
        ProofIssue is;
        is.kind = ObligationKind::InRange;
        is.loc = s.loc;
        is.stmt = ir::print_stmt_line(k_, s);
        is.buffer = buffer;
        is.expr = ir::print_expr(k_, index);
        issue(std::move(is), st, model, index,
              "index " + ir::print_expr(k_, index) + (width > 1 ? " + " + std::to_string(width) : "") + " outside '" +
                  buffer + "'",
              [&](Witness& w, const z3::model& md) {
                w.index = ir::int_of_bits(it, bits_of(md, idx));
                w.extent = bits_of(md, ext.extract(63, 0));
              });
      }
    }
    if (!aligned || width <= 1) return;
    ++report_.obligations;
    if (iv.lo == iv.hi && iv.lo % width == 0) {
      ++report_.by_intervals;
      return;
    }
    const z3::expr claim = z3::urem(widx, wide(width)) == wide(0);
    std::optional<z3::model> model;
    const ProofStatus st = ask(claim, &model);
    if (st == ProofStatus::Proved) return;
    ProofIssue is;
    is.kind = ObligationKind::Aligned;
    is.loc = s.loc;
    is.stmt = ir::print_stmt_line(k_, s);
    is.buffer = buffer;
    is.expr = ir::print_expr(k_, index);
    issue(std::move(is), st, model, index, "index not a multiple of " + std::to_string(width),
          [&](Witness& w, const z3::model& md) {
            w.index = ir::int_of_bits(it, bits_of(md, idx));
            w.extent = bits_of(md, ext.extract(63, 0));
          });
  }

  // The value of an extent whose scalars are all fixed ({0, 0} otherwise: the solver decides).
  Interval fixed_extent(ExprId e) {
    std::vector<ExprId> todo{e};
    while (!todo.empty()) {
      const Node& n = k_.exprs[todo.back()];
      todo.pop_back();
      if (n.op == Op::ParamRef && scalar_iv_[n.imm].lo != scalar_iv_[n.imm].hi) return {0, 0};
      for (ExprId o : {n.a, n.b, n.c})
        if (o != ir::kNoExpr) todo.push_back(o);
    }
    const z3::expr v = exact(e).simplify();
    std::uint64_t lo = 0, hi = 1;
    if (v.extract(63, 0).simplify().is_numeral_u64(lo) && v.extract(127, 64).simplify().is_numeral_u64(hi) && hi == 0)
      return {static_cast<i128>(lo), static_cast<i128>(lo)};
    return {0, 0};
  }

  // No wrap-around in the integer arithmetic of `root` (an index value), each node under the
  // Selects that choose it.
  void check_wrap(const Stmt& s, ExprId root) {
    if (!o_.check_overflow) return;
    std::set<std::pair<ExprId, unsigned>> seen;
    wrap_walk(s, root, ctx_.bool_val(true), seen);
  }

  void wrap_walk(const Stmt& s, ExprId e, const z3::expr& guard, std::set<std::pair<ExprId, unsigned>>& seen) {
    const Node& n = k_.exprs[e];
    if (!is_integer(n.type) || n.op == Op::Load) return;
    keep_.push_back(guard);  // its id stays its own while `seen` holds it
    if (!seen.insert({e, guard.id()}).second) return;
    if (n.op == Op::VarRef) {
      // An immutable variable's arithmetic is checked where its value reaches an index, under
      // that access's guards: a wrapped value that no access uses is no bug.
      const auto d = let_def_.find(static_cast<VarId>(n.imm));
      if (d != let_def_.end()) wrap_walk(s, d->second, guard, seen);
      return;
    }
    if (n.op == Op::Select) {
      const z3::expr c = value(n.a);
      select_conds_.emplace_back(n.a, true);
      wrap_walk(s, n.b, guard && c, seen);
      select_conds_.back().second = false;
      wrap_walk(s, n.c, guard && !c, seen);
      select_conds_.pop_back();
      return;
    }
    for (ExprId o : {n.a, n.b, n.c})
      if (o != ir::kNoExpr) wrap_walk(s, o, guard, seen);
    wrap_node(s, e, guard);
  }

  void wrap_node(const Stmt& s, ExprId e, const z3::expr& guard) {
    const Node& n = k_.exprs[e];
    const DType t = n.type;
    const bool sgn = is_signed_integer(t);
    std::optional<z3::expr> ok;
    std::string what;
    switch (n.op) {
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Neg: {
        // Z3's overflow predicates on the type's own width (cheaper than exact wide products).
        const z3::expr a = value(n.a);
        if (n.op == Op::Neg) {
          ok = sgn ? z3::bvneg_no_overflow(a) : a == ctx_.bv_val(0, a.get_sort().bv_size());
        } else {
          const z3::expr b = value(n.b);
          if (n.op == Op::Add)
            ok = sgn ? z3::bvadd_no_overflow(a, b, true) && z3::bvadd_no_underflow(a, b)
                     : z3::bvadd_no_overflow(a, b, false);
          if (n.op == Op::Sub)
            ok = sgn ? z3::bvsub_no_overflow(a, b) && z3::bvsub_no_underflow(a, b, true) : z3::uge(a, b);
          if (n.op == Op::Mul)
            ok = sgn ? z3::bvmul_no_overflow(a, b, true) && z3::bvmul_no_underflow(a, b)
                     : z3::bvmul_no_overflow(a, b, false);
        }
        what = std::string(dtype_name(t)) + " arithmetic wraps (needs 64 bits)";
        break;
      }
      case Op::Shl: {
        // The amount is in range (an error otherwise) and nothing is shifted out.
        const z3::expr a = widen(value(n.a), t);
        const z3::expr b = widen(value(n.b), k_.exprs[n.b].type);
        const z3::expr r = z3::ite(z3::ult(b, wide(dtype_bits(t))), z3::shl(a, b), wide(type_max(t)) + wide(1));
        ok = z3::sge(r, wide(type_min(t))) && z3::sle(r, wide(type_max(t)));
        what = std::string(dtype_name(t)) + " shift wraps (needs 64 bits)";
        break;
      }
      case Op::Div:
      case Op::Mod: {
        const z3::expr b = value(n.b);
        const unsigned bits = b.get_sort().bv_size();
        ok = b != ctx_.bv_val(0, bits);
        if (sgn) {
          const z3::expr a = value(n.a);
          ok = *ok && !(a == ctx_.bv_val(static_cast<std::uint64_t>(1) << (bits - 1), bits) &&
                        b == ctx_.bv_val(~static_cast<std::uint64_t>(0), bits));
        }
        what = "integer division by zero (or signed minimum by -1)";
        break;
      }
      case Op::Cast: {
        const DType from = k_.exprs[n.a].type;
        if (!is_integer(from)) return;
        const z3::expr a = widen(value(n.a), from);
        ok = z3::sge(a, wide(type_min(t))) && z3::sle(a, wide(type_max(t)));
        what = "conversion " + std::string(dtype_name(from)) + " -> " + std::string(dtype_name(t)) +
               " changes the value (needs a wider type)";
        break;
      }
      default: return;
    }
    if (wrap_reported_.count(e)) return;
    ++report_.obligations;
    if (n.op != Op::Div && n.op != Op::Mod && fits(exact_interval(e), t)) {
      ++report_.by_intervals;
      return;
    }
    if (n.op == Op::Cast) {
      // The Selects and Ifs around may bound the converted value (select(p >= 0, cast<u32>(p), 0u)).
      Interval y = interval(n.a);
      for (const auto& [c, holds] : select_conds_) y = refine(n.a, c, holds, y);
      if (!depends_on_mutable(n.a))
        for (const auto& [c, holds] : guards_) y = refine(n.a, c, holds, y);
      if (fits(y, t)) {
        ++report_.by_intervals;
        return;
      }
    }
    if ((n.op == Op::Div || n.op == Op::Mod) && interval(n.b).lo > 0) {
      ++report_.by_intervals;
      return;
    }
    std::optional<z3::model> model;
    const ProofStatus st = ask(!guard || *ok, &model);
    if (st == ProofStatus::Proved) return;
    wrap_reported_.insert(e);
    ProofIssue is;
    is.kind = ObligationKind::NoWrap;
    is.loc = s.loc;
    is.stmt = ir::print_stmt_line(k_, s);
    is.expr = ir::print_expr(k_, e);
    issue(std::move(is), st, model, e, what,
          [&](Witness& w, const z3::model& md) { w.index = ir::int_of_bits(t, bits_of(md, value(e))); });
  }

  // ------------------------------------------------------------------ statements
  void block(const ir::Block& b) {
    for (const Stmt& s : b) stmt(s);
  }

  void define(VarId v, const z3::expr& x, Interval iv, bool approx) {
    var_.insert_or_assign(v, x);
    var_iv_.insert_or_assign(v, iv);
    if (approx) {
      approx_var_.insert(v);
    } else {
      approx_var_.erase(v);
    }
  }

  void let(const Stmt& s) {
    const Node& n = k_.exprs[s.a];
    const DType t = k_.vars[s.var].type;
    if (n.op == Op::Load) {
      access(s, ir::decode_mem(n.imm), n.a, 1, false);
      define(s.var, fresh(t, "load"), unknown(t), false);
      return;
    }
    // Lets that read no mutable variable are checked at their uses (wrap_walk); the others here.
    if (index_var_[s.var] && !let_def_.count(s.var)) check_wrap(s, s.a);
    define(s.var, value(s.a), interval(s.a), approximate(s.a));
  }

  static void assigned(const ir::Block& b, std::set<VarId>& out) {
    for (const Stmt& s : b) {
      if (s.kind == StmtKind::Assign) out.insert(s.var);
      assigned(s.body, out);
      assigned(s.else_body, out);
    }
  }

  void havoc(const std::set<VarId>& vs) {
    for (VarId v : vs) {
      const DType t = k_.vars[v].type;
      define(v, fresh(t, "carried"), unknown(t), true);
    }
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Block: block(s.body); break;
      case StmtKind::Let:
      case StmtKind::Assign: let(s); break;
      case StmtKind::Store: access(s, s.mem, s.a, 1, false); break;
      case StmtKind::Atomic:
        access(s, s.mem, s.a, 1, false);
        if (s.has_var) define(s.var, fresh(k_.vars[s.var].type, "atomic"), unknown(k_.vars[s.var].type), false);
        break;
      case StmtKind::LoadVec:
        access(s, s.mem, s.a, static_cast<std::uint32_t>(s.vars.size()), true);
        for (VarId v : s.vars) define(v, fresh(k_.vars[v].type, "load"), unknown(k_.vars[v].type), false);
        break;
      case StmtKind::StoreVec: access(s, s.mem, s.a, static_cast<std::uint32_t>(s.values.size()), true); break;
      case StmtKind::CopyAsync:
        access(s, {ir::Space::Shared, s.shared}, s.a, s.count, true);
        access(s, s.mem, s.b, s.count, true);
        break;
      case StmtKind::LoadMatrix:
        access(s, s.mem, s.a, ir::kMatrixRow, true);
        for (VarId v : s.vars) define(v, fresh(k_.vars[v].type, "matrix"), unknown(k_.vars[v].type), false);
        break;
      case StmtKind::Shuffle:
        define(s.var, fresh(k_.vars[s.var].type, "shuffle"), unknown(k_.vars[s.var].type), false);
        break;
      case StmtKind::Mma:
        for (VarId v : s.vars) define(v, fresh(k_.vars[v].type, "mma"), unknown(k_.vars[v].type), false);
        break;
      case StmtKind::If: if_(s); break;
      case StmtKind::For: for_(s); break;
      default: break;
    }
  }

  void if_(const Stmt& s) {
    const z3::expr c = value(s.a);
    const auto before = var_;
    const auto before_iv = var_iv_;
    const auto before_approx = approx_var_;
    path_.push_back(c);
    guards_.emplace_back(s.a, true);
    block(s.body);
    guards_.pop_back();
    path_.pop_back();
    const auto then_vars = var_;
    const auto then_iv = var_iv_;
    const auto then_approx = approx_var_;
    var_ = before;
    var_iv_ = before_iv;
    approx_var_ = before_approx;
    path_.push_back(!c);
    guards_.emplace_back(s.a, false);
    block(s.else_body);
    guards_.pop_back();
    path_.pop_back();
    // Mutable variables assigned on either side take the value of the side taken.
    for (const auto& [v, x] : then_vars) {
      if (!k_.vars[v].is_mutable) continue;
      const auto it = var_.find(v);
      if (it == var_.end() || z3::eq(it->second, x)) continue;
      const Interval a = then_iv.at(v), b = var_iv_.at(v);
      const bool approx = then_approx.count(v) || approx_var_.count(v);
      define(v, z3::ite(c, x, it->second), {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}, approx);
    }
  }

  void for_(const Stmt& s) {
    const DType t = k_.vars[s.var].type;
    const bool sgn = is_signed_integer(t);
    const z3::expr begin = value(s.a);
    const Interval begin_iv = interval(s.a);
    if (index_var_[s.var]) check_wrap(s, s.a);
    std::set<VarId> carried;
    assigned(s.body, carried);
    havoc(carried);
    const z3::expr end = value(s.b);
    const Interval end_iv = interval(s.b);
    if (index_var_[s.var]) {
      check_wrap(s, s.b);
      check_wrap(s, s.c);
    }
    const z3::expr v = fresh(t, var_hint(s.var));
    // Counting up from begin (a step that may be negative or zero leaves only var < end), in steps of the step.
    const bool up = interval(s.c).lo >= 1;
    z3::expr range = sgn ? z3::slt(v, end) : z3::ult(v, end);
    if (up) range = range && (sgn ? z3::sle(begin, v) : z3::ule(begin, v));
    const Node& step = k_.exprs[s.c];
    if (up && step.op == Op::Const && ir::int_of_bits(t, step.imm) > 1) {
      range = range && z3::urem(v - begin, value(s.c)) == ctx_.bv_val(0, static_cast<unsigned>(dtype_bits(t)));
    }
    const i128 lo = up ? begin_iv.lo : type_min(t);
    define(s.var, v, {lo, std::max(lo, end_iv.hi - 1)}, approximate(s.a));
    path_.push_back(range);
    if (index_var_[s.var] && o_.check_overflow) loop_step(s, v);
    block(s.body);
    path_.pop_back();
    havoc(carried);
  }

  std::string var_hint(VarId v) { return k_.vars[v].hint.empty() ? "i" : k_.vars[v].hint; }

  // The increment after an iteration must not wrap (a wrapped loop variable restarts the range).
  void loop_step(const Stmt& s, const z3::expr& v) {
    const DType t = k_.vars[s.var].type;
    ++report_.obligations;
    const Interval vi = var_iv_.at(s.var), si = interval(s.c);
    if (vi.hi + si.hi <= type_max(t) && vi.lo + si.lo >= type_min(t)) {
      ++report_.by_intervals;
      return;
    }
    const z3::expr r = widen(v, t) + widen(value(s.c), k_.exprs[s.c].type);
    std::optional<z3::model> model;
    const ProofStatus st = ask(z3::sge(r, wide(type_min(t))) && z3::sle(r, wide(type_max(t))), &model);
    if (st == ProofStatus::Proved) return;
    ProofIssue is;
    is.kind = ObligationKind::NoWrap;
    is.loc = s.loc;
    is.stmt = ir::print_stmt_line(k_, s);
    is.expr = ir::var_name(k_, s.var) + " + " + ir::print_expr(k_, s.c);
    issue(std::move(is), st, model, s.c, "loop increment wraps",
          [&](Witness& w, const z3::model& md) { w.index = ir::int_of_bits(t, bits_of(md, v)); });
  }

  const ir::Kernel& k_;
  const ProveOptions& o_;
  z3::context ctx_;
  std::vector<z3::expr> gid_, lid_, ng_, gs_;
  std::array<Interval, 3> ng_iv_{};
  std::vector<std::optional<z3::expr>> scalar_;
  std::vector<Interval> scalar_iv_;
  std::vector<std::optional<z3::expr>> extent_;
  std::vector<Interval> extent_iv_;
  std::vector<z3::expr> base_;  // what every launch satisfies
  std::vector<z3::expr> path_;  // the enclosing guards and loop ranges
  std::vector<std::pair<ExprId, bool>> guards_;
  std::vector<std::pair<ExprId, bool>> select_conds_;  // wrap_walk: the Select conditions that choose this value  //
                                                       // the enclosing If conditions and which side this is
  std::vector<z3::expr> small_;
  std::optional<z3::solver> solver_;
  std::vector<z3::expr> asserted_path_;  // the path conditions pushed on solver_, one scope each
  std::size_t asserted_ = 0;
  std::set<std::vector<unsigned>> proved_;  // (claim, path) already proved
  std::vector<z3::expr> keep_;              // free scalars and group counts kept small, where a witness allows
  std::unordered_map<VarId, z3::expr> var_;
  std::unordered_map<VarId, Interval> var_iv_;
  std::set<VarId> approx_var_;
  std::unordered_map<ExprId, z3::expr> cache_;
  std::unordered_map<ExprId, Interval> iv_cache_;
  std::vector<signed char> mutable_dep_;
  std::vector<bool> index_var_;
  std::unordered_map<VarId, ExprId> let_def_;  // immutable variables whose value reads no mutable one
  std::set<ExprId> wrap_reported_;
  std::uint64_t fresh_count_ = 0;
  ProofReport report_;
};

}  // namespace

ProofReport prove(const ir::Kernel& k, const ProveOptions& options) { return Prover(k, options).run(); }

bool prover_available() { return true; }

}  // namespace ingot::passes
