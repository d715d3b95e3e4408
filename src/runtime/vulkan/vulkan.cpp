// The Vulkan runtime: the loader through dlopen (VK_NO_PROTOTYPES: every entry point is fetched), GLSL from the one
// printer, SPIR-V from shaderc (spirv.hpp), one compute pipeline per (kernel, work-group size).
#include "ingot/runtime/vulkan.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>

#include "../cuda/shared_library.hpp"
#include "ingot/runtime/cache.hpp"
#include "ingot/runtime/spirv.hpp"

#if __has_include(<vulkan/vulkan.h>)
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#define INGOT_HAVE_VULKAN_HEADER 1
#endif

namespace ingot::runtime {

std::string VulkanDeviceInfo::describe() const {
  std::ostringstream os;
  os << "device: [" << index << "] " << name << " (" << type << ")\n"
     << "api version: " << api_version << "\n"
     << "driver: " << driver_name << " " << driver_info << "\n"
     << "max work-group invocations: " << max_invocations << "\n"
     << "shared memory: " << max_shared_bytes / 1024 << " KiB\n"
     << "max storage buffer range: " << max_storage_range / (1024 * 1024) << " MiB\n"
     << "push constants: " << max_push_bytes << " bytes\n"
     << "subgroup size: " << subgroup_size << "\n"
     << "16-bit storage: " << (storage16 ? "yes" : "no") << ", 8-bit storage: " << (storage8 ? "yes" : "no")
     << ", int8/int16/int64: " << int8 << "/" << int16 << "/" << int64
     << ", float atomic add: " << (float_atomic_add ? "yes" : "no") << "\n"
     << "timestamps: " << (timestamps ? "yes" : "no") << "\n";
  return os.str();
}

#ifdef INGOT_HAVE_VULKAN_HEADER

namespace {

#define INGOT_VK_INSTANCE_FNS(X)              \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define INGOT_VK_DEVICE_FNS(X)     \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkBindBufferMemory)            \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkResetCommandBuffer)          \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdPushConstants)            \
  X(vkCmdDispatch)                 \
  X(vkCmdPipelineBarrier)          \
  X(vkCmdCopyBuffer)               \
  X(vkCmdFillBuffer)               \
  X(vkCmdWriteTimestamp)           \
  X(vkCmdResetQueryPool)           \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkGetQueryPoolResults)         \
  X(vkQueueSubmit)                 \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkWaitForFences)               \
  X(vkResetFences)

std::string result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    default: return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

void check(VkResult r, const char* call, const std::string& what) {
  if (r != VK_SUCCESS) {
    throw VulkanError(std::string(call) + " failed with " + result_name(r) + " (" + what + ")", static_cast<int>(r));
  }
}

