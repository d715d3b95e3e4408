// The op table, the hash-consing arena and small IR helpers.
#include "ingot/ir.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace ingot::ir {

namespace {
const OpInfo kOps[] = {
#define INGOT_OP(name, arity, rule, spelling, prec) {spelling, arity, TypeRule::rule, prec},
#include "ingot/ops.def"
#undef INGOT_OP
};
}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<int>(op)]; }
int num_ops() { return static_cast<int>(sizeof(kOps) / sizeof(kOps[0])); }

std::uint64_t encode_mem(MemRef m) { return (static_cast<std::uint64_t>(m.space) << 32) | m.id; }
MemRef decode_mem(std::uint64_t imm) {
  return MemRef{static_cast<Space>(imm >> 32), static_cast<std::uint32_t>(imm & 0xffffffffu)};
}

std::size_t ExprArena::Hash::operator()(const Node& n) const {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  mix(static_cast<std::uint64_t>(n.op));
  mix(static_cast<std::uint64_t>(n.type));
  mix(n.a);
  mix(n.b);
  mix(n.c);
  mix(n.imm);
  return static_cast<std::size_t>(h);
}

ExprId ExprArena::make(const Node& n) {
  auto it = index_.find(n);
  if (it != index_.end()) return it->second;
  for (ExprId op : {n.a, n.b, n.c}) {
    if (op != kNoExpr && op >= nodes_.size()) {
      throw std::logic_error("ExprArena::make: operand refers to a node not yet built");
    }
  }
  const auto id = static_cast<ExprId>(nodes_.size());
  nodes_.push_back(n);
  index_.emplace(n, id);
  return id;
}

ExprId ExprArena::const_f32(float v) { return constant(DType::f32, std::bit_cast<std::uint32_t>(v)); }

std::string_view param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::Scalar: return "scalar";
    case ParamKind::In: return "in";
    case ParamKind::Out: return "out";
    case ParamKind::InOut: return "inout";
  }
  return "?";
}

std::string_view atomic_op_name(AtomicOp op) {
  switch (op) {
    case AtomicOp::Add: return "add";
    case AtomicOp::Min: return "min";
    case AtomicOp::Max: return "max";
  }
  return "?";
}

std::string_view stmt_kind_name(StmtKind k) {
  switch (k) {
    case StmtKind::Block: return "block";
    case StmtKind::Let: return "let";
    case StmtKind::Assign: return "assign";
    case StmtKind::Store: return "store";
    case StmtKind::If: return "if";
    case StmtKind::For: return "for";
    case StmtKind::Barrier: return "barrier";
    case StmtKind::SharedAlloc: return "shared";
    case StmtKind::Atomic: return "atomic";
    case StmtKind::LoadVec: return "load_vec";
    case StmtKind::Shuffle: return "shuffle";
    case StmtKind::Mma: return "mma";
    case StmtKind::StoreVec: return "store_vec";
    case StmtKind::CopyAsync: return "copy_async";
    case StmtKind::AsyncCommit: return "async_commit";
    case StmtKind::AsyncWait: return "async_wait";
    case StmtKind::LoadMatrix: return "load_matrix";
  }
  return "?";
}

DType Kernel::mem_type(MemRef m) const {
  return m.space == Space::Global ? params.at(m.id).type : shared.at(m.id).type;
}

std::string Kernel::mem_name(MemRef m) const {
  if (m.space == Space::Global) return m.id < params.size() ? params[m.id].name : "?buffer" + std::to_string(m.id);
  return m.id < shared.size() ? "shared:" + shared[m.id].hint : "?shared" + std::to_string(m.id);
}

bool vector_width_ok(DType t, std::size_t width) {
  if (t == DType::boolean || t == DType::i64) return false;
  const std::size_t bytes = dtype_size(t) * width;
  return width >= 2 && (bytes == 4 || bytes == 8 || bytes == 16);
}

namespace {
void vector_alignment_of(const Kernel& k, const Block& b, std::vector<std::uint32_t>& align) {
  for (const auto& s : b) {
    const bool vec = s.kind == StmtKind::LoadVec || s.kind == StmtKind::StoreVec || s.kind == StmtKind::CopyAsync;
    if (vec && s.mem.space == Space::Global && s.mem.id < align.size()) {
      const std::size_t n = s.kind == StmtKind::LoadVec    ? s.vars.size()
                            : s.kind == StmtKind::StoreVec ? s.values.size()
                                                           : s.count;
      const auto bytes = static_cast<std::uint32_t>(n * dtype_size(k.mem_type(s.mem)));
      align[s.mem.id] = std::max(align[s.mem.id], bytes);
    }
    vector_alignment_of(k, s.body, align);
    vector_alignment_of(k, s.else_body, align);
  }
}
}  // namespace

SharedLayout shared_layout(const Kernel& k) {
  SharedLayout l;
  for (const SharedArray& a : k.shared) {
    l.offsets.push_back(l.bytes);
    l.bytes += (std::uint64_t{a.count} * dtype_size(a.type) + 15) / 16 * 16;
  }
  return l;
}

