// IR verifier.
#include "ingot/verify.hpp"

#include <set>

#include "ingot/ir_print.hpp"

namespace ingot::ir {

namespace {

class Verifier {
 public:
  explicit Verifier(const Kernel& k)
      : k_(k), declared_(k.vars.size(), false), shared_declared_(k.shared.size(), false) {}

  std::vector<std::string> run() {
    check_nodes();
    check_params();
    if (k_.bounds.min_groups_per_core && !k_.bounds.max_group_threads)
      error("launch bounds: min_groups_per_core needs max_group_threads");
    std::vector<VarId> scope;
    std::vector<std::uint32_t> shared_scope;
    block(k_.body, scope, shared_scope);
    return std::move(errors_);
  }

 private:
  void error(const std::string& msg) { errors_.push_back(k_.name + ": " + msg); }
  void stmt_error(const Stmt& s, const std::string& msg) {
    error("#" + std::to_string(s.loc) + " (" + print_stmt_line(k_, s) + "): " + msg);
  }

  static std::string tn(DType t) { return std::string(dtype_name(t)); }

  // Sub-group statements (Shuffle, Mma; `what` names them) need launch bounds of whole warps.
  void require_warp_bounds(const Stmt& s, const std::string& what) {
    if (k_.bounds.max_group_threads && k_.bounds.max_group_threads % kShuffleGroupMultiple == 0) return;
    stmt_error(s, "a kernel with " + what + " must declare launch bounds whose max_group_threads is a multiple of " +
                      std::to_string(kShuffleGroupMultiple) + " (KernelBuilder::launch_bounds)");
  }

  void check_nodes() {
    for (ExprId id = 0; id < k_.exprs.size(); ++id) {
      const Node& n = k_.exprs[id];
      const OpInfo& info = op_info(n.op);
      const ExprId ops[3] = {n.a, n.b, n.c};
      bool ok = true;
      for (int i = 0; i < 3; ++i) {
        const bool present = ops[i] != kNoExpr;
        if (present != (i < info.arity) || (present && ops[i] >= id)) {
          error("expr " + std::to_string(id) + " (" + std::string(info.name) + "): bad operand " + std::to_string(i));
          ok = false;
        }
      }
      if (!ok) continue;
      auto t = [&](int i) { return k_.exprs[ops[i]].type; };
      auto bad = [&](const std::string& why) {
        error("expr " + std::to_string(id) + " (" + print_expr(k_, id) + "): " + why);
      };
      switch (info.rule) {
        case TypeRule::Leaf:
          if (n.op == Op::ParamRef) {
            if (n.imm >= k_.params.size() || k_.params[n.imm].kind != ParamKind::Scalar) {
              bad("not a scalar parameter");
            } else if (k_.params[n.imm].type != n.type) {
              bad("type differs from the parameter's");
            }
          } else if (n.op == Op::VarRef) {
            if (n.imm >= k_.vars.size()) {
              bad("unknown variable");
            } else if (k_.vars[n.imm].type != n.type) {
              bad("type differs from the variable's");
            }
          }
          break;
        case TypeRule::Builtin:
          if (n.imm > 2) bad("axis must be 0, 1 or 2");
          if (n.type != DType::u32 && !(n.op == Op::ProgramId && n.type == DType::i64)) {
            bad("index builtins are u32 (program_id may be i64)");
          }
          break;
        case TypeRule::LoadRule: {
          const MemRef m = decode_mem(n.imm);
          if (!mem_valid(m)) {
            bad("unknown buffer");
            break;
          }
          if (m.space == Space::Global && k_.params[m.id].kind == ParamKind::Out) bad("load from an out-only buffer");
          if (k_.mem_type(m) != n.type) bad("load type differs from the buffer's element type");
          if (!is_integer(t(0))) bad("index must be an integer");
          break;
        }
        case TypeRule::Arith:
          if (!is_compute_type(n.type) || t(0) != n.type || t(1) != n.type)
            bad("operands must share a compute type (f32 i32 u32 i64)");
          break;
        case TypeRule::IntBinary:
          if (!is_integer(n.type) || !is_compute_type(n.type) || t(0) != n.type || t(1) != n.type)
            bad("operands must share an integer compute type");
          break;
        case TypeRule::Compare:
          if (n.type != DType::boolean || t(0) != t(1)) {
            bad("operands must share a type; result is bool");
          } else if (!is_compute_type(t(0)) && !(t(0) == DType::boolean && (n.op == Op::Eq || n.op == Op::Ne))) {
            bad("compare needs a compute type");
          }
          break;
        case TypeRule::Logical:
          if (n.type != DType::boolean || t(0) != DType::boolean || t(1) != DType::boolean)
            bad("logic needs bool operands");
          break;
        case TypeRule::LogicalNot:
          if (n.type != DType::boolean || t(0) != DType::boolean) bad("! needs a bool operand");
          break;
        case TypeRule::ArithUnary:
          if (!is_compute_type(n.type) || t(0) != n.type) bad("needs a compute type");
          break;
        case TypeRule::IntUnary:
          if (!is_integer(n.type) || !is_compute_type(n.type) || t(0) != n.type) bad("needs an integer compute type");
          break;
        case TypeRule::FloatUnary:
          if (n.type != DType::f32 || t(0) != DType::f32) bad("math functions take f32");
          break;
        case TypeRule::FloatBinary:
          if (n.type != DType::f32 || t(0) != DType::f32 || t(1) != DType::f32) bad("math functions take f32");
          break;
        case TypeRule::FloatTernary:
          if (n.type != DType::f32 || t(0) != DType::f32 || t(1) != DType::f32 || t(2) != DType::f32)
            bad("fma takes f32");
          break;
        case TypeRule::CastRule: break;
        case TypeRule::BitcastRule:
          if (!is_compute_type(n.type) || !is_compute_type(t(0)) || dtype_size(n.type) != dtype_size(t(0))) {
            bad("bitcast between compute types of one width (f32, i32, u32)");
          }
          break;
        case TypeRule::SelectRule:
          if (t(0) != DType::boolean || t(1) != n.type || t(2) != n.type) bad("select(bool, T, T)");
          break;
      }
    }
  }

