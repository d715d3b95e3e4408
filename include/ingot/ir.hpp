// ingot/ir.hpp — the intermediate representation every backend consumes.
//
// ============================== SEMANTICS (normative) ==============================
// The interpreter (src/interp) is the executable form of these rules; a backend that
// disagrees with it is wrong.
//
// Types. Arithmetic is defined on the compute types f32, i32, u32 and i64. f16 and bf16 are
//   storage types: they appear as the type of a Load from a 16-bit buffer, of a Cast, of a
//   Select, or of a Store's value. u8, i8, u16 and bool are likewise converted before use.
// Integer overflow. Add, Sub, Mul and Neg wrap modulo 2^bits (two's complement) for every
//   integer type, signed included. No backend may assume signed overflow does not happen.
// Division and modulo. Integer Div truncates toward zero; Mod takes the sign of the dividend
//   (C semantics). A zero divisor is an error (the interpreter stops the launch), and so is
//   the minimum signed value divided by (or modulo) -1. Float Div is IEEE division (within 2.5 ulp on
//   backends whose division is not correctly rounded); float Mod is C fmod.
// Shifts. The shift amount must lie in [0, bits of the operand type); anything else is an
//   error. Shr is arithmetic for signed types and logical for unsigned ones.
// Comparisons. With a NaN operand every comparison is false except Ne, which is true.
// NaN. Arithmetic and math functions propagate NaN. Min and Max follow IEEE minNum/maxNum
//   (C fmin/fmax): they return the other operand when exactly one is NaN.
// Casts. int->float rounds to nearest even. float->int truncates toward zero; NaN, infinity or
//   a value out of the target's range is an error. int->int keeps the low bits (wraps).
//   f32->f16/bf16 rounds to nearest even, overflow gives infinity; f16/bf16->f32 is exact for
//   every non-NaN value. A NaN converts to a quiet NaN whose payload and sign are unspecified
//   (the interpreter keeps them; CUDA's cvt gives the canonical NaN). Anything -> bool is "!= 0"; bool -> number is 0
//   or 1. Bitcast reinterprets the bits between compute types of one width (f32, i32, u32).
// Thread ids. local_id, group_id, group_size and num_groups are u32; program_id(a) = group_id(a) * group_size(a) +
//   local_id(a) is u32 or i64. A launch with 2^32 threads or more on an axis where the kernel reads a u32 program_id
//   is refused before it runs (the value would wrap); the i64 program_id is exact for every launch.
// Memory. Every Load, Store and Atomic names one buffer (a kernel parameter or a shared
//   array) and an integer index. An index outside [0, real size of that buffer) is ALWAYS an
//   error: the interpreter stops the launch and names the kernel, buffer, index, extent,
//   thread and statement. No backend may rely on an out-of-range access doing anything.
//   Reading an element nothing has written (fresh buffers are poisoned) is also reported by
//   the interpreter. Loads that DCE proves unused may be removed.
// Vector access. LoadVec/StoreVec move W consecutive elements mem[i .. i+W) as one access,
//   W >= 2 and W * element size = 4, 8 or 16 bytes (any element type but bool and i64). The index i must be a multiple
//   of W (a misaligned index is an error like an out-of-range one); backends allocate buffers at least 16-byte aligned,
//   so the access is aligned (shared arrays are declared 16-byte aligned too). Every element must be in range.
// Tail threads. A launch is a whole number of work-groups, so threads past the problem size
//   exist ("tail threads"). They run the kernel like any other thread; they may compute and
//   load anything in range; the kernel must keep their accesses in range and skip their
//   stores. The interpreter reports any tail thread that does not.
// Barriers. A Barrier must be reached by every thread of the work-group or by none; a barrier
//   under control flow that diverges within a group is an error.
// Shuffles. `var = shuffle(a, b)` exchanges values between the threads of a sub-group: the
//   threads of a work-group, in linear local-id order (x fastest), are cut into consecutive
//   sub-groups of `lanes` threads (a power of two in [2, 32]); each thread receives the value of
//   a computed by lane b (u32, b < lanes; b >= lanes is an error) of its own sub-group. Like a
//   Barrier, a Shuffle must be reached by every thread of the work-group or by none. The value is
//   f32, i32 or u32. A kernel with shuffles must declare launch bounds whose max_group_threads is
//   a multiple of 32 (kShuffleGroupMultiple), and its work-groups must hold a multiple of 32
//   threads (an error otherwise: whole warps on every GPU). Backends with sub-group shuffles use
//   them; the others exchange through shared memory between two barriers (passes::legalise).
// Matrix multiply-accumulate. `(d0..d3) = mma_m16n8k16<T>(a0..a7, b0..b3, c0..c3)` is a
//   sub-group operation of 32 lanes (cut like a Shuffle's: consecutive linear local ids), with the
//   rules of a Shuffle (reached by the whole work-group, launch bounds and work-groups a multiple
//   of 32 threads). Together the 32 lanes hold a 16x16 matrix A, a 16x8 matrix B and a 16x8
//   matrix C, and receive D = C + A*B (16x8). Lane l, g = l / 4, t = l % 4, holds
//     a_i = A[g + 8*((i/2) % 2)][2t + (i%2) + 8*(i/4)]     (i < 8)
//     b_i = B[2t + (i%2) + 8*(i/2)][g]                     (i < 4)
//     c_i = C[g + 8*(i/2)][2t + (i%2)],  d_i likewise      (i < 4)
//   (the register fragments of PTX mma.m16n8k16 .row.col). Every operand is f32; a_i and b_i are
//   first rounded to T (f16 or bf16, round to nearest even) — their products are exact in f32 —
//   and each d_i is c_i plus the 16 products, summed in at least f32 precision in an unspecified
//   order. CUDA runs it on tensor cores; other backends exchange the operands through shared
//   memory between two barriers and multiply-add in f32 (passes::legalise).
// Matrix loads. `(v0..v7) = load_matrix(shared[a])` is a sub-group operation of 32 lanes (cut
//   like a Shuffle's, with its rules: reached by the whole work-group, launch bounds and
//   work-groups a multiple of 32 threads) that reads four 8x8 matrices of 16-bit elements from a
//   shared array. Each lane l supplies a, the index of a row of 8 consecutive elements (a
//   multiple of 8, the whole row inside the array); the rows of lanes 8i .. 8i+7 are matrix M_i
//   (i < 4), and lane l (g = l / 4, t = l % 4) receives v_{2i} = M_i[g][2t] and
//   v_{2i+1} = M_i[g][2t+1] (PTX ldmatrix .m8n8.x4 .b16). A lane that supplies the row of A
//   (16x16) at row (l % 8) + 8 * ((l / 8) % 2), column 8 * (l / 16) receives a_0..a_7 of
//   mma_m16n8k16. CUDA issues ldmatrix; other backends shuffle the row indexes and load pairs
//   (passes::legalise). A transposed load (`load_matrix_trans`, Stmt::transpose) gives lane l
//   v_{2i} = M_i[2t][g] and v_{2i+1} = M_i[2t+1][g] instead (PTX ldmatrix .trans): where the rows
//   are 8 values of k each holding 8 consecutive m, lane l receives A's fragment of column-major
//   storage; other backends shuffle two row indexes per matrix and load single elements.
// Asynchronous copies. `copy_async(shared[a .. a+W) <- mem[b .. b+W) if c)` starts a copy of
//   W consecutive elements from a global buffer (not out-only) into a shared array of the same
//   element type, W >= 2 and W * element size = 4, 8 or 16 bytes, both indexes multiples of W and
//   every element of both ranges in range (the source's even where c is false); where c (bool) is
//   false the copy writes W zeros. A thread's copies since its last `async_commit` form one group
//   there; `async_wait(n)` returns once every group of this thread but the n most recently
//   committed has completed. Until a wait completes a copy, nothing may read or write its
//   destination; after it, the copying thread may read it, and other threads after a Barrier
//   that follows the wait. A thread that ends with copies not completed is an error. The
//   interpreter performs each copy (reads its source) at the wait that completes it, so a read
//   before the wait sees the earlier contents (poison on a first fill); CUDA issues cp.async;
//   dialects without asynchronous copies copy at once (passes::legalise), which the rules allow.
// Atomics. Atomic add/min/max on i32, u32 (and f32 add) are performed indivisibly; the order
//   between threads is unspecified.
// Preconditions. Kernel::preconditions are bool expressions over run-time scalars and constants
//   that hold on every launch: a launch whose scalars break one is refused before anything runs.
// ===================================================================================
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ingot/dtype.hpp"

