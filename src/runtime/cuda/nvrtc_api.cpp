// Loading NVRTC at run time.
#include "nvrtc_api.hpp"

#include <cstdlib>
#include <filesystem>

namespace ingot::runtime::cuda_detail {

namespace {

template <class F>
void bind(const SharedLibrary& lib, F& fn, const char* name, std::string* missing) {
  fn = reinterpret_cast<F>(lib.symbol(name));
  if (!fn) {
    if (!missing->empty()) *missing += ", ";
    *missing += name;
  }
}

}  // namespace

std::string NvrtcApi::describe(nvrtcResult r) const {
  const char* s = nvrtcGetErrorString ? nvrtcGetErrorString(r) : nullptr;
  return s ? std::string(s) : "nvrtcResult " + std::to_string(r);
}

std::string NvrtcApi::version_string() const { return std::to_string(major) + "." + std::to_string(minor); }

std::vector<std::string> nvrtc_candidates() {
  const std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  std::vector<std::string> out = names;
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(var);
    if (v && *v) dirs.push_back(std::string(v) + "/lib64");
  }
  dirs.emplace_back("/usr/local/cuda/lib64");
  for (const auto& d : dirs) {
    for (const auto& n : names) out.push_back((std::filesystem::path(d) / n).string());
  }
  return out;
}

std::shared_ptr<const NvrtcApi> load_nvrtc_api(const std::string& library, std::string* why) {
  auto api = std::make_shared<NvrtcApi>();
  api->library = SharedLibrary::open_first(library.empty() ? nvrtc_candidates() : std::vector<std::string>{library});
  if (!api->library.loaded()) {
    *why = "NVRTC not found (install the CUDA toolkit's NVRTC or set CUDA_HOME): " + api->library.why();
    return nullptr;
  }
  const SharedLibrary& lib = api->library;
  std::string missing;
  bind(lib, api->nvrtcGetErrorString, "nvrtcGetErrorString", &missing);
  bind(lib, api->nvrtcVersion, "nvrtcVersion", &missing);
  bind(lib, api->nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", &missing);
  bind(lib, api->nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", &missing);
  bind(lib, api->nvrtcCreateProgram, "nvrtcCreateProgram", &missing);
  bind(lib, api->nvrtcDestroyProgram, "nvrtcDestroyProgram", &missing);
  bind(lib, api->nvrtcCompileProgram, "nvrtcCompileProgram", &missing);
  bind(lib, api->nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", &missing);
  bind(lib, api->nvrtcGetProgramLog, "nvrtcGetProgramLog", &missing);
  bind(lib, api->nvrtcGetPTXSize, "nvrtcGetPTXSize", &missing);
  bind(lib, api->nvrtcGetPTX, "nvrtcGetPTX", &missing);
  bind(lib, api->nvrtcGetCUBINSize, "nvrtcGetCUBINSize", &missing);
  bind(lib, api->nvrtcGetCUBIN, "nvrtcGetCUBIN", &missing);
  bind(lib, api->nvrtcAddNameExpression, "nvrtcAddNameExpression", &missing);
  bind(lib, api->nvrtcGetLoweredName, "nvrtcGetLoweredName", &missing);
  if (!missing.empty()) {
    *why = "NVRTC at " + api->library.path() + " lacks " + missing + " (NVRTC 11.1 or newer is needed)";
    return nullptr;
  }
  if (api->nvrtcVersion(&api->major, &api->minor) != kNvrtcSuccess) {
    *why = "NVRTC at " + api->library.path() + " did not report its version";
    return nullptr;
  }
  int n = 0;
  if (api->nvrtcGetNumSupportedArchs(&n) == kNvrtcSuccess && n > 0) {
    api->archs.resize(static_cast<std::size_t>(n));
    if (api->nvrtcGetSupportedArchs(api->archs.data()) != kNvrtcSuccess) api->archs.clear();
  }
  return api;
}

}  // namespace ingot::runtime::cuda_detail