  bool mem_valid(MemRef m) const {
    if (m.space == Space::Global) return m.id < k_.params.size() && is_buffer(k_.params[m.id].kind);
    return m.id < k_.shared.size();
  }

  void check_params() {
    std::set<std::string> names;
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.name.empty()) error("parameter " + std::to_string(i) + " has no name");
      if (!names.insert(p.name).second) error("parameter name '" + p.name + "' used twice");
      if (is_buffer(p.kind)) {
        if (p.extent == kNoExpr) {
          error("buffer '" + p.name + "' has no extent");
          continue;
        }
        if (!is_integer(k_.exprs[p.extent].type)) error("extent of '" + p.name + "' is not an integer");
        check_extent_expr(p, p.extent);
      }
    }
    for (ExprId e : k_.preconditions) {
      if (e >= k_.exprs.size() || k_.exprs[e].type != DType::boolean) {
        error("a precondition is not a bool expression");
        continue;
      }
      check_scalar_only(e);
    }
  }

  void check_scalar_only(ExprId e) {
    const Node& n = k_.exprs[e];
    if (n.op == Op::VarRef || n.op == Op::Load || op_info(n.op).rule == TypeRule::Builtin) {
      error("a precondition may use only scalars and constants");
      return;
    }
    for (ExprId o : {n.a, n.b, n.c})
      if (o != kNoExpr) check_scalar_only(o);
  }

  void check_extent_expr(const Param& p, ExprId e) {
    const Node& n = k_.exprs[e];
    if (n.op == Op::VarRef || n.op == Op::Load || op_info(n.op).rule == TypeRule::Builtin) {
      error("extent of '" + p.name + "' may use only scalars and constants");
      return;
    }
    for (ExprId o : {n.a, n.b, n.c})
      if (o != kNoExpr) check_extent_expr(p, o);
  }