namespace ingot::ir {

enum class Op : std::uint8_t {
#define INGOT_OP(name, arity, rule, spelling, prec) name,
#include "ingot/ops.def"
#undef INGOT_OP
};

enum class TypeRule : std::uint8_t {
  Leaf,
  Builtin,
  LoadRule,
  Arith,
  IntBinary,
  Compare,
  Logical,
  LogicalNot,
  ArithUnary,
  IntUnary,
  FloatUnary,
  FloatBinary,
  FloatTernary,
  CastRule,
  BitcastRule,
  SelectRule,
};

struct OpInfo {
  std::string_view name;
  int arity;
  TypeRule rule;
  int precedence;  // C precedence of the infix/prefix form; 0 = call syntax
};

[[nodiscard]] const OpInfo& op_info(Op op);
[[nodiscard]] int num_ops();

using ExprId = std::uint32_t;
using VarId = std::uint32_t;
inline constexpr ExprId kNoExpr = 0xffffffffu;

// Which memory a Load/Store/Atomic addresses.
enum class Space : std::uint8_t { Global, Shared };
struct MemRef {
  Space space = Space::Global;
  std::uint32_t id = 0;  // parameter index (Global) or shared-array index (Shared)
  friend bool operator==(const MemRef&, const MemRef&) = default;
};

// One expression node. Operands refer to earlier nodes of the same arena.
//   Const:     imm = the value's bits in its type (zero-extended to 64 bits)
//   ParamRef:  imm = parameter index (a scalar parameter)
//   VarRef:    imm = variable id
//   builtins:  imm = axis (0, 1, 2)
//   Load:      imm = encode_mem(MemRef), a = index
//   Cast:      type = target type, a = operand
struct Node {
  Op op{};
  DType type{};
  ExprId a = kNoExpr, b = kNoExpr, c = kNoExpr;
  std::uint64_t imm = 0;
  friend bool operator==(const Node&, const Node&) = default;
};

[[nodiscard]] std::uint64_t encode_mem(MemRef m);
[[nodiscard]] MemRef decode_mem(std::uint64_t imm);

// Per-kernel arena of hash-consed expression nodes: building the same node twice returns the
// same id, which gives common-subexpression elimination for free.
class ExprArena {
 public:
  ExprId make(const Node& n);
  [[nodiscard]] const Node& operator[](ExprId id) const { return nodes_[id]; }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }

