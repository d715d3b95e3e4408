// ingot/dsl.hpp — the kernel DSL: C++ functions over symbolic values that record IR.
//
// A kernel is a C++ callable taking a KernelBuilder&. Running it once *traces* it: parameters
// are declared on the builder, operators on Val<T> build expression nodes, if_/for_/store/...
// append statements. Plain C++ values are specialisation constants (a C++ loop over them
// unrolls at trace time); run-time sizes are scalar parameters.
//
//   ir::Kernel k = trace("vector_add_f32", [](KernelBuilder& b) {
//     auto n = b.scalar<u32>("n");
//     auto x = b.in<f32>("x", n), y = b.in<f32>("y", n);
//     auto z = b.out<f32>("z", n);
//     auto i = b.program_id(0);
//     if_(i < n, [&] { store(z, i, load(x, i) + load(y, i)); });
//   });
//
// Typing: arithmetic is defined on f32, i32, u32 and i64. Values of f16/bf16 (from loads of
// 16-bit buffers) are promoted to f32 by any arithmetic; u8/u16 promote to u32 and i8 to i32.
// Mixing two different compute types needs an explicit cast<T>(). A symbolic Val<bool> cannot
// be used in a plain C++ `if` (its conversion to bool is deleted): use if_ or select.
//
// Loads happen where they are written, in program order: `i < n && load(x, i) > 0` still loads,
// so tail threads must load a safe index (select(i < n, i, 0u)) rather than rely on &&.
#pragma once

#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "ingot/dtype.hpp"
#include "ingot/ir.hpp"

namespace ingot::dsl {

struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KernelBuilder;

// The type arithmetic on T computes in.
template <class T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<f16> {
  using type = float;
};
template <>
struct ComputeOf<bf16> {
  using type = float;
};
template <>
struct ComputeOf<std::uint8_t> {
  using type = std::uint32_t;
};
template <>
struct ComputeOf<std::uint16_t> {
  using type = std::uint32_t;
};
template <>
struct ComputeOf<std::int8_t> {
  using type = std::int32_t;
};
template <class T>
using compute_t = typename ComputeOf<T>::type;

template <class T>
class Val;
template <class T>
class Var;

namespace detail {
template <class T>
struct SymElem {};
template <class T>
struct SymElem<Val<T>> {
  using type = T;
};
template <class T>
struct SymElem<Var<T>> {
  using type = T;
};
template <class X>
concept Symbolic = requires {
  typename SymElem<std::remove_cvref_t<X>>::type;
};
template <class X>
concept Literal = std::is_arithmetic_v<std::remove_cvref_t<X>>;
template <class X>
concept Operand = Symbolic<X> || Literal<X>;
template <class X>
using elem_t = typename SymElem<std::remove_cvref_t<X>>::type;

// Canonical bits of a host literal converted to T.
template <class T, class L>
std::uint64_t literal_bits(L v) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<std::uint32_t>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, f16>) {
    return f32_to_f16_bits(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bf16>) {
    return f32_to_bf16_bits(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1u : 0u;
  } else {
    static_assert(!std::is_floating_point_v<L>,
                  "a floating-point literal used with an integer value: cast one side explicitly");
    using U = std::make_unsigned_t<T>;
    return static_cast<std::uint64_t>(static_cast<U>(static_cast<T>(v)));
  }
}
}  // namespace detail

// A symbolic value of element type T: an expression node of the kernel being traced, or a
// host literal not yet placed in any kernel (it becomes a constant when combined).
template <class T>
class Val {
 public:
  using elem = T;
  Val() = default;
  Val(KernelBuilder* b, ir::ExprId id);
  // Literals: Val<f32> x = 1.0f; Val<u32> n = 3u;
  template <detail::Literal L>
  Val(L literal) : literal_(detail::literal_bits<T>(literal)), is_literal_(true) {}  // NOLINT
  Val(const Var<T>& v);                                                              // NOLINT: read

  // A symbolic condition must never steer C++ control flow: use if_() or select().
  explicit operator bool() const = delete;

  [[nodiscard]] KernelBuilder* builder() const { return b_; }
  [[nodiscard]] bool is_literal() const { return is_literal_; }
  [[nodiscard]] std::uint64_t literal_bits() const { return literal_; }
  // A literal from canonical bits (see scalar_eval.hpp).
  static Val from_bits(std::uint64_t bits) {
    Val v;
    v.literal_ = bits;
    v.is_literal_ = true;
    return v;
  }
  // The node id in builder b (materialises a literal as a constant node of type T).
  [[nodiscard]] ir::ExprId id_in(KernelBuilder& b) const;
  [[nodiscard]] ir::ExprId id() const { return id_; }

 private:
  KernelBuilder* b_ = nullptr;
  std::uint64_t trace_serial_ = 0;  // tells apart builders that reuse one address
  ir::ExprId id_ = ir::kNoExpr;
  std::uint64_t literal_ = 0;
  bool is_literal_ = false;
};

// A buffer parameter (global memory) or shared array, typed by element.
enum class Access { Read, Write, ReadWrite };
template <class T, Access A>
class Buffer {
 public:
  using elem = T;
  static constexpr Access access = A;
  Buffer() = default;
  Buffer(KernelBuilder* b, ir::MemRef m) : b_(b), mem_(m) {}
  [[nodiscard]] KernelBuilder* builder() const { return b_; }
  [[nodiscard]] ir::MemRef mem() const { return mem_; }