  // Checks an expression used by a statement: variables in scope, loads only at the root.
  void use(const Stmt& s, ExprId e, const std::vector<VarId>& scope, const std::vector<std::uint32_t>& shared_scope,
           bool load_ok) {
    if (e == kNoExpr || e >= k_.exprs.size()) {
      stmt_error(s, "missing expression");
      return;
    }
    const Node& n = k_.exprs[e];
    if (n.op == Op::Load) {
      if (!load_ok) stmt_error(s, "a load may only be the whole value of a let");
      const MemRef m = decode_mem(n.imm);
      if (m.space == Space::Shared && !in(shared_scope, m.id)) stmt_error(s, "shared array used outside its scope");
    }
    if (n.op == Op::VarRef && !in(scope, static_cast<VarId>(n.imm)))
      stmt_error(s, "variable " + var_name(k_, static_cast<VarId>(n.imm)) + " used outside its scope");
    for (ExprId o : {n.a, n.b, n.c})
      if (o != kNoExpr) use(s, o, scope, shared_scope, false);
  }

  template <class V>
  static bool in(const std::vector<V>& v, V x) {
    for (V y : v)
      if (y == x) return true;
    return false;
  }

  void declare(const Stmt& s, VarId v, std::vector<VarId>& scope) {
    if (v >= k_.vars.size()) {
      stmt_error(s, "unknown variable");
      return;
    }
    if (declared_[v]) stmt_error(s, "variable declared twice");
    declared_[v] = true;
    scope.push_back(v);
  }

  void check_mem_access(const Stmt& s, MemRef m, const std::vector<std::uint32_t>& shared_scope, bool write) {
    if (!mem_valid(m)) {
      stmt_error(s, "unknown buffer");
      return;
    }
    if (m.space == Space::Shared && !in(shared_scope, m.id)) stmt_error(s, "shared array used outside its scope");
    if (write && m.space == Space::Global && k_.params[m.id].kind == ParamKind::In)
      stmt_error(s, "store to an input-only buffer");
  }

  void check_vector(const Stmt& s, std::size_t width) {
    if (!vector_width_ok(k_.mem_type(s.mem), width)) {
      stmt_error(s, "vector access of " + std::to_string(width) + " elements of " +
                        std::string(dtype_name(k_.mem_type(s.mem))) +
                        ": must be 4, 8 or 16 bytes, at least 2 elements");
    }
  }

