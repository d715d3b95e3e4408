// Decomposition of ops a dialect cannot print.
#include "ingot/passes/legalise.hpp"

#include <string>
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

// Replaces every Shuffle of `b` (recursively) by an exchange through shared array `scratch`.
void lower_shuffles(ir::Kernel& k, ir::Block& b, std::uint32_t scratch, ExprId lid) {
  ir::Block out;
  for (auto& s : b) {
    lower_shuffles(k, s.body, scratch, lid);
    lower_shuffles(k, s.else_body, scratch, lid);
    if (s.kind != ir::StmtKind::Shuffle) {
      out.push_back(std::move(s));
      continue;
    }
    ir::ExprArena& a = k.exprs;
    const DType t = a[s.a].type;
    const std::uint64_t mem = ir::encode_mem(ir::MemRef{ir::Space::Shared, scratch});
    ir::Stmt barrier;
    barrier.kind = ir::StmtKind::Barrier;
    out.push_back(barrier);
    ir::Stmt put;
    put.kind = ir::StmtKind::Store;
    put.mem = ir::MemRef{ir::Space::Shared, scratch};
    put.a = lid;
    put.b = t == DType::u32 ? s.a : a.unary(Op::Bitcast, DType::u32, s.a);
    out.push_back(put);
    out.push_back(barrier);
    const ExprId base = a.binary(Op::BitAnd, DType::u32, lid, a.const_u32(~(s.lanes - 1)));
    const ExprId got =
        a.make({Op::Load, DType::u32, a.binary(Op::Add, DType::u32, base, s.b), ir::kNoExpr, ir::kNoExpr, mem});
    // A load is the whole value of a let: the bits first, then (for f32 and i32) their value.
    ir::Stmt let;
    let.kind = ir::StmtKind::Let;
    let.var = s.var;
    let.a = got;
    if (t != DType::u32) {
      let.var = static_cast<ir::VarId>(k.vars.size());
      k.vars.push_back(ir::VarInfo{DType::u32, false, "shfl_bits"});
      ir::Stmt value;
      value.kind = ir::StmtKind::Let;
      value.var = s.var;
      value.a =
          a.unary(Op::Bitcast, t, a.make({Op::VarRef, DType::u32, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, let.var}));
      out.push_back(let);
      out.push_back(value);
      continue;
    }
    out.push_back(let);
  }
  b = std::move(out);
}

// The linear local id: x + size_x * (y + size_y * z).
ExprId linear_local_id(ir::ExprArena& a) {
  auto id = [&](Op op, std::uint64_t axis) {
    return a.make({op, DType::u32, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, axis});
  };
  const ExprId yz = a.binary(Op::Add, DType::u32, id(Op::LocalId, 1),
                             a.binary(Op::Mul, DType::u32, id(Op::GroupSize, 1), id(Op::LocalId, 2)));
  return a.binary(Op::Add, DType::u32, id(Op::LocalId, 0), a.binary(Op::Mul, DType::u32, id(Op::GroupSize, 0), yz));
}

constexpr std::uint32_t kMmaSlots = 12;  // per lane: 8 values of A, 4 of B