 private:
  KernelBuilder* b_ = nullptr;
  ir::MemRef mem_;
};
template <class T>
using In = Buffer<T, Access::Read>;
template <class T>
using Out = Buffer<T, Access::Write>;
template <class T>
using InOut = Buffer<T, Access::ReadWrite>;
template <class T>
using Shared = Buffer<T, Access::ReadWrite>;
// A run-time scalar parameter is just a value.
template <class T>
using Scalar = Val<T>;

// The tracing context. One per kernel trace; holds the IR being built.
class KernelBuilder {
 public:
  explicit KernelBuilder(std::string name);
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  // ---- parameters, in declaration order
  template <class T>
  Val<T> scalar(const std::string& name) {
    static_assert(is_compute_type(dtype_of<T>) || std::is_same_v<T, bool>, "scalars are f32, i32, u32, i64 or bool");
    const auto idx = add_param(name, ir::ParamKind::Scalar, dtype_of<T>, ir::kNoExpr);
    return Val<T>(this, k_.exprs.make({ir::Op::ParamRef, dtype_of<T>, ir::kNoExpr, ir::kNoExpr, ir::kNoExpr, idx}));
  }
  template <class T, class E>
  In<T> in(const std::string& name, const E& extent) {
    return In<T>(this, {ir::Space::Global, add_param(name, ir::ParamKind::In, dtype_of<T>, extent_id(extent))});
  }
  template <class T, class E>
  Out<T> out(const std::string& name, const E& extent) {
    return Out<T>(this, {ir::Space::Global, add_param(name, ir::ParamKind::Out, dtype_of<T>, extent_id(extent))});
  }
  template <class T, class E>
  InOut<T> inout(const std::string& name, const E& extent) {
    return InOut<T>(this, {ir::Space::Global, add_param(name, ir::ParamKind::InOut, dtype_of<T>, extent_id(extent))});
  }
  // A work-group shared array of `count` elements, declared at the current point.
  template <class T>
  Shared<T> shared(const std::string& name, std::uint32_t count) {
    return Shared<T>(this, {ir::Space::Shared, add_shared(name, dtype_of<T>, count)});
  }

  // A constant of type T placed in this kernel, for where a literal has no kernel to go into
  // (a run-time loop over constant bounds: for_(k.constant<u32>(0), C, ...)).
  template <class T, detail::Literal L>
  Val<T> constant(L value) {
    return Val<T>(this, k_.exprs.constant(dtype_of<T>, detail::literal_bits<T>(value)));
  }

  // ---- thread indexing (u32), axis 0..2. program_id<i64> is the 64-bit global index, for kernels whose launches
  // may pass 2^32 threads on an axis (a kernel traced with u32 program ids is refused such a launch).
  template <class I = u32>
  requires(std::is_same_v<I, u32> || std::is_same_v<I, i64>) Val<I> program_id(int axis) {
    return Val<I>(this, builtin_id(ir::Op::ProgramId, axis, dtype_of<I>));
  }
  Val<u32> local_id(int axis) { return builtin(ir::Op::LocalId, axis); }
  Val<u32> group_id(int axis) { return builtin(ir::Op::GroupId, axis); }
  Val<u32> group_size(int axis) { return builtin(ir::Op::GroupSize, axis); }
  Val<u32> num_groups(int axis) { return builtin(ir::Op::NumGroups, axis); }

  // Binds a value to a named immutable variable (readable printed code, one evaluation).
  template <class T>
  Val<T> let(const std::string& name, const Val<T>& v) {
    const ir::VarId var = new_var(dtype_of<T>, false, name);
    emit_let(var, v.id_in(*this));
    return Val<T>(this, var_ref(var));
  }

  void barrier();

  // States what the kernel assumes of its run-time scalars (e.g. require(stride >= 1u)): a bool
  // over scalars and constants only. Every launch refuses scalars that break it before anything
  // runs (runtime::PreconditionError); passes::prove assumes it. A literal false is a TraceError.
  void require(const Val<bool>& condition);

  // Promises that every launch uses work-groups of at most max_group_threads threads and asks
  // for registers such that min_groups_per_core groups fit on one multiprocessor (0: no ask).
  // CUDA prints __launch_bounds__, HIP and Metal their maximum-threads attributes; OpenCL has
  // no equivalent cap and ignores it. Runtimes refuse larger work-groups (ArgumentError).
  void launch_bounds(std::uint32_t max_group_threads, std::uint32_t min_groups_per_core = 0);

