// The tracing context: records statements into the kernel being built.
#include <atomic>
#include <utility>

#include "ingot/dsl.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::dsl {

namespace {
// Process-wide source of builder serials. It carries no behaviour, only uniqueness, so that a
// Val kept from a finished trace is refused even when a new builder reuses its address.
std::uint64_t next_serial() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}
}  // namespace

KernelBuilder::KernelBuilder(std::string name) : serial_(next_serial()) {
  k_.name = std::move(name);
  blocks_.push_back(&k_.body);
}

std::uint32_t KernelBuilder::add_param(const std::string& name, ir::ParamKind kind, DType t, ir::ExprId extent) {
  for (const auto& p : k_.params) {
    if (p.name == name) throw TraceError("kernel '" + k_.name + "': parameter '" + name + "' declared twice");
  }
  if (name.empty()) throw TraceError("kernel '" + k_.name + "': a parameter needs a name");
  if (extent != ir::kNoExpr && !is_integer(k_.exprs[extent].type)) {
    throw TraceError("kernel '" + k_.name + "': extent of '" + name + "' must be an integer expression");
  }
  k_.params.push_back(ir::Param{name, kind, t, extent});
  return static_cast<std::uint32_t>(k_.params.size() - 1);
}

std::uint32_t KernelBuilder::add_shared(const std::string& name, DType t, std::uint32_t count) {
  if (count == 0) throw TraceError("kernel '" + k_.name + "': shared array '" + name + "' of size 0");
  k_.shared.push_back(ir::SharedArray{t, count, name});
  const auto id = static_cast<std::uint32_t>(k_.shared.size() - 1);
  ir::Stmt s;
  s.kind = ir::StmtKind::SharedAlloc;
  s.shared = id;
  push(std::move(s));
  return id;
}

Val<u32> KernelBuilder::builtin(ir::Op op, int axis) { return Val<u32>(this, builtin_id(op, axis, DType::u32)); }

ir::ExprId KernelBuilder::builtin_id(ir::Op op, int axis, DType t) {
  if (axis < 0 || axis > 2) throw TraceError("kernel '" + k_.name + "': thread-index axis must be 0, 1 or 2");
  return k_.exprs.make({op, t, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, static_cast<std::uint64_t>(axis)});
}

ir::ExprId KernelBuilder::var_ref(ir::VarId v) {
  return k_.exprs.make({ir::Op::VarRef, k_.vars.at(v).type, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, v});
}

ir::VarId KernelBuilder::new_var(DType t, bool is_mutable, const std::string& hint) {
  k_.vars.push_back(ir::VarInfo{t, is_mutable, hint});
  return static_cast<ir::VarId>(k_.vars.size() - 1);
}

ir::Stmt& KernelBuilder::push(ir::Stmt s) {
  if (finished_) throw TraceError("kernel '" + k_.name + "': statement added after the trace finished");
  s.loc = k_.next_loc++;
  ir::Block& b = *blocks_.back();
  b.push_back(std::move(s));
  last_if_block_ = nullptr;
  return b.back();
}

void KernelBuilder::emit_let(ir::VarId v, ir::ExprId value) {
  if (k_.vars.at(v).type != k_.exprs[value].type)
    throw TraceError("kernel '" + k_.name + "': let of a value of another type");
  ir::Stmt s;
  s.kind = ir::StmtKind::Let;
  s.var = v;
  s.a = value;
  push(std::move(s));
}

void KernelBuilder::emit_assign(ir::VarId v, ir::ExprId value) {
  if (k_.vars.at(v).type != k_.exprs[value].type)
    throw TraceError("kernel '" + k_.name + "': assignment of a value of another type");
  ir::Stmt s;
  s.kind = ir::StmtKind::Assign;
  s.var = v;
  s.a = value;
  push(std::move(s));
}

void KernelBuilder::emit_store(ir::MemRef m, ir::ExprId index, ir::ExprId value) {
  ir::Stmt s;
  s.kind = ir::StmtKind::Store;
  s.mem = m;
  s.a = index;
  s.b = value;
  push(std::move(s));
}

ir::ExprId KernelBuilder::emit_load(ir::MemRef m, ir::ExprId index) {
  const DType t = k_.mem_type(m);
  const ir::ExprId load = k_.exprs.make({ir::Op::Load, t, index, ir::kNoExpr, ir::kNoExpr, ir::encode_mem(m)});
  const ir::VarId v = new_var(t, false, m.space == ir::Space::Global ? k_.params[m.id].name : k_.shared[m.id].hint);
  emit_let(v, load);
  return var_ref(v);
}

namespace {
void check_vec_width(const ir::Kernel& k, ir::MemRef m, std::size_t width) {
  if (!ir::vector_width_ok(k.mem_type(m), width)) {
    throw TraceError("kernel '" + k.name + "': vector access of " + std::to_string(width) + " x " +
                     std::string(dtype_name(k.mem_type(m))) + " on '" + k.mem_name(m) + "' is " +
                     std::to_string(width * dtype_size(k.mem_type(m))) +
                     " bytes; use 4, 8 or 16 bytes (at least 2 elements)");
  }
}
}  // namespace

