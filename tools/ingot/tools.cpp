// Helpers of the ingot CLI.
#include "tools.hpp"

#include <fstream>
#include <set>

#include "ingot/runtime/backend.hpp"
#include "ingot/runtime/cuda_compile.hpp"

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

nlohmann::json CudaArtifacts::write(const ir::Kernel& k, const std::filesystem::path& dir, const std::string& variant,
                                    std::size_t* files) {
  nlohmann::json out = nlohmann::json::array();
  if (!tried_) {
    tried_ = true;
    try {
      compiler_ = std::make_shared<runtime::CudaCompiler>(runtime::CudaCompiler::load());
      note_ = "ptx/cubin: compiled for sm_90 with NVRTC " + compiler_->version();
    } catch (const runtime::BackendUnavailable& e) {
      note_ = std::string("ptx/cubin: not written (") + e.what() + ")";
    }
  }
  if (!compiler_) return out;
  const auto r = compiler_->compile(k, runtime::CudaCompileOptions{});
  auto write = [&](const std::string& file, const void* data, std::size_t n) {
    std::ofstream f(dir / file, std::ios::binary);
    f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    out.push_back(file);
    ++*files;
  };
  write(variant + ".sm_90.cubin", r.cubin.data(), r.cubin.size());
  if (!r.ptx.empty()) write(variant + ".sm_90.ptx", r.ptx.data(), r.ptx.size());
  return out;
}

}  // namespace ingot::tools
