// The CUDA backend: device setup, buffers, the compile/cache/load path and launches.
#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "buffer.hpp"
#include "context.hpp"
#include "driver_api.hpp"
#include "ingot/codegen/printer.hpp"
#include "ingot/runtime/cache.hpp"
#include "ingot/runtime/cuda.hpp"

namespace ingot::runtime {

using cuda_detail::Context;
using cuda_detail::CUcontext;
using cuda_detail::CudaBuffer;
using cuda_detail::CUdevice;
using cuda_detail::CUdeviceptr;
using cuda_detail::CUevent;
using cuda_detail::CUfunction;
using cuda_detail::CUmodule;
using cuda_detail::CUresult;
using cuda_detail::CUstream;
using cuda_detail::DeviceAttribute;
using cuda_detail::DriverApi;
using cuda_detail::FunctionAttribute;
using cuda_detail::kCudaSuccess;
using cuda_detail::ScopedContext;

namespace {

// A compiled image in the disk cache: the CUBIN (or PTX) plus the symbol to look up in it.
//   "INGOTCU1" | u32 symbol length | symbol | image
constexpr char kBlobMagic[8] = {'I', 'N', 'G', 'O', 'T', 'C', 'U', '1'};

struct CompiledImage {
  std::string symbol;
  std::vector<std::uint8_t> image;  // CUBIN, or NUL-terminated PTX
};

std::vector<std::uint8_t> pack_image(const CompiledImage& c) {
  std::vector<std::uint8_t> out(sizeof kBlobMagic + 4 + c.symbol.size() + c.image.size());
  std::memcpy(out.data(), kBlobMagic, sizeof kBlobMagic);
  const auto n = static_cast<std::uint32_t>(c.symbol.size());
  std::memcpy(out.data() + 8, &n, 4);
  std::memcpy(out.data() + 12, c.symbol.data(), c.symbol.size());
  if (!c.image.empty()) std::memcpy(out.data() + 12 + c.symbol.size(), c.image.data(), c.image.size());
  return out;
}

std::optional<CompiledImage> unpack_image(const std::vector<std::uint8_t>& blob) {
  if (blob.size() < 12 || std::memcmp(blob.data(), kBlobMagic, sizeof kBlobMagic) != 0) return std::nullopt;
  std::uint32_t n = 0;
  std::memcpy(&n, blob.data() + 8, 4);
  if (n == 0 || blob.size() <= 12 + std::size_t{n}) return std::nullopt;
  CompiledImage c;
  c.symbol.assign(reinterpret_cast<const char*>(blob.data() + 12), n);
  c.image.assign(blob.begin() + 12 + n, blob.end());
  return c;
}

std::string hex_ptr(std::uint64_t p) {
  std::ostringstream s;
  s << "0x" << std::hex << p;
  return s.str();
}

cuda_detail::CudaBuffer& as_cuda(const DeviceBuffer& b, const Context& ctx) {
  auto* p = dynamic_cast<const CudaBuffer*>(&b);
  if (!p) throw ArgumentError("buffer belongs to backend '" + b.backend_name() + "', not 'cuda'");
  if (p->context().handle() != ctx.handle()) {
    throw ArgumentError("buffer belongs to another CUDA device's context than this backend's");
  }
  return const_cast<CudaBuffer&>(*p);
}

}  // namespace

std::string CudaDeviceInfo::describe() const {
  std::ostringstream s;
  s << "cuda device " << ordinal << ": " << name << " (" << arch << ", " << sm_count << " SMs, " << (total_memory >> 20)
    << " MiB), driver " << driver_version / 1000 << "." << (driver_version % 1000) / 10 << ", NVRTC " << nvrtc_version;
  return s.str();
}

struct CudaBackend::Impl {
  struct Loaded {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    int max_threads = 0;  // this kernel's own limit (registers can lower it below the device's)
    int num_regs = 0;
    std::uint32_t shared_bytes = 0;  // dynamic shared memory per work-group (the function's limit raised to it)
  };

