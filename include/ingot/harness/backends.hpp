// ingot/harness/backends.hpp — opening backends by name, with the reason when one is absent.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ingot/harness/harness.hpp"

namespace ingot::harness {

// "interp", "opencl", "cuda".
[[nodiscard]] std::vector<std::string> known_backends();
// Expands "all" and comma lists; throws std::invalid_argument naming an unknown backend and
// listing the known ones.
[[nodiscard]] std::vector<std::string> parse_backend_list(const std::string& spec);
// Opens a backend. An absent one comes back with backend == nullptr and why_absent set
// ("opencl not available: ..."); CUDA without a GPU but with NVRTC comes back compile-only.
[[nodiscard]] BackendSlot open_backend(const std::string& name);

struct BackendReport {
  std::string name;
  bool available = false;
  std::string why_absent;
  std::vector<std::pair<std::string, std::string>> properties;
};
[[nodiscard]] BackendReport describe_backend(const std::string& name);

}  // namespace ingot::harness
