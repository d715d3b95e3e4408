// ingot/codegen/dialect.hpp — a C-family dialect as data.
//
// The one printer (printer.cpp) reads everything that differs between CUDA, HIP, OpenCL C, MSL
// and GLSL from this table: type names, address-space words, kernel prefix, thread-index spellings,
// barrier, math-function names, literal styles, bit casts and the ops the dialect cannot print.
// Real structural differences (Metal's attribute-bound parameters, OpenCL's lack of float
// atomics, GLSL's bindings and lack of pointers) are the few switches below, handled by hooks in
// the printer.
// No field has a silent default: each dialect spells everything out.
#pragma once

#include <array>
#include <map>
#include <set>
#include <string>

#include "ingot/codegen/printer.hpp"
#include "ingot/dtype.hpp"
#include "ingot/ir.hpp"

namespace ingot::codegen {

enum class ParamStyle {
  Plain,        // T* name / T name in the parameter list (CUDA, HIP, OpenCL)
  MetalBuffer,  // every parameter is [[buffer(i)]]; scalars are `constant T&`
  // GLSL for Vulkan: `void main()`; buffer i is a storage block at set 0, binding i; scalars are members of one push
  // constant block (KernelSource::push_offsets); shared arrays are declared at file scope; the work-group size is
  // specialisation constants 0, 1, 2.
  VulkanBindings,
};

enum class CastStyle {
  CStyle,       // ((T)(x))
  Constructor,  // T(x) (GLSL)
};

enum class VectorAccess {
  PointerCast,  // *(uint4*)&a[i] (C family)
  // No pointers (GLSL): a global buffer's words are read through further storage blocks at the same binding (word
  // views, uint / uvecN arrays); a shared array's words are assembled from and split into its elements.
  WordViews,
};

enum class IndexStyle {
  Expressions,     // builtins are expressions (threadIdx.x, get_local_id(0))
  MetalArguments,  // builtins are kernel arguments with attributes (Metal)
};

enum class LaunchBoundsPlace {
  AfterPrefix,   // between the kernel prefix and the name (CUDA, HIP)
  BeforePrefix,  // an attribute before the whole signature (Metal)
};

enum class FloatAtomicAdd {
  Native,   // atomicAdd on float exists
  CasLoop,  // emulate with 32-bit compare-and-swap
};

struct Dialect {
  Target target{};
  std::string name;
  std::string preamble;       // first lines of the file (includes, pragmas)
  std::string kernel_prefix;  // before the kernel's name
  // ir::LaunchBounds: "{max}" and "{min}" stand for its fields; launch_bounds is used when
  // min_groups_per_core is 0, launch_bounds_min otherwise; "" = the dialect has no such cap.
  std::string launch_bounds, launch_bounds_min;
  LaunchBoundsPlace launch_bounds_place = LaunchBoundsPlace::AfterPrefix;
  std::string helper_prefix;         // before helper function definitions
  std::string global_space;          // address space of buffer pointers
  std::string shared_space;          // address space of shared arrays (their declarations)
  std::string shared_pointer_space;  // ... in a pointer type ("" where pointers carry none)
  std::string shared_align;          // after a shared array's declarator: aligns it to 16 bytes
  // Shared arrays of more than static_shared_limit bytes in all (0: no limit here) are carved from one dynamic
  // array declared `dynamic_shared_space unsigned char ingot_shared[]` (CUDA: static shared memory stops at 48 KB).
  std::uint64_t static_shared_limit = 0;
  std::string dynamic_shared_space;
  // Shared memory (bytes) a work-group can count on on the dialect's devices (0: no limit here): legalise keeps its
  // exchanges under it where it can (passes::LegaliseOptions::shared_budget).
  std::uint64_t shared_budget = 0;
  std::string const_word;                     // "const" qualifier for read-only buffers
  std::string restrict_word;                  // after the '*' of every buffer pointer ("" where the language has none);
                                              // check_args refuses aliasing buffers, so the promise holds
  std::array<std::string, kNumDTypes> types;  // storage/value type per DType
  std::array<std::string, kNumDTypes> unsigned_of;  // unsigned twin for wrap-around arithmetic
  std::array<std::string, 3> axis;                  // "x", "y", "z" or "0", "1", "2"
  // Thread-index spellings with "{a}" standing for the axis spelling.
  std::string local_id, group_id, group_size, num_groups;
  std::string program_id;  // may use the spellings above through {local}, {group}, {size}
  std::string barrier;     // one statement
  // Sub-group shuffle: "{v}" the value, "{src}" the source lane, "{lanes}" the sub-group width;
  // "" = none (legalise exchanges through shared memory instead).
  std::string shuffle;
  // Mma (ir.hpp) per element type: the PTX instruction the CUDA printer wraps in inline assembly
  // (operands packed two to a 32-bit word); empty = none (legalise exchanges through shared memory).
  std::map<DType, std::string> mma_m16n8k16;
  // Shared memory through 32-bit addresses (CUDA: NVRTC addresses shared arrays through 64-bit pointers, nvcc through
  // 32-bit ones; every index becomes a 64-bit product and sum, costing registers and instructions). Where shared_base
  // is set, each shared array's 32-bit address is computed once per kernel from it ("{array}": the array), and every
  // shared access calls a helper (defined in conversion_helpers) with that address plus the byte offset: shared_load
  // and shared_store by element size in bytes (1, 2, 4, 8; loads return the bits as an unsigned integer, stores take
  // them), shared_load_words and shared_store_words by 32-bit words of a vector access (1, 2, 4; the word vector type).
  // The asynchronous copies and matrix loads then take "{dst_addr}" and "{row_addr}", the 32-bit addresses. Empty: the
  // arrays are indexed as such.
  std::string shared_base;
  std::map<std::uint32_t, std::string> shared_load, shared_store, shared_load_words, shared_store_words;
  // Matrix load (ir.hpp, LoadMatrix): one statement writing the 32-bit words "{w0}".."{w3}" from the
  // 8-element shared row at pointer "{row}" (or 32-bit address "{row_addr}", with shared_base); "" = none (legalise
  // shuffles the rows and loads pairs); load_matrix_trans likewise for the transposed load. A dialect has both or
  // neither.
  std::string load_matrix;
  std::string load_matrix_trans;
  // Asynchronous copies (ir.hpp) per copy size in bytes (4, 8, 16): one statement in which "{dst}"
  // is a pointer to the shared destination ("{dst_addr}" its 32-bit address, with shared_base), "{src}" one to the
  // global source and "{ok}" the
  // condition (zeros where false); async_commit and async_wait ("{n}": groups left incomplete) one
  // statement each. An empty map = none (legalise copies at once and drops commits and waits).
  std::map<std::uint32_t, std::string> copy_async;
  std::string async_commit, async_wait;
  std::string float_as_uint, uint_as_float;  // bit casts, "{x}" is the operand
  std::string i64_suffix;
  // Math function names for f32 (Exp, Log, ..., Fma, Min, Max, Abs, Mod) and integer min/max/abs.
  std::array<std::string, 64> f32_fn;  // indexed by ir::Op
  std::string int_min, int_max, int_abs;
  std::string infinity, nan;  // f32 non-finite literals
  // Atomics: "{p}" is a pointer to the element, "{v}" the operand, "{space}" its address space,
  // "{t}" the element type.
  // "{ref}" is the element itself (GLSL's atomics take an lvalue, not a pointer).
  std::string atomic_add, atomic_min, atomic_max;
  FloatAtomicAdd float_atomic_add = FloatAtomicAdd::Native;
  std::string atomic_cas;  // 32-bit compare-and-swap returning the old value: {p} {cmp} {v}
  // Vector access moves 1, 2 or 4 32-bit words: "{n}" is the word count, "{args}" the words.
  std::string word_vector_type;  // e.g. "uint{n}" (n = 2 or 4; one word is the u32 type)
  std::string word_vector_make;  // builds a word vector from n u32 expressions
  ParamStyle param_style = ParamStyle::Plain;
  IndexStyle index_style = IndexStyle::Expressions;
  CastStyle cast_style = CastStyle::CStyle;
  // Array subscripts are 32-bit (GLSL): a 64-bit index is converted to u32 where it subscripts. Exact where the
  // runtime keeps every buffer under 2^32 bytes (Vulkan: maxStorageBufferRange is a 32-bit byte count).
  bool narrow_indexes = false;
  VectorAccess vector_access = VectorAccess::PointerCast;
  // Names a kernel, parameter or shared array may not take in this dialect beyond the printer's C-family list
  // (GLSL's keywords and built-in functions: `input`, `output`, `mix`, ...); such a name gets a suffix.
  std::set<std::string> reserved_words;
  // Prefixes no name may start with (GLSL: "gl_"); such a name gets a "v" in front.
  std::set<std::string> reserved_prefixes;
  std::set<ir::Op> unsupported;  // ops the legalise pass must remove first
  // Dialect-specific definitions of the 16-bit conversion helpers (by helper name), used
  // instead of the portable integer code; each must give the same result for every non-NaN
  // input (RNE) and a quiet NaN for NaN. Also the shared-memory access helpers (shared_load ..).
  // Each helper a kernel calls is printed once, before the kernel. A math function name in f32_fn that is a key here
  // is such a helper too (GLSL's fmod and IEEE minNum/maxNum).
  std::map<std::string, std::string> conversion_helpers;
  // Optional: a preprocessor macro. Where set, a helper that has both a conversion_helpers definition and a portable
  // one prints both, the portable one under `#ifdef` of this macro, so a runtime can build the portable code on a
  // device whose compiler mishandles the dialect's built-ins (OpenCL: "INGOT_PORTABLE_F16", see
  // runtime::OpenCLOptions::f16_conversions).
  std::string portable_helpers_macro;
  // Optional: per 16-bit float type, the name of a helper (defined in conversion_helpers) that
  // rounds two f32 values to one 32-bit word of two packed elements, the first in the low half —
  // what a vector store of converted f32 values uses instead of two conversions and a shift.
  std::map<DType, std::string> pack2_helpers;
};

// The dialect table of a target.
[[nodiscard]] Dialect dialect(Target t);

}  // namespace ingot::codegen
