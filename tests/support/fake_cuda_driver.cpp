// A fake libcuda for tests on machines without a GPU: it exports the driver entry points the
// CUDA backend binds (same names and C signatures), keeps "device memory" in host memory and
// checks how it is used: every call that needs a context has one current, module images are
// ELF and contain the function's symbol, frees match allocations, retains match releases.
// Kernels are not executed; launches are recorded for the test to inspect.
//
// Loaded by the tests through CudaOptions::driver_library. Test controls and counters are the
// fake_cuda_* functions at the end (looked up with dlsym by the test).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;

constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kOutOfMemory = 2;
constexpr CUresult kNotInitialized = 3;
constexpr CUresult kInvalidDevice = 101;
constexpr CUresult kInvalidImage = 200;
constexpr CUresult kInvalidContext = 201;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kNotFound = 500;

struct Module {
  std::vector<unsigned char> image;
};
struct Function {
  std::string name;
  int max_dynamic_shared = 0;  // cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
};

struct State {
  CUresult init_result = kSuccess;
  bool initialised = false;
  int device_count = 1;
  int max_threads_per_function = 1024;
  int ctx_token = 0;           // the primary context's handle points here
  int retains = 0;             // primary context retains minus releases
  int current_depth = 0;       // pushes of the primary context minus pops
  int context_violations = 0;  // calls that needed a current context and had none
  std::map<CUdeviceptr, std::size_t> allocations;
  std::size_t allocations_made = 0;
  std::size_t frees = 0;
  std::set<void*> streams;
  std::set<Module*> modules;
  std::size_t modules_loaded = 0;
  std::size_t launches = 0;
  std::vector<std::uint64_t> last_params;  // first 8 bytes of each kernel parameter's slot
  unsigned last_grid[3] = {};
  unsigned last_block[3] = {};
  unsigned last_shared = 0;
  void* last_stream = nullptr;
  std::size_t last_param_count = 0;
  CUresult fail_next_sync = kSuccess;
  std::map<void*, std::size_t> events;    // event -> the launch count when it was last recorded
  int last_occupancy_block = 0;           // cuOccupancyMaxActiveBlocksPerMultiprocessor's last block size
  std::size_t last_occupancy_shared = 0;  // ... and dynamic shared memory
};

State& state() {
  static State s;
  return s;
}

// "Device memory" is host memory: a device pointer is a host address.
void* host(CUdeviceptr p) { return reinterpret_cast<void*>(p); }  // NOLINT(performance-no-int-to-ptr)

bool needs_context() {
  State& s = state();
  if (!s.initialised) return false;
  if (s.current_depth <= 0) {
    ++s.context_violations;
    return false;
  }
  return true;
}