std::vector<ir::ExprId> KernelBuilder::emit_load_vec(ir::MemRef m, ir::ExprId index, std::uint32_t width) {
  check_vec_width(k_, m, width);
  const DType t = k_.mem_type(m);
  const std::string& hint = m.space == ir::Space::Global ? k_.params[m.id].name : k_.shared[m.id].hint;
  ir::Stmt s;
  s.kind = ir::StmtKind::LoadVec;
  s.mem = m;
  s.a = index;
  std::vector<ir::ExprId> out;
  for (std::uint32_t j = 0; j < width; ++j) {
    s.vars.push_back(new_var(t, false, hint));
    out.push_back(var_ref(s.vars.back()));
  }
  push(std::move(s));
  return out;
}

void KernelBuilder::emit_store_vec(ir::MemRef m, ir::ExprId index, const std::vector<ir::ExprId>& values) {
  check_vec_width(k_, m, values.size());
  for (ir::ExprId v : values) {
    if (k_.exprs[v].type != k_.mem_type(m)) {
      throw TraceError("kernel '" + k_.name + "': store_vec value of type " +
                       std::string(dtype_name(k_.exprs[v].type)) + " into '" + k_.mem_name(m) + "' of " +
                       std::string(dtype_name(k_.mem_type(m))) + ": cast the values to the buffer's type");
    }
  }
  ir::Stmt s;
  s.kind = ir::StmtKind::StoreVec;
  s.mem = m;
  s.a = index;
  s.values = values;
  push(std::move(s));
}

void KernelBuilder::emit_copy_async(ir::MemRef dst, ir::ExprId dst_index, ir::MemRef src, ir::ExprId src_index,
                                    std::uint32_t width, ir::ExprId ok) {
  if (dst.space != ir::Space::Shared || src.space != ir::Space::Global) {
    throw TraceError("kernel '" + k_.name + "': copy_async copies from a global buffer ('" + k_.mem_name(src) +
                     "') into a shared array ('" + k_.mem_name(dst) + "')");
  }
  if (k_.mem_type(dst) != k_.mem_type(src)) {
    throw TraceError("kernel '" + k_.name + "': copy_async from '" + k_.mem_name(src) + "' of " +
                     std::string(dtype_name(k_.mem_type(src))) + " into '" + k_.mem_name(dst) + "' of " +
                     std::string(dtype_name(k_.mem_type(dst))) + ": the element types must be equal");
  }
  check_vec_width(k_, src, width);
  ir::Stmt s;
  s.kind = ir::StmtKind::CopyAsync;
  s.shared = dst.id;
  s.a = dst_index;
  s.mem = src;
  s.b = src_index;
  s.c = ok;
  s.count = width;
  push(std::move(s));
}

void KernelBuilder::emit_async_commit() {
  ir::Stmt s;
  s.kind = ir::StmtKind::AsyncCommit;
  push(std::move(s));
}

void KernelBuilder::emit_async_wait(std::uint32_t pending) {
  if (pending > ir::kMaxAsyncGroupsPending) {
    throw TraceError("kernel '" + k_.name + "': async_wait(" + std::to_string(pending) + "): at most " +
                     std::to_string(ir::kMaxAsyncGroupsPending) + " committed groups may stay incomplete");
  }
  ir::Stmt s;
  s.kind = ir::StmtKind::AsyncWait;
  s.count = pending;
  push(std::move(s));
}

ir::ExprId KernelBuilder::emit_atomic(ir::AtomicOp op, ir::MemRef m, ir::ExprId index, ir::ExprId value) {
  const DType t = k_.mem_type(m);
  const ir::VarId v = new_var(t, false, "old");
  ir::Stmt s;
  s.kind = ir::StmtKind::Atomic;
  s.atomic = op;
  s.mem = m;
  s.a = index;
  s.b = value;
  s.var = v;
  s.has_var = true;
  push(std::move(s));
  return var_ref(v);
}

void KernelBuilder::emit_if(ir::ExprId cond, const std::function<void()>& then_body) {
  ir::Stmt s;
  s.kind = ir::StmtKind::If;
  s.a = cond;
  ir::Block* parent = blocks_.back();
  push(std::move(s));
  const std::size_t index = parent->size() - 1;
  blocks_.push_back(&(*parent)[index].body);
  then_body();
  blocks_.pop_back();
  last_if_block_ = parent;
  last_if_index_ = index;
}

void KernelBuilder::emit_else(const std::function<void()>& else_body) {
  ir::Block* parent = blocks_.back();
  if (last_if_block_ != parent || last_if_index_ + 1 != parent->size()) {
    throw TraceError("kernel '" + k_.name + "': else_ must directly follow its if_");
  }
  last_if_block_ = nullptr;
  blocks_.push_back(&(*parent)[last_if_index_].else_body);
  else_body();
  blocks_.pop_back();
}