  // ---- low-level interface used by the free functions below
  ir::Kernel& kernel() { return k_; }
  // Unique per builder in this process; values remember it to catch use across traces.
  [[nodiscard]] std::uint64_t serial() const { return serial_; }
  ir::ExprId var_ref(ir::VarId v);
  ir::VarId new_var(DType t, bool is_mutable, const std::string& hint);
  void emit_let(ir::VarId v, ir::ExprId value);
  void emit_assign(ir::VarId v, ir::ExprId value);
  void emit_store(ir::MemRef m, ir::ExprId index, ir::ExprId value);
  ir::ExprId emit_load(ir::MemRef m, ir::ExprId index);  // returns a VarRef to the loaded value
  // One access of `width` consecutive elements mem[index .. index + width); returns a VarRef per
  // element. See load_vec/store_vec for the rules.
  std::vector<ir::ExprId> emit_load_vec(ir::MemRef m, ir::ExprId index, std::uint32_t width);
  void emit_store_vec(ir::MemRef m, ir::ExprId index, const std::vector<ir::ExprId>& values);
  ir::ExprId emit_atomic(ir::AtomicOp op, ir::MemRef m, ir::ExprId index, ir::ExprId value);
  // Asynchronous copy of `width` elements src[src_index ..) -> dst[dst_index ..) (zeros where ok is
  // false), the group boundary and the wait (see copy_async()).
  void emit_copy_async(ir::MemRef dst, ir::ExprId dst_index, ir::MemRef src, ir::ExprId src_index, std::uint32_t width,
                       ir::ExprId ok);
  void emit_async_commit();
  void emit_async_wait(std::uint32_t pending);
  // value of lane src_lane of this thread's sub-group of `lanes` threads (see shuffle()).
  ir::ExprId emit_shuffle(ir::ExprId value, ir::ExprId src_lane, std::uint32_t lanes);
  // D = C + A*B over 32 lanes (see mma_m16n8k16()); operands a0..a7, b0..b3, c0..c3 (f32); returns d0..d3.
  std::array<ir::ExprId, 4> emit_mma(DType elem, const std::array<ir::ExprId, 16>& operands);
  // Four 8x8 matrices of a 16-bit shared array (see load_matrix()); row_index: this lane's row; transpose: each
  // matrix transposed (load_matrix_trans()).
  std::array<ir::ExprId, 8> emit_load_matrix(ir::MemRef m, ir::ExprId row_index, bool transpose = false);
  // Structured control flow: runs `body` with statements going into the new construct.
  void emit_if(ir::ExprId cond, const std::function<void()>& then_body);
  void emit_else(const std::function<void()>& else_body);
  void emit_for(ir::VarId var, ir::ExprId begin, ir::ExprId end, ir::ExprId step, const std::function<void()>& body);
  ir::ExprId cast_to(DType t, ir::ExprId e);

  // Finishes the trace (renumbers statements) and hands the kernel over.
  ir::Kernel finish();

 private:
  std::uint32_t add_param(const std::string& name, ir::ParamKind kind, DType t, ir::ExprId extent);
  std::uint32_t add_shared(const std::string& name, DType t, std::uint32_t count);
  Val<u32> builtin(ir::Op op, int axis);
  ir::ExprId builtin_id(ir::Op op, int axis, DType t);
  template <class E>
  ir::ExprId extent_id(const E& extent) {
    if constexpr (detail::Literal<E>) {
      return k_.exprs.constant(DType::u32, static_cast<std::uint32_t>(extent));
    } else {
      return extent.id_in(*this);
    }
  }
  ir::Stmt& push(ir::Stmt s);

  ir::Kernel k_;
  std::uint64_t serial_;
  std::vector<ir::Block*> blocks_;  // insertion points; back() is current
  ir::Block* last_if_block_ = nullptr;
  std::size_t last_if_index_ = 0;
  bool finished_ = false;
};

// Traces a kernel body into IR.
[[nodiscard]] ir::Kernel trace(const std::string& name, const std::function<void(KernelBuilder&)>& body);

// ------------------------------------------------------------------ Val implementation
template <class T>
Val<T>::Val(KernelBuilder* b, ir::ExprId id) : b_(b), trace_serial_(b ? b->serial() : 0), id_(id) {}

template <class T>
ir::ExprId Val<T>::id_in(KernelBuilder& b) const {
  if (is_literal_) return b.kernel().exprs.constant(dtype_of<T>, literal_);
  if (b_ != &b || trace_serial_ != b.serial()) throw TraceError("a value from another kernel's trace was used");
  return id_;
}

// A mutable local variable.
template <class T>
class Var {
 public:
  Var(KernelBuilder& b, const Val<T>& init, const std::string& name = "") : b_(&b) {
    var_ = b.new_var(dtype_of<T>, true, name);
    b.emit_let(var_, init.id_in(b));
  }
  explicit Var(const Val<T>& init, const std::string& name = "") : Var(*need(init.builder()), init, name) {}
  Var(const Var& other) : Var(*other.b_, Val<T>(other)) {}
  Var& operator=(const Val<T>& v) {
    b_->emit_assign(var_, v.id_in(*b_));
    return *this;
  }
  Var& operator=(const Var& v) { return *this = Val<T>(v); }  // NOLINT: assigns the value
  [[nodiscard]] Val<T> get() const { return Val<T>(b_, b_->var_ref(var_)); }
  [[nodiscard]] KernelBuilder* builder() const { return b_; }
  explicit operator bool() const = delete;

  template <class X>
  Var& operator+=(const X& x) {
    return *this = cast_same(get() + x);
  }
  template <class X>
  Var& operator-=(const X& x) {
    return *this = cast_same(get() - x);
  }
  template <class X>
  Var& operator*=(const X& x) {
    return *this = cast_same(get() * x);
  }

