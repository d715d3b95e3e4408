// ingot/runtime/vulkan.hpp — the Vulkan runtime: runs kernels as GLSL compute shaders compiled to SPIR-V (shaderc)
// on any Vulkan 1.2 device (lavapipe on a CPU in CI, vendor drivers on GPUs).
//
// Contracts:
//   - The Vulkan loader (libvulkan.so.1) and shaderc (libshaderc.so.1) are loaded at run time: a program built with
//     this backend runs where neither exists, and create() says why Vulkan is unavailable (BackendUnavailable,
//     "vulkan not available: ...").
//   - create() picks one device and holds one instance, device and compute queue. A backend is used from one thread
//     at a time; buffers hold a reference to the device, so a buffer may outlive its backend.
//   - Fresh buffers hold poison_bytes(); upload/download copy exactly buffer.bytes() bytes and are synchronous.
//   - launch() checks the arguments, the geometry (maxComputeWorkGroupInvocations/Size/Count), the shared memory
//     (maxComputeSharedMemorySize), the push constants (maxPushConstantsSize) and each buffer's size against
//     maxStorageBufferRange before anything runs (ArgumentError), then prints the kernel as GLSL (codegen::emit, the
//     ABI in codegen/printer.hpp), compiles it to SPIR-V (memory map, then disk cache, then shaderc), builds one
//     pipeline per (kernel, work-group size) and runs it, returning when the results are visible to download.
//   - Correctness never relies on robustBufferAccess: it is not enabled.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/codegen/printer.hpp"
#include "ingot/runtime/backend.hpp"

namespace ingot::runtime {

struct VulkanOptions {
  // A device index (as `ingot device` lists them) or a case-insensitive substring of the device name. Empty:
  // $INGOT_VULKAN_DEVICE when set, else the first discrete GPU, else the first integrated GPU, else the first device.
  std::string device_filter;
  // The Vulkan loader; empty: "libvulkan.so.1" through the dynamic loader's search.
  std::string loader_library;
  std::filesystem::path cache_dir;  // where SPIR-V is kept; empty means DiskCache's default directory
  bool use_cache = true;            // whether to read and write the disk cache at all
};

// One device as the driver describes it.
struct VulkanDeviceInfo {
  std::uint32_t index = 0;  // among the instance's physical devices
  std::string name;
  std::string type;  // "discrete GPU", "integrated GPU", "CPU", ...
  std::string api_version, driver_name, driver_info;
  std::uint32_t vendor_id = 0, device_id = 0;
  std::uint32_t max_invocations = 0;             // maxComputeWorkGroupInvocations
  std::uint32_t max_group_size[3] = {0, 0, 0};   // maxComputeWorkGroupSize
  std::uint32_t max_group_count[3] = {0, 0, 0};  // maxComputeWorkGroupCount
  std::uint64_t max_shared_bytes = 0;            // maxComputeSharedMemorySize
  std::uint64_t max_storage_range = 0;           // maxStorageBufferRange
  std::uint32_t max_push_bytes = 0;              // maxPushConstantsSize
  std::uint32_t subgroup_size = 0;
  bool storage16 = false, storage8 = false;         // 16- and 8-bit storage buffer access
  bool int8 = false, int16 = false, int64 = false;  // shaderInt8, shaderInt16, shaderInt64
  bool float_atomic_add = false;                    // VK_EXT_shader_atomic_float, buffers
  bool timestamps = false;                          // the compute queue has timestamp queries
  double timestamp_period_ns = 0;
  [[nodiscard]] std::string describe() const;  // multi-line "key: value" text
};

// A Vulkan call failed at run time. what() names the call, the VkResult and what was being done.
struct VulkanError : std::runtime_error {
  int code = 0;  // the VkResult
  VulkanError(const std::string& message, int code_) : std::runtime_error(message), code(code_) {}
};

// Every device the loader reports (for `ingot device`); throws BackendUnavailable ("vulkan not available: ...")
// where there is no loader, no instance or no device.
[[nodiscard]] std::vector<VulkanDeviceInfo> list_vulkan_devices(const VulkanOptions& options = {});

class VulkanBackend final : public Backend {
 public:
  // Throws BackendUnavailable ("vulkan not available: ...") naming why: no loader, no shaderc, no device, no device
  // matching the filter (listing those found), no compute queue.
  [[nodiscard]] static std::unique_ptr<VulkanBackend> create(const VulkanOptions& options = {});
  ~VulkanBackend() override;
  VulkanBackend(const VulkanBackend&) = delete;
  VulkanBackend& operator=(const VulkanBackend&) = delete;

  [[nodiscard]] std::string name() const override { return "vulkan"; }
  [[nodiscard]] const VulkanDeviceInfo& device_info() const;
  // The reason this device cannot run k (a feature or limit it lacks), or "" when it can.
  [[nodiscard]] std::string cannot_run(const ir::Kernel& k);

  [[nodiscard]] BufferPtr allocate(DType t, std::size_t count) override;
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override;
  void download(const DeviceBuffer& src, void* dst, std::size_t bytes) override;
  void launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) override;
  // Timestamp queries around each window of launches where the queue has them (else the host clock).
  [[nodiscard]] Timing time_launches(const ir::Kernel& k, const LaunchGeometry& g,
                                     const std::vector<std::vector<Arg>>& arg_sets,
                                     const TimingOptions& options) override;

 private:
  struct Impl;
  explicit VulkanBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingot::runtime
