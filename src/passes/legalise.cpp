// Decomposition of ops a dialect cannot print.
#include "ingot/passes/legalise.hpp"

#include <vector>

namespace ingot::passes {

namespace {

using ir::ExprId;
using ir::Op;

ExprId erf_f32(ir::ExprArena& a, ExprId x) {
  auto c = [&](float v) { return a.const_f32(v); };
  auto bin = [&](Op op, ExprId l, ExprId r) { return a.binary(op, DType::f32, l, r); };
  const ExprId ax = a.unary(Op::Abs, DType::f32, x);
  const ExprId t = bin(Op::Div, c(1.0f), bin(Op::Add, c(1.0f), bin(Op::Mul, c(0.3275911f), ax)));
  // Horner: t*(a1 + t*(a2 + t*(a3 + t*(a4 + t*a5))))
  ExprId p = c(1.061405429f);
  for (float coef : {-1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f})
    p = bin(Op::Add, c(coef), bin(Op::Mul, t, p));
  p = bin(Op::Mul, t, p);
  const ExprId e = a.unary(Op::Exp, DType::f32, a.unary(Op::Neg, DType::f32, bin(Op::Mul, x, x)));
  const ExprId y = bin(Op::Sub, c(1.0f), bin(Op::Mul, p, e));
  const ExprId negative = a.binary(Op::Lt, DType::boolean, x, c(0.0f));
  return a.make({Op::Select, DType::f32, negative, a.unary(Op::Neg, DType::f32, y), y, 0});
}

}  // namespace

ir::Kernel legalise(const ir::Kernel& in, const LegaliseOptions& options) {
  if (options.unsupported.empty()) return in;
  ir::Kernel out = in;
  // Rebuild the arena so that every use of a decomposed node refers to its replacement.
  ir::ExprArena arena;
  std::vector<ExprId> map(in.exprs.size(), ir::kNoExpr);
  for (ExprId id = 0; id < in.exprs.size(); ++id) {
    ir::Node n = in.exprs[id];
    if (n.a != ir::kNoExpr) n.a = map[n.a];
    if (n.b != ir::kNoExpr) n.b = map[n.b];
    if (n.c != ir::kNoExpr) n.c = map[n.c];
    if (options.unsupported.count(n.op)) {
      if (n.op == Op::Erf) {
        map[id] = erf_f32(arena, n.a);
        continue;
      }
      throw LegaliseError("kernel '" + in.name + "': the " + options.dialect_name + " dialect cannot print op '" +
                          std::string(ir::op_info(n.op).name) + "' and ingot has no decomposition for it");
    }
    map[id] = arena.make(n);
  }
  out.exprs = std::move(arena);
  auto remap = [&](ExprId e) { return e == ir::kNoExpr ? e : map[e]; };
  for (auto& p : out.params) p.extent = remap(p.extent);
  std::vector<ir::Block*> stack{&out.body};
  while (!stack.empty()) {
    ir::Block* b = stack.back();
    stack.pop_back();
    for (auto& s : *b) {
      ir::for_each_operand(s, [&](ir::ExprId& e) { e = remap(e); });
      stack.push_back(&s.body);
      stack.push_back(&s.else_body);
    }
  }
  return out;
}

}  // namespace ingot::passes
