// GLSL -> SPIR-V through shaderc's C API, linked statically with glslang and SPIRV-Tools (Debian's libshaderc.so.1
// leaves their symbols to the program, so it cannot be loaded on its own), so the compiler travels with the program.
#include "ingot/runtime/spirv.hpp"

#include <cstring>

#include "ingot/runtime/backend.hpp"

#ifdef INGOT_HAVE_SHADERC
#include <shaderc/shaderc.h>
#endif

namespace ingot::runtime {

#ifdef INGOT_HAVE_SHADERC

struct SpirvCompiler::Impl {
  shaderc_compiler_t compiler = nullptr;
  shaderc_compile_options_t options = nullptr;
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (options) shaderc_compile_options_release(options);
    if (compiler) shaderc_compiler_release(compiler);
  }
};

SpirvCompiler SpirvCompiler::load() {
  auto impl = std::make_unique<Impl>();
  impl->compiler = shaderc_compiler_initialize();
  impl->options = shaderc_compile_options_initialize();
  if (!impl->compiler || !impl->options) throw BackendUnavailable("shaderc not available: initialisation failed");
  shaderc_compile_options_set_target_env(impl->options, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  // The driver optimises SPIR-V itself (lavapipe through LLVM, NVIDIA's compiler): spirv-opt's passes would only
  // lengthen every compile.
  shaderc_compile_options_set_optimization_level(impl->options, shaderc_optimization_level_zero);
  return SpirvCompiler(std::move(impl));
}

std::string SpirvCompiler::describe() const { return "shaderc vulkan1.2 O0"; }

std::vector<std::uint32_t> SpirvCompiler::compile(const std::string& glsl, const std::string& name) const {
  shaderc_compilation_result_t r = shaderc_compile_into_spv(
      impl_->compiler, glsl.data(), glsl.size(), shaderc_compute_shader, name.c_str(), "main", impl_->options);
  if (!r) throw CompileError("shaderc: no result for '" + name + "'", "");
  if (shaderc_result_get_compilation_status(r) != shaderc_compilation_status_success) {
    const char* message = shaderc_result_get_error_message(r);
    const std::string log = message ? message : "";
    shaderc_result_release(r);
    throw CompileError("shaderc refused the GLSL of kernel '" + name + "':\n" + log, log);
  }
  std::vector<std::uint32_t> words(shaderc_result_get_length(r) / 4);
  std::memcpy(words.data(), shaderc_result_get_bytes(r), words.size() * 4);
  shaderc_result_release(r);
  return words;
}

#else

struct SpirvCompiler::Impl {};
SpirvCompiler SpirvCompiler::load() {
  throw BackendUnavailable("shaderc not available: built without shaderc (install libshaderc-dev and reconfigure)");
}
std::string SpirvCompiler::describe() const { return ""; }
std::vector<std::uint32_t> SpirvCompiler::compile(const std::string&, const std::string&) const { return {}; }

#endif

SpirvCompiler::SpirvCompiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SpirvCompiler::~SpirvCompiler() = default;
SpirvCompiler::SpirvCompiler(SpirvCompiler&&) noexcept = default;
SpirvCompiler& SpirvCompiler::operator=(SpirvCompiler&&) noexcept = default;

}  // namespace ingot::runtime