  // Convenience constructors.
  ExprId constant(DType t, std::uint64_t bits) { return make({Op::Const, t, kNoExpr, kNoExpr, kNoExpr, bits}); }
  ExprId const_u32(std::uint32_t v) { return constant(DType::u32, v); }
  ExprId const_i32(std::int32_t v) { return constant(DType::i32, static_cast<std::uint32_t>(v)); }
  ExprId const_f32(float v);
  ExprId const_bool(bool v) { return constant(DType::boolean, v ? 1 : 0); }
  ExprId unary(Op op, DType t, ExprId a) { return make({op, t, a, kNoExpr, kNoExpr, 0}); }
  ExprId binary(Op op, DType t, ExprId a, ExprId b) { return make({op, t, a, b, kNoExpr, 0}); }

 private:
  struct Hash {
    std::size_t operator()(const Node& n) const;
  };
  std::vector<Node> nodes_;
  std::unordered_map<Node, ExprId, Hash> index_;
};

enum class ParamKind : std::uint8_t { Scalar, In, Out, InOut };
[[nodiscard]] std::string_view param_kind_name(ParamKind k);
[[nodiscard]] inline bool is_buffer(ParamKind k) { return k != ParamKind::Scalar; }

struct Param {
  std::string name;
  ParamKind kind = ParamKind::Scalar;
  DType type = DType::f32;
  ExprId extent = kNoExpr;  // buffers: element count required, over scalars and constants
};

