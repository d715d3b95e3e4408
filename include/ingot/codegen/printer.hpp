// ingot/codegen/printer.hpp — one C-family printer over the lowered IR, with dialects for
// CUDA, HIP, OpenCL C, the Metal Shading Language and GLSL 4.50 compute shaders (Vulkan).
//
// Kernel ABI (every runtime relies on it):
//   - one kernel function named KernelSource::entry, parameters in ir::Kernel::params order;
//   - a buffer parameter is a pointer to its element storage type in global/device memory:
//     f32 float, i32 int, u32 unsigned int, i64 long long (OpenCL/MSL: long), u8/bool
//     unsigned char, i8 signed char, u16 and the 16-bit floats f16/bf16 unsigned short
//     (16-bit floats are converted with integer code identical to ingot's host conversion,
//     so rounding is the same on every backend);
//   - a scalar parameter is passed by value in its type (bool as one unsigned char); on Metal
//     every parameter is a [[buffer(i)]] binding, scalars as `constant T&`; in GLSL buffer i is the std430
//     storage block at set 0, binding i (16-bit types as uint16_t, GL_EXT_shader_16bit_storage), and the scalars
//     are one push-constant block: each in a 32-bit slot (i64 in a 64-bit one at a multiple of 8; bool, u8, i8,
//     u16, f16, bf16 widened to uint/int) at KernelSource::push_offsets; the work-group size is specialisation
//     constants 0, 1 and 2 (x, y, z);
//   - the launch is a grid of work-groups times a work-group size (runtime/launch.hpp).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ingot/ir.hpp"

namespace ingot::codegen {

enum class Target { CUDA, HIP, OpenCL, Metal, GLSL };

[[nodiscard]] std::string_view target_name(Target t);            // "cuda", "hip", "opencl", "msl", "glsl"
[[nodiscard]] std::string_view target_file_extension(Target t);  // ".cu", ".hip", ".cl", ".metal", ".comp"

struct KernelSource {
  Target target = Target::CUDA;
  std::string entry;   // the kernel function's name in `source`
  std::string source;  // complete, self-contained translation unit
  // > 0: the shared arrays are carved from this many bytes of dynamic shared memory (more than the dialect's static
  // limit): the runtime launches with them (CUDA: after raising the function's dynamic shared-memory limit).
  std::uint64_t dynamic_shared_bytes = 0;
  std::uint64_t shared_bytes = 0;  // every shared array of the printed (legalised) kernel: ir::shared_layout's bytes
  // GLSL: per parameter, the byte offset of a scalar in the push-constant block (buffers: kNoPushOffset), and the
  // block's size. Empty for the other targets.
  static constexpr std::uint32_t kNoPushOffset = 0xffffffffu;
  std::vector<std::uint32_t> push_offsets;
  std::uint32_t push_bytes = 0;
};

// Prints kernel k (after the passes; legalised for t internally) for target t.
// Deterministic: the same IR always gives the same text.
[[nodiscard]] KernelSource emit(const ir::Kernel& k, Target t);

// A runtime's memo of emitted sources, keyed by ir::fingerprint: a kernel launched again is
// not printed again (printing a convolution costs ~0.2 ms, longer than many launches).
// One per backend object; not thread-safe (neither are the backends).
class SourceCache {
 public:
  explicit SourceCache(Target t) : target_(t) {}
  [[nodiscard]] const KernelSource& get(const ir::Kernel& k);

 private:
  Target target_;
  std::unordered_map<std::string, KernelSource> sources_;
};

}  // namespace ingot::codegen
