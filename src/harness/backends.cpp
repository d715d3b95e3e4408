// Opening backends by name.
#include "ingot/harness/backends.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>
#include <thread>

#include "ingot/codegen/printer.hpp"
#include "ingot/runtime/cuda.hpp"
#include "ingot/runtime/cuda_compile.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/runtime/opencl.hpp"
#include "ingot/runtime/vulkan.hpp"

namespace ingot::harness {

std::vector<std::string> known_backends() { return {"interp", "opencl", "cuda", "vulkan"}; }

std::vector<std::string> parse_backend_list(const std::string& spec) {
  std::vector<std::string> out;
  std::string item;
  auto flush = [&] {
    if (item.empty()) return;
    if (item == "all") {
      for (const auto& b : known_backends()) out.push_back(b);
    } else {
      bool known = false;
      for (const auto& b : known_backends()) known = known || b == item;
      if (!known) {
        std::string list;
        for (const auto& b : known_backends()) list += (list.empty() ? "" : ", ") + b;
        throw std::invalid_argument("unknown backend '" + item + "' (known: " + list + ", or all)");
      }
      out.push_back(item);
    }
    item.clear();
  };
  for (char c : spec) {
    if (c == ',') {
      flush();
    } else if (c != ' ') {
      item += c;
    }
  }
  flush();
  if (out.empty()) throw std::invalid_argument("no backend named (use interp, opencl, cuda, vulkan or all)");
  std::vector<std::string> unique;
  for (const auto& b : out) {
    bool seen = false;
    for (const auto& u : unique) seen = seen || u == b;
    if (!seen) unique.push_back(b);
  }
  return unique;
}

std::function<std::string(const ir::Kernel&)> source_size_limit(std::uint64_t limit) {
  return [limit](const ir::Kernel& k) -> std::string {
    if (limit == 0 || codegen::emit(k, codegen::Target::OpenCL).source.size() <= limit) return "";
    return "OpenCL C over " + std::to_string(limit / 1000) +
           " kB, minutes to compile on a CPU device: --long runs it (ingot test, ingot bench; INGOT_TEST_LONG=1 in "
           "the unit tests)";
  };
}

std::function<std::string(const ir::Kernel&)> shared_memory_limit(codegen::Target t, std::uint64_t limit,
                                                                  const std::string& what,
                                                                  std::function<std::string(const ir::Kernel&)> then) {
  return [t, limit, what, then = std::move(then)](const ir::Kernel& k) -> std::string {
    if (const std::uint64_t bytes = codegen::emit(k, t).shared_bytes; bytes > limit) {
      return "needs " + std::to_string(bytes / 1024) + " KiB of shared memory per work-group; the device gives " +
             std::to_string(limit / 1024) + " KiB (" + what + ")";
    }
    return then ? then(k) : std::string();
  };
}

BackendSlot open_backend(const std::string& name, const OpenBackendOptions& options) {
  if (name == "interp") return BackendSlot{name, std::make_shared<runtime::Interpreter>(), "", {}, {}};
  if (name == "opencl") {
    try {
      auto be = runtime::OpenCLBackend::create(options.opencl);
      const bool cpu = !be->device_info().is_gpu;
      if (cpu && options.cpu_opencl_unoptimized_below > 0 && options.opencl.unoptimized_below == 0) {
        runtime::OpenCLOptions o = options.opencl;
        o.unoptimized_below = options.cpu_opencl_unoptimized_below;
        be = runtime::OpenCLBackend::create(o);  // (the same device: the options are fixed at creation)
      }
      const std::uint64_t local = be->device_info().local_memory_bytes;
      BackendSlot slot{name, std::shared_ptr<runtime::Backend>(std::move(be)), "", {}, {}};
      if (cpu && options.cpu_opencl_source_limit > 0)
        slot.skip_reason = source_size_limit(options.cpu_opencl_source_limit);
      slot.skip_reason =
          shared_memory_limit(codegen::Target::OpenCL, local, "CL_DEVICE_LOCAL_MEM_SIZE", std::move(slot.skip_reason));
      return slot;
    } catch (const runtime::BackendUnavailable& e) {
      return BackendSlot{name, nullptr, e.what(), {}, {}};  // "opencl not available: <why>"
    }
  }
  if (name == "cuda") {
    try {
      auto be = runtime::CudaBackend::create(options.cuda);
      const auto limit = static_cast<std::uint64_t>(std::max(be->device_info().max_shared_per_group, 0));
      BackendSlot slot{name, std::shared_ptr<runtime::Backend>(std::move(be)), "", {}, {}};
      slot.skip_reason = shared_memory_limit(codegen::Target::CUDA, limit, "opt-in shared memory per block", {});
      return slot;
    } catch (const runtime::BackendUnavailable& e) {
      // No GPU or driver: where NVRTC exists, kernels are still compiled to SASS for sm_90
      // and reported as compiled, not executed.
      try {
        auto compiler = std::make_shared<runtime::CudaCompiler>(runtime::CudaCompiler::load());
        const std::string why =
            std::string(e.what()) + "; compiled for sm_90 with NVRTC " + compiler->version() + ", not executed";
        // Kernels already compiled (the same variant in several cases) are not compiled again.
        auto done = std::make_shared<std::set<std::string>>();
        const runtime::CudaCompileOptions compile = runtime::compile_options_of(options.cuda);
        return BackendSlot{name,
                           nullptr,
                           why,
                           [compiler, done, compile](const ir::Kernel& k) {
                             const std::string fp = ir::fingerprint(k);
                             if (done->count(fp)) return;
                             (void)compiler->compile(k, compile);  // throws on a compile error: the case fails
                             done->insert(fp);
                           },
                           {}};
      } catch (const runtime::BackendUnavailable&) {
        return BackendSlot{name, nullptr, e.what(), {}, {}};
      }
    }
  }
  if (name == "vulkan") {
    try {
      std::shared_ptr<runtime::VulkanBackend> be = runtime::VulkanBackend::create(options.vulkan);
      BackendSlot slot{name, be, "", {}, {}};
      // A kernel the device cannot run (shared memory, a missing feature) is a counted skip with the reason.
      slot.skip_reason = [be](const ir::Kernel& k) { return be->cannot_run(k); };
      return slot;
    } catch (const runtime::BackendUnavailable& e) {
      return BackendSlot{name, nullptr, e.what(), {}, {}};  // "vulkan not available: <why>"
    }
  }
  throw std::invalid_argument("unknown backend '" + name + "'");
}

BackendReport describe_backend(const std::string& name) {
  BackendReport r;
  r.name = name;
  if (name == "interp") {
    r.available = true;
    r.properties = {{"kind", "checked reference interpreter (CPU)"},
                    {"host threads", std::to_string(std::thread::hardware_concurrency())},
                    {"max work-group size", "1024"}};
    return r;
  }
  const BackendSlot s = open_backend(name);
  r.available = s.backend != nullptr;
  r.why_absent = s.why_absent;
  if (const auto* cu = dynamic_cast<const runtime::CudaBackend*>(s.backend.get())) {
    const auto& d = cu->device_info();
    r.properties = {{"device", d.name},
                    {"architecture", d.arch + " (compute capability " + std::to_string(d.compute_major) + "." +
                                         std::to_string(d.compute_minor) + ")"},
                    {"multiprocessors", std::to_string(d.sm_count)},
                    {"memory", std::to_string(d.total_memory / (1024ull * 1024ull)) + " MiB"},
                    {"max threads per block", std::to_string(d.max_threads_per_block)},
                    {"shared memory per block", std::to_string(d.max_shared_per_group / 1024) + " KiB (opt-in)"},
                    {"driver version", std::to_string(d.driver_version)},
                    {"NVRTC", d.nvrtc_version + " (" + d.nvrtc_library + ")"}};
  } else if (!s.backend && s.compile_only) {
    r.properties = {{"mode", "compile-only (NVRTC present, no GPU/driver)"}};
  }
  if (const auto* vk = dynamic_cast<const runtime::VulkanBackend*>(s.backend.get())) {
    const auto& d = vk->device_info();
    r.properties = {
        {"device", "[" + std::to_string(d.index) + "] " + d.name + " (" + d.type + ")"},
        {"api version", d.api_version},
        {"driver", d.driver_name + " " + d.driver_info},
        {"max work-group invocations", std::to_string(d.max_invocations)},
        {"shared memory", std::to_string(d.max_shared_bytes / 1024) + " KiB"},
        {"max storage buffer range", std::to_string(d.max_storage_range / (1024ull * 1024ull)) + " MiB"},
        {"subgroup size", std::to_string(d.subgroup_size)},
        {"16-bit / 8-bit storage", std::string(d.storage16 ? "yes" : "no") + " / " + (d.storage8 ? "yes" : "no")},
        {"timestamps", d.timestamps ? "yes" : "no"}};
    try {
      std::string all;
      for (const auto& dev : runtime::list_vulkan_devices(OpenBackendOptions{}.vulkan)) {
        all += (all.empty() ? "" : "; ") + std::to_string(dev.index) + ": " + dev.name + " (" + dev.type + ")";
      }
      r.properties.emplace_back("devices (INGOT_VULKAN_DEVICE: index or name)", all);
    } catch (const runtime::BackendUnavailable&) {
    }
  }
  if (const auto* cl = dynamic_cast<const runtime::OpenCLBackend*>(s.backend.get())) {
    const auto& d = cl->device_info();
    r.properties = {{"platform", d.platform_name + " (" + d.platform_version + ")"},
                    {"device", d.device_name + (d.is_gpu ? " [GPU]" : "")},
                    {"device version", d.device_version},
                    {"OpenCL C version", d.opencl_c_version},
                    {"driver version", d.driver_version},
                    {"compute units", std::to_string(d.compute_units)},
                    {"max work-group size", std::to_string(d.max_work_group_size)},
                    {"global memory", std::to_string(d.global_memory_bytes / (1024ull * 1024ull)) + " MiB"},
                    {"local memory", std::to_string(d.local_memory_bytes / 1024ull) + " KiB"},
                    {"cl_khr_fp16", d.has_fp16 ? "yes" : "no"},
                    {"cl_khr_int64_base_atomics", d.has_int64_base_atomics ? "yes" : "no"},
                    {"f16 conversions", d.f16_builtins ? "vload_half / vstore_half_rte" : "portable integer helpers"}};
  }
  return r;
}

}  // namespace ingot::harness