std::string version_text(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The loader and an instance: what listing devices and creating a backend share.
struct Instance {
  cuda_detail::SharedLibrary lib;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
#define INGOT_DECLARE(name) PFN_##name name = nullptr;
  INGOT_VK_INSTANCE_FNS(INGOT_DECLARE)
  Instance() = default;
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  ~Instance() {
    if (instance && vkDestroyInstance) vkDestroyInstance(instance, nullptr);
  }
};

std::shared_ptr<Instance> open_instance(const VulkanOptions& o) {
  auto in = std::make_shared<Instance>();
  const std::vector<std::string> candidates = o.loader_library.empty()
                                                  ? std::vector<std::string>{"libvulkan.so.1", "libvulkan.so"}
                                                  : std::vector<std::string>{o.loader_library};
  in->lib = cuda_detail::SharedLibrary::open_first(candidates);
  if (!in->lib.loaded()) throw BackendUnavailable("vulkan not available: no Vulkan loader (" + in->lib.why() + ")");
  in->vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(in->lib.symbol("vkGetInstanceProcAddr"));
  if (!in->vkGetInstanceProcAddr) {
    throw BackendUnavailable("vulkan not available: " + in->lib.path() + " exports no vkGetInstanceProcAddr");
  }
  auto enumerate_version = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      in->vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  std::uint32_t loader_version = VK_API_VERSION_1_0;
  if (enumerate_version) (void)enumerate_version(&loader_version);
  if (loader_version < VK_API_VERSION_1_2) {
    throw BackendUnavailable("vulkan not available: the loader supports Vulkan " + version_text(loader_version) +
                             "; ingot needs 1.2");
  }
  auto create_instance =
      reinterpret_cast<PFN_vkCreateInstance>(in->vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance"));
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "ingot";
  app.pEngineName = "ingot";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  if (!create_instance) throw BackendUnavailable("vulkan not available: the loader has no vkCreateInstance");
  if (const VkResult r = create_instance(&ci, nullptr, &in->instance); r != VK_SUCCESS) {
    throw BackendUnavailable("vulkan not available: vkCreateInstance failed with " + result_name(r) +
                             " (no Vulkan driver installed?)");
  }
#define INGOT_LOAD_INSTANCE(name)                                                          \
  in->name = reinterpret_cast<PFN_##name>(in->vkGetInstanceProcAddr(in->instance, #name)); \
  if (!in->name) throw BackendUnavailable("vulkan not available: the loader lacks " #name);
  INGOT_VK_INSTANCE_FNS(INGOT_LOAD_INSTANCE)
  return in;
}

std::vector<VkPhysicalDevice> physical_devices(const Instance& in) {
  std::uint32_t n = 0;
  check(in.vkEnumeratePhysicalDevices(in.instance, &n, nullptr), "vkEnumeratePhysicalDevices", "counting devices");
  std::vector<VkPhysicalDevice> out(n);
  if (n) check(in.vkEnumeratePhysicalDevices(in.instance, &n, out.data()), "vkEnumeratePhysicalDevices", "listing");
  out.resize(n);
  return out;
}

bool has_extension(const Instance& in, VkPhysicalDevice pd, const char* name) {
  std::uint32_t n = 0;
  if (in.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> ext(n);
  if (in.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, ext.data()) != VK_SUCCESS) return false;
  for (const auto& e : ext) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

// The compute queue family (one with compute; one without graphics preferred), or -1.
int compute_family(const Instance& in, VkPhysicalDevice pd, std::uint32_t* timestamp_bits) {
  std::uint32_t n = 0;
  in.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> q(n);
  in.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q.data());
  int best = -1;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (best < 0 || !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) best = static_cast<int>(i);
  }
  if (best >= 0 && timestamp_bits) *timestamp_bits = q[static_cast<std::size_t>(best)].timestampValidBits;
  return best;
}

VulkanDeviceInfo describe_device(const Instance& in, VkPhysicalDevice pd, std::uint32_t index) {
  VulkanDeviceInfo d;
  d.index = index;
  VkPhysicalDeviceSubgroupProperties sub{};
  sub.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceDriverProperties drv{};
  drv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  drv.pNext = &sub;
  VkPhysicalDeviceProperties2 p2{};
  p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  VkPhysicalDeviceProperties base{};
  in.vkGetPhysicalDeviceProperties(pd, &base);
  const bool v12 = base.apiVersion >= VK_API_VERSION_1_2;
  if (v12) {
    p2.pNext = &drv;
    in.vkGetPhysicalDeviceProperties2(pd, &p2);
  } else {
    p2.properties = base;
  }
  const VkPhysicalDeviceProperties& p = p2.properties;
  const VkPhysicalDeviceLimits& l = p.limits;
  d.name = p.deviceName;
  switch (p.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: d.type = "discrete GPU"; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: d.type = "integrated GPU"; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: d.type = "virtual GPU"; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: d.type = "CPU"; break;
    default: d.type = "other"; break;
  }
  d.api_version = version_text(p.apiVersion);
  if (v12) {
    d.driver_name = drv.driverName;
    d.driver_info = drv.driverInfo;
    d.subgroup_size = sub.subgroupSize;
  }
  d.vendor_id = p.vendorID;
  d.device_id = p.deviceID;
  d.max_invocations = l.maxComputeWorkGroupInvocations;
  for (int a = 0; a < 3; ++a) {
    d.max_group_size[a] = l.maxComputeWorkGroupSize[a];
    d.max_group_count[a] = l.maxComputeWorkGroupCount[a];
  }
  d.max_shared_bytes = l.maxComputeSharedMemorySize;
  d.max_storage_range = l.maxStorageBufferRange;
  d.max_push_bytes = l.maxPushConstantsSize;
  d.timestamp_period_ns = l.timestampPeriod;
  if (v12) {
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{};
    af.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
    const bool has_af = has_extension(in, pd, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.pNext = has_af ? &af : nullptr;
    VkPhysicalDeviceVulkan11Features f11{};
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f11.pNext = &f12;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &f11;
    in.vkGetPhysicalDeviceFeatures2(pd, &f2);
    d.storage16 = f11.storageBuffer16BitAccess;
    d.storage8 = f12.storageBuffer8BitAccess;
    d.int8 = f12.shaderInt8;
    d.int16 = f2.features.shaderInt16;
    d.int64 = f2.features.shaderInt64;
    d.float_atomic_add = has_af && af.shaderBufferFloat32AtomicAdd && af.shaderSharedFloat32AtomicAdd;
  }
  std::uint32_t ts_bits = 0;
  const int family = compute_family(in, pd, &ts_bits);
  d.timestamps = family >= 0 && ts_bits > 0 && l.timestampPeriod > 0;
  return d;
}

// The device and what every object made on it shares (buffers keep it alive).
struct Device {
  std::shared_ptr<Instance> in;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  VulkanDeviceInfo info;
  VkPhysicalDeviceMemoryProperties memory{};
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
#define INGOT_DECLARE_DEVICE(name) PFN_##name name = nullptr;
  INGOT_VK_DEVICE_FNS(INGOT_DECLARE_DEVICE)
  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device() {
    if (!device) return;
    if (fence) vkDestroyFence(device, fence, nullptr);
    if (pool) vkDestroyCommandPool(device, pool, nullptr);
    vkDestroyDevice(device, nullptr);
  }

  // A memory type allowed by `bits` with all of `want`, or -1.
  [[nodiscard]] int memory_type(std::uint32_t bits, VkMemoryPropertyFlags want) const {
    for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
      if ((bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & want) == want) return static_cast<int>(i);
    }
    return -1;
  }

  // Records commands into the one command buffer, submits them and waits.
  void submit(const std::function<void(VkCommandBuffer)>& record, const std::string& what) {
    check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer", what);
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer", what);
    record(cmd);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer", what);
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit", what);
    const VkResult r = vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
    (void)vkResetFences(device, 1, &fence);
    check(r, "vkWaitForFences", what);
  }
};

// A VkBuffer with its own memory; mapped where the memory is host-visible (lavapipe, UMA), else reached through a
// staging buffer.
struct RawBuffer {
  std::shared_ptr<Device> dev;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
  RawBuffer() = default;
  RawBuffer(const RawBuffer&) = delete;
  RawBuffer& operator=(const RawBuffer&) = delete;
  ~RawBuffer() {
    if (!dev) return;
    if (mapped) dev->vkUnmapMemory(dev->device, memory);
    if (buffer) dev->vkDestroyBuffer(dev->device, buffer, nullptr);
    if (memory) dev->vkFreeMemory(dev->device, memory, nullptr);
  }
};

// A buffer of `bytes` (at least 4, a multiple of 4: fills and bindings work in words). host: host-visible memory
// (staging), else device-local where there is such memory.
std::unique_ptr<RawBuffer> make_raw(const std::shared_ptr<Device>& dev, std::size_t bytes, bool host) {
  auto b = std::make_unique<RawBuffer>();
  b->dev = dev;
  b->size = std::max<VkDeviceSize>(4, (bytes + 3) / 4 * 4);
  VkBufferCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  ci.size = b->size;
  ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  const std::string what = "a buffer of " + std::to_string(bytes) + " bytes";
  check(dev->vkCreateBuffer(dev->device, &ci, nullptr, &b->buffer), "vkCreateBuffer", what);
  VkMemoryRequirements req{};
  dev->vkGetBufferMemoryRequirements(dev->device, b->buffer, &req);
  const VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int type = host ? dev->memory_type(req.memoryTypeBits, visible)
                  : dev->memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (type < 0) type = dev->memory_type(req.memoryTypeBits, host ? visible : 0);
  if (type < 0) throw VulkanError("no memory type for " + what, 0);
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = static_cast<std::uint32_t>(type);
  check(dev->vkAllocateMemory(dev->device, &ai, nullptr, &b->memory), "vkAllocateMemory", what);
  check(dev->vkBindBufferMemory(dev->device, b->buffer, b->memory, 0), "vkBindBufferMemory", what);
  if ((dev->memory.memoryTypes[type].propertyFlags & visible) == visible) {
    check(dev->vkMapMemory(dev->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped), "vkMapMemory", what);
  }
  return b;
}

class VulkanBuffer final : public DeviceBuffer {
 public:
  VulkanBuffer(DType t, std::size_t count, std::unique_ptr<RawBuffer> raw)
      : DeviceBuffer(t, count), raw_(std::move(raw)) {}
  [[nodiscard]] std::string backend_name() const override { return "vulkan"; }
  [[nodiscard]] RawBuffer& raw() const { return *raw_; }

 private:
  std::unique_ptr<RawBuffer> raw_;
};

void copy_barrier(Device& d, VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access,
                  VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  d.vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

std::uint32_t poison_word(DType t) {
  const std::size_t es = dtype_size(t);
  const std::vector<std::uint8_t> p = poison_bytes(t, (8 + es - 1) / es);
  std::uint32_t w = 0;
  std::memcpy(&w, p.data(), 4);
  return w;
}

// Statements of k that need a device feature beyond the baseline: an f32 atomic add.
bool has_float_atomic_add(const ir::Kernel& k, const ir::Block& b) {
  for (const ir::Stmt& s : b) {
    if (s.kind == ir::StmtKind::Atomic && s.atomic == ir::AtomicOp::Add && k.mem_type(s.mem) == DType::f32) return true;
    if (has_float_atomic_add(k, s.body) || has_float_atomic_add(k, s.else_body)) return true;
  }
  return false;
}

}  // namespace

std::vector<VulkanDeviceInfo> list_vulkan_devices(const VulkanOptions& options) {
  const auto in = open_instance(options);
  const auto pds = physical_devices(*in);
  if (pds.empty()) throw BackendUnavailable("vulkan not available: the loader found no Vulkan device");
  std::vector<VulkanDeviceInfo> out;
  for (std::uint32_t i = 0; i < pds.size(); ++i) out.push_back(describe_device(*in, pds[i], i));
  return out;
}

struct VulkanBackend::Impl {
  std::shared_ptr<Device> dev;
  SpirvCompiler compiler;
  DiskCache cache;
  bool use_cache = true;
  codegen::SourceCache sources{codegen::Target::GLSL};
  std::map<std::string, std::vector<std::uint32_t>> spirv;  // GLSL source -> SPIR-V

  struct Pipeline {
    std::shared_ptr<Device> dev;
    VkShaderModule module = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    std::vector<std::uint32_t> bindings;  // the buffer parameters' indices
    Pipeline() = default;
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;
    ~Pipeline() {
      if (!dev) return;
      if (pipeline) dev->vkDestroyPipeline(dev->device, pipeline, nullptr);
      if (layout) dev->vkDestroyPipelineLayout(dev->device, layout, nullptr);
      if (set_layout) dev->vkDestroyDescriptorSetLayout(dev->device, set_layout, nullptr);
      if (module) dev->vkDestroyShaderModule(dev->device, module, nullptr);
    }
  };
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines;  // (source, work-group size) -> pipeline

  Impl(std::shared_ptr<Device> d, SpirvCompiler c, const VulkanOptions& o)
      : dev(std::move(d)), compiler(std::move(c)), cache(o.cache_dir), use_cache(o.use_cache) {}

  [[nodiscard]] std::string cache_target() const { return "vulkan-spirv-" + compiler.describe(); }

  const std::vector<std::uint32_t>& spirv_of(const codegen::KernelSource& src, const std::string& name, bool* from_disk,
                                             CacheKey* key) {
    *key = CacheKey{src.source, cache_target(), ""};
    if (const auto it = spirv.find(src.source); it != spirv.end()) return it->second;
    if (use_cache) {
      if (auto bin = cache.get(*key); bin && bin->size() % 4 == 0 && !bin->empty()) {
        std::vector<std::uint32_t> words(bin->size() / 4);
        std::memcpy(words.data(), bin->data(), bin->size());
        *from_disk = true;
        return spirv.emplace(src.source, std::move(words)).first->second;
      }
    }
    return spirv.emplace(src.source, compiler.compile(src.source, name)).first->second;
  }

  Pipeline& pipeline(const ir::Kernel& k, const codegen::KernelSource& src, const LaunchGeometry& g) {
    const std::string key = src.source + "\n//" + std::to_string(g.group_size[0]) + "x" +
                            std::to_string(g.group_size[1]) + "x" + std::to_string(g.group_size[2]);
    if (const auto it = pipelines.find(key); it != pipelines.end()) return *it->second;
    bool from_disk = false;
    CacheKey ckey;
    const auto& words = spirv_of(src, k.name, &from_disk, &ckey);
    auto p = std::make_unique<Pipeline>();
    p->dev = dev;
    const std::string what = "kernel '" + k.name + "'";
    CacheUse use = from_disk ? cache.mark_in_use(ckey) : CacheUse{};
    VkShaderModuleCreateInfo mi{};
    mi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    mi.codeSize = words.size() * 4;
    mi.pCode = words.data();
    check(dev->vkCreateShaderModule(dev->device, &mi, nullptr, &p->module), "vkCreateShaderModule", what);
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      if (!ir::is_buffer(k.params[i].kind)) continue;
      VkDescriptorSetLayoutBinding b{};
      b.binding = static_cast<std::uint32_t>(i);
      b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      b.descriptorCount = 1;
      b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
      bindings.push_back(b);
      p->bindings.push_back(static_cast<std::uint32_t>(i));
    }
    VkDescriptorSetLayoutCreateInfo li{};
    li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    li.bindingCount = static_cast<std::uint32_t>(bindings.size());
    li.pBindings = bindings.data();
    check(dev->vkCreateDescriptorSetLayout(dev->device, &li, nullptr, &p->set_layout), "vkCreateDescriptorSetLayout",
          what);
    VkPushConstantRange range{};
    range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    range.offset = 0;
    range.size = src.push_bytes;
    VkPipelineLayoutCreateInfo pli{};
    pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &p->set_layout;
    pli.pushConstantRangeCount = src.push_bytes ? 1 : 0;
    pli.pPushConstantRanges = &range;
    check(dev->vkCreatePipelineLayout(dev->device, &pli, nullptr, &p->layout), "vkCreatePipelineLayout", what);
    const std::uint32_t sizes[3] = {g.group_size[0], g.group_size[1], g.group_size[2]};
    VkSpecializationMapEntry entries[3];
    for (std::uint32_t a = 0; a < 3; ++a) entries[a] = VkSpecializationMapEntry{a, a * 4, 4};
    VkSpecializationInfo spec{};
    spec.mapEntryCount = 3;
    spec.pMapEntries = entries;
    spec.dataSize = sizeof sizes;
    spec.pData = sizes;
    VkComputePipelineCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = p->module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &spec;
    ci.layout = p->layout;
    if (const VkResult r = dev->vkCreateComputePipelines(dev->device, VK_NULL_HANDLE, 1, &ci, nullptr, &p->pipeline);
        r != VK_SUCCESS) {
      if (from_disk) cache.quarantine(ckey);
      spirv.erase(src.source);
      check(r, "vkCreateComputePipelines", what);
    }
    // Only SPIR-V the driver has just accepted is stored.
    if (use_cache && !from_disk) {
      std::vector<std::uint8_t> bytes(words.size() * 4);
      std::memcpy(bytes.data(), words.data(), bytes.size());
      (void)cache.put(ckey, bytes);
    }
    return *pipelines.emplace(key, std::move(p)).first->second;
  }

  // Everything a launch needs checked before it runs; returns the printed kernel.
  const codegen::KernelSource& prepare(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) {
    check_args(k, args);
    check_launch_bounds(k, g);
    const VulkanDeviceInfo& info = dev->info;
    try {
      validate_geometry(g, info.max_invocations);
    } catch (const std::invalid_argument& e) {
      throw ArgumentError("kernel '" + k.name + "': " + e.what() + " (" + info.name + ")");
    }
    for (int a = 0; a < 3; ++a) {
      if (g.group_size[a] > info.max_group_size[a] || g.groups[a] > info.max_group_count[a]) {
        throw ArgumentError("kernel '" + k.name + "': launch " + g.describe() +
                            " exceeds the device's limits on axis " + std::to_string(a) + " (maxComputeWorkGroupSize " +
                            std::to_string(info.max_group_size[a]) + ", maxComputeWorkGroupCount " +
                            std::to_string(info.max_group_count[a]) + ")");
      }
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto* b = std::get_if<BufferPtr>(&args[i]);
      if (!b) continue;
      if (!dynamic_cast<const VulkanBuffer*>(b->get())) {
        throw ArgumentError("kernel '" + k.name + "' argument " + std::to_string(i) + ": buffer belongs to backend '" +
                            (*b)->backend_name() + "', not 'vulkan'");
      }
      if ((*b)->bytes() > info.max_storage_range) {
        throw ArgumentError("kernel '" + k.name + "' argument " + std::to_string(i) + ": " +
                            std::to_string((*b)->bytes()) + " bytes exceed the device's maxStorageBufferRange (" +
                            std::to_string(info.max_storage_range) + ")");
      }
    }
    const codegen::KernelSource& src = sources.get(k);
    if (src.shared_bytes > info.max_shared_bytes) {
      throw ArgumentError("kernel '" + k.name + "' needs " + std::to_string(src.shared_bytes) +
                          " bytes of shared memory; the device gives " + std::to_string(info.max_shared_bytes) +
                          " (maxComputeSharedMemorySize)");
    }
    if (src.push_bytes > info.max_push_bytes) {
      throw ArgumentError("kernel '" + k.name + "' passes " + std::to_string(src.push_bytes) +
                          " bytes of scalars; the device takes " + std::to_string(info.max_push_bytes) +
                          " (maxPushConstantsSize)");
    }
    return src;
  }

  static std::vector<std::uint8_t> push_data(const codegen::KernelSource& src, const std::vector<Arg>& args) {
    std::vector<std::uint8_t> data(src.push_bytes);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto* s = std::get_if<ScalarArg>(&args[i]);
      if (!s || src.push_offsets[i] == codegen::KernelSource::kNoPushOffset) continue;
      std::uint64_t v = s->bits;
      if (s->type == DType::i8) v = static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(v)));
      std::memcpy(data.data() + src.push_offsets[i], &v, s->type == DType::i64 ? 8 : 4);
    }
    return data;
  }

  // A descriptor pool for `sets` sets of the pipeline's bindings.
  VkDescriptorPool make_pool(std::size_t sets, std::size_t buffers) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              static_cast<std::uint32_t>(std::max<std::size_t>(1, sets * buffers))};
    VkDescriptorPoolCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    ci.maxSets = static_cast<std::uint32_t>(sets);
    ci.poolSizeCount = 1;
    ci.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    check(dev->vkCreateDescriptorPool(dev->device, &ci, nullptr, &pool), "vkCreateDescriptorPool", "a launch");
    return pool;
  }

  VkDescriptorSet make_set(VkDescriptorPool pool, const Pipeline& p, const std::vector<Arg>& args) {
    VkDescriptorSetAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &p.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check(dev->vkAllocateDescriptorSets(dev->device, &ai, &set), "vkAllocateDescriptorSets", "a launch");
    std::vector<VkDescriptorBufferInfo> infos(p.bindings.size());
    std::vector<VkWriteDescriptorSet> writes(p.bindings.size());
    for (std::size_t j = 0; j < p.bindings.size(); ++j) {
      const auto& buf = static_cast<const VulkanBuffer&>(*std::get<BufferPtr>(args[p.bindings[j]]));
      infos[j] = VkDescriptorBufferInfo{buf.raw().buffer, 0, VK_WHOLE_SIZE};
      writes[j] = VkWriteDescriptorSet{};
      writes[j].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[j].dstSet = set;
      writes[j].dstBinding = p.bindings[j];
      writes[j].descriptorCount = 1;
      writes[j].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[j].pBufferInfo = &infos[j];
    }
    dev->vkUpdateDescriptorSets(dev->device, static_cast<std::uint32_t>(writes.size()), writes.data(), 0, nullptr);
    return set;
  }

  void record_dispatch(VkCommandBuffer cmd, const Pipeline& p, VkDescriptorSet set,
                       const std::vector<std::uint8_t>& push, const LaunchGeometry& g) {
    dev->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    dev->vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    if (!push.empty()) {
      dev->vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<std::uint32_t>(push.size()),
                              push.data());
    }
    dev->vkCmdDispatch(cmd, g.groups[0], g.groups[1], g.groups[2]);
    // A launch's writes are visible to the next launch and to the host, as on every other backend.
    copy_barrier(
        *dev, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
  }
};

