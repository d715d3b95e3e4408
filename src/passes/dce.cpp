// Dead-code elimination.
#include "ingot/passes/dce.hpp"

#include <vector>

namespace ingot::passes {

namespace {

class Dce {
 public:
  explicit Dce(ir::Kernel k) : k_(std::move(k)) {}

  ir::Kernel run() {
    for (;;) {
      mark();
      bool changed = false;
      k_.body = sweep(k_.body, changed);
      if (!changed) break;
    }
    ir::renumber(k_);
    return std::move(k_);
  }

 private:
  void mark_expr(ir::ExprId e) {
    if (e == ir::kNoExpr || live_expr_[e]) return;
    live_expr_[e] = true;
    const ir::Node& n = k_.exprs[e];
    if (n.op == ir::Op::VarRef) var_read_[n.imm] = true;
    mark_expr(n.a);
    mark_expr(n.b);
    mark_expr(n.c);
  }
  void mark_block(const ir::Block& b) {
    for (const ir::Stmt& s : b) {
      ir::for_each_operand(s, [&](ir::ExprId e) { mark_expr(e); });
      mark_block(s.body);
      mark_block(s.else_body);
    }
  }
  void mark() {
    live_expr_.assign(k_.exprs.size(), false);
    var_read_.assign(k_.vars.size(), false);
    mark_block(k_.body);
  }

  ir::Block sweep(const ir::Block& b, bool& changed) {
    ir::Block out;
    for (const ir::Stmt& s : b) {
      ir::Stmt t = s;
      switch (s.kind) {
        case ir::StmtKind::Let:
        case ir::StmtKind::Assign:
        case ir::StmtKind::Shuffle:  // removed in every thread alike: no thread waits for another
          if (!var_read_[s.var]) {
            changed = true;
            continue;
          }
          break;
        case ir::StmtKind::LoadVec:
        case ir::StmtKind::LoadMatrix:  // (removed in every thread alike, like an Mma)
        case ir::StmtKind::Mma: {       // (an Mma is removed in every thread alike, like a Shuffle)
          bool used = false;
          for (ir::VarId v : s.vars) used = used || var_read_[v];
          if (!used) {
            changed = true;
            continue;
          }
          break;
        }
        case ir::StmtKind::Atomic:
          if (s.has_var && !var_read_[s.var]) {
            t.has_var = false;
            changed = true;
          }
          break;
        case ir::StmtKind::If:
          t.body = sweep(s.body, changed);
          t.else_body = sweep(s.else_body, changed);
          if (t.body.empty() && t.else_body.empty()) {
            changed = true;
            continue;
          }
          break;
        case ir::StmtKind::For:
        case ir::StmtKind::Block:
          t.body = sweep(s.body, changed);
          if (t.body.empty()) {
            changed = true;
            continue;
          }
          break;
        default: break;
      }
      out.push_back(std::move(t));
    }
    return out;
  }

  ir::Kernel k_;
  std::vector<bool> live_expr_;
  std::vector<bool> var_read_;
};

}  // namespace

ir::Kernel dce(const ir::Kernel& k) { return Dce(k).run(); }

}  // namespace ingot::passes