// The allocation containing [p, p+n), if any.
bool in_allocation(CUdeviceptr p, std::size_t n) {
  const auto& a = state().allocations;
  auto it = a.upper_bound(p);
  if (it == a.begin()) return false;
  --it;
  return p >= it->first && p + n <= it->first + it->second;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuInit(unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  if (state().init_result != kSuccess) return state().init_result;
  state().initialised = true;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int* v) {
  if (!v) return kInvalidValue;
  *v = 13000;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult e, const char** s) {
  switch (e) {
    case kSuccess: *s = "CUDA_SUCCESS"; return kSuccess;
    case kInvalidValue: *s = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
    case kOutOfMemory: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return kSuccess;
    case kNotInitialized: *s = "CUDA_ERROR_NOT_INITIALIZED"; return kSuccess;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return kSuccess;
    case kInvalidDevice: *s = "CUDA_ERROR_INVALID_DEVICE"; return kSuccess;
    case kInvalidImage: *s = "CUDA_ERROR_INVALID_IMAGE"; return kSuccess;
    case kInvalidContext: *s = "CUDA_ERROR_INVALID_CONTEXT"; return kSuccess;
    case kInvalidHandle: *s = "CUDA_ERROR_INVALID_HANDLE"; return kSuccess;
    case kNotFound: *s = "CUDA_ERROR_NOT_FOUND"; return kSuccess;
    case 700: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return kSuccess;
    default: *s = nullptr; return kInvalidValue;
  }
}

__attribute__((visibility("default"))) CUresult cuGetErrorString(CUresult e, const char** s) {
  switch (e) {
    case 100: *s = "no CUDA-capable device is detected"; return kSuccess;
    case kOutOfMemory: *s = "out of memory"; return kSuccess;
    case kInvalidImage: *s = "device kernel image is invalid"; return kSuccess;
    case kInvalidContext: *s = "invalid device context"; return kSuccess;
    case kNotFound: *s = "named symbol not found"; return kSuccess;
    case 700: *s = "an illegal memory access was encountered"; return kSuccess;
    default: *s = "fake driver error"; return kSuccess;
  }
}

__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int* n) {
  if (!state().initialised) return kNotInitialized;
  *n = state().device_count;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGet(int* d, int ordinal) {
  if (!state().initialised) return kNotInitialized;
  if (ordinal < 0 || ordinal >= state().device_count) return kInvalidDevice;
  *d = ordinal;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetName(char* name, int len, int) {
  if (!name || len <= 0) return kInvalidValue;
  std::strncpy(name, "Fake H200", static_cast<std::size_t>(len) - 1);
  name[len - 1] = '\0';
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetAttribute(int* v, int attr, int) {
  switch (attr) {
    case 1:                                    // max threads per block
    case 2:                                    // max block dim x
    case 3: *v = 1024; return kSuccess;        // max block dim y
    case 4: *v = 64; return kSuccess;          // max block dim z
    case 5: *v = 2147483647; return kSuccess;  // max grid dim x
    case 6:
    case 7: *v = 65535; return kSuccess;    // max grid dim y, z
    case 16: *v = 132; return kSuccess;     // SMs
    case 97: *v = 232448; return kSuccess;  // shared memory per block, opted in (227 KB)
    case 75: *v = 9; return kSuccess;       // compute capability
    case 76: *v = 0; return kSuccess;
    default: return kInvalidValue;
  }
}

__attribute__((visibility("default"))) CUresult cuDeviceTotalMem_v2(std::size_t* bytes, int) {
  *bytes = std::size_t{141} << 30;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRetain(void** ctx, int) {
  if (!state().initialised) return kNotInitialized;
  *ctx = &state().ctx_token;
  ++state().retains;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRelease_v2(int) {
  if (state().retains <= 0) return kInvalidContext;
  --state().retains;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxPushCurrent_v2(void* ctx) {
  if (ctx != &state().ctx_token || state().retains <= 0) return kInvalidContext;
  ++state().current_depth;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxPopCurrent_v2(void** ctx) {
  if (state().current_depth <= 0) return kInvalidContext;
  --state().current_depth;
  if (ctx) *ctx = &state().ctx_token;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr* p, std::size_t n) {
  if (!needs_context()) return kInvalidContext;
  if (n == 0) return kInvalidValue;
  void* m = std::malloc(n);
  if (!m) return kOutOfMemory;
  *p = reinterpret_cast<CUdeviceptr>(m);
  state().allocations[*p] = n;
  ++state().allocations_made;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemFree_v2(CUdeviceptr p) {
  if (!needs_context()) return kInvalidContext;
  auto it = state().allocations.find(p);
  if (it == state().allocations.end()) return kInvalidValue;
  std::free(host(p));
  state().allocations.erase(it);
  ++state().frees;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, std::size_t* size,
                                                                        CUdeviceptr p) {
  if (!needs_context()) return kInvalidContext;
  const auto& a = state().allocations;
  auto it = a.upper_bound(p);
  if (it == a.begin()) return kNotFound;
  --it;
  if (p >= it->first + it->second) return kNotFound;
  if (base) *base = it->first;
  if (size) *size = it->second;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, std::size_t n,
                                                                     void*) {
  if (!needs_context()) return kInvalidContext;
  if (!in_allocation(dst, n)) return kInvalidValue;
  std::memcpy(host(dst), src, n);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, std::size_t n, void*) {
  if (!needs_context()) return kInvalidContext;
  if (!in_allocation(src, n)) return kInvalidValue;
  std::memcpy(dst, host(src), n);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, std::size_t n,
                                                                void*) {
  if (!needs_context()) return kInvalidContext;
  if (!in_allocation(dst, n)) return kInvalidValue;
  std::memset(host(dst), v, n);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuStreamCreate(void** s, unsigned int) {
  if (!needs_context()) return kInvalidContext;
  *s = std::malloc(1);
  state().streams.insert(*s);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuStreamDestroy_v2(void* s) {
  if (!needs_context()) return kInvalidContext;
  if (!state().streams.erase(s)) return kInvalidHandle;
  std::free(s);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuStreamSynchronize(void* s) {
  if (!needs_context()) return kInvalidContext;
  if (s && !state().streams.count(s)) return kInvalidHandle;
  if (state().fail_next_sync != kSuccess) {
    const CUresult r = state().fail_next_sync;
    state().fail_next_sync = kSuccess;
    return r;
  }
  return kSuccess;
}

// Events: an event records the number of launches so far; the "elapsed time" between two is the
// number of launches between them, in milliseconds (so a test sees what a timed window held).
__attribute__((visibility("default"))) CUresult cuEventCreate(void** e, unsigned int) {
  if (!needs_context()) return kInvalidContext;
  *e = std::malloc(1);
  state().events[*e] = 0;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventRecord(void* e, void* stream) {
  if (!needs_context()) return kInvalidContext;
  if (!state().events.count(e) || (stream && !state().streams.count(stream))) return kInvalidHandle;
  state().events[e] = state().launches;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventSynchronize(void* e) {
  if (!needs_context()) return kInvalidContext;
  return state().events.count(e) ? kSuccess : kInvalidHandle;
}

__attribute__((visibility("default"))) CUresult cuEventElapsedTime(float* ms, void* a, void* b) {
  if (!needs_context()) return kInvalidContext;
  const auto& ev = state().events;
  if (!ev.count(a) || !ev.count(b)) return kInvalidHandle;
  *ms = static_cast<float>(ev.at(b) - ev.at(a));
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventDestroy_v2(void* e) {
  if (!state().events.erase(e)) return kInvalidHandle;
  std::free(e);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuModuleLoadData(void** m, const void* image) {
  if (!needs_context()) return kInvalidContext;
  const auto* p = static_cast<const unsigned char*>(image);
  if (!p || !(p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F')) return kInvalidImage;
  // A CUBIN's size is in its ELF header; reading the section headers' end is enough here.
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0;
  std::uint16_t shnum = 0;
  std::memcpy(&shoff, p + 0x28, 8);
  std::memcpy(&shentsize, p + 0x3a, 2);
  std::memcpy(&shnum, p + 0x3c, 2);
  auto* mod = new Module;
  mod->image.assign(p, p + shoff + std::size_t{shentsize} * shnum);
  state().modules.insert(mod);
  ++state().modules_loaded;
  *m = mod;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuModuleUnload(void* m) {
  if (!needs_context()) return kInvalidContext;
  auto* mod = static_cast<Module*>(m);
  if (!state().modules.erase(mod)) return kInvalidHandle;
  delete mod;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
  if (!needs_context()) return kInvalidContext;
  auto* mod = static_cast<Module*>(m);
  if (!state().modules.count(mod)) return kInvalidHandle;
  // The symbol must be in the image's string table, NUL-terminated on both sides.
  const std::string needle = std::string(1, '\0') + name + std::string(1, '\0');
  const std::string hay(mod->image.begin(), mod->image.end());
  if (hay.find(needle) == std::string::npos) return kNotFound;
  *f = new Function{name};  // leaked on purpose: functions live as long as the test
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuFuncGetAttribute(int* v, int attr, void*) {
  switch (attr) {
    case 0: *v = state().max_threads_per_function; return kSuccess;
    case 1: *v = 0; return kSuccess;
    case 4: *v = 32; return kSuccess;
    default: return kInvalidValue;
  }
}

// A simple model of an SM: 2048 threads and 228 KB of shared memory (1 KB reserved per block), 32 blocks.
__attribute__((visibility("default"))) CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(
    int* n, void* f, int block, std::size_t dynamic_shared) {
  if (!needs_context()) return kInvalidContext;
  if (!f || !n || block <= 0 || block > state().max_threads_per_function) return kInvalidValue;
  state().last_occupancy_block = block;
  state().last_occupancy_shared = dynamic_shared;
  int blocks = std::min(32, 2048 / block);
  if (dynamic_shared > 0) blocks = std::min(blocks, static_cast<int>(233472 / (dynamic_shared + 1024)));
  *n = blocks;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuFuncSetAttribute(void* f, int attr, int v) {
  if (!f || attr != 8 || v < 0 || v > 232448 - 1024) return kInvalidValue;  // the dynamic shared-memory limit only
  static_cast<Function*>(f)->max_dynamic_shared = v;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz,
                                                               unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                                               void* stream, void** params, void** extra) {
  if (!needs_context()) return kInvalidContext;
  if (!f || extra || shmem > static_cast<unsigned>(static_cast<Function*>(f)->max_dynamic_shared)) {
    return kInvalidValue;  // (more dynamic shared memory than the function was opted in to)
  }
  if (stream && !state().streams.count(stream)) return kInvalidHandle;
  State& s = state();
  ++s.launches;
  s.last_grid[0] = gx, s.last_grid[1] = gy, s.last_grid[2] = gz;
  s.last_block[0] = bx, s.last_block[1] = by, s.last_block[2] = bz;
  s.last_shared = shmem;
  s.last_stream = stream;
  s.last_params.clear();
  for (std::size_t i = 0; params && i < s.last_param_count; ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, params[i], 8);
    s.last_params.push_back(v);
  }
  return kSuccess;
}

// ---- test controls
struct FakeCudaCounters {
  int retains;
  int current_depth;
  int context_violations;
  std::size_t live_allocations;
  std::size_t allocations_made;
  std::size_t frees;
  std::size_t live_streams;
  std::size_t live_modules;
  std::size_t modules_loaded;
  std::size_t launches;
  unsigned last_grid[3];
  unsigned last_block[3];
  void* last_stream;
  unsigned last_shared;
};

__attribute__((visibility("default"))) void fake_cuda_reset(CUresult init_result, int device_count,
                                                            int max_threads_per_function) {
  State& s = state();
  for (void* st : s.streams) std::free(st);
  for (const auto& [e, n] : s.events) std::free(e);
  for (Module* m : s.modules) delete m;
  for (const auto& [p, n] : s.allocations) std::free(host(p));
  s = State{};
  s.init_result = init_result;
  s.device_count = device_count;
  s.max_threads_per_function = max_threads_per_function;
}

// The block size and dynamic shared memory of the last occupancy query.
__attribute__((visibility("default"))) void fake_cuda_last_occupancy(int* block, std::size_t* dynamic_shared) {
  *block = state().last_occupancy_block;
  *dynamic_shared = state().last_occupancy_shared;
}

// How many parameters the next launches have (the fake cannot know their sizes).
__attribute__((visibility("default"))) void fake_cuda_expect_params(std::size_t n) { state().last_param_count = n; }

__attribute__((visibility("default"))) std::uint64_t fake_cuda_last_param(std::size_t i) {
  return i < state().last_params.size() ? state().last_params[i] : ~std::uint64_t{0};
}

// The next cuStreamSynchronize fails with `code` (a kernel fault, as the driver reports it).
__attribute__((visibility("default"))) void fake_cuda_fail_next_sync(CUresult code) { state().fail_next_sync = code; }

// Writes to a fake buffer as a kernel would (the fake cannot run kernels).
__attribute__((visibility("default"))) int fake_cuda_poke(CUdeviceptr dst, const void* src, std::size_t n) {
  if (!in_allocation(dst, n)) return kInvalidValue;
  std::memcpy(host(dst), src, n);
  return kSuccess;
}

__attribute__((visibility("default"))) void fake_cuda_counters(FakeCudaCounters* c) {
  const State& s = state();
  c->retains = s.retains;
  c->current_depth = s.current_depth;
  c->context_violations = s.context_violations;
  c->live_allocations = s.allocations.size();
  c->allocations_made = s.allocations_made;
  c->frees = s.frees;
  c->live_streams = s.streams.size();
  c->live_modules = s.modules.size();
  c->modules_loaded = s.modules_loaded;
  c->launches = s.launches;
  std::memcpy(c->last_grid, s.last_grid, sizeof c->last_grid);
  std::memcpy(c->last_block, s.last_block, sizeof c->last_block);
  c->last_shared = s.last_shared;
  c->last_stream = s.last_stream;
}

}  // extern "C"
