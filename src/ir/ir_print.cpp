// Text form of the IR.
#include "ingot/ir_print.hpp"

#include <sstream>

#include "ingot/scalar_eval.hpp"

namespace ingot::ir {

std::string var_name(const Kernel& k, VarId v) {
  const std::string& hint = v < k.vars.size() ? k.vars[v].hint : std::string();
  return "%" + (hint.empty() ? std::string("v") : hint) + std::to_string(v);
}

std::string print_expr(const Kernel& k, ExprId e) {
  const Node& n = k.exprs[e];
  const OpInfo& info = op_info(n.op);
  switch (n.op) {
    case Op::Const:
      return format_bits(n.type, n.imm) + (n.type == DType::f32 ? "f" : (n.type == DType::u32 ? "u" : ""));
    case Op::ParamRef: return n.imm < k.params.size() ? k.params[n.imm].name : "?param" + std::to_string(n.imm);
    case Op::VarRef: return var_name(k, static_cast<VarId>(n.imm));
    case Op::ProgramId:
      return std::string(info.name) + (n.type == DType::i64 ? "64(" : "(") + std::to_string(n.imm) + ")";
    case Op::LocalId:
    case Op::GroupId:
    case Op::GroupSize:
    case Op::NumGroups: return std::string(info.name) + "(" + std::to_string(n.imm) + ")";
    case Op::Load: {
      const MemRef m = decode_mem(n.imm);
      return "load " + k.mem_name(m) + "[" + print_expr(k, n.a) + "]";
    }
    case Op::Cast: return "cast<" + std::string(dtype_name(n.type)) + ">(" + print_expr(k, n.a) + ")";
    default: break;
  }
  if (info.precedence != 0 && info.arity == 2) {
    return "(" + print_expr(k, n.a) + " " + std::string(info.name) + " " + print_expr(k, n.b) + ")";
  }
  if (info.precedence != 0 && info.arity == 1) {
    return std::string(info.name) + print_expr(k, n.a);
  }
  std::string out = std::string(info.name) + "(";
  const ExprId ops[3] = {n.a, n.b, n.c};
  for (int i = 0; i < info.arity; ++i) {
    if (i) out += ", ";
    out += print_expr(k, ops[i]);
  }
  return out + ")";
}

std::string print_stmt_line(const Kernel& k, const Stmt& s) {
  auto type_of_var = [&](VarId v) {
    return v < k.vars.size() ? std::string(dtype_name(k.vars[v].type)) : std::string("?");
  };
  switch (s.kind) {
    case StmtKind::Block: return "{";
    case StmtKind::Let:
      return std::string(k.vars.at(s.var).is_mutable ? "var " : "let ") + var_name(k, s.var) + ": " +
             type_of_var(s.var) + " = " + print_expr(k, s.a);
    case StmtKind::Assign: return var_name(k, s.var) + " = " + print_expr(k, s.a);
    case StmtKind::Store: return "store " + k.mem_name(s.mem) + "[" + print_expr(k, s.a) + "] = " + print_expr(k, s.b);
    case StmtKind::If: return "if " + print_expr(k, s.a);
    case StmtKind::For:
      return "for " + var_name(k, s.var) + ": " + type_of_var(s.var) + " in [" + print_expr(k, s.a) + ", " +
             print_expr(k, s.b) + ") step " + print_expr(k, s.c);
    case StmtKind::Barrier: return "barrier";
    case StmtKind::Shuffle:
      return "let " + var_name(k, s.var) + ": " + type_of_var(s.var) + " = shuffle(" + print_expr(k, s.a) + ", lane " +
             print_expr(k, s.b) + " of " + std::to_string(s.lanes) + ")";
    case StmtKind::SharedAlloc: {
      if (s.shared >= k.shared.size()) return "shared ?" + std::to_string(s.shared);
      const auto& sh = k.shared[s.shared];
      return "shared " + k.mem_name(MemRef{Space::Shared, s.shared}) + ": " + std::string(dtype_name(sh.type)) + "[" +
             std::to_string(sh.count) + "]";
    }
    case StmtKind::LoadVec: {
      std::string out = "let (";
      for (std::size_t j = 0; j < s.vars.size(); ++j) out += (j ? ", " : "") + var_name(k, s.vars[j]);
      const std::string t = s.vars.empty() ? std::string("?") : type_of_var(s.vars[0]);
      return out + "): " + t + "x" + std::to_string(s.vars.size()) + " = load_vec " + k.mem_name(s.mem) + "[" +
             print_expr(k, s.a) + "]";
    }
    case StmtKind::Mma: {
      std::string out = "let (";
      for (std::size_t j = 0; j < s.vars.size(); ++j) out += (j ? ", " : "") + var_name(k, s.vars[j]);
      out += "): f32x" + std::to_string(s.vars.size()) + " = mma_m16n8k16<" + std::string(dtype_name(s.elem)) + ">(";
      for (std::size_t j = 0; j < s.values.size(); ++j) {
        out += (j == 0 ? "a: " : j == 8 ? "; b: " : j == 12 ? "; c: " : ", ") + print_expr(k, s.values[j]);
      }
      return out + ")";
    }
    case StmtKind::LoadMatrix: {
      std::string out = "let (";
      for (std::size_t j = 0; j < s.vars.size(); ++j) out += (j ? ", " : "") + var_name(k, s.vars[j]);
      const std::string t = s.vars.empty() ? std::string("?") : type_of_var(s.vars[0]);
      return out + "): " + t + "x" + std::to_string(s.vars.size()) +
             (s.transpose ? " = load_matrix_trans " : " = load_matrix ") + k.mem_name(s.mem) + "[" +
             print_expr(k, s.a) + "]";
    }
    case StmtKind::StoreVec: {
      std::string out = "store_vec " + k.mem_name(s.mem) + "[" + print_expr(k, s.a) + "] = (";
      for (std::size_t j = 0; j < s.values.size(); ++j) out += (j ? ", " : "") + print_expr(k, s.values[j]);
      return out + ")";
    }
    case StmtKind::CopyAsync:
      return "copy_async " + k.mem_name(MemRef{Space::Shared, s.shared}) + "[" + print_expr(k, s.a) + "] <- " +
             k.mem_name(s.mem) + "[" + print_expr(k, s.b) + "] x" + std::to_string(s.count) + " if " +
             print_expr(k, s.c) + " else 0";
    case StmtKind::AsyncCommit: return "async_commit";
    case StmtKind::AsyncWait: return "async_wait " + std::to_string(s.count);
    case StmtKind::Atomic:
      return (s.has_var ? "let " + var_name(k, s.var) + ": " + type_of_var(s.var) + " = " : std::string()) + "atomic_" +
             std::string(atomic_op_name(s.atomic)) + " " + k.mem_name(s.mem) + "[" + print_expr(k, s.a) + "], " +
             print_expr(k, s.b);
  }
  return "?";
}

namespace {
void print_block(const Kernel& k, const Block& b, int depth, std::ostringstream& os) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  for (const Stmt& s : b) {
    os << "#" << s.loc << "\t" << indent << print_stmt_line(k, s);
    if (s.kind == StmtKind::If || s.kind == StmtKind::For || s.kind == StmtKind::Block) {
      if (s.kind != StmtKind::Block) os << " {";
      os << "\n";
      print_block(k, s.body, depth + 1, os);
      if (s.kind == StmtKind::If && !s.else_body.empty()) {
        os << "\t" << indent << "} else {\n";
        print_block(k, s.else_body, depth + 1, os);
      }
      os << "\t" << indent << "}\n";
    } else {
      os << "\n";
    }
  }
}
}  // namespace

std::string print_kernel(const Kernel& k) {
  std::ostringstream os;
  os << "kernel " << k.name << "(";
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    if (i) os << ", ";
    os << p.name << ": " << param_kind_name(p.kind) << " " << dtype_name(p.type);
    if (is_buffer(p.kind)) os << "[" << (p.extent == kNoExpr ? std::string("?") : print_expr(k, p.extent)) << "]";
  }
  os << ")";
  if (k.bounds.max_group_threads) {
    os << " launch_bounds(" << k.bounds.max_group_threads;
    if (k.bounds.min_groups_per_core) os << ", " << k.bounds.min_groups_per_core;
    os << ")";
  }
  os << " {\n";
  for (ExprId e : k.preconditions) os << "  require " << print_expr(k, e) << "\n";
  print_block(k, k.body, 1, os);
  os << "}\n";
  return os.str();
}

}  // namespace ingot::ir