struct VarInfo {
  DType type = DType::f32;
  bool is_mutable = false;
  std::string hint;  // a suggestion for printers; identity is the id
};

struct SharedArray {
  DType type = DType::f32;
  std::uint32_t count = 0;
  std::string hint;
};

enum class AtomicOp : std::uint8_t { Add, Min, Max };
[[nodiscard]] std::string_view atomic_op_name(AtomicOp op);

enum class StmtKind : std::uint8_t {
  Block,        // body: a nested scope
  Let,          // var = a (declares var; mutable vars may later be Assigned)
  Assign,       // var = a (var is mutable)
  Store,        // mem[a] = b
  If,           // if (a) body else else_body
  For,          // for (var = a; var < b; var += c) body   (var is read-only in body)
  Barrier,      // work-group barrier over global and shared memory
  SharedAlloc,  // declares shared array `shared` (type and count in Kernel::shared)
  Atomic,       // [var =] atomic_op(mem[a], b); var (optional) receives the old value
  LoadVec,      // vars[j] = mem[a + j], j < vars.size() (declares vars; one vector access)
  StoreVec,     // mem[a + j] = values[j], j < values.size() (one vector access)
  Shuffle,      // var = a of lane b of this thread's sub-group of `lanes` threads (declares var)
  Mma,          // vars[0..4) = mma_m16n8k16<elem>(values: a0..a7, b0..b3, c0..c3) over 32 lanes (declares vars)
  CopyAsync,    // shared array `shared`[a .. a+count) <- mem[b .. b+count) if c, else zeros (asynchronous)
  AsyncCommit,  // closes this thread's group of CopyAsync statements
  AsyncWait,    // waits until at most `count` committed groups of this thread are incomplete
  LoadMatrix,   // vars[0..8) = load_matrix(shared array mem[a]) over 32 lanes (declares vars)
};
[[nodiscard]] std::string_view stmt_kind_name(StmtKind k);

struct Stmt;
using Block = std::vector<Stmt>;

struct Stmt {
  StmtKind kind = StmtKind::Block;
  std::uint32_t loc = 0;  // stable statement number, used in error messages
  VarId var = 0;
  bool has_var = false;  // Atomic: whether the old value is kept
  ExprId a = kNoExpr, b = kNoExpr, c = kNoExpr;
  MemRef mem;
  AtomicOp atomic = AtomicOp::Add;
  std::uint32_t shared = 0;
  std::uint32_t lanes = 0;     // Shuffle: threads per sub-group
  DType elem = DType::f32;     // Mma: the type A and B are rounded to (f16 or bf16)
  std::uint32_t count = 0;     // CopyAsync: elements; AsyncWait: committed groups that may stay incomplete
  bool transpose = false;      // LoadMatrix: the transposed matrices (ldmatrix .trans)
  std::vector<VarId> vars;     // LoadVec
  std::vector<ExprId> values;  // StoreVec
  Block body;
  Block else_body;
};

// A promise about every launch of the kernel, for compilers that size registers by it: at most
// max_group_threads threads per work-group (0: no promise), and, where min_groups_per_core > 0,
// registers chosen so that that many work-groups fit on one multiprocessor / compute unit
// (CUDA's __launch_bounds__). Runtimes refuse a launch with larger work-groups.
struct LaunchBounds {
  std::uint32_t max_group_threads = 0;
  std::uint32_t min_groups_per_core = 0;
  friend bool operator==(const LaunchBounds&, const LaunchBounds&) = default;
};

