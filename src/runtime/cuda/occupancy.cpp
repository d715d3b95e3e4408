// The SM occupancy model (cuda_occupancy.hpp).
#include "ingot/runtime/cuda_occupancy.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>

namespace ingot::runtime {

std::optional<CudaSmLimits> cuda_sm_limits(const std::string& arch) {
  CudaSmLimits l;
  if (arch == "sm_90" || arch == "sm_90a") {
    l.part = "H100/H200 SXM";
    l.units = 132;
    l.shared_bytes = 233472;  // 228 KB
    return l;
  }
  if (arch == "sm_80") {
    l.part = "A100";
    l.units = 108;
    l.shared_bytes = 167936;  // 164 KB
    return l;
  }
  return std::nullopt;
}

CudaOccupancy cuda_occupancy(const CudaSmLimits& limits, int threads, int registers, std::uint64_t shared_bytes) {
  if (threads < 1 || threads > limits.threads) {
    throw std::invalid_argument("occupancy: a work-group of " + std::to_string(threads) +
                                " threads; an SM holds 1 to " + std::to_string(limits.threads));
  }
  if (registers < 0 || registers > 255) {
    throw std::invalid_argument("occupancy: " + std::to_string(registers) +
                                " registers per thread; a thread has 0 to 255");
  }
  const int warps = (threads + 31) / 32;
  CudaOccupancy o{limits.groups, "work-groups per SM"};
  const auto take = [&](int n, const char* why) {
    if (n < o.groups) o = {std::max(n, 0), why};
  };
  take(limits.threads / (warps * 32), "threads");
  if (registers > 0) {
    const int per_warp = (registers * 32 + limits.register_unit - 1) / limits.register_unit * limits.register_unit;
    take(limits.registers / per_warp / warps, "registers");
  }
  const std::uint64_t per_group =
      (shared_bytes + limits.shared_reserved + limits.shared_unit - 1) / limits.shared_unit * limits.shared_unit;
  take(static_cast<int>(limits.shared_bytes / per_group), "shared memory");
  return o;
}

std::optional<PtxasUsage> parse_ptxas_usage(const std::string& log) {
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex spill(R"((\d+) bytes spill stores)");
  std::smatch m;
  if (!std::regex_search(log, m, used)) return std::nullopt;
  PtxasUsage u;
  u.registers = std::stoi(m[1].str());
  // The smem and spill figures of the same kernel follow its "Used" line (one kernel per ingot program).
  if (std::regex_search(log, m, smem)) u.shared_bytes = std::stoull(m[1].str());
  if (std::regex_search(log, m, spill)) u.spill_store_bytes = std::stoull(m[1].str());
  return u;
}

}  // namespace ingot::runtime
