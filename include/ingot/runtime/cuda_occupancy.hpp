// ingot/runtime/cuda_occupancy.hpp — how many work-groups of a compiled kernel one NVIDIA SM holds at once, from the
// kernel's registers, shared memory and work-group size (the rules of NVIDIA's occupancy calculator), without a GPU;
// and the resources ptxas reports (`--ptxas-options=-v`), which feed it.
//
// With a GPU the driver answers the same question (Backend::residency, cuOccupancyMaxActiveBlocksPerMultiprocessor);
// this model lets `ingot inspect --stage resources` tell a case's waves (work-groups / (per SM x SMs)) before a GPU
// run. The model covers the architectures listed in cuda_sm_limits; the SM count is the data-centre part's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ingot::runtime {

// One SM's limits and the part's SM count.
struct CudaSmLimits {
  std::string part;                      // "H100/H200 SXM"
  int units = 0;                         // SMs of that part
  int threads = 2048;                    // resident threads per SM
  int groups = 32;                       // resident work-groups per SM
  int registers = 65536;                 // 32-bit registers per SM
  int register_unit = 256;               // registers are allocated per warp in units of this many
  std::uint64_t shared_bytes = 233472;   // shared memory per SM usable by work-groups (the largest carveout)
  std::uint64_t shared_reserved = 1024;  // shared memory the system reserves per work-group
  std::uint64_t shared_unit = 128;       // shared memory allocation granularity
};

// The limits of "sm_80" (A100) and "sm_90" (H100/H200); nullopt for an architecture without a model here.
[[nodiscard]] std::optional<CudaSmLimits> cuda_sm_limits(const std::string& arch);

struct CudaOccupancy {
  int groups = 0;       // work-groups resident per SM (0: the kernel does not fit one SM)
  std::string limiter;  // "registers", "shared memory", "threads" or "work-groups per SM"
};

// Work-groups of `threads` threads, `registers` registers per thread and `shared_bytes` of shared memory (static plus
// dynamic) that one SM holds at once. Throws std::invalid_argument for threads outside [1, limits.threads] or
// registers outside [0, 255].
[[nodiscard]] CudaOccupancy cuda_occupancy(const CudaSmLimits& limits, int threads, int registers,
                                           std::uint64_t shared_bytes);

// What ptxas -v reports for one kernel ("Used 64 registers, used 1 barriers, 40896 bytes smem" and "N bytes spill
// stores"); nullopt where the log has no "Used N registers" line.
struct PtxasUsage {
  int registers = 0;
  std::uint64_t shared_bytes = 0;  // static shared memory (0 where the line names none)
  std::uint64_t spill_store_bytes = 0;
};
[[nodiscard]] std::optional<PtxasUsage> parse_ptxas_usage(const std::string& log);

}  // namespace ingot::runtime
