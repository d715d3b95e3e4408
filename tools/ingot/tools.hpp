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

// Output paths are checked before any work starts: std::invalid_argument (a usage error) naming the flag and the path
// when the file could not be created or written (a missing or read-only folder, a directory in the way).
void require_writable_file(const std::string& path, const std::string& flag);
// The same for a folder the command writes into (created if missing).
void require_writable_dir(const std::string& dir, const std::string& flag);
// Writes `text` to `path` in full or throws std::runtime_error naming the path (a full disk is caught at the close).
void write_file(const std::string& path, const std::string& text);
// The distinct specialisation-value sets of a kernel's test and bench cases: those of its default variants (cases
// naming no tuning option) unless `all_variants`.
std::vector<harness::Params> variants(const harness::KernelSpec& k, bool all_variants = true);

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
