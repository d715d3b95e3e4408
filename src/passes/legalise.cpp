// Decomposition of ops a dialect cannot print.
#include "ingot/passes/legalise.hpp"

#include <array>
#include <functional>
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

// How one statement is replaced: appends its replacement to `out`, exchanging through shared
// array `scratch`; lid is the linear local id.
using Lowering =
    std::function<void(ir::Kernel& k, const ir::Stmt& s, std::uint32_t scratch, ExprId lid, ir::Block& out)>;

// Replaces every statement of `kind` in `b` (recursively) by what `lower` appends.
void replace_statements(ir::Kernel& k, ir::Block& b, ir::StmtKind kind, std::uint32_t scratch, ExprId lid,
                        const Lowering& lower) {
  ir::Block out;
  for (auto& s : b) {
    replace_statements(k, s.body, kind, scratch, lid, lower);
    replace_statements(k, s.else_body, kind, scratch, lid, lower);
    if (s.kind == kind) {
      lower(k, s, scratch, lid, out);
    } else {
      out.push_back(std::move(s));
    }
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

// `in` with every `kind` statement lowered through one shared array of per_thread *
// max_group_threads elements of `type` (declared first); `what` names the statements in the error
// for a kernel without launch bounds.
ir::Kernel exchange_through_shared(const ir::Kernel& in, ir::StmtKind kind, DType type, std::uint32_t per_thread,
                                   const std::string& what, const std::string& dialect, const Lowering& lower) {
  if (!in.bounds.max_group_threads) {
    throw LegaliseError("kernel '" + in.name + "': the " + what + " statements on the " + dialect +
                        " dialect need launch bounds (the shared-memory exchange is sized by them)");
  }
  ir::Kernel k = in;
  // the linear local id, computed once at the top of the kernel (each exchange uses it several times)
  ir::Stmt lid_let;
  lid_let.kind = ir::StmtKind::Let;
  lid_let.var = static_cast<ir::VarId>(k.vars.size());
  k.vars.push_back(ir::VarInfo{DType::u32, false, "lid"});
  lid_let.a = linear_local_id(k.exprs);
  const ExprId lid = k.exprs.make({Op::VarRef, DType::u32, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, lid_let.var});
  const auto scratch = static_cast<std::uint32_t>(k.shared.size());
  k.shared.push_back(ir::SharedArray{type, k.bounds.max_group_threads * per_thread, what});
  replace_statements(k, k.body, kind, scratch, lid, lower);
  ir::Stmt alloc;
  alloc.kind = ir::StmtKind::SharedAlloc;
  alloc.shared = scratch;
  k.body.insert(k.body.begin(), {alloc, lid_let});
  ir::renumber(k);
  return k;
}

// The first half of an exchange through shared array `scratch` (u32): barrier; scratch[lid] = bits; barrier
// (the first barrier keeps a previous exchange's reads ahead of this one's writes).
void publish(std::uint32_t scratch, ExprId lid, ExprId bits, ir::Block& out) {
  ir::Stmt barrier;
  barrier.kind = ir::StmtKind::Barrier;
  out.push_back(barrier);
  ir::Stmt put;
  put.kind = ir::StmtKind::Store;
  put.mem = ir::MemRef{ir::Space::Shared, scratch};
  put.a = lid;
  put.b = bits;
  out.push_back(put);
  out.push_back(barrier);
}

// One Shuffle: barrier; scratch[lid] = bits(a); barrier; var = value(scratch[(lid & ~(L-1)) + b]).
void lower_shuffle(ir::Kernel& k, const ir::Stmt& s, std::uint32_t scratch, ExprId lid, ir::Block& out) {
  ir::ExprArena& a = k.exprs;
  const DType t = a[s.a].type;
  const std::uint64_t mem = ir::encode_mem(ir::MemRef{ir::Space::Shared, scratch});
  publish(scratch, lid, t == DType::u32 ? s.a : a.unary(Op::Bitcast, DType::u32, s.a), out);
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
    value.a = a.unary(Op::Bitcast, t, a.make({Op::VarRef, DType::u32, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, let.var}));
    out.push_back(let);
    out.push_back(value);
    return;
  }
  out.push_back(let);
}

constexpr std::uint32_t kMmaSlots = 12;  // per lane: 8 values of A, 4 of B

// One Mma: the lanes' A and B values (rounded) into their slots of shared array `scratch`, then 16
// steps k, each reading the lane's two A and two B values of step k once from their owners' slots
// and adding their four products to the lane's accumulators (legalise.hpp). (Reading each
// product's operands anew, 128 loads per Mma, printed 4x the OpenCL C — 18.6 MB for the grouped
// 3-D bench kernel's 420 Mma — and built ~30x slower on PoCL without optimisation. A run-time loop
// over k prints less still, but PoCL's loop passes took minutes per kernel on it.)
// The slots are f32, or (compact: the array's type is the Mma's elem) the 16-bit values themselves, half the
// shared memory: slots 2j and 2j + 1 of a lane hold steps k and k + 1 of one row or column, so each pair is one
// 4-byte store and one 4-byte load, and every value read is converted to f32 (exact) before its products.
void lower_mma(ir::Kernel& k, const ir::Stmt& s, std::uint32_t scratch, ExprId lid, ir::Block& out) {
  ir::ExprArena& a = k.exprs;
  const ir::MemRef mem{ir::Space::Shared, scratch};
  const DType slot_type = k.shared[scratch].type;
  const bool compact = slot_type != DType::f32;
  const auto u = [&](std::uint32_t v) { return a.const_u32(v); };
  const auto add = [&](ExprId x, ExprId y) { return a.binary(Op::Add, DType::u32, x, y); };
  const auto mul = [&](ExprId x, ExprId y) { return a.binary(Op::Mul, DType::u32, x, y); };
  const auto var_ref = [&](ir::VarId v) {
    return a.make({Op::VarRef, k.vars[v].type, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, v});
  };
  const auto new_let = [&](ExprId value, const std::string& hint) {
    ir::Stmt let;
    let.kind = ir::StmtKind::Let;
    let.var = static_cast<ir::VarId>(k.vars.size());
    k.vars.push_back(ir::VarInfo{a[value].type, false, hint});
    let.a = value;
    out.push_back(let);
    return var_ref(let.var);
  };
  ir::Stmt barrier;
  barrier.kind = ir::StmtKind::Barrier;
  out.push_back(barrier);
  // value i rounded to elem (in the slot type); a value converted from elem is already exact (f16/bf16 -> f32 ->
  // f16/bf16 is the identity but for NaN payloads, which ir.hpp leaves unspecified): no second rounding, which keeps
  // the 16-bit conversion code of dialects without native conversions out of every exchange.
  const auto rounded = [&](std::uint32_t i) {
    const ir::Node& v = a[s.values[i]];
    const bool exact = v.op == Op::Cast && v.type == DType::f32 && a[v.a].type == s.elem;
    if (compact) return exact ? v.a : a.unary(Op::Cast, s.elem, s.values[i]);
    return exact ? s.values[i] : a.unary(Op::Cast, DType::f32, a.unary(Op::Cast, s.elem, s.values[i]));
  };
  const std::uint32_t per_store = compact ? 2 : 1;
  for (std::uint32_t i = 0; i < kMmaSlots; i += per_store) {
    ir::Stmt put;
    put.kind = compact ? ir::StmtKind::StoreVec : ir::StmtKind::Store;
    put.mem = mem;
    put.a = add(mul(lid, u(kMmaSlots)), u(i));
    if (compact) {
      put.values = {rounded(i), rounded(i + 1)};
    } else {
      put.b = rounded(i);
    }
    out.push_back(put);
  }
  out.push_back(barrier);
  // d_i = D[g + 8*(i/2)][2t + i%2], g = lane / 4, t = lane % 4. At step kk, A[row][kk] sits with lane
  // 4*(row % 8) + (kk % 8)/2 = 4g + q (q = (kk % 8)/2), slot kk%2 + 2*(row/8) + 4*(kk/8); B[kk][col] with lane
  // 4*col + q, slot 8 + kk%2 + 2*(kk/8).
  const ExprId lane = a.binary(Op::BitAnd, DType::u32, lid, u(ir::kMmaLanes - 1));
  const ExprId base = a.binary(Op::BitAnd, DType::u32, lid, u(~(ir::kMmaLanes - 1)));
  const ExprId g = a.binary(Op::Shr, DType::u32, lane, u(2));
  const ExprId t = a.binary(Op::BitAnd, DType::u32, lane, u(3));
  // the slots of lane 4g and of lane 8t (column 2t), each step adds 12q
  const ExprId a_row = new_let(mul(add(base, mul(g, u(4))), u(kMmaSlots)), "mma_arow");
  const ExprId b_col = new_let(mul(add(base, mul(t, u(8))), u(kMmaSlots)), "mma_bcol");
  std::array<ExprId, 4> acc{s.values[12], s.values[13], s.values[14], s.values[15]};
  // slot `offset` of `at` as f32, for steps kk (first) and kk + 1 where compact
  const auto slots = [&](ExprId at, std::uint32_t offset, const char* hint) {
    const ExprId index = offset ? add(at, u(offset)) : at;
    if (!compact) {
      return std::array<ExprId, 2>{
          new_let(a.make({Op::Load, DType::f32, index, ir::kNoExpr, ir::kNoExpr, ir::encode_mem(mem)}), hint),
          ir::kNoExpr};
    }
    ir::Stmt pair;
    pair.kind = ir::StmtKind::LoadVec;
    pair.mem = mem;
    pair.a = index;
    for (int j = 0; j < 2; ++j) {
      pair.vars.push_back(static_cast<ir::VarId>(k.vars.size()));
      k.vars.push_back(ir::VarInfo{slot_type, false, hint});
    }
    out.push_back(pair);
    return std::array<ExprId, 2>{new_let(a.unary(Op::Cast, DType::f32, var_ref(pair.vars[0])), hint),
                                 new_let(a.unary(Op::Cast, DType::f32, var_ref(pair.vars[1])), hint)};
  };
  for (std::uint32_t kk = 0; kk < 16; kk += per_store) {
    const std::uint32_t q12 = (kk % 8) / 2 * kMmaSlots;
    const auto a0 = slots(a_row, q12 + kk % 2 + 4 * (kk / 8), "mma_a");                      // A[g][kk]
    const auto a1 = slots(a_row, q12 + kk % 2 + 4 * (kk / 8) + 2, "mma_a");                  // A[g + 8][kk]
    const auto b0 = slots(b_col, q12 + 8 + kk % 2 + 2 * (kk / 8), "mma_b");                  // B[kk][2t]
    const auto b1 = slots(b_col, q12 + 8 + kk % 2 + 2 * (kk / 8) + 4 * kMmaSlots, "mma_b");  // B[kk][2t + 1]
    for (std::uint32_t step = 0; step < per_store; ++step) {  // kk, then kk + 1 (compact): the order of k kept
      const std::array<std::array<ExprId, 2>, 4> factors{
          {{a0[step], b0[step]}, {a0[step], b1[step]}, {a1[step], b0[step]}, {a1[step], b1[step]}}};
      for (std::uint32_t i = 0; i < 4; ++i) {
        acc[i] = new_let(a.make({Op::Fma, DType::f32, factors[i][0], factors[i][1], acc[i], 0}), "mma_acc");
      }
    }
  }
  for (std::uint32_t i = 0; i < 4; ++i) {
    ir::Stmt d;
    d.kind = ir::StmtKind::Let;
    d.var = s.vars[i];
    d.a = acc[i];
    out.push_back(d);
  }
}

// The element type of every Mma of b (DType::f32 where there are none, DType::u8 where they differ).
DType mma_elem(const ir::Block& b, DType seen = DType::f32) {
  for (const auto& s : b) {
    if (s.kind == ir::StmtKind::Mma) seen = seen == DType::f32 || seen == s.elem ? s.elem : DType::u8;
    seen = mma_elem(s.else_body, mma_elem(s.body, seen));
  }
  return seen;
}

bool has_statement(const ir::Block& b, ir::StmtKind kind) {
  for (const auto& s : b) {
    if (s.kind == kind || has_statement(s.body, kind) || has_statement(s.else_body, kind)) return true;
  }
  return false;
}

// The mma exchange's slot type: f32, or the Mmas' one 16-bit elem where the f32 slots (with the shuffle exchange
// still to come) would take the kernel's shared memory over the dialect's budget.
DType mma_slot_type(const ir::Kernel& k, const LegaliseOptions& options) {
  const DType elem = mma_elem(k.body);
  if (!options.shared_budget || (elem != DType::f16 && elem != DType::bf16)) return DType::f32;
  const auto rounded = [](std::uint64_t bytes) { return (bytes + 15) / 16 * 16; };
  std::uint64_t bytes = ir::shared_layout(k).bytes + rounded(std::uint64_t{k.bounds.max_group_threads} * kMmaSlots * 4);
  if (!options.native_shuffle && ir::max_shuffle_lanes(k) > 0) {  // the shuffle exchange legalise adds next
    bytes += rounded(std::uint64_t{k.bounds.max_group_threads} * 4);
  }
  return bytes > options.shared_budget ? elem : DType::f32;
}

// Every CopyAsync of b as a load_vec and a store_vec (zeros where its condition is false), every
// AsyncCommit and AsyncWait dropped (legalise.hpp).
void copy_at_once(ir::Kernel& k, ir::Block& b) {
  ir::Block out;
  for (auto& s : b) {
    copy_at_once(k, s.body);
    copy_at_once(k, s.else_body);
    if (s.kind == ir::StmtKind::AsyncCommit || s.kind == ir::StmtKind::AsyncWait) continue;
    if (s.kind != ir::StmtKind::CopyAsync) {
      out.push_back(std::move(s));
      continue;
    }
    const DType t = k.mem_type(s.mem);
    ir::Stmt load;
    load.kind = ir::StmtKind::LoadVec;
    load.mem = s.mem;
    load.a = s.b;
    ir::Stmt put;
    put.kind = ir::StmtKind::StoreVec;
    put.mem = ir::MemRef{ir::Space::Shared, s.shared};
    put.a = s.a;
    const ExprId zero = k.exprs.constant(t, 0);
    for (std::uint32_t j = 0; j < s.count; ++j) {
      load.vars.push_back(static_cast<ir::VarId>(k.vars.size()));
      k.vars.push_back(ir::VarInfo{t, false, "cp"});
      const ExprId v = k.exprs.make({Op::VarRef, t, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, load.vars.back()});
      put.values.push_back(k.exprs.make({Op::Select, t, s.c, v, zero, 0}));
    }
    out.push_back(std::move(load));
    out.push_back(std::move(put));
  }
  b = std::move(out);
}

// LoadMatrix s's values 2i and 2i+1: the pair at row `row` (a u32 variable) + col; matrix_col gives the lane's
// column, 2 (lane % 4).
ir::Stmt matrix_pair(ir::Kernel& k, const ir::Stmt& s, std::uint32_t i, ir::VarId row, ExprId col) {
  ir::ExprArena& a = k.exprs;
  ir::Stmt pair;
  pair.kind = ir::StmtKind::LoadVec;
  pair.mem = s.mem;
  pair.a =
      a.binary(Op::Add, DType::u32, a.make({Op::VarRef, DType::u32, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, row}), col);
  pair.vars = {s.vars[2 * std::size_t{i}], s.vars[2 * std::size_t{i} + 1]};
  return pair;
}
ExprId matrix_col(ir::ExprArena& a, ExprId lane) {
  return a.binary(Op::Mul, DType::u32, a.binary(Op::BitAnd, DType::u32, lane, a.const_u32(3)), a.const_u32(2));
}

// Transposed LoadMatrix s's value v: the element at row `row` (a u32 variable) + lane / 4.
ir::Stmt matrix_element(ir::Kernel& k, const ir::Stmt& s, std::size_t v, ir::VarId row, ExprId quad) {
  ir::ExprArena& a = k.exprs;
  ir::Stmt e;
  e.kind = ir::StmtKind::Let;
  e.var = s.vars[v];
  const ExprId at =
      a.binary(Op::Add, DType::u32, a.make({Op::VarRef, DType::u32, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, row}), quad);
  e.a = a.make({Op::Load, k.mem_type(s.mem), at, ir::kNoExpr, ir::kNoExpr, ir::encode_mem(s.mem)});
  return e;
}

// LoadMatrix s's row index as u32; new_row_var: a fresh u32 variable for one matrix's row.
ExprId matrix_row_index(ir::ExprArena& a, const ir::Stmt& s) {
  return a[s.a].type == DType::u32 ? s.a : a.unary(Op::Cast, DType::u32, s.a);
}
ir::VarId new_row_var(ir::Kernel& k) {
  k.vars.push_back(ir::VarInfo{DType::u32, false, "lm_row"});
  return static_cast<ir::VarId>(k.vars.size() - 1);
}

// Every LoadMatrix of b as four shuffles of the row index and four load_vec of a pair (legalise.hpp).
void load_matrix_by_shuffles(ir::Kernel& k, ir::Block& b, ExprId lid) {
  ir::Block out;
  for (auto& s : b) {
    load_matrix_by_shuffles(k, s.body, lid);
    load_matrix_by_shuffles(k, s.else_body, lid);
    if (s.kind != ir::StmtKind::LoadMatrix) {
      out.push_back(std::move(s));
      continue;
    }
    ir::ExprArena& a = k.exprs;
    const auto u = [&](std::uint32_t v) { return a.const_u32(v); };
    const ExprId row = matrix_row_index(a, s);
    const ExprId lane = a.binary(Op::BitAnd, DType::u32, lid, u(ir::kMmaLanes - 1));
    const ExprId col = matrix_col(a, lane);
    if (s.transpose) {  // per matrix: the rows of lanes 8i + 2t and 8i + 2t + 1, element lane / 4 of each
      const ExprId quad = a.binary(Op::Shr, DType::u32, lane, u(2));
      for (std::uint32_t i = 0; i < ir::kMatrixCount; ++i) {
        for (std::uint32_t j = 0; j < 2; ++j) {
          ir::Stmt shfl;
          shfl.kind = ir::StmtKind::Shuffle;
          shfl.var = new_row_var(k);
          shfl.a = row;
          shfl.b = a.binary(Op::Add, DType::u32, u(8 * i + j), col);
          shfl.lanes = ir::kMmaLanes;
          out.push_back(shfl);
          out.push_back(matrix_element(k, s, 2 * i + j, shfl.var, quad));
        }
      }
      continue;
    }
    for (std::uint32_t i = 0; i < ir::kMatrixCount; ++i) {
      ir::Stmt shfl;
      shfl.kind = ir::StmtKind::Shuffle;
      shfl.var = new_row_var(k);
      shfl.a = row;
      shfl.b = a.binary(Op::Add, DType::u32, u(8 * i), a.binary(Op::Shr, DType::u32, lane, u(2)));
      shfl.lanes = ir::kMmaLanes;
      out.push_back(shfl);
      out.push_back(matrix_pair(k, s, i, shfl.var, col));
    }
  }
  b = std::move(out);
}

// One LoadMatrix where shuffles are exchanged through shared memory too: one exchange for its four rows,
//   barrier; scratch[lid] = a; barrier; r_i = scratch[(lid & ~31) + 8i + lane/4]; (v_2i, v_2i+1) = pair at r_i
// (two barriers instead of the eight of four separate shuffles); transposed, v_2i+j = element lane/4 of the row
// scratch[(lid & ~31) + 8i + 2(lane%4) + j].
void lower_load_matrix(ir::Kernel& k, const ir::Stmt& s, std::uint32_t scratch, ExprId lid, ir::Block& out) {
  ir::ExprArena& a = k.exprs;
  const auto u = [&](std::uint32_t v) { return a.const_u32(v); };
  publish(scratch, lid, matrix_row_index(a, s), out);
  const ExprId lane = a.binary(Op::BitAnd, DType::u32, lid, u(ir::kMmaLanes - 1));
  const ExprId base = a.binary(Op::BitAnd, DType::u32, lid, u(~(ir::kMmaLanes - 1)));
  const ExprId quad = a.binary(Op::Shr, DType::u32, lane, u(2));
  const ExprId col = matrix_col(a, lane);
  const std::uint64_t mem = ir::encode_mem(ir::MemRef{ir::Space::Shared, scratch});
  if (s.transpose) {  // per matrix: the rows of lanes 8i + 2t and 8i + 2t + 1, element lane / 4 of each
    for (std::uint32_t i = 0; i < ir::kMatrixCount; ++i) {
      for (std::uint32_t j = 0; j < 2; ++j) {
        ir::Stmt row;
        row.kind = ir::StmtKind::Let;
        row.var = new_row_var(k);
        const ExprId at = a.binary(Op::Add, DType::u32, a.binary(Op::Add, DType::u32, base, u(8 * i + j)), col);
        row.a = a.make({Op::Load, DType::u32, at, ir::kNoExpr, ir::kNoExpr, mem});
        out.push_back(row);
        out.push_back(matrix_element(k, s, 2 * i + j, row.var, quad));
      }
    }
    return;
  }
  for (std::uint32_t i = 0; i < ir::kMatrixCount; ++i) {
    ir::Stmt row;
    row.kind = ir::StmtKind::Let;
    row.var = new_row_var(k);
    const ExprId at = a.binary(Op::Add, DType::u32, a.binary(Op::Add, DType::u32, base, u(8 * i)), quad);
    row.a = a.make({Op::Load, DType::u32, at, ir::kNoExpr, ir::kNoExpr, mem});
    out.push_back(row);
    out.push_back(matrix_pair(k, s, i, row.var, col));
  }
}

}  // namespace