  CudaOptions options;
  std::shared_ptr<const Context> ctx;
  std::optional<CudaCompiler> compiler;
  CudaCompileOptions compile_options;  // arch and fmad for this device
  CUstream stream = nullptr;
  bool own_stream = false;
  CudaDeviceInfo info;
  std::optional<DiskCache> cache;
  // By source (SourceCache entries are never removed, so their addresses identify them); the
  // compile options are fixed for the backend's life.
  std::unordered_map<const codegen::KernelSource*, Loaded> kernels;
  codegen::SourceCache sources{codegen::Target::CUDA};  // a relaunched kernel is not re-printed
  CudaStats stats;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  ~Impl() {
    if (!ctx) return;
    const DriverApi& api = ctx->api();
    ScopedContext scope(*ctx, std::nothrow);
    if (!scope.active()) return;
    if (stream) api.cuStreamSynchronize(stream);
    for (auto& [key, l] : kernels) api.cuModuleUnload(l.module);
    if (own_stream && stream) api.cuStreamDestroy(stream);
  }

  const Loaded& load_kernel(const ir::Kernel& k);
  // The disk cache's image (from_cache) or NVRTC's; the caller stores a compiled one once the driver has loaded it.
  CompiledImage compile_image(const codegen::KernelSource& src, const CacheKey& key, bool& from_cache);
};

CompiledImage CudaBackend::Impl::compile_image(const codegen::KernelSource& src, const CacheKey& key,
                                               bool& from_cache) {
  from_cache = false;
  if (cache) {
    if (auto blob = cache->get(key)) {
      if (auto img = unpack_image(*blob)) {
        ++stats.disk_cache_hits;
        from_cache = true;
        return *img;
      }
      cache->quarantine(key);
    }
  }
  CudaCompileResult r = compiler->compile_source(src.source, src.entry, compile_options);
  ++stats.nvrtc_compiles;
  CompiledImage img;
  img.symbol = r.lowered_name;
  if (!r.cubin.empty()) {
    img.image = std::move(r.cubin);
  } else {  // PTX for the driver to JIT (a device newer than this NVRTC knows)
    img.image.assign(r.ptx.begin(), r.ptx.end());
    img.image.push_back(0);
  }
  return img;
}

const CudaBackend::Impl::Loaded& CudaBackend::Impl::load_kernel(const ir::Kernel& k) {
  const codegen::KernelSource& src = sources.get(k);
  if (auto it = kernels.find(&src); it != kernels.end()) {  // a relaunch: no copy or hash of the source
    ++stats.memory_cache_hits;
    return it->second;
  }
  if (src.dynamic_shared_bytes > static_cast<std::uint64_t>(std::max(info.max_shared_per_group, 0))) {
    throw ArgumentError("kernel '" + k.name + "' needs " + std::to_string(src.dynamic_shared_bytes) +
                        " bytes of shared memory per work-group; " + info.name + " allows at most " +
                        std::to_string(info.max_shared_per_group) + ": use a configuration with smaller shared arrays");
  }
  CacheKey key;
  key.source = src.source;
  key.target = "cuda-" + compile_options.arch;
  key.options = "nvrtc-" + compiler->version();
  for (const auto& o : CudaCompiler::nvrtc_options(compile_options)) key.options += " " + o;
  key.options += " entry=" + src.entry;

  bool from_cache = false;
  CompiledImage img = compile_image(src, key, from_cache);
  const DriverApi& api = ctx->api();
  Loaded l;
  const auto load = [&] {
    const CacheUse in_use = from_cache ? cache->mark_in_use(key) : CacheUse{};  // (a crash here quarantines it)
    return api.cuModuleLoadData(&l.module, img.image.data());
  };
  CUresult lr = load();
  if (lr != kCudaSuccess && from_cache) {  // an entry the driver refuses: aside, and compiled afresh
    cache->quarantine(key);
    img = compile_image(src, key, from_cache);
    lr = load();
  }
  ctx->check(lr, "loading the compiled module of kernel '" + k.name + "' (" + compile_options.arch + ")");
  if (!from_cache && cache) (void)cache->put(key, pack_image(img));  // only what the driver has just loaded
  const CUresult fr = api.cuModuleGetFunction(&l.function, l.module, img.symbol.c_str());
  if (fr != kCudaSuccess) {
    api.cuModuleUnload(l.module);
    ctx->check(fr, "finding function '" + img.symbol + "' of kernel '" + k.name + "' in its module");
  }
  api.cuFuncGetAttribute(&l.max_threads, static_cast<int>(FunctionAttribute::MaxThreadsPerBlock), l.function);
  api.cuFuncGetAttribute(&l.num_regs, static_cast<int>(FunctionAttribute::NumRegs), l.function);
  if (l.max_threads <= 0) l.max_threads = info.max_threads_per_block;
  if (src.dynamic_shared_bytes > 0) {  // above the 48 KB of static shared memory: opted in per function
    l.shared_bytes = static_cast<std::uint32_t>(src.dynamic_shared_bytes);
    const CUresult ar = api.cuFuncSetAttribute(
        l.function, static_cast<int>(FunctionAttribute::MaxDynamicSharedSizeBytes), static_cast<int>(l.shared_bytes));
    if (ar != kCudaSuccess) {
      api.cuModuleUnload(l.module);
      ctx->check(ar, "raising the dynamic shared memory of kernel '" + k.name + "' to " +
                         std::to_string(l.shared_bytes) + " bytes");
    }
  }
  return kernels.emplace(&src, l).first->second;
}

CudaBackend::CudaBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaBackend::~CudaBackend() = default;

std::unique_ptr<CudaBackend> CudaBackend::create(const CudaOptions& options) {
  // A bad cache operator is the caller's error, GPU or not: std::invalid_argument.
  (void)CudaCompiler::nvrtc_options(compile_options_of(options));
  const std::string na = "cuda not available: ";
  std::string why;
  auto api = cuda_detail::load_driver_api(options.driver_library.string(), &why);
  if (!api) throw BackendUnavailable(na + why);

  if (CUresult r = api->cuInit(0); r != kCudaSuccess) {
    throw BackendUnavailable(na + "cuInit failed: " + api->describe(r));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  CudaDeviceInfo& info = impl->info;
  info.ordinal = options.device;
  api->cuDriverGetVersion(&info.driver_version);

  int count = 0;
  if (CUresult r = api->cuDeviceGetCount(&count); r != kCudaSuccess) {
    throw BackendUnavailable(na + "cuDeviceGetCount failed: " + api->describe(r));
  }
  if (count == 0) throw BackendUnavailable(na + "no device: the driver reports no CUDA device");
  if (options.device < 0 || options.device >= count) {
    throw BackendUnavailable(na + "device " + std::to_string(options.device) + " requested, but the driver reports " +
                             std::to_string(count) + " device(s)");
  }
  CUdevice dev = 0;
  if (CUresult r = api->cuDeviceGet(&dev, options.device); r != kCudaSuccess) {
    throw BackendUnavailable(na + "cuDeviceGet(" + std::to_string(options.device) + ") failed: " + api->describe(r));
  }
  char name[256] = {};
  api->cuDeviceGetName(name, static_cast<int>(sizeof name - 1), dev);
  info.name = name;
  auto attr = [&](DeviceAttribute a, const char* what) {
    int v = 0;
    if (CUresult r = api->cuDeviceGetAttribute(&v, static_cast<int>(a), dev); r != kCudaSuccess) {
      throw BackendUnavailable(na + "querying the device's " + what + " failed: " + api->describe(r));
    }
    return v;
  };
  info.compute_major = attr(DeviceAttribute::ComputeCapabilityMajor, "compute capability");
  info.compute_minor = attr(DeviceAttribute::ComputeCapabilityMinor, "compute capability");
  info.sm_count = attr(DeviceAttribute::MultiprocessorCount, "SM count");
  info.max_shared_per_group = attr(DeviceAttribute::MaxSharedMemoryPerBlockOptin, "shared memory per block");
  info.max_threads_per_block = attr(DeviceAttribute::MaxThreadsPerBlock, "threads per block");
  info.max_block_dim = {attr(DeviceAttribute::MaxBlockDimX, "block size"),
                        attr(DeviceAttribute::MaxBlockDimY, "block size"),
                        attr(DeviceAttribute::MaxBlockDimZ, "block size")};
  info.max_grid_dim = {attr(DeviceAttribute::MaxGridDimX, "grid size"), attr(DeviceAttribute::MaxGridDimY, "grid size"),
                       attr(DeviceAttribute::MaxGridDimZ, "grid size")};
  std::size_t mem = 0;
  api->cuDeviceTotalMem(&mem, dev);
  info.total_memory = mem;
  const int cc = info.compute_major * 10 + info.compute_minor;
  info.arch = "sm_" + std::to_string(cc);

  try {
    impl->compiler = CudaCompiler::load(options.nvrtc_library);
  } catch (const BackendUnavailable& e) {
    throw BackendUnavailable(std::string(e.what()) + " (the driver and device " + info.name + " are present)");
  }
  info.nvrtc_version = impl->compiler->version();
  info.nvrtc_library = impl->compiler->library_path();
  impl->compile_options = compile_options_of(options);
  impl->compile_options.arch = info.arch;
  // A device newer than this NVRTC: compile PTX for the newest architecture it knows and let
  // the driver JIT it. Older than NVRTC's oldest: nothing can be built for it.
  const auto archs = impl->compiler->supported_archs();
  if (!archs.empty() && std::find(archs.begin(), archs.end(), cc) == archs.end()) {
    int best = 0;
    for (int a : archs) best = a <= cc && a > best ? a : best;
    if (best == 0) {
      throw BackendUnavailable(na + "NVRTC " + info.nvrtc_version + " cannot compile for " + info.arch + " (" +
                               info.name + "); its oldest architecture is sm_" + std::to_string(archs.front()));
    }
    impl->compile_options.arch = "compute_" + std::to_string(best);
  }

  CUcontext raw_ctx = nullptr;
  if (CUresult r = api->cuDevicePrimaryCtxRetain(&raw_ctx, dev); r != kCudaSuccess) {
    throw BackendUnavailable(na + "retaining the primary context of device " + std::to_string(options.device) + " (" +
                             info.name + ") failed: " + api->describe(r));
  }
  impl->ctx = std::make_shared<const Context>(api, dev, raw_ctx);
  {
    ScopedContext scope(*impl->ctx);
    if (options.stream) {
      impl->stream = static_cast<CUstream>(options.stream);
    } else {
      // Flags 0: ordered with the legacy default stream, so a caller's default-stream work on
      // the same memory is not raced.
      if (CUresult r = api->cuStreamCreate(&impl->stream, 0); r != kCudaSuccess) {
        throw BackendUnavailable(na + "creating a stream on " + info.name + " failed: " + api->describe(r));
      }
      impl->own_stream = true;
    }
  }
  if (options.use_cache) impl->cache.emplace(options.cache_dir);
  return std::unique_ptr<CudaBackend>(new CudaBackend(std::move(impl)));
}

BufferPtr CudaBackend::allocate(DType t, std::size_t count) {
  const Context& ctx = *impl_->ctx;
  const std::size_t bytes = count * dtype_size(t);
  ScopedContext scope(ctx);
  CUdeviceptr p = 0;
  if (bytes > 0) {
    ctx.check(ctx.api().cuMemAlloc(&p, bytes), "allocating " + std::to_string(count) + " x " +
                                                   std::string(dtype_name(t)) + " (" + std::to_string(bytes) +
                                                   " bytes) on " + impl_->info.name);
  }
  auto buf = std::make_shared<CudaBuffer>(impl_->ctx, t, count, p, true);
  if (bytes > 0) {
    const auto poison = poison_bytes(t, count);
    const bool uniform = std::all_of(poison.begin(), poison.end(), [&](std::uint8_t b) { return b == poison[0]; });
    if (uniform) {
      ctx.check(ctx.api().cuMemsetD8Async(p, poison[0], bytes, impl_->stream), "poisoning a fresh buffer");
    } else {
      ctx.check(ctx.api().cuMemcpyHtoDAsync(p, poison.data(), bytes, impl_->stream), "poisoning a fresh buffer");
    }
    ctx.check(ctx.api().cuStreamSynchronize(impl_->stream), "poisoning a fresh buffer");
  }
  return buf;
}

void CudaBackend::upload(DeviceBuffer& dst, const void* src, std::size_t bytes) {
  const Context& ctx = *impl_->ctx;
  CudaBuffer& b = as_cuda(dst, ctx);
  if (bytes != b.bytes()) {
    throw ArgumentError("upload of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(b.bytes()) +
                        " bytes (" + std::to_string(b.count()) + " x " + std::string(dtype_name(b.dtype())) + ")");
  }
  if (bytes == 0) return;
  ScopedContext scope(ctx);
  const std::string what = "uploading " + std::to_string(bytes) + " bytes to " + hex_ptr(b.ptr());
  ctx.check(ctx.api().cuMemcpyHtoDAsync(b.ptr(), src, bytes, impl_->stream), what);
  ctx.check(ctx.api().cuStreamSynchronize(impl_->stream), what);
}

void CudaBackend::download(const DeviceBuffer& src, void* dst, std::size_t bytes) {
  const Context& ctx = *impl_->ctx;
  const CudaBuffer& b = as_cuda(src, ctx);
  if (bytes != b.bytes()) {
    throw ArgumentError("download of " + std::to_string(bytes) + " bytes from a buffer of " +
                        std::to_string(b.bytes()) + " bytes (" + std::to_string(b.count()) + " x " +
                        std::string(dtype_name(b.dtype())) + ")");
  }
  if (bytes == 0) return;
  ScopedContext scope(ctx);
  const std::string what = "downloading " + std::to_string(bytes) + " bytes from " + hex_ptr(b.ptr());
  ctx.check(ctx.api().cuMemcpyDtoHAsync(dst, b.ptr(), bytes, impl_->stream), what);
  ctx.check(ctx.api().cuStreamSynchronize(impl_->stream), what);
}

BufferPtr CudaBackend::wrap_device_buffer(std::uint64_t device_ptr, DType t, std::size_t count) {
  const Context& ctx = *impl_->ctx;
  const std::size_t bytes = count * dtype_size(t);
  if (bytes > 0) {
    if (device_ptr == 0)
      throw ArgumentError("wrap_device_buffer: null device pointer for " + std::to_string(count) + " elements");
    ScopedContext scope(ctx);
    CUdeviceptr base = 0;
    std::size_t size = 0;
    const CUresult r = ctx.api().cuMemGetAddressRange(&base, &size, device_ptr);
    if (r != kCudaSuccess) {
      throw ArgumentError("wrap_device_buffer: " + hex_ptr(device_ptr) + " is not device memory the driver knows in " +
                          impl_->info.name + "'s context: " + ctx.api().describe(r));
    }
    if (device_ptr + bytes > base + size) {
      throw ArgumentError("wrap_device_buffer: " + std::to_string(count) + " x " + std::string(dtype_name(t)) + " (" +
                          std::to_string(bytes) + " bytes) at " + hex_ptr(device_ptr) + " overruns its allocation [" +
                          hex_ptr(base) + ", +" + std::to_string(size) + ")");
    }
  }
  return std::make_shared<CudaBuffer>(impl_->ctx, t, count, device_ptr, false);
}

std::uint64_t CudaBackend::device_pointer(const DeviceBuffer& buffer) const {
  return as_cuda(buffer, *impl_->ctx).ptr();
}

const CudaDeviceInfo& CudaBackend::device_info() const { return impl_->info; }
void* CudaBackend::stream() const { return impl_->stream; }
CudaStats CudaBackend::stats() const { return impl_->stats; }

void CudaBackend::synchronize() {
  const Context& ctx = *impl_->ctx;
  ScopedContext scope(ctx);
  ctx.check(ctx.api().cuStreamSynchronize(impl_->stream), "synchronising the stream");
}

void CudaBackend::launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) {
  enqueue(prepare(k, g, args));
  const Context& ctx = *impl_->ctx;
  ScopedContext scope(ctx);
  ctx.check(ctx.api().cuStreamSynchronize(impl_->stream),
            "running kernel '" + k.name + "' (" + g.describe() + ") on " + impl_->info.name);
}

Timing CudaBackend::time_launches(const ir::Kernel& k, const LaunchGeometry& g,
                                  const std::vector<std::vector<Arg>>& arg_sets, const TimingOptions& options) {
  const Context& ctx = *impl_->ctx;
  const DriverApi& api = ctx.api();
  if (!api.cuEventCreate || !api.cuEventRecord || !api.cuEventElapsedTime || !api.cuEventDestroy ||
      !api.cuEventSynchronize) {
    return Backend::time_launches(k, g, arg_sets, options);
  }
  check_timing_options(options);
  if (arg_sets.empty()) throw ArgumentError("time_launches needs at least one argument set");
  // Every set checked and packed once, before the first event: the timed loop records, launches
  // and records (see Prepared).
  std::vector<Prepared> prepared;
  prepared.reserve(arg_sets.size());
  for (const auto& set : arg_sets) prepared.push_back(prepare(k, g, set));
  ScopedContext scope(ctx);
  for (int i = 0; i < options.warmup; ++i) enqueue(prepared[static_cast<std::size_t>(i) % prepared.size()]);
  ctx.check(api.cuStreamSynchronize(impl_->stream), "running warm-up launches of kernel '" + k.name + "'");
  const auto n = static_cast<std::size_t>(options.reps);
  std::vector<CUevent> events(2 * n, nullptr);
  const auto per = static_cast<std::size_t>(options.back_to_back);
  Timing t;
  t.timer = timer_name("cuda events", options);
  try {
    for (auto& e : events) ctx.check(api.cuEventCreate(&e, 0), "creating a timing event");
    for (std::size_t i = 0; i < n; ++i) {
      ctx.check(api.cuEventRecord(events[2 * i], impl_->stream), "recording a timing event");
      for (std::size_t j = 0; j < per; ++j) enqueue(prepared[(i * per + j) % prepared.size()]);
      ctx.check(api.cuEventRecord(events[2 * i + 1], impl_->stream), "recording a timing event");
    }
    ctx.check(api.cuEventSynchronize(events.back()), "running timed launches of kernel '" + k.name + "'");
    for (std::size_t i = 0; i < n; ++i) {
      float ms = 0;
      ctx.check(api.cuEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]), "reading a timing event");
      t.seconds.push_back(static_cast<double>(ms) * 1e-3 / static_cast<double>(per));
    }
  } catch (...) {
    for (auto e : events) {
      if (e) api.cuEventDestroy(e);
    }
    throw;
  }
  for (auto e : events) api.cuEventDestroy(e);
  return t;
}

