// Helpers of the ingot CLI.
#include "tools.hpp"

#include <set>

namespace ingot::tools {

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (auto t : ts) s += (s.empty() ? "" : ",") + std::string(dtype_name(t));
  return s;
}

std::vector<harness::Params> variants(const harness::KernelSpec& k) {
  std::set<harness::Params> seen;
  std::vector<harness::Params> out;
  auto add = [&](const harness::Params& p) {
    harness::Params spec;
    for (const auto& key : k.spec_params) {
      if (auto it = p.find(key); it != p.end()) spec[key] = it->second;
    }
    if (seen.insert(spec).second) out.push_back(p);
  };
  for (const auto& c : k.tests) add(c.params);
  for (const auto& c : k.bench) add(c.params);
  return out;
}

nlohmann::json CudaArtifacts::write(const ir::Kernel&, const std::filesystem::path&, const std::string&, std::size_t*) {
  note_ = "ptx/cubin: not written (this build of ingot has no CUDA compiler support)";
  return nlohmann::json::array();
}

}  // namespace ingot::tools