void KernelBuilder::emit_for(ir::VarId var, ir::ExprId begin, ir::ExprId end, ir::ExprId step,
                             const std::function<void()>& body) {
  ir::Stmt s;
  s.kind = ir::StmtKind::For;
  s.var = var;
  s.a = begin;
  s.b = end;
  s.c = step;
  ir::Block* parent = blocks_.back();
  push(std::move(s));
  blocks_.push_back(&parent->back().body);
  body();
  blocks_.pop_back();
  last_if_block_ = nullptr;
}

void KernelBuilder::launch_bounds(std::uint32_t max_group_threads, std::uint32_t min_groups_per_core) {
  if (max_group_threads == 0) throw TraceError("kernel '" + k_.name + "': launch_bounds needs max_group_threads >= 1");
  k_.bounds = ir::LaunchBounds{max_group_threads, min_groups_per_core};
}

ir::ExprId KernelBuilder::emit_shuffle(ir::ExprId value, ir::ExprId src_lane, std::uint32_t lanes) {
  if (lanes < 2 || lanes > 32 || (lanes & (lanes - 1)) != 0) {
    throw TraceError("kernel '" + k_.name + "': shuffle over " + std::to_string(lanes) +
                     " lanes; use a power of two in [2, 32]");
  }
  const DType t = k_.exprs[value].type;
  ir::Stmt s;
  s.kind = ir::StmtKind::Shuffle;
  s.var = new_var(t, false, "shfl");
  s.a = value;
  s.b = src_lane;
  s.lanes = lanes;
  const ir::VarId v = s.var;
  push(std::move(s));
  return var_ref(v);
}

std::array<ir::ExprId, 8> KernelBuilder::emit_load_matrix(ir::MemRef m, ir::ExprId row_index, bool transpose) {
  if (m.space != ir::Space::Shared) {
    throw TraceError("kernel '" + k_.name + "': load_matrix reads a shared array, not '" + k_.mem_name(m) + "'");
  }
  const DType t = k_.mem_type(m);
  if (dtype_size(t) != 2) {
    throw TraceError("kernel '" + k_.name + "': load_matrix reads 16-bit elements; '" + k_.mem_name(m) + "' holds " +
                     std::string(dtype_name(t)));
  }
  ir::Stmt s;
  s.kind = ir::StmtKind::LoadMatrix;
  s.mem = m;
  s.a = row_index;
  s.transpose = transpose;
  std::array<ir::ExprId, 8> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    s.vars.push_back(new_var(t, false, k_.shared[m.id].hint));
    out[i] = var_ref(s.vars.back());
  }
  push(std::move(s));
  return out;
}

std::array<ir::ExprId, 4> KernelBuilder::emit_mma(DType elem, const std::array<ir::ExprId, 16>& operands) {
  ir::Stmt s;
  s.kind = ir::StmtKind::Mma;
  s.elem = elem;
  s.values.assign(operands.begin(), operands.end());
  std::array<ir::ExprId, 4> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    s.vars.push_back(new_var(DType::f32, false, "mma"));
    out[i] = var_ref(s.vars.back());
  }
  push(std::move(s));
  return out;
}

void KernelBuilder::barrier() {
  ir::Stmt s;
  s.kind = ir::StmtKind::Barrier;
  push(std::move(s));
}

void KernelBuilder::require(const Val<bool>& condition) {
  if (condition.is_literal()) {
    if (condition.literal_bits() == 0) throw TraceError("kernel '" + k_.name + "': a precondition is always false");
    return;
  }
  const ir::ExprId e = condition.id_in(*this);
  // A launch evaluates preconditions from its scalars alone, before any thread exists.
  std::vector<ir::ExprId> todo{e};
  while (!todo.empty()) {
    const ir::Node& n = k_.exprs[todo.back()];
    todo.pop_back();
    if (n.op == ir::Op::VarRef || n.op == ir::Op::Load || ir::op_info(n.op).rule == ir::TypeRule::Builtin) {
      throw TraceError("kernel '" + k_.name + "': a precondition may use only run-time scalars and constants");
    }
    for (ir::ExprId o : {n.a, n.b, n.c})
      if (o != ir::kNoExpr) todo.push_back(o);
  }
  k_.preconditions.push_back(e);
}

ir::ExprId KernelBuilder::cast_to(DType t, ir::ExprId e) {
  if (k_.exprs[e].type == t) return e;
  return k_.exprs.unary(ir::Op::Cast, t, e);
}

ir::Kernel KernelBuilder::finish() {
  if (blocks_.size() != 1) throw TraceError("kernel '" + k_.name + "': trace finished inside a control-flow body");
  finished_ = true;
  ir::renumber(k_);
  return std::move(k_);
}

ir::Kernel trace(const std::string& name, const std::function<void(KernelBuilder&)>& body) {
  KernelBuilder b(name);
  body(b);
  return b.finish();
}

}  // namespace ingot::dsl

namespace ingot::dsl::detail {

std::uint64_t fold_literals(ir::Op op, DType result, DType operand, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::string err;
  const auto v = ir::eval_op(op, result, operand, a, b, c, &err);
  if (!v) throw TraceError("constant expression at trace time: " + err);
  return *v;
}

}  // namespace ingot::dsl::detail