std::optional<double> CudaBackend::time_copy(std::size_t bytes, const TimingOptions& options) {
  const Context& ctx = *impl_->ctx;
  const DriverApi& api = ctx.api();
  if (!api.cuMemcpyDtoDAsync || !api.cuEventCreate || !api.cuEventRecord || !api.cuEventElapsedTime ||
      !api.cuEventSynchronize || !api.cuEventDestroy) {
    return std::nullopt;
  }
  auto src = allocate(DType::u8, bytes);
  auto dst = allocate(DType::u8, bytes);
  ScopedContext scope(ctx);
  const CUdeviceptr s = device_pointer(*src);
  const CUdeviceptr d = device_pointer(*dst);
  CUevent a = nullptr;
  CUevent b = nullptr;
  ctx.check(api.cuEventCreate(&a, 0), "creating a timing event");
  ctx.check(api.cuEventCreate(&b, 0), "creating a timing event");
  std::vector<double> times;
  for (int i = 0; i < options.warmup + options.reps; ++i) {
    ctx.check(api.cuEventRecord(a, impl_->stream), "recording a timing event");
    ctx.check(api.cuMemcpyDtoDAsync(d, s, bytes, impl_->stream), "device-to-device copy");
    ctx.check(api.cuEventRecord(b, impl_->stream), "recording a timing event");
    ctx.check(api.cuEventSynchronize(b), "device-to-device copy");
    float ms = 0;
    ctx.check(api.cuEventElapsedTime(&ms, a, b), "reading a timing event");
    if (i >= options.warmup) times.push_back(static_cast<double>(ms) * 1e-3);
  }
  api.cuEventDestroy(a);
  api.cuEventDestroy(b);
  std::sort(times.begin(), times.end());
  return times.empty() ? std::nullopt : std::optional<double>(times[times.size() / 2]);
}