std::vector<std::uint32_t> vector_access_alignment(const Kernel& k) {
  std::vector<std::uint32_t> align(k.params.size(), 1);
  vector_alignment_of(k, k.body, align);
  return align;
}

namespace {
std::uint32_t max_lanes_in(const Block& b) {
  std::uint32_t m = 0;
  for (const auto& s : b) {
    if (s.kind == StmtKind::Shuffle) m = std::max(m, s.lanes);
    if (s.kind == StmtKind::Mma || s.kind == StmtKind::LoadMatrix) m = std::max(m, kMmaLanes);
    m = std::max({m, max_lanes_in(s.body), max_lanes_in(s.else_body)});
  }
  return m;
}
}  // namespace

std::uint32_t max_shuffle_lanes(const Kernel& k) { return max_lanes_in(k.body); }

namespace {
bool has_kind_in(const Block& b, StmtKind kind) {
  for (const auto& s : b) {
    if (s.kind == kind || has_kind_in(s.body, kind) || has_kind_in(s.else_body, kind)) return true;
  }
  return false;
}
}  // namespace

bool has_mma(const Kernel& k) { return has_kind_in(k.body, StmtKind::Mma); }
bool has_load_matrix(const Kernel& k) { return has_kind_in(k.body, StmtKind::LoadMatrix); }

namespace {
void renumber_block(Block& b, std::uint32_t& next) {
  for (auto& s : b) {
    s.loc = next++;
    renumber_block(s.body, next);
    renumber_block(s.else_body, next);
  }
}
}  // namespace

namespace {
// Two 64-bit lanes, one 64-bit word per step (strings 8 bytes a word): every launch looks its
// kernel up by this digest (codegen::SourceCache), so it must cost microseconds, not the tens to
// hundreds a byte-at-a-time hash took for a convolution's IR.
struct Digest {
  std::uint64_t a = 0x243f6a8885a308d3ull;
  std::uint64_t b = 0x13198a2e03707344ull;
  static std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser: a bijection
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // One multiply per lane and word (the rotation carries the product's high bits down); the lanes
  // differ in constant and order of operations, and are mixed once at the end (final()).
  void add(std::uint64_t v) {
    a = std::rotl((a ^ v) * 0x9e3779b97f4a7c15ull, 31);
    b = std::rotl((b + v) * 0xc2b2ae3d27d4eb4full, 27) ^ v;
  }
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> final() const { return {mix(a ^ (b >> 1)), mix(b ^ a)}; }
  void add(const std::string& s) {
    add(s.size());
    for (std::size_t i = 0; i < s.size(); i += 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, s.data() + i, std::min<std::size_t>(8, s.size() - i));
      add(w);
    }
  }
  void add_block(const Block& blk) {
    add(blk.size());
    for (const Stmt& st : blk) {
      add(static_cast<std::uint64_t>(st.kind));
      add(st.var);
      add(st.has_var);
      add(st.a);
      add(st.b);
      add(st.c);
      add(encode_mem(st.mem));
      add(static_cast<std::uint64_t>(st.atomic));
      add(st.shared);
      add(st.lanes);
      add(st.count);
      add(st.transpose);
      add(static_cast<std::uint64_t>(st.elem));
      add(st.vars.size());
      for (VarId v : st.vars) add(v);
      add(st.values.size());
      for (ExprId v : st.values) add(v);
      add_block(st.body);
      add_block(st.else_body);
    }
  }
};
}  // namespace

std::string fingerprint(const Kernel& k) {
  Digest d;
  d.add(k.name);
  d.add(k.bounds.max_group_threads);
  d.add(k.bounds.min_groups_per_core);
  d.add(k.params.size());
  for (const auto& p : k.params) {
    d.add(p.name);
    d.add(static_cast<std::uint64_t>(p.kind));
    d.add(static_cast<std::uint64_t>(p.type));
    d.add(p.extent);
  }
  d.add(k.exprs.size());
  for (ExprId e = 0; e < k.exprs.size(); ++e) {
    const Node& n = k.exprs[e];
    d.add(static_cast<std::uint64_t>(n.op) | (static_cast<std::uint64_t>(n.type) << 8));
    d.add(n.a);
    d.add(n.b);
    d.add(n.c);
    d.add(n.imm);
  }
  d.add(k.vars.size());
  for (const auto& v : k.vars) {
    d.add(static_cast<std::uint64_t>(v.type) | (v.is_mutable ? 256u : 0u));
    d.add(v.hint);
  }
  d.add(k.shared.size());
  for (const auto& sh : k.shared) {
    d.add(static_cast<std::uint64_t>(sh.type));
    d.add(sh.count);
    d.add(sh.hint);
  }
  d.add_block(k.body);
  // Kernels without preconditions keep the digests they had before preconditions existed.
  if (!k.preconditions.empty()) {
    d.add(k.preconditions.size());
    for (ExprId e : k.preconditions) d.add(e);
  }
  char buf[40];
  const auto [hi, lo] = d.final();
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

void renumber(Kernel& k) {
  std::uint32_t next = 0;
  renumber_block(k.body, next);
  k.next_loc = next;
}

}  // namespace ingot::ir