 private:
  static KernelBuilder* need(KernelBuilder* b) {
    if (!b) throw TraceError("Var initialised from a literal needs the builder: Var<T>(builder, value)");
    return b;
  }
  template <class U>
  static Val<T> cast_same(const Val<U>& v) {
    static_assert(std::is_same_v<U, T>, "compound assignment would change the variable's type: cast explicitly");
    return v;
  }
  KernelBuilder* b_;
  ir::VarId var_ = 0;
};

template <class T>
Val<T>::Val(const Var<T>& v) : Val(v.get()) {}

namespace detail {

template <class X>
KernelBuilder* builder_of(const X& x) {
  if constexpr (Symbolic<X>) {
    return x.builder();
  } else {
    return nullptr;
  }
}

template <class T, class X>
ir::ExprId operand_as(KernelBuilder& b, const X& x) {
  if constexpr (Symbolic<X>) {
    const Val<elem_t<X>> v(x);
    const ir::ExprId id = v.id_in(b);
    if constexpr (std::is_same_v<elem_t<X>, T>) {
      return id;
    } else {
      return b.cast_to(dtype_of<T>, id);  // promotion of 16-bit floats / narrow ints
    }
  } else {
    return b.kernel().exprs.constant(dtype_of<T>, literal_bits<T>(x));
  }
}

template <class A, class B>
KernelBuilder& common_builder(const A& a, const B& b) {
  KernelBuilder* ba = builder_of(a);
  KernelBuilder* bb = builder_of(b);
  if (ba && bb && ba != bb) throw TraceError("values from two different kernel traces combined");
  KernelBuilder* r = ba ? ba : bb;
  if (!r) throw TraceError("an operation on literals only has no kernel to go into");
  return *r;
}

// The compute type two operands combine in.
template <class A, class B>
struct Common;
template <class A, class B>
requires Symbolic<A> && Symbolic<B>
struct Common<A, B> {
  using type = compute_t<elem_t<A>>;
  static_assert(std::is_same_v<compute_t<elem_t<A>>, compute_t<elem_t<B>>>,
                "operands of different types: use cast<T>() to make them agree");
};
template <class A, class B>
requires Symbolic<A> && Literal<B>
struct Common<A, B> {
  using type = compute_t<elem_t<A>>;
};
template <class A, class B>
requires Literal<A> && Symbolic<B>
struct Common<A, B> {
  using type = compute_t<elem_t<B>>;
};
template <class A, class B>
using common_t = typename Common<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::type;

// Every operand is a literal (no kernel yet): fold at trace time with the IR's own semantics (ir::eval_op; c is the
// third operand of fma and select).
std::uint64_t fold_literals(ir::Op op, DType result, DType operand, std::uint64_t a, std::uint64_t b,
                            std::uint64_t c = 0);

template <class T, class X>
std::uint64_t literal_operand(const X& x) {
  if constexpr (Symbolic<X>) {
    const Val<elem_t<X>> v(x);
    if constexpr (std::is_same_v<elem_t<X>, T>) {
      return v.literal_bits();
    } else {
      return fold_literals(ir::Op::Cast, dtype_of<T>, dtype_of<elem_t<X>>, v.literal_bits(), 0);
    }
  } else {
    return literal_bits<T>(x);
  }
}

template <class R, class T, class A, class B>
Val<R> binary(ir::Op op, const A& a, const B& b) {
  if (!builder_of(a) && !builder_of(b)) {
    return Val<R>::from_bits(fold_literals(op, dtype_of<R>, dtype_of<T>, literal_operand<T>(a), literal_operand<T>(b)));
  }
  KernelBuilder& k = common_builder(a, b);
  const ir::ExprId x = operand_as<T>(k, a);
  const ir::ExprId y = operand_as<T>(k, b);
  return Val<R>(&k, k.kernel().exprs.binary(op, dtype_of<R>, x, y));
}

// select(c, a, b) keeps a shared storage type (f16 stays f16); otherwise the common type.
template <class A, class B>
struct SelectType {
  using type = common_t<A, B>;
};
template <class A, class B>
requires Symbolic<A> && Symbolic<B> && std::is_same_v<elem_t<A>, elem_t<B>>
struct SelectType<A, B> {
  using type = elem_t<A>;
};

template <class A, class B>
concept Mixed = (Symbolic<A> || Symbolic<B>)&&Operand<A>&& Operand<B>;
// A mixed operation whose operands are booleans.
template <class A, class B>
concept MixedBool = (Mixed<A, B> && std::same_as<common_t<A, B>, bool>);

}  // namespace detail

// ------------------------------------------------------------------ operators
#define INGOT_ARITH_OP(sym, op)                                                         \
  template <class A, class B>                                                           \
  requires detail::Mixed<A, B>                                                          \
  auto operator sym(const A& a, const B& b) {                                           \
    using T = detail::common_t<A, B>;                                                   \
    static_assert(!std::is_same_v<T, bool>, "arithmetic on bool: use && || ! or cast"); \
    return detail::binary<T, T>(ir::Op::op, a, b);                                      \
  }
INGOT_ARITH_OP(+, Add)
INGOT_ARITH_OP(-, Sub)
INGOT_ARITH_OP(*, Mul)
INGOT_ARITH_OP(/, Div)
INGOT_ARITH_OP(%, Mod)
#undef INGOT_ARITH_OP

#define INGOT_INT_OP(sym, op)                                                                         \
  template <class A, class B>                                                                         \
  requires detail::Mixed<A, B>                                                                        \
  auto operator sym(const A& a, const B& b) {                                                         \
    using T = detail::common_t<A, B>;                                                                 \
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "bit operations need integers"); \
    return detail::binary<T, T>(ir::Op::op, a, b);                                                    \
  }