std::optional<Residency> CudaBackend::residency(const ir::Kernel& k, const LaunchGeometry& g) {
  const Context& ctx = *impl_->ctx;
  const DriverApi& api = ctx.api();
  if (!api.cuOccupancyMaxActiveBlocksPerMultiprocessor) return std::nullopt;
  ScopedContext scope(ctx);
  const Impl::Loaded& l = impl_->load_kernel(k);
  int groups = 0;
  if (api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&groups, l.function, static_cast<int>(g.threads_per_group()),
                                                      l.shared_bytes) != kCudaSuccess) {
    return std::nullopt;
  }
  return Residency{groups, impl_->info.sm_count, l.num_regs};
}

CudaBackend::Prepared CudaBackend::prepare(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) {
  const Context& ctx = *impl_->ctx;
  const CudaDeviceInfo& info = impl_->info;
  check_args(k, args);
  for (const auto& a : args) {
    if (const auto* b = std::get_if<BufferPtr>(&a)) (void)as_cuda(**b, ctx);
  }
  try {
    validate_geometry(g, static_cast<std::uint64_t>(info.max_threads_per_block));
  } catch (const std::invalid_argument& e) {
    throw ArgumentError("kernel '" + k.name + "': " + e.what());
  }
  check_launch_bounds(k, g);
  for (int a = 0; a < 3; ++a) {
    if (g.group_size[a] > static_cast<std::uint32_t>(info.max_block_dim[a])) {
      throw ArgumentError("kernel '" + k.name + "': " + g.describe() + ": a group of " +
                          std::to_string(g.group_size[a]) + " threads on axis " + std::to_string(a) + " exceeds " +
                          info.name + "'s limit of " + std::to_string(info.max_block_dim[a]));
    }
    if (g.groups[a] > static_cast<std::uint32_t>(info.max_grid_dim[a])) {
      throw ArgumentError("kernel '" + k.name + "': " + g.describe() + ": " + std::to_string(g.groups[a]) +
                          " groups on axis " + std::to_string(a) + " exceed " + info.name + "'s limit of " +
                          std::to_string(info.max_grid_dim[a]));
    }
  }

  ScopedContext scope(ctx);
  const Impl::Loaded& l = impl_->load_kernel(k);
  if (g.threads_per_group() > static_cast<std::uint64_t>(l.max_threads)) {
    throw ArgumentError("kernel '" + k.name + "': " + g.describe() + ": " + std::to_string(g.threads_per_group()) +
                        " threads per group exceed this kernel's limit of " + std::to_string(l.max_threads) + " on " +
                        info.name + " (it uses " + std::to_string(l.num_regs) + " registers per thread)");
  }

  // One 8-byte slot per argument; the driver copies each parameter's own size from its slot
  // (little-endian: the low bytes hold the value), so u8/bool, 16-bit, 32-bit and 64-bit
  // scalars and 64-bit device pointers all pass by value as the ABI requires.
  Prepared p;
  p.function = l.function;
  p.geometry = g;
  p.shared_bytes = l.shared_bytes;
  p.slots.resize(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const auto* b = std::get_if<BufferPtr>(&args[i])) {
      p.slots[i] = as_cuda(**b, ctx).ptr();
    } else {
      p.slots[i] = std::get<ScalarArg>(args[i]).bits;
    }
  }
  p.where = "kernel '" + k.name + "' (" + g.describe() + ") on " + info.name;
  return p;
}

void CudaBackend::enqueue(const Prepared& p) {
  const Context& ctx = *impl_->ctx;
  ScopedContext scope(ctx);
  // The driver only reads the parameters through these pointers (its API takes them non-const).
  std::vector<void*> params(p.slots.size());
  for (std::size_t i = 0; i < p.slots.size(); ++i) params[i] = const_cast<std::uint64_t*>(&p.slots[i]);
  const LaunchGeometry& g = p.geometry;
  const CUresult r = ctx.api().cuLaunchKernel(
      static_cast<CUfunction>(p.function), g.groups[0], g.groups[1], g.groups[2], g.group_size[0], g.group_size[1],
      g.group_size[2], p.shared_bytes, impl_->stream, params.empty() ? nullptr : params.data(), nullptr);
  if (r != kCudaSuccess) ctx.check(r, "launching " + p.where);
  ++impl_->stats.launches;
}

}  // namespace ingot::runtime
