// Compile-only CUDA: NVRTC, loaded at run time, turns CUDA source into a CUBIN.
#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/codegen/printer.hpp"
#include "ingot/runtime/cuda_compile.hpp"
#include "nvrtc_api.hpp"

namespace ingot::runtime {

namespace {

using cuda_detail::kNvrtcSuccess;
using cuda_detail::NvrtcApi;
using cuda_detail::nvrtcProgram;
using cuda_detail::nvrtcResult;

// Destroys the program on every path out of compile_source.
class Program {
 public:
  Program(const NvrtcApi& api, nvrtcProgram p) : api_(api), p_(p) {}
  ~Program() {
    if (p_) api_.nvrtcDestroyProgram(&p_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  [[nodiscard]] nvrtcProgram get() const { return p_; }

 private:
  const NvrtcApi& api_;
  nvrtcProgram p_;
};

struct ParsedArch {
  bool real = true;  // sm_ (SASS) vs compute_ (PTX)
  int number = 0;    // 90 for sm_90 / sm_90a
};

// "sm_90", "sm_90a", "compute_80": anything else is refused before NVRTC sees it.
ParsedArch parse_arch(const std::string& arch) {
  ParsedArch p;
  std::string rest;
  if (arch.rfind("sm_", 0) == 0) {
    rest = arch.substr(3);
  } else if (arch.rfind("compute_", 0) == 0) {
    p.real = false;
    rest = arch.substr(8);
  }
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  const std::string suffix = digits < rest.size() ? rest.substr(digits) : "";
  if (digits == 0 || digits > 4 || !(suffix.empty() || suffix == "a" || suffix == "f")) {
    throw std::invalid_argument("cuda: invalid architecture '" + arch +
                                "': expected sm_XY (e.g. sm_90) or compute_XY (e.g. compute_90)");
  }
  p.number = std::stoi(rest.substr(0, digits));
  return p;
}

std::string program_log(const NvrtcApi& api, nvrtcProgram p) {
  std::size_t n = 0;
  if (api.nvrtcGetProgramLogSize(p, &n) != kNvrtcSuccess || n == 0) return {};
  std::string log(n, '\0');
  if (api.nvrtcGetProgramLog(p, log.data()) != kNvrtcSuccess) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

bool is_elf_image(const std::vector<std::uint8_t>& image) {
  return image.size() >= 4 && image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' && image[3] == 'F';
}

CudaCompiler CudaCompiler::load(const std::filesystem::path& nvrtc_library) {
  std::string why;
  auto api = cuda_detail::load_nvrtc_api(nvrtc_library.string(), &why);
  if (!api) throw BackendUnavailable("cuda not available: " + why);
  return CudaCompiler(std::move(api));
}

std::string CudaCompiler::version() const { return api_->version_string(); }
std::vector<int> CudaCompiler::supported_archs() const { return api_->archs; }
std::string CudaCompiler::library_path() const { return api_->library.path(); }

std::vector<std::string> CudaCompiler::nvrtc_options(const CudaCompileOptions& options) {
  std::vector<std::string> o = {
      "--gpu-architecture=" + options.arch,
      "--std=c++17",
      // No fast-math, ever: denormals kept, IEEE division and square root.
      "--ftz=false",
      "--prec-div=true",
      "--prec-sqrt=true",
      options.fmad ? "--fmad=true" : "--fmad=false",
  };
  o.insert(o.end(), options.extra_options.begin(), options.extra_options.end());
  return o;
}

CudaCompileResult CudaCompiler::compile(const ir::Kernel& k, const CudaCompileOptions& options) const {
  const codegen::KernelSource src = codegen::emit(k, codegen::Target::CUDA);
  return compile_source(src.source, src.entry, options);
}

CudaCompileResult CudaCompiler::compile_source(const std::string& source, const std::string& entry,
                                               const CudaCompileOptions& options) const {
  const NvrtcApi& api = *api_;
  const ParsedArch arch = parse_arch(options.arch);
  const std::string what =
      "cuda: NVRTC " + api.version_string() + " compiling kernel '" + entry + "' for " + options.arch;
  if (!api.archs.empty()) {
    bool supported = false;
    std::string list;
    for (int a : api.archs) {
      supported = supported || a == arch.number;
      list += (list.empty() ? "" : ", ") + std::string("sm_") + std::to_string(a);
    }
    if (!supported) {
      throw CompileError(what + ": this NVRTC does not support " + options.arch + " (it supports " + list +
                             "); use a newer CUDA toolkit's NVRTC",
                         "");
    }
  }

  CudaCompileResult r;
  r.arch = options.arch;
  r.entry = entry;
  r.source = source;
  r.options = nvrtc_options(options);
  r.nvrtc_version = api.version_string();

  nvrtcProgram raw = nullptr;
  const std::string file_name = entry + ".cu";
  if (nvrtcResult e = api.nvrtcCreateProgram(&raw, source.c_str(), file_name.c_str(), 0, nullptr, nullptr);
      e != kNvrtcSuccess) {
    throw CompileError(what + ": nvrtcCreateProgram failed: " + api.describe(e), "");
  }
  Program prog(api, raw);
  const std::string name_expr = "&" + entry;
  if (nvrtcResult e = api.nvrtcAddNameExpression(prog.get(), name_expr.c_str()); e != kNvrtcSuccess) {
    throw CompileError(what + ": nvrtcAddNameExpression(\"" + name_expr + "\") failed: " + api.describe(e), "");
  }
  std::vector<const char*> argv;
  argv.reserve(r.options.size());
  for (const auto& o : r.options) argv.push_back(o.c_str());
  const nvrtcResult ce = api.nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  r.log = program_log(api, prog.get());
  if (ce != kNvrtcSuccess) {
    throw CompileError(what + " failed (" + api.describe(ce) + "); NVRTC log:\n" + r.log, r.log);
  }
  const char* lowered = nullptr;
  if (nvrtcResult e = api.nvrtcGetLoweredName(prog.get(), name_expr.c_str(), &lowered);
      e != kNvrtcSuccess || !lowered) {
    throw CompileError(what + ": no __global__ function named '" + entry + "' in the source (" + api.describe(e) + ")",
                       r.log);
  }
  r.lowered_name = lowered;

  if (arch.real) {
    std::size_t n = 0;
    if (nvrtcResult e = api.nvrtcGetCUBINSize(prog.get(), &n); e != kNvrtcSuccess || n == 0) {
      throw CompileError(what + ": nvrtcGetCUBINSize failed: " + api.describe(e), r.log);
    }
    r.cubin.resize(n);
    if (nvrtcResult e = api.nvrtcGetCUBIN(prog.get(), reinterpret_cast<char*>(r.cubin.data())); e != kNvrtcSuccess) {
      throw CompileError(what + ": nvrtcGetCUBIN failed: " + api.describe(e), r.log);
    }
    if (!is_elf_image(r.cubin)) throw CompileError(what + ": NVRTC returned a CUBIN that is not an ELF image", r.log);
  }
  // PTX exists for compute_XY; for sm_XY NVRTC may or may not keep it (it is optional there).
  std::size_t ptx_size = 0;
  if (api.nvrtcGetPTXSize(prog.get(), &ptx_size) == kNvrtcSuccess && ptx_size > 1) {
    std::string ptx(ptx_size, '\0');
    if (api.nvrtcGetPTX(prog.get(), ptx.data()) == kNvrtcSuccess) {
      while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
      r.ptx = std::move(ptx);
    }
  }
  if (!arch.real && r.ptx.empty()) throw CompileError(what + ": NVRTC produced no PTX", r.log);
  return r;
}

CudaCompileResult compile_cuda(const ir::Kernel& k, const CudaCompileOptions& options) {
  return CudaCompiler::load().compile(k, options);
}

}  // namespace ingot::runtime