ir::Kernel legalise(const ir::Kernel& in, const LegaliseOptions& options) {
  if (!options.native_async_copy &&
      (has_statement(in.body, ir::StmtKind::CopyAsync) || has_statement(in.body, ir::StmtKind::AsyncCommit) ||
       has_statement(in.body, ir::StmtKind::AsyncWait))) {
    ir::Kernel k = in;
    copy_at_once(k, k.body);
    ir::renumber(k);
    LegaliseOptions rest = options;
    rest.native_async_copy = true;
    return legalise(k, rest);
  }
  if (!options.native_load_matrix && !options.native_shuffle && ir::has_load_matrix(in)) {
    LegaliseOptions rest = options;
    rest.native_load_matrix = true;
    return legalise(exchange_through_shared(in, ir::StmtKind::LoadMatrix, DType::u32, 1, "load_matrix",
                                            options.dialect_name, lower_load_matrix),
                    rest);
  }
  if (!options.native_load_matrix && ir::has_load_matrix(in)) {
    ir::Kernel k = in;
    load_matrix_by_shuffles(k, k.body, linear_local_id(k.exprs));
    ir::renumber(k);
    LegaliseOptions rest = options;
    rest.native_load_matrix = true;
    return legalise(k, rest);
  }
  if (!options.native_mma && ir::has_mma(in)) {
    LegaliseOptions rest = options;
    rest.native_mma = true;
    return legalise(exchange_through_shared(in, ir::StmtKind::Mma, mma_slot_type(in, options), kMmaSlots, "mma",
                                            options.dialect_name, lower_mma),
                    rest);
  }
  if (!options.native_shuffle && ir::max_shuffle_lanes(in) > 0) {
    LegaliseOptions rest = options;
    rest.native_shuffle = true;
    return legalise(exchange_through_shared(in, ir::StmtKind::Shuffle, DType::u32, 1, "shuffle", options.dialect_name,
                                            lower_shuffle),
                    rest);
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
  for (auto& e : out.preconditions) e = remap(e);
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