  void block(const Block& b, std::vector<VarId> scope, std::vector<std::uint32_t> shared_scope) {
    for (const Stmt& s : b) {
      switch (s.kind) {
        case StmtKind::Block: block(s.body, scope, shared_scope); break;
        case StmtKind::Let:
          use(s, s.a, scope, shared_scope, true);
          declare(s, s.var, scope);
          if (s.var < k_.vars.size() && s.a < k_.exprs.size() && k_.vars[s.var].type != k_.exprs[s.a].type)
            stmt_error(s, "value type differs from the variable's");
          break;
        case StmtKind::Assign:
          use(s, s.a, scope, shared_scope, false);
          if (!in(scope, s.var)) {
            stmt_error(s, "assignment to a variable not in scope");
          } else if (!k_.vars[s.var].is_mutable) {
            stmt_error(s, "assignment to an immutable variable");
          } else if (k_.vars[s.var].type != k_.exprs[s.a].type) {
            stmt_error(s, "value type differs from the variable's");
          }
          break;
        case StmtKind::Store:
          use(s, s.a, scope, shared_scope, false);
          use(s, s.b, scope, shared_scope, false);
          check_mem_access(s, s.mem, shared_scope, true);
          if (!is_integer(k_.exprs[s.a].type)) stmt_error(s, "index must be an integer");
          if (mem_valid(s.mem) && k_.mem_type(s.mem) != k_.exprs[s.b].type)
            stmt_error(s, "stored value type differs from the buffer's element type");
          break;
        case StmtKind::If:
          use(s, s.a, scope, shared_scope, false);
          if (k_.exprs[s.a].type != DType::boolean) stmt_error(s, "condition must be bool");
          block(s.body, scope, shared_scope);
          block(s.else_body, scope, shared_scope);
          break;
        case StmtKind::For: {
          use(s, s.a, scope, shared_scope, false);
          use(s, s.b, scope, shared_scope, false);
          use(s, s.c, scope, shared_scope, false);
          auto inner = scope;
          declare(s, s.var, inner);
          if (s.var < k_.vars.size()) {
            const DType t = k_.vars[s.var].type;
            if (!is_integer(t) || !is_compute_type(t)) stmt_error(s, "loop variable must be i32, u32 or i64");
            if (k_.vars[s.var].is_mutable) stmt_error(s, "loop variable must be immutable");
            if (k_.exprs[s.a].type != t || k_.exprs[s.b].type != t || k_.exprs[s.c].type != t)
              stmt_error(s, "loop bounds must have the loop variable's type");
          }
          block(s.body, inner, shared_scope);
          break;
        }
        case StmtKind::Barrier: break;
        case StmtKind::Shuffle: {
          use(s, s.a, scope, shared_scope, false);
          use(s, s.b, scope, shared_scope, false);
          declare(s, s.var, scope);
          if (s.lanes < 2 || s.lanes > 32 || (s.lanes & (s.lanes - 1)) != 0) {
            stmt_error(s, "shuffle lanes must be a power of two in [2, 32]");
          }
          require_warp_bounds(s, "shuffles");
          if (s.a >= k_.exprs.size() || s.b >= k_.exprs.size() || s.var >= k_.vars.size()) break;
          const DType t = k_.exprs[s.a].type;
          if (t != DType::f32 && t != DType::i32 && t != DType::u32) stmt_error(s, "shuffles move f32, i32 or u32");
          if (k_.exprs[s.b].type != DType::u32) stmt_error(s, "the source lane must be u32");
          if (k_.vars[s.var].type != t || k_.vars[s.var].is_mutable) {
            stmt_error(s, "the shuffle's variable must be immutable and of the value's type");
          }
          break;
        }
        case StmtKind::Mma: {
          for (ExprId v : s.values) use(s, v, scope, shared_scope, false);
          for (VarId v : s.vars) declare(s, v, scope);
          if (s.values.size() != kMmaOperands || s.vars.size() != kMmaResults) {
            stmt_error(s, "mma takes 16 operands (8 of A, 4 of B, 4 of C) and declares 4 results");
          }
          if (s.elem != DType::f16 && s.elem != DType::bf16) stmt_error(s, "mma multiplies f16 or bf16");
          require_warp_bounds(s, "mma");
          for (ExprId v : s.values) {
            if (v < k_.exprs.size() && k_.exprs[v].type != DType::f32) stmt_error(s, "mma operands must be f32");
          }
          for (VarId v : s.vars) {
            if (v < k_.vars.size() && (k_.vars[v].type != DType::f32 || k_.vars[v].is_mutable))
              stmt_error(s, "mma results must be immutable f32 variables");
          }
          break;
        }
        case StmtKind::LoadMatrix: {
          use(s, s.a, scope, shared_scope, false);
          check_mem_access(s, s.mem, shared_scope, false);
          if (s.a < k_.exprs.size() && !is_integer(k_.exprs[s.a].type)) stmt_error(s, "index must be an integer");
          for (VarId v : s.vars) declare(s, v, scope);
          require_warp_bounds(s, "load_matrix");
          if (s.vars.size() != kMatrixValues) stmt_error(s, "load_matrix declares 8 results");
          if (!mem_valid(s.mem)) break;
          if (s.mem.space != Space::Shared) stmt_error(s, "load_matrix reads a shared array");
          const DType t = k_.mem_type(s.mem);
          if (dtype_size(t) != 2) stmt_error(s, "load_matrix reads 16-bit elements");
          for (VarId v : s.vars) {
            if (v < k_.vars.size() && (k_.vars[v].type != t || k_.vars[v].is_mutable))
              stmt_error(s, "load_matrix variables must be immutable and of the array's element type");
          }
          break;
        }
        case StmtKind::SharedAlloc:
          if (s.shared >= k_.shared.size()) {
            stmt_error(s, "unknown shared array");
            break;
          }
          if (shared_declared_[s.shared]) stmt_error(s, "shared array declared twice");
          shared_declared_[s.shared] = true;
          if (k_.shared[s.shared].count == 0) stmt_error(s, "shared array of size 0");
          shared_scope.push_back(s.shared);
          break;
        case StmtKind::LoadVec: {
          use(s, s.a, scope, shared_scope, false);
          check_mem_access(s, s.mem, shared_scope, false);
          if (s.a < k_.exprs.size() && !is_integer(k_.exprs[s.a].type)) stmt_error(s, "index must be an integer");
          for (VarId v : s.vars) declare(s, v, scope);  // even for a bad buffer: no cascade of scope errors
          if (!mem_valid(s.mem)) break;
          if (s.mem.space == Space::Global && k_.params[s.mem.id].kind == ParamKind::Out)
            stmt_error(s, "load_vec from an out-only buffer");
          check_vector(s, s.vars.size());
          for (VarId v : s.vars) {
            if (v < k_.vars.size() && (k_.vars[v].type != k_.mem_type(s.mem) || k_.vars[v].is_mutable))
              stmt_error(s, "load_vec variables must be immutable and of the buffer's element type");
          }
          break;
        }
        case StmtKind::StoreVec: {
          use(s, s.a, scope, shared_scope, false);
          for (ExprId v : s.values) use(s, v, scope, shared_scope, false);
          check_mem_access(s, s.mem, shared_scope, true);
          if (s.a < k_.exprs.size() && !is_integer(k_.exprs[s.a].type)) stmt_error(s, "index must be an integer");
          if (!mem_valid(s.mem)) break;
          check_vector(s, s.values.size());
          for (ExprId v : s.values) {
            if (v < k_.exprs.size() && k_.exprs[v].type != k_.mem_type(s.mem))
              stmt_error(s, "stored value type differs from the buffer's element type");
          }
          break;
        }
        case StmtKind::CopyAsync: {
          use(s, s.a, scope, shared_scope, false);
          use(s, s.b, scope, shared_scope, false);
          use(s, s.c, scope, shared_scope, false);
          const MemRef dst{Space::Shared, s.shared};
          check_mem_access(s, dst, shared_scope, true);
          check_mem_access(s, s.mem, shared_scope, false);
          if (s.a < k_.exprs.size() && !is_integer(k_.exprs[s.a].type)) stmt_error(s, "index must be an integer");
          if (s.b < k_.exprs.size() && !is_integer(k_.exprs[s.b].type)) stmt_error(s, "index must be an integer");
          if (s.c < k_.exprs.size() && k_.exprs[s.c].type != DType::boolean)
            stmt_error(s, "the copy's condition must be bool");
          if (!mem_valid(dst) || !mem_valid(s.mem)) break;
          if (s.mem.space != Space::Global) {
            stmt_error(s, "copy_async copies from a global buffer");
            break;
          }
          if (k_.params[s.mem.id].kind == ParamKind::Out) stmt_error(s, "copy_async from an out-only buffer");
          if (k_.mem_type(dst) != k_.mem_type(s.mem))
            stmt_error(s, "copy_async between arrays of different element types");
          check_vector(s, s.count);
          break;
        }
        case StmtKind::AsyncCommit: break;
        case StmtKind::AsyncWait:
          if (s.count > kMaxAsyncGroupsPending) {
            stmt_error(s,
                       "async_wait may leave at most " + std::to_string(kMaxAsyncGroupsPending) + " groups incomplete");
          }
          break;
        case StmtKind::Atomic: {
          use(s, s.a, scope, shared_scope, false);
          use(s, s.b, scope, shared_scope, false);
          check_mem_access(s, s.mem, shared_scope, true);
          if (!mem_valid(s.mem)) break;
          const DType t = k_.mem_type(s.mem);
          if (t != DType::i32 && t != DType::u32 && !(t == DType::f32 && s.atomic == AtomicOp::Add))
            stmt_error(s, "atomics support i32 and u32 (and f32 add)");
          if (k_.exprs[s.b].type != t) stmt_error(s, "atomic operand type differs from the buffer's");
          if (!is_integer(k_.exprs[s.a].type)) stmt_error(s, "index must be an integer");
          if (s.has_var) {
            declare(s, s.var, scope);
            if (s.var < k_.vars.size() && k_.vars[s.var].type != t) stmt_error(s, "result variable type differs");
          }
          break;
        }
      }
    }
  }

  const Kernel& k_;
  std::vector<bool> declared_;
  std::vector<bool> shared_declared_;
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<std::string> verify(const Kernel& k) { return Verifier(k).run(); }

void verify_or_throw(const Kernel& k, const std::string& context) {
  auto errs = verify(k);
  if (errs.empty()) return;
  std::string msg = "IR verification failed" + (context.empty() ? std::string() : " after " + context) + ":";
  for (const auto& e : errs) msg += "\n  " + e;
  throw VerifyError(msg);
}

}  // namespace ingot::ir