// Replaces every Mma of `b` (recursively) by an exchange through f32 shared array `scratch`.
void lower_mmas(ir::Kernel& k, ir::Block& b, std::uint32_t scratch, ExprId lid) {
  ir::Block out;
  for (auto& s : b) {
    lower_mmas(k, s.body, scratch, lid);
    lower_mmas(k, s.else_body, scratch, lid);
    if (s.kind != ir::StmtKind::Mma) {
      out.push_back(std::move(s));
      continue;
    }
    ir::ExprArena& a = k.exprs;
    const ir::MemRef mem{ir::Space::Shared, scratch};
    const auto u = [&](std::uint32_t v) { return a.const_u32(v); };
    const auto add = [&](ExprId x, ExprId y) { return a.binary(Op::Add, DType::u32, x, y); };
    const auto mul = [&](ExprId x, ExprId y) { return a.binary(Op::Mul, DType::u32, x, y); };
    const auto new_let = [&](ExprId value, const std::string& hint) {
      ir::Stmt let;
      let.kind = ir::StmtKind::Let;
      let.var = static_cast<ir::VarId>(k.vars.size());
      k.vars.push_back(ir::VarInfo{a[value].type, false, hint});
      let.a = value;
      out.push_back(let);
      return a.make({Op::VarRef, a[value].type, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, let.var});
    };
    ir::Stmt barrier;
    barrier.kind = ir::StmtKind::Barrier;
    out.push_back(barrier);
    for (std::uint32_t i = 0; i < 12; ++i) {
      ir::Stmt put;
      put.kind = ir::StmtKind::Store;
      put.mem = mem;
      put.a = add(mul(lid, u(kMmaSlots)), u(i));
      put.b = a.unary(Op::Cast, DType::f32, a.unary(Op::Cast, s.elem, s.values[i]));  // rounded to elem
      out.push_back(put);
    }
    out.push_back(barrier);
    const ExprId base = a.binary(Op::BitAnd, DType::u32, lid, u(~(ir::kMmaLanes - 1)));
    const ExprId lane = a.binary(Op::BitAnd, DType::u32, lid, u(ir::kMmaLanes - 1));
    const ExprId g = a.binary(Op::Shr, DType::u32, lane, u(2));
    const ExprId t = a.binary(Op::BitAnd, DType::u32, lane, u(3));
    const auto slot = [&](ExprId owner, std::uint32_t i) {
      return a.make({Op::Load, DType::f32, add(mul(add(base, owner), u(kMmaSlots)), u(i)), ir::kNoExpr, ir::kNoExpr,
                     ir::encode_mem(mem)});
    };
    for (std::uint32_t i = 0; i < 4; ++i) {
      // d_i = D[g + 8*(i/2)][2t + i%2]
      ExprId acc = s.values[12 + i];
      for (std::uint32_t kk = 0; kk < 16; ++kk) {
        // A[row][kk] sits with lane 4*(row % 8) + (kk % 8)/2 = 4g + (kk % 8)/2, slot kk%2 + 2*(row/8) + 4*(kk/8)
        const ExprId va =
            new_let(slot(add(mul(g, u(4)), u((kk % 8) / 2)), kk % 2 + 2 * (i / 2) + 4 * (kk / 8)), "mma_a");
        // B[kk][col] sits with lane 4*col + (kk % 8)/2, col = 2t + i%2, slot 8 + kk%2 + 2*(kk/8)
        const ExprId owner_b = add(mul(add(mul(t, u(2)), u(i % 2)), u(4)), u((kk % 8) / 2));
        const ExprId vb = new_let(slot(owner_b, 8 + kk % 2 + 2 * (kk / 8)), "mma_b");
        acc = new_let(a.make({Op::Fma, DType::f32, va, vb, acc, 0}), "mma_acc");
      }
      ir::Stmt d;
      d.kind = ir::StmtKind::Let;
      d.var = s.vars[i];
      d.a = acc;
      out.push_back(d);
    }
  }
  b = std::move(out);
}

void lower_mmas(ir::Kernel& k) {
  const ExprId lid = linear_local_id(k.exprs);
  const auto scratch = static_cast<std::uint32_t>(k.shared.size());
  k.shared.push_back(ir::SharedArray{DType::f32, k.bounds.max_group_threads * kMmaSlots, "mma"});
  lower_mmas(k, k.body, scratch, lid);
  ir::Stmt alloc;
  alloc.kind = ir::StmtKind::SharedAlloc;
  alloc.shared = scratch;
  k.body.insert(k.body.begin(), alloc);
  ir::renumber(k);
}

void lower_shuffles(ir::Kernel& k) {
  const ExprId lid = linear_local_id(k.exprs);
  const auto scratch = static_cast<std::uint32_t>(k.shared.size());
  k.shared.push_back(ir::SharedArray{DType::u32, k.bounds.max_group_threads, "shuffle"});
  lower_shuffles(k, k.body, scratch, lid);
  ir::Stmt alloc;
  alloc.kind = ir::StmtKind::SharedAlloc;
  alloc.shared = scratch;
  k.body.insert(k.body.begin(), alloc);
  ir::renumber(k);
}

}  // namespace

ir::Kernel legalise(const ir::Kernel& in, const LegaliseOptions& options) {
  if (!options.native_mma && ir::has_mma(in)) {
    if (!in.bounds.max_group_threads) {
      throw LegaliseError("kernel '" + in.name + "': mma on the " + options.dialect_name +
                          " dialect needs launch bounds (the shared-memory exchange is sized by them)");
    }
    ir::Kernel lowered = in;
    lower_mmas(lowered);
    LegaliseOptions rest = options;
    rest.native_mma = true;
    return legalise(lowered, rest);
  }
  if (!options.native_shuffle && ir::max_shuffle_lanes(in) > 0) {
    if (!in.bounds.max_group_threads) {
      throw LegaliseError("kernel '" + in.name + "': shuffles on the " + options.dialect_name +
                          " dialect need launch bounds (the shared-memory exchange is sized by them)");
    }
    ir::Kernel lowered = in;
    lower_shuffles(lowered);
    LegaliseOptions rest = options;
    rest.native_shuffle = true;
    return legalise(lowered, rest);
  }
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
