// ingot/runtime/spirv.hpp — GLSL compute shaders to SPIR-V through shaderc.
//
// shaderc is linked statically with glslang and SPIRV-Tools (libshaderc-dev), so a program needs no shader compiler
// where it runs; a build without them compiles to a load() that says so. The SPIR-V targets Vulkan 1.2; it is what
// the Vulkan runtime caches on disk (DiskCache, keyed by source, compiler and options).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ingot::runtime {

class SpirvCompiler {
 public:
  // Throws BackendUnavailable ("shaderc not available: ...") in a build without shaderc.
  [[nodiscard]] static SpirvCompiler load();
  ~SpirvCompiler();
  SpirvCompiler(SpirvCompiler&&) noexcept;
  SpirvCompiler& operator=(SpirvCompiler&&) noexcept;
  SpirvCompiler(const SpirvCompiler&) = delete;
  SpirvCompiler& operator=(const SpirvCompiler&) = delete;

  // The compiler and its options as a cache key part ("shaderc vulkan1.2 O0").
  [[nodiscard]] std::string describe() const;
  // SPIR-V words of a GLSL compute shader; throws CompileError naming `name` with shaderc's log.
  [[nodiscard]] std::vector<std::uint32_t> compile(const std::string& glsl, const std::string& name) const;

 private:
  struct Impl;
  explicit SpirvCompiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingot::runtime