INGOT_INT_OP(&, BitAnd)
INGOT_INT_OP(|, BitOr)
INGOT_INT_OP(^, BitXor)
INGOT_INT_OP(<<, Shl)
INGOT_INT_OP(>>, Shr)
#undef INGOT_INT_OP

#define INGOT_CMP_OP(sym, op)                         \
  template <class A, class B>                         \
  requires detail::Mixed<A, B> Val<bool>              \
  operator sym(const A& a, const B& b) {              \
    using T = detail::common_t<A, B>;                 \
    return detail::binary<bool, T>(ir::Op::op, a, b); \
  }
INGOT_CMP_OP(<, Lt)
INGOT_CMP_OP(<=, Le)
INGOT_CMP_OP(>, Gt)
INGOT_CMP_OP(>=, Ge)
INGOT_CMP_OP(==, Eq)
INGOT_CMP_OP(!=, Ne)
#undef INGOT_CMP_OP

template <class A, class B>
requires detail::MixedBool<A, B> Val<bool>
operator&&(const A& a, const B& b) { return detail::binary<bool, bool>(ir::Op::And, a, b); }
template <class A, class B>
requires detail::MixedBool<A, B> Val<bool>
operator||(const A& a, const B& b) { return detail::binary<bool, bool>(ir::Op::Or, a, b); }

namespace detail {
template <class R, class X>
Val<R> unary(ir::Op op, const X& x) {
  if (!x.builder()) {
    return Val<R>::from_bits(fold_literals(op, dtype_of<R>, dtype_of<R>, literal_operand<R>(x), 0));
  }
  KernelBuilder& k = *x.builder();
  return Val<R>(&k, k.kernel().exprs.unary(op, dtype_of<R>, operand_as<R>(k, x)));
}
}  // namespace detail

template <detail::Symbolic X>
Val<bool> operator!(const X& x) {
  static_assert(std::is_same_v<detail::elem_t<X>, bool>, "! needs a bool value");
  return detail::unary<bool>(ir::Op::Not, x);
}
template <detail::Symbolic X>
auto operator-(const X& x) {
  using T = compute_t<detail::elem_t<X>>;
  return detail::unary<T>(ir::Op::Neg, x);
}
template <detail::Symbolic X>
auto operator~(const X& x) {
  using T = compute_t<detail::elem_t<X>>;
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "~ needs an integer");
  return detail::unary<T>(ir::Op::BitNot, x);
}

// ------------------------------------------------------------------ functions
template <class T, detail::Symbolic X>
Val<T> cast(const X& x) {
  const Val<detail::elem_t<X>> v(x);
  if (!x.builder()) {  // a literal (a trace-time constant: say, the first of one tile): folded as the IR converts
    return Val<T>::from_bits(
        detail::fold_literals(ir::Op::Cast, dtype_of<T>, dtype_of<detail::elem_t<X>>, v.literal_bits(), 0));
  }
  KernelBuilder& k = *x.builder();
  return Val<T>(&k, k.cast_to(dtype_of<T>, v.id_in(k)));
}

// Reinterprets the bits of a 32-bit value as another 32-bit type (f32 <-> u32 <-> i32).
template <class T, detail::Symbolic X>
Val<T> bitcast(const X& x) {
  using F = detail::elem_t<X>;
  static_assert(sizeof(T) == sizeof(F) && is_compute_type(dtype_of<T>) && is_compute_type(dtype_of<F>),
                "bitcast needs two compute types of one width (f32, i32, u32)");
  if (!x.builder()) return Val<T>::from_bits(Val<F>(x).literal_bits());
  KernelBuilder& k = *x.builder();
  return Val<T>(&k, k.kernel().exprs.unary(ir::Op::Bitcast, dtype_of<T>, Val<F>(x).id_in(k)));
}

