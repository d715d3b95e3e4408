// ingot/harness/backends.hpp — opening backends by name, with the reason when one is absent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ingot/codegen/printer.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/runtime/cuda.hpp"
#include "ingot/runtime/opencl.hpp"
#include "ingot/runtime/vulkan.hpp"

namespace ingot::harness {

// "interp", "opencl", "cuda", "vulkan".
[[nodiscard]] std::vector<std::string> known_backends();
// Expands "all" and comma lists; throws std::invalid_argument naming an unknown backend and
// listing the known ones.
[[nodiscard]] std::vector<std::string> parse_backend_list(const std::string& spec);
struct OpenBackendOptions {
  // OpenCL on a CPU device (PoCL): a kernel whose OpenCL C exceeds this many bytes is skipped with
  // the reason (0: none is). PoCL compiles the largest tensor-core kernels' legalised exchanges
  // (0.25-1.2 MB of source, unrolled mma emulation) in 0.5-2 minutes each; everything else in seconds.
  // GPU devices have no limit.
  std::uint64_t cpu_opencl_source_limit = 256'000;
  // OpenCL on a CPU device: programs under this many bytes build with -cl-opt-disable (OpenCLOptions::
  // unoptimized_below; 0: none), where `opencl` names no limit of its own. GPU devices always build optimized.
  std::size_t cpu_opencl_unoptimized_below = 0;
  runtime::OpenCLOptions opencl;  // how the OpenCL backend is created
  runtime::CudaOptions cuda;      // how the CUDA backend is created (its compile options also where it only compiles)
  runtime::VulkanOptions vulkan;  // how the Vulkan backend is created
};
// Opens a backend. An absent one comes back with backend == nullptr and why_absent set
// ("opencl not available: ..."); CUDA without a GPU but with NVRTC comes back compile-only.
[[nodiscard]] BackendSlot open_backend(const std::string& name, const OpenBackendOptions& options = {});
// The skip_reason of a CPU OpenCL slot: non-empty for a kernel whose OpenCL C exceeds `limit` bytes.
[[nodiscard]] std::function<std::string(const ir::Kernel&)> source_size_limit(std::uint64_t limit);
// The skip_reason of a slot whose device gives a work-group `limit` bytes of shared memory (`what`: the device's name
// for it): non-empty for a kernel whose shared arrays, printed for t, need more; else then(k) (where set).
[[nodiscard]] std::function<std::string(const ir::Kernel&)> shared_memory_limit(
    codegen::Target t, std::uint64_t limit, const std::string& what,
    std::function<std::string(const ir::Kernel&)> then = {});

struct BackendReport {
  std::string name;
  bool available = false;
  std::string why_absent;
  std::vector<std::pair<std::string, std::string>> properties;
};
[[nodiscard]] BackendReport describe_backend(const std::string& name);

}  // namespace ingot::harness
