// Helpers of the ingot CLI.
#include "tools.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <stdexcept>

#include "ingot/runtime/backend.hpp"
#include "ingot/runtime/cuda_compile.hpp"

namespace ingot::tools {

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (auto t : ts) s += (s.empty() ? "" : ",") + std::string(dtype_name(t));
  return s;
}

void require_writable_file(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) throw std::invalid_argument(flag + " names no file");
  if (fs::is_directory(path, ec)) throw std::invalid_argument(flag + " '" + path + "' is a folder: name a file in it");
  if (fs::exists(path, ec)) {
    // An existing file (or device): opened for appending, so nothing is truncated before the work is done.
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
      throw std::invalid_argument(flag + " '" + path + "' cannot be written: " + std::strerror(errno));
    }
    ::close(fd);
    return;
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) {
    throw std::invalid_argument(flag + " '" + path + "': the folder '" + dir.string() +
                                "' does not exist (create it first)");
  }
  // Created and removed again: the only test that also holds for read-only mounts and for root.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::invalid_argument(flag + " '" + path + "' cannot be created: " + std::strerror(errno));
  }
  ::close(fd);
  ::unlink(path.c_str());
}

void require_writable_dir(const std::string& dir, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::invalid_argument("cannot create " + flag + " folder '" + dir + "': " + ec.message());
  if (!fs::is_directory(dir, ec)) throw std::invalid_argument(flag + " '" + dir + "' is not a folder");
  std::random_device rd;
  const std::string probe = (fs::path(dir) / (".ingot-write-test." + std::to_string(rd()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::invalid_argument(flag + " folder '" + dir + "' is not writable: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot open '" + path + "' for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  out.close();
  if (out.fail()) throw std::runtime_error("writing '" + path + "' failed (disk full or device error)");
}

std::vector<harness::Params> variants(const harness::KernelSpec& k, bool all_variants) {
  std::set<harness::Params> seen;
  std::vector<harness::Params> out;
  auto add = [&](const harness::Params& p) {
    if (!all_variants && !k.default_case(p)) return;
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
    write_file((dir / file).string(), std::string(static_cast<const char*>(data), n));
    out.push_back(file);
    ++*files;
  };
  write(variant + ".sm_90.cubin", r.cubin.data(), r.cubin.size());
  if (!r.ptx.empty()) write(variant + ".sm_90.ptx", r.ptx.data(), r.ptx.size());
  return out;
}

}  // namespace ingot::tools