VulkanBackend::VulkanBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VulkanBackend::~VulkanBackend() = default;
const VulkanDeviceInfo& VulkanBackend::device_info() const { return impl_->dev->info; }

std::unique_ptr<VulkanBackend> VulkanBackend::create(const VulkanOptions& options) {
  auto in = open_instance(options);
  const auto pds = physical_devices(*in);
  if (pds.empty()) throw BackendUnavailable("vulkan not available: the loader found no Vulkan device");
  std::vector<VulkanDeviceInfo> infos;
  for (std::uint32_t i = 0; i < pds.size(); ++i) infos.push_back(describe_device(*in, pds[i], i));
  std::string filter = options.device_filter;
  if (filter.empty()) {
    if (const char* e = std::getenv("INGOT_VULKAN_DEVICE")) filter = e;
  }
  int pick = -1;
  if (!filter.empty()) {
    const bool is_index = std::all_of(filter.begin(), filter.end(), [](char c) { return std::isdigit(c) != 0; });
    for (const auto& d : infos) {
      if (is_index ? std::to_string(d.index) == filter : lower(d.name).find(lower(filter)) != std::string::npos) {
        pick = static_cast<int>(d.index);
        break;
      }
    }
    if (pick < 0) {
      std::string list;
      for (const auto& d : infos) list += (list.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name;
      throw BackendUnavailable("vulkan not available: no device matches '" + filter + "' (devices: " + list + ")");
    }
  } else {
    for (const char* type : {"discrete GPU", "integrated GPU"}) {
      for (const auto& d : infos) {
        if (pick < 0 && d.type == type) pick = static_cast<int>(d.index);
      }
    }
    if (pick < 0) pick = 0;
  }
  const VkPhysicalDevice pd = pds[static_cast<std::size_t>(pick)];
  VulkanDeviceInfo info = infos[static_cast<std::size_t>(pick)];
  VkPhysicalDeviceProperties props{};
  in->vkGetPhysicalDeviceProperties(pd, &props);
  if (props.apiVersion < VK_API_VERSION_1_2) {
    throw BackendUnavailable("vulkan not available: " + info.name + " supports Vulkan " + info.api_version +
                             "; ingot needs 1.2");
  }
  const int family = compute_family(*in, pd, nullptr);
  if (family < 0) throw BackendUnavailable("vulkan not available: " + info.name + " has no compute queue");
  SpirvCompiler compiler = [] {
    try {
      return SpirvCompiler::load();
    } catch (const BackendUnavailable& e) {
      throw BackendUnavailable(std::string("vulkan not available: ") + e.what());
    }
  }();

  auto dev = std::make_shared<Device>();
  dev->in = in;
  dev->physical = pd;
  dev->family = static_cast<std::uint32_t>(family);
  dev->info = info;
  in->vkGetPhysicalDeviceMemoryProperties(pd, &dev->memory);
  // Enable what the kernels may use and the device has (robustBufferAccess stays off: correctness is proven, not
  // guarded).
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{};
  af.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
  af.shaderBufferFloat32AtomicAdd = info.float_atomic_add;
  af.shaderSharedFloat32AtomicAdd = info.float_atomic_add;
  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  f12.storageBuffer8BitAccess = info.storage8;
  f12.shaderInt8 = info.int8;
  f12.pNext = info.float_atomic_add ? &af : nullptr;
  VkPhysicalDeviceVulkan11Features f11{};
  f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  f11.storageBuffer16BitAccess = info.storage16;
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 f2{};
  f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  f2.features.shaderInt16 = info.int16;
  f2.features.shaderInt64 = info.int64;
  f2.pNext = &f11;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = dev->family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  const char* extensions[] = {VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME};
  VkDeviceCreateInfo di{};
  di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  di.pNext = &f2;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = info.float_atomic_add ? 1 : 0;
  di.ppEnabledExtensionNames = extensions;
  if (const VkResult r = in->vkCreateDevice(pd, &di, nullptr, &dev->device); r != VK_SUCCESS) {
    throw BackendUnavailable("vulkan not available: vkCreateDevice on " + info.name + " failed with " + result_name(r));
  }
#define INGOT_LOAD_DEVICE(name)                                                          \
  dev->name = reinterpret_cast<PFN_##name>(in->vkGetDeviceProcAddr(dev->device, #name)); \
  if (!dev->name) throw BackendUnavailable("vulkan not available: the driver lacks " #name);
  INGOT_VK_DEVICE_FNS(INGOT_LOAD_DEVICE)
  dev->vkGetDeviceQueue(dev->device, dev->family, 0, &dev->queue);
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = dev->family;
  check(dev->vkCreateCommandPool(dev->device, &pi, nullptr, &dev->pool), "vkCreateCommandPool", "creating the backend");
  VkCommandBufferAllocateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ci.commandPool = dev->pool;
  ci.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ci.commandBufferCount = 1;
  check(dev->vkAllocateCommandBuffers(dev->device, &ci, &dev->cmd), "vkAllocateCommandBuffers", "creating the backend");
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  check(dev->vkCreateFence(dev->device, &fi, nullptr, &dev->fence), "vkCreateFence", "creating the backend");
  return std::unique_ptr<VulkanBackend>(
      new VulkanBackend(std::make_unique<Impl>(std::move(dev), std::move(compiler), options)));
}

std::string VulkanBackend::cannot_run(const ir::Kernel& k) {
  const VulkanDeviceInfo& d = impl_->dev->info;
  const codegen::KernelSource& src = impl_->sources.get(k);
  const auto uses = [&](const char* word) { return src.source.find(word) != std::string::npos; };
  if (src.shared_bytes > d.max_shared_bytes) {
    return "needs " + std::to_string(src.shared_bytes / 1024) + " KiB of shared memory per work-group; the device " +
           "gives " + std::to_string(d.max_shared_bytes / 1024) + " KiB (maxComputeSharedMemorySize)";
  }
  if (src.push_bytes > d.max_push_bytes) return "scalars exceed the device's maxPushConstantsSize";
  if (uses("uint16_t") && !(d.storage16 && d.int16))
    return "needs 16-bit storage and shaderInt16, which the device lacks";
  if ((uses("uint8_t") || uses("int8_t")) && !(d.storage8 && d.int8))
    return "needs 8-bit storage and shaderInt8, which the device lacks";
  if (uses("int64_t") && !d.int64) return "needs shaderInt64, which the device lacks";
  if (has_float_atomic_add(k, k.body) && !d.float_atomic_add)
    return "needs f32 atomic add (VK_EXT_shader_atomic_float), which the device lacks";
  return "";
}

BufferPtr VulkanBackend::allocate(DType t, std::size_t count) {
  const std::size_t bytes = count * dtype_size(t);
  if (count != 0 && bytes / count != dtype_size(t)) throw ArgumentError("allocation size overflows");
  auto raw = make_raw(impl_->dev, bytes, false);
  const std::uint32_t word = poison_word(t);
  if (raw->mapped) {
    auto* p = static_cast<std::uint8_t*>(raw->mapped);
    for (VkDeviceSize i = 0; i < raw->size; i += 4) std::memcpy(p + i, &word, 4);
  } else {
    Device& d = *impl_->dev;
    const VkBuffer b = raw->buffer;
    d.submit([&](VkCommandBuffer cmd) { d.vkCmdFillBuffer(cmd, b, 0, VK_WHOLE_SIZE, word); }, "poisoning a buffer");
  }
  return std::make_shared<VulkanBuffer>(t, count, std::move(raw));
}

void VulkanBackend::upload(DeviceBuffer& dst, const void* src, std::size_t bytes) {
  auto* b = dynamic_cast<VulkanBuffer*>(&dst);
  if (!b) throw ArgumentError("upload: buffer belongs to backend '" + dst.backend_name() + "', not 'vulkan'");
  if (bytes != dst.bytes()) {
    throw ArgumentError("upload of " + std::to_string(bytes) + " bytes into a buffer of " +
                        std::to_string(dst.bytes()) + " bytes");
  }
  if (bytes == 0) return;
  RawBuffer& raw = b->raw();
  if (raw.mapped) {
    std::memcpy(raw.mapped, src, bytes);
    return;
  }
  auto staging = make_raw(impl_->dev, bytes, true);
  std::memcpy(staging->mapped, src, bytes);
  Device& d = *impl_->dev;
  d.submit(
      [&](VkCommandBuffer cmd) {
        const VkBufferCopy region{0, 0, staging->size};
        d.vkCmdCopyBuffer(cmd, staging->buffer, raw.buffer, 1, &region);
        copy_barrier(d, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      },
      "uploading");
}

void VulkanBackend::download(const DeviceBuffer& src, void* dst, std::size_t bytes) {
  const auto* b = dynamic_cast<const VulkanBuffer*>(&src);
  if (!b) throw ArgumentError("download: buffer belongs to backend '" + src.backend_name() + "', not 'vulkan'");
  if (bytes != src.bytes()) {
    throw ArgumentError("download of " + std::to_string(bytes) + " bytes from a buffer of " +
                        std::to_string(src.bytes()) + " bytes");
  }
  if (bytes == 0) return;
  RawBuffer& raw = b->raw();
  if (raw.mapped) {
    std::memcpy(dst, raw.mapped, bytes);
    return;
  }
  auto staging = make_raw(impl_->dev, bytes, true);
  Device& d = *impl_->dev;
  d.submit(
      [&](VkCommandBuffer cmd) {
        const VkBufferCopy region{0, 0, staging->size};
        d.vkCmdCopyBuffer(cmd, raw.buffer, staging->buffer, 1, &region);
        copy_barrier(d, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                     VK_ACCESS_HOST_READ_BIT);
      },
      "downloading");
  std::memcpy(dst, staging->mapped, bytes);
}

void VulkanBackend::launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) {
  const codegen::KernelSource& src = impl_->prepare(k, g, args);
  Impl::Pipeline& p = impl_->pipeline(k, src, g);
  const std::vector<std::uint8_t> push = Impl::push_data(src, args);
  Device& d = *impl_->dev;
  const VkDescriptorPool pool = impl_->make_pool(1, p.bindings.size());
  try {
    const VkDescriptorSet set = impl_->make_set(pool, p, args);
    d.submit([&](VkCommandBuffer cmd) { impl_->record_dispatch(cmd, p, set, push, g); }, "kernel '" + k.name + "'");
  } catch (...) {
    d.vkDestroyDescriptorPool(d.device, pool, nullptr);
    throw;
  }
  d.vkDestroyDescriptorPool(d.device, pool, nullptr);
}

Timing VulkanBackend::time_launches(const ir::Kernel& k, const LaunchGeometry& g,
                                    const std::vector<std::vector<Arg>>& arg_sets, const TimingOptions& options) {
  check_timing_options(options);
  if (arg_sets.empty()) throw ArgumentError("time_launches: no argument sets");
  Device& d = *impl_->dev;
  if (!d.info.timestamps) return Backend::time_launches(k, g, arg_sets, options);
  for (const auto& args : arg_sets) (void)impl_->prepare(k, g, args);
  const codegen::KernelSource& src = impl_->sources.get(k);
  Impl::Pipeline& p = impl_->pipeline(k, src, g);
  std::size_t next = 0;
  for (int i = 0; i < options.warmup; ++i) launch(k, g, arg_sets[next++ % arg_sets.size()]);
  const VkDescriptorPool pool = impl_->make_pool(arg_sets.size(), p.bindings.size());
  VkQueryPool queries = VK_NULL_HANDLE;
  Timing t;
  t.timer = timer_name("vulkan timestamps", options);
  try {
    std::vector<VkDescriptorSet> sets;
    std::vector<std::vector<std::uint8_t>> pushes;
    for (const auto& args : arg_sets) {
      sets.push_back(impl_->make_set(pool, p, args));
      pushes.push_back(Impl::push_data(src, args));
    }
    VkQueryPoolCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2;
    check(d.vkCreateQueryPool(d.device, &qi, nullptr, &queries), "vkCreateQueryPool", "timing");
    for (int rep = 0; rep < options.reps; ++rep) {
      d.submit(
          [&](VkCommandBuffer cmd) {
            d.vkCmdResetQueryPool(cmd, queries, 0, 2);
            d.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
            for (int b = 0; b < options.back_to_back; ++b) {
              const std::size_t i = next++ % arg_sets.size();
              impl_->record_dispatch(cmd, p, sets[i], pushes[i], g);
            }
            d.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
          },
          "timing kernel '" + k.name + "'");
      std::uint64_t stamps[2] = {0, 0};
      check(d.vkGetQueryPoolResults(d.device, queries, 0, 2, sizeof stamps, stamps, sizeof(std::uint64_t),
                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults", "timing");
      t.seconds.push_back(static_cast<double>(stamps[1] - stamps[0]) * d.info.timestamp_period_ns * 1e-9 /
                          options.back_to_back);
    }
  } catch (...) {
    if (queries) d.vkDestroyQueryPool(d.device, queries, nullptr);
    d.vkDestroyDescriptorPool(d.device, pool, nullptr);
    throw;
  }
  d.vkDestroyQueryPool(d.device, queries, nullptr);
  d.vkDestroyDescriptorPool(d.device, pool, nullptr);
  return t;
}

#else  // built without the Vulkan headers

std::vector<VulkanDeviceInfo> list_vulkan_devices(const VulkanOptions&) {
  throw BackendUnavailable("vulkan not available: built without <vulkan/vulkan.h> (install libvulkan-dev)");
}
struct VulkanBackend::Impl {};
VulkanBackend::VulkanBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VulkanBackend::~VulkanBackend() = default;
std::unique_ptr<VulkanBackend> VulkanBackend::create(const VulkanOptions&) {
  (void)list_vulkan_devices();
  return nullptr;
}
const VulkanDeviceInfo& VulkanBackend::device_info() const {
  static const VulkanDeviceInfo none;
  return none;
}
std::string VulkanBackend::cannot_run(const ir::Kernel&) { return "built without Vulkan"; }
BufferPtr VulkanBackend::allocate(DType, std::size_t) { return nullptr; }
void VulkanBackend::upload(DeviceBuffer&, const void*, std::size_t) {}
void VulkanBackend::download(const DeviceBuffer&, void*, std::size_t) {}
void VulkanBackend::launch(const ir::Kernel&, const LaunchGeometry&, const std::vector<Arg>&) {}
Timing VulkanBackend::time_launches(const ir::Kernel&, const LaunchGeometry&, const std::vector<std::vector<Arg>>&,
                                    const TimingOptions&) {
  return {};
}

#endif

}  // namespace ingot::runtime