#define INGOT_MATH1(fn, op)                                                                             \
  template <detail::Symbolic X>                                                                         \
  Val<float> fn(const X& x) {                                                                           \
    static_assert(std::is_same_v<compute_t<detail::elem_t<X>>, float>, #fn " takes f32 (or f16/bf16)"); \
    return detail::unary<float>(ir::Op::op, x);                                                         \
  }
INGOT_MATH1(exp, Exp)
INGOT_MATH1(log, Log)
INGOT_MATH1(sqrt, Sqrt)
INGOT_MATH1(rsqrt, Rsqrt)
INGOT_MATH1(tanh, Tanh)
INGOT_MATH1(erf, Erf)
INGOT_MATH1(sin, Sin)
INGOT_MATH1(cos, Cos)
INGOT_MATH1(floor, Floor)
INGOT_MATH1(ceil, Ceil)
#undef INGOT_MATH1

template <detail::Symbolic X>
auto abs(const X& x) {
  return detail::unary<compute_t<detail::elem_t<X>>>(ir::Op::Abs, x);
}
template <class A, class B>
requires detail::Mixed<A, B>
auto min(const A& a, const B& b) {
  using T = detail::common_t<A, B>;
  return detail::binary<T, T>(ir::Op::Min, a, b);
}
template <class A, class B>
requires detail::Mixed<A, B>
auto max(const A& a, const B& b) {
  using T = detail::common_t<A, B>;
  return detail::binary<T, T>(ir::Op::Max, a, b);
}
template <class A, class B>
requires detail::Mixed<A, B> Val<float> pow(const A& a, const B& b) {
  static_assert(std::is_same_v<detail::common_t<A, B>, float>, "pow takes f32");
  return detail::binary<float, float>(ir::Op::Pow, a, b);
}
template <class A, class B, class C>
Val<float> fma(const A& a, const B& b, const C& c) {
  KernelBuilder* kb = detail::builder_of(a);
  if (!kb) kb = detail::builder_of(b);
  if (!kb) kb = detail::builder_of(c);
  if (!kb) {  // literals only (trace-time constants): folded as the IR computes it (one rounding, f32)
    return Val<float>::from_bits(
        detail::fold_literals(ir::Op::Fma, DType::f32, DType::f32, detail::literal_operand<float>(a),
                              detail::literal_operand<float>(b), detail::literal_operand<float>(c)));
  }
  auto& k = *kb;
  const auto x = detail::operand_as<float>(k, a);
  const auto y = detail::operand_as<float>(k, b);
  const auto z = detail::operand_as<float>(k, c);
  return Val<float>(&k, k.kernel().exprs.make({ir::Op::Fma, DType::f32, x, y, z, 0}));
}

// select(cond, a, b): a where cond is true, else b. Both sides have one type (16-bit floats
// are kept as they are when both sides share the type).
template <class C, class A, class B>
auto select(const C& cond, const A& a, const B& b) {
  KernelBuilder* kb = detail::builder_of(cond);
  if (!kb) kb = detail::builder_of(a);
  if (!kb) kb = detail::builder_of(b);
  using T = typename detail::SelectType<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::type;
  if (!kb) {  // literals only (trace-time constants): the side the condition picks
    return Val<T>::from_bits(detail::fold_literals(ir::Op::Select, dtype_of<T>, DType::boolean,
                                                   detail::literal_operand<bool>(cond), detail::literal_operand<T>(a),
                                                   detail::literal_operand<T>(b)));
  }
  auto& k = *kb;
  const auto c = detail::operand_as<bool>(k, cond);
  const auto x = detail::operand_as<T>(k, a);
  const auto y = detail::operand_as<T>(k, b);
  return Val<T>(&k, k.kernel().exprs.make({ir::Op::Select, dtype_of<T>, c, x, y, 0}));
}

// ------------------------------------------------------------------ memory
namespace detail {
template <class I>
ir::ExprId index_id(KernelBuilder& k, const I& i) {
  if constexpr (Symbolic<I>) {
    static_assert(std::is_integral_v<elem_t<I>> && !std::is_same_v<elem_t<I>, bool>, "an index must be an integer");
    return Val<elem_t<I>>(i).id_in(k);
  } else {
    static_assert(std::is_integral_v<I>, "an index must be an integer");
    return k.kernel().exprs.constant(DType::u32, static_cast<std::uint32_t>(i));
  }
}
}  // namespace detail

template <class T, Access A, class I>
Val<T> load(const Buffer<T, A>& buf, const I& index) {
  static_assert(A != Access::Write, "load from an Out<> buffer: declare it InOut<>");
  KernelBuilder& k = *buf.builder();
  return Val<T>(&k, k.emit_load(buf.mem(), detail::index_id(k, index)));
}

namespace detail {
// The expression stored for v into a buffer of T: v itself when it has type T, f32 rounded to an
// f16/bf16 buffer's type, or a literal of T.
template <class T, class V>
ir::ExprId stored_value(KernelBuilder& k, const V& v) {
  if constexpr (Symbolic<V>) {
    using U = elem_t<V>;
    static_assert(std::is_same_v<U, T> || (is_16bit_float(dtype_of<T>) && std::is_same_v<U, float>),
                  "stored value type differs from the buffer's: cast<T>() it");
    const ir::ExprId value = Val<U>(v).id_in(k);
    if constexpr (std::is_same_v<U, T>) return value;
    return k.cast_to(dtype_of<T>, value);
  } else {
    return k.kernel().exprs.constant(dtype_of<T>, literal_bits<T>(v));
  }
}
}  // namespace detail

// Stores v at buf[index]. v must have the buffer's type, or be f32 for an f16/bf16 buffer
// (converted with round-to-nearest-even).
template <class T, Access A, class I, class V>
void store(const Buffer<T, A>& buf, const I& index, const V& v) {
  static_assert(A != Access::Read, "store to an In<> buffer: declare it Out<> or InOut<>");
  KernelBuilder& k = *buf.builder();
  k.emit_store(buf.mem(), detail::index_id(k, index), detail::stored_value<T>(k, v));
}

// Vector access: width consecutive elements buf[index .. index + width) in one load or store
// (one 4-, 8- or 16-byte transaction per thread on GPUs). Rules, checked at trace time
// (width) and by the interpreter (index): width * sizeof(T) is 4, 8 or 16 bytes; index is a
// multiple of width (buffers are allocated at least 16-byte aligned, so the access is
// aligned); every element lies inside the buffer. Write the tail of a row that is not a
// multiple of width with scalar loads/stores.
template <class T, Access A, class I>
std::vector<Val<T>> load_vec(const Buffer<T, A>& buf, const I& index, std::uint32_t width) {
  static_assert(A != Access::Write, "load from an Out<> buffer: declare it InOut<>");
  KernelBuilder& k = *buf.builder();
  std::vector<Val<T>> out;
  for (const ir::ExprId e : k.emit_load_vec(buf.mem(), detail::index_id(k, index), width)) out.emplace_back(&k, e);
  return out;
}

// Stores values[j] at buf[index + j] in one access (rules as load_vec; width = values.size()).
// Each value has the buffer's type, or is f32 for an f16/bf16 buffer (rounded to nearest even).
template <class T, Access A, class I, class V>
void store_vec(const Buffer<T, A>& buf, const I& index, const std::vector<V>& values) {
  static_assert(A != Access::Read, "store to an In<> buffer: declare it Out<> or InOut<>");
  KernelBuilder& k = *buf.builder();
  std::vector<ir::ExprId> ids;
  ids.reserve(values.size());
  for (const auto& v : values) ids.push_back(detail::stored_value<T>(k, v));
  k.emit_store_vec(buf.mem(), detail::index_id(k, index), ids);
}

// Asynchronous copy (ir.hpp, "Asynchronous copies"): starts copying src[src_index .. + width) into
// the shared array dst[dst_index .. + width), or width zeros where ok is false (src_index must
// still be in range: clamp it). width * sizeof(T) is 4, 8 or 16 bytes and both indexes are
// multiples of width. async_commit() closes this thread's group of copies; async_wait(k, n)
// returns once all but the n most recently committed groups are complete. Read the destination
// only after the wait that completes it (other threads: after a barrier() that follows it), and
// write nothing there before then.
template <class T, Access A, class I, class J>
void copy_async(const Shared<T>& dst, const I& dst_index, const Buffer<T, A>& src, const J& src_index,
                std::uint32_t width, const Val<bool>& ok) {
  static_assert(A != Access::Write, "copy_async from an Out<> buffer: declare it InOut<>");
  KernelBuilder& k = *dst.builder();
  k.emit_copy_async(dst.mem(), detail::index_id(k, dst_index), src.mem(), detail::index_id(k, src_index), width,
                    ok.id_in(k));
}
inline void async_commit(KernelBuilder& k) { k.emit_async_commit(); }
inline void async_wait(KernelBuilder& k, std::uint32_t pending) { k.emit_async_wait(pending); }

#define INGOT_ATOMIC(fn, op)                                                                                      \
  template <class T, Access A, class I, class V>                                                                  \
  Val<T> fn(const Buffer<T, A>& buf, const I& index, const V& v) {                                                \
    static_assert(A != Access::Read, "atomics need a writable buffer");                                           \
    KernelBuilder& k = *buf.builder();                                                                            \
    return Val<T>(                                                                                                \
        &k, k.emit_atomic(ir::AtomicOp::op, buf.mem(), detail::index_id(k, index), detail::operand_as<T>(k, v))); \
  }
INGOT_ATOMIC(atomic_add, Add)
INGOT_ATOMIC(atomic_min, Min)
INGOT_ATOMIC(atomic_max, Max)
#undef INGOT_ATOMIC

// Sub-group shuffle (ir.hpp, "Shuffles"): the value v of lane src_lane (u32, < lanes) of this
// thread's sub-group; sub-groups are `lanes` consecutive threads of the work-group in linear
// local-id order (lanes a power of two in [2, 32]; with 1-D work-groups a thread's lane is
// local_id(0) % lanes). Every thread of the work-group must reach it (like barrier()), the kernel
// must declare launch_bounds() with max_group_threads a multiple of 32, and its work-groups must
// hold a multiple of 32 threads (ir::kShuffleGroupMultiple). T: f32, i32 or u32.
template <class T, class L>
Val<T> shuffle(const Val<T>& v, const L& src_lane, std::uint32_t lanes) {
  static_assert(std::is_same_v<T, f32> || std::is_same_v<T, i32> || std::is_same_v<T, u32>,
                "shuffle moves f32, i32 or u32: cast 16-bit values to f32 first");
  KernelBuilder* b = v.builder() ? v.builder() : detail::builder_of(src_lane);
  if (!b) throw TraceError("shuffle of two literals: nothing to exchange");
  return Val<T>(b, b->emit_shuffle(v.id_in(*b), detail::operand_as<u32>(*b, src_lane), lanes));
}

// Matrix multiply-accumulate on a sub-group of 32 lanes (ir.hpp, "Matrix multiply-accumulate"):
// the lanes together hold A (16x16, 8 values each), B (16x8, 4 each) and C (16x8, 4 each) in
// the fragment layout of PTX mma.m16n8k16 and each receives its 4 values of D = C + A*B. A and B
// are rounded to T (f16 or bf16) first; the sums are at least f32. Tensor cores on CUDA; the
// rules of shuffle() apply (whole work-group, launch bounds and work-groups of whole warps).
template <class T>
std::array<Val<f32>, 4> mma_m16n8k16(KernelBuilder& k, const std::array<Val<f32>, 8>& a,
                                     const std::array<Val<f32>, 4>& b, const std::array<Val<f32>, 4>& c) {
  static_assert(std::is_same_v<T, f16> || std::is_same_v<T, bf16>, "mma_m16n8k16 multiplies f16 or bf16");
  std::array<ir::ExprId, 16> ops{};
  for (std::size_t i = 0; i < 8; ++i) ops[i] = a[i].id_in(k);
  for (std::size_t i = 0; i < 4; ++i) ops[8 + i] = b[i].id_in(k);
  for (std::size_t i = 0; i < 4; ++i) ops[12 + i] = c[i].id_in(k);
  const auto d = k.emit_mma(dtype_of<T>, ops);
  return {Val<f32>(&k, d[0]), Val<f32>(&k, d[1]), Val<f32>(&k, d[2]), Val<f32>(&k, d[3])};
}

// Matrix load on a sub-group of 32 lanes (ir.hpp, "Matrix loads"): each lane names a row of 8
// consecutive 16-bit elements of a shared array (row_index a multiple of 8); the rows of lanes
// 8i .. 8i+7 form matrix i, and lane l receives elements 2(l%4) and 2(l%4)+1 of row l/4 of matrix i
// as values 2i and 2i+1 — for rows (l%8) + 8((l/8)%2), columns 8(l/16) of a 16x16 A, its mma_m16n8k16
// fragment a_0..a_7. One ldmatrix on CUDA; the rules of shuffle() apply.
template <class T, class I>
std::array<Val<T>, 8> load_matrix(const Shared<T>& buf, const I& row_index, bool transpose = false) {
  static_assert(sizeof(T) == 2, "load_matrix reads 16-bit elements");
  KernelBuilder& k = *buf.builder();
  const auto ids = k.emit_load_matrix(buf.mem(), detail::index_id(k, row_index), transpose);
  std::array<Val<T>, 8> out;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = Val<T>(&k, ids[i]);
  return out;
}

// load_matrix with each 8x8 matrix transposed: lane l receives elements l/4 of rows 2(l%4) and 2(l%4)+1 of matrix i
// as values 2i and 2i+1. Where each row holds 8 consecutive pixels of one channel (channel-first storage) and the
// rows of matrix i are channels, values 2i, 2i+1 are two channels of pixel l/4: for pixels (l%8) + 8((l/8)%2) and
// channels 8(l/16) of a column-major 16x16 A, its mma_m16n8k16 fragment a_0..a_7. One ldmatrix .trans on CUDA.
template <class T, class I>
std::array<Val<T>, 8> load_matrix_trans(const Shared<T>& buf, const I& row_index) {
  return load_matrix(buf, row_index, true);
}

// ------------------------------------------------------------------ control flow
class IfBuilder {
 public:
  explicit IfBuilder(KernelBuilder& k) : k_(&k) {}
  // else_ must directly follow its if_.
  void else_(const std::function<void()>& body) { k_->emit_else(body); }

 private:
  KernelBuilder* k_;
};

template <class C>
IfBuilder if_(const C& cond, const std::function<void()>& then_body) {
  static_assert(detail::Symbolic<C>, "if_ takes a symbolic condition; use a C++ if for constants");
  static_assert(std::is_same_v<detail::elem_t<C>, bool>, "if_ needs a Val<bool>");
  if (!cond.builder()) throw TraceError("if_ on a constant condition: use a plain C++ if for constants");
  KernelBuilder& k = *cond.builder();
  k.emit_if(Val<bool>(cond).id_in(k), then_body);
  return IfBuilder(k);
}

// A run-time loop: for (i = begin; i < end; i += step) body(i). step must be positive.
// (A C++ loop over constants unrolls instead.)
template <class B, class E, class S>
void for_(const B& begin, const E& end, const S& step, const std::function<void(Val<detail::common_t<B, E>>)>& body) {
  using T = detail::common_t<B, E>;
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "loop bounds must be integers");
  KernelBuilder& k = detail::common_builder(begin, end);
  const ir::VarId var = k.new_var(dtype_of<T>, false, "i");
  const auto b = detail::operand_as<T>(k, begin);
  const auto e = detail::operand_as<T>(k, end);
  const auto s = detail::operand_as<T>(k, step);
  k.emit_for(var, b, e, s, [&] { body(Val<T>(&k, k.var_ref(var))); });
}
template <class B, class E>
void for_(const B& begin, const E& end, const std::function<void(Val<detail::common_t<B, E>>)>& body) {
  for_(begin, end, 1, body);
}

}  // namespace ingot::dsl

namespace ingot {
using dsl::KernelBuilder;
using dsl::trace;
}  // namespace ingot