struct Kernel {
  std::string name;
  LaunchBounds bounds;
  std::vector<Param> params;
  ExprArena exprs;
  std::vector<VarInfo> vars;
  std::vector<SharedArray> shared;
  Block body;
  std::uint32_t next_loc = 0;
  // What the kernel assumes of its run-time scalars: bool expressions over scalars and constants
  // (`KernelBuilder::require`). Every launch checks them on the host before anything runs
  // (runtime::check_args), and passes::prove assumes them.
  std::vector<ExprId> preconditions;

  [[nodiscard]] DType type_of(ExprId e) const { return exprs[e].type; }
  // The element type and name of a memory reference.
  [[nodiscard]] DType mem_type(MemRef m) const;
  [[nodiscard]] std::string mem_name(MemRef m) const;
};

// Whether a vector access of `width` elements of type t is allowed (see Vector access above).
[[nodiscard]] bool vector_width_ok(DType t, std::size_t width);

// Calls f(ExprId&) on every expression operand of statement s: a, b and c where set, then the
// StoreVec values (a const Stmt gives const references). Passes that read or rewrite operands
// use this, so a new operand field is added in one place.
template <class S, class F>
requires std::same_as<std::remove_const_t<S>, Stmt>
void for_each_operand(S& s, F&& f) {
  for (auto* e : {&s.a, &s.b, &s.c}) {
    if (*e != kNoExpr) f(*e);
  }
  for (auto& v : s.values) f(v);
}

// Per parameter, the alignment in bytes its vector accesses need: the largest LoadVec/StoreVec
// on it (4, 8 or 16), 1 for a parameter without vector accesses.
[[nodiscard]] std::vector<std::uint32_t> vector_access_alignment(const Kernel& k);

// The shared arrays laid out one after another, each at a multiple of 16 bytes (the alignment vector accesses need):
// offsets[i] is array i's first byte, bytes the total a work-group needs.
struct SharedLayout {
  std::vector<std::uint64_t> offsets;
  std::uint64_t bytes = 0;
};
[[nodiscard]] SharedLayout shared_layout(const Kernel& k);

// Work-groups of a kernel with shuffles (or Mma statements) hold a multiple of this many threads.
inline constexpr std::uint32_t kShuffleGroupMultiple = 32;
// Mma: lanes of its sub-group, operands (8 of A, 4 of B, 4 of C) and results per lane.
inline constexpr std::uint32_t kMmaLanes = 32;
inline constexpr std::size_t kMmaOperands = 16, kMmaResults = 4;
// LoadMatrix: elements per row, matrices, and values per lane.
inline constexpr std::uint32_t kMatrixRow = 8, kMatrixCount = 4, kMatrixValues = 8;
// Whether the kernel has Mma statements.
[[nodiscard]] bool has_mma(const Kernel& k);
// Whether the kernel has LoadMatrix statements.
[[nodiscard]] bool has_load_matrix(const Kernel& k);
// The largest sub-group of the kernel's Shuffle (its `lanes`), Mma and LoadMatrix (32) statements; 0 when it has
// none.
[[nodiscard]] std::uint32_t max_shuffle_lanes(const Kernel& k);

// The most committed groups an AsyncWait may leave incomplete (the PTX immediate's range).
inline constexpr std::uint32_t kMaxAsyncGroupsPending = 7;

// Renumbers statement locations in pre-order (used after passes rebuild the tree).
void renumber(Kernel& k);

// A 128-bit digest (32 hex digits) of everything in k that a printer or runtime reads: name,
// parameters, expression nodes, variables, shared arrays and the statement tree. Equal
// fingerprints mean equal emitted source, so runtimes use it to skip re-printing a kernel
// they have already compiled; it is O(size of the IR), far cheaper than printing.
[[nodiscard]] std::string fingerprint(const Kernel& k);

}  // namespace ingot::ir
