// tools/ingot/tools.hpp — small helpers of the ingot CLI.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ingot/harness/registry.hpp"

namespace ingot::runtime {
class CudaCompiler;
}

namespace ingot::tools {

std::string dtype_list(const std::vector<DType>& ts);
// The distinct specialisation-value sets of a kernel's test and bench cases.
std::vector<harness::Params> variants(const harness::KernelSpec& k);

// Writes PTX and cubin (sm_90) next to the emitted CUDA source where NVRTC exists; otherwise
// records why not (once, in note()).
class CudaArtifacts {
 public:
  nlohmann::json write(const ir::Kernel& k, const std::filesystem::path& dir, const std::string& variant,
                       std::size_t* files);
  [[nodiscard]] const std::string& note() const { return note_; }

 private:
  std::string note_;
  bool tried_ = false;
  std::shared_ptr<runtime::CudaCompiler> compiler_;
};

}  // namespace ingot::tools
