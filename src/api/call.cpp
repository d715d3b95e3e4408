// The generic library call: checks every tensor against the traced kernel, then launches over the caller's memory.
#include "ingot/api/call.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "ingot/scalar_eval.hpp"

namespace ingot::api {

namespace {

using harness::KernelSpec;
using harness::Params;

const KernelSpec& find_kernel(const Context& ctx, std::string_view name) {
  if (const auto* k = ctx.registry().find(name)) return *k;
  std::string list;
  for (const auto& n : ctx.registry().names()) list += (list.empty() ? "" : ", ") + n;
  throw Error(ErrorCode::UnknownKernel, "kernel",
              "ingot's library has no kernel '" + std::string(name) + "' (kernels: " + list + ")");
}

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (auto t : ts) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
  return s;
}

void check_param_names(const KernelSpec& spec, const Params& params) {
  const auto known = spec.known_params();
  for (const auto& [key, v] : params) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    throw Error(ErrorCode::BadParameter, key,
                "kernel '" + spec.name + "' has no parameter '" + key + "' (parameters: " + list + ")");
  }
}

// Everything of one call that depends on (kernel, dtype, params) alone.
struct Resolved {
  const Context::Traced* traced = nullptr;
  runtime::LaunchGeometry geometry;
  std::vector<runtime::Arg> args;                // scalars set; buffers empty
  std::vector<std::uint64_t> extent;             // per parameter: the elements a buffer needs
  std::vector<std::vector<std::int64_t>> shape;  // per buffer parameter: the shape a tensor must have
};

Resolved resolve(Context& ctx, const KernelSpec& spec, DType t, const Params& p) {
  check_param_names(spec, p);
  Resolved r;
  const std::string with = spec.name + " (" + std::string(dtype_name(t)) + ") with " + harness::format_params(p);
  std::map<std::string, std::vector<std::uint64_t>> declared;
  try {
    r.traced = &ctx.traced(spec, t, p);
    r.geometry = spec.geometry(t, p);
    if (spec.shapes) declared = spec.shapes(t, p);
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorCode::BadParameter, "params", "cannot run " + with + ": " + e.what());
  }
  const ir::Kernel& k = r.traced->kernel;
  r.args.resize(k.params.size());
  r.extent.assign(k.params.size(), 0);
  r.shape.resize(k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const auto& prm = k.params[i];
    if (ir::is_buffer(prm.kind)) continue;
    try {
      r.args[i] = runtime::ScalarArg{prm.type, ir::bits_of_double(prm.type, spec.scalar_value(prm.name, p))};
    } catch (const std::invalid_argument& e) {
      throw Error(ErrorCode::BadParameter, "params", "cannot run " + with + ": " + e.what());
    }
  }
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const auto& prm = k.params[i];
    if (!ir::is_buffer(prm.kind)) continue;
    try {
      r.extent[i] = runtime::required_extent(k, i, r.args);
    } catch (const runtime::ArgumentError& e) {
      throw Error(ErrorCode::BadParameter, "params", "cannot run " + with + ": " + e.what());
    }
    if (const auto d = declared.find(prm.name); d != declared.end()) {
      for (auto v : d->second) r.shape[i].push_back(static_cast<std::int64_t>(v));
    } else {
      r.shape[i] = {static_cast<std::int64_t>(r.extent[i])};
    }
  }
  return r;
}

// The dtype of the call: of the kernel's dtypes, the one most tensors have (ties: the kernel's first).
DType call_dtype(const KernelSpec& spec, const Tensors& tensors) {
  std::optional<DType> best;
  int best_count = 0;
  for (auto t : spec.dtypes) {
    int n = 0;
    for (const auto& [name, v] : tensors) n += v.dtype == t;
    if (n > best_count) best = t, best_count = n;
  }
  if (!best) {
    const auto& [name, v] = *tensors.begin();
    throw Error(ErrorCode::BadDtype, name,
                "tensor '" + name + "' is " + std::string(dtype_name(v.dtype)) + ": " + spec.name + " takes " +
                    dtype_list(spec.dtypes) + "; convert the tensors to one of them");
  }
  return *best;
}

bool writes(ir::ParamKind k) { return k == ir::ParamKind::Out || k == ir::ParamKind::InOut; }
bool reads(ir::ParamKind k) { return k == ir::ParamKind::In || k == ir::ParamKind::InOut; }

// The checks of one tensor against buffer parameter i.
void check_tensor(const Context& ctx, const KernelSpec& spec, const Resolved& r, std::size_t i, const TensorView& v) {
  const auto& prm = r.traced->kernel.params[i];
  const std::string& n = prm.name;
  const std::string what = "tensor '" + n + "' of " + spec.name;
  if (!ctx.accepts(v.device)) {
    throw Error(ErrorCode::WrongDevice, n,
                what + " is on " + device_kind_name(v.device) + " memory but the context runs on " +
                    device_kind_name(ctx.device()) + ": pass " + device_kind_name(ctx.device()) +
                    " tensors or call through a context of that device");
  }
  if (v.device == DeviceKind::Cuda && v.device_index != ctx.device_index()) {
    throw Error(ErrorCode::WrongDevice, n,
                what + " is on CUDA device " + std::to_string(v.device_index) + " but the context runs on device " +
                    std::to_string(ctx.device_index()) + ": move it there or use a context of its device");
  }
  if (v.dtype != prm.type) {
    throw Error(ErrorCode::BadDtype, n,
                what + " is " + std::string(dtype_name(v.dtype)) + "; it must be " + std::string(dtype_name(prm.type)) +
                    " (the call's dtype is decided by the tensors: make every tensor the same floating type)");
  }
  const std::int64_t count = element_count(v);
  if (count < 0) throw Error(ErrorCode::InvalidTensor, n, what + " has a negative dimension " + shape_text(v.shape));
  if (!v.strides.empty() && v.strides.size() != v.shape.size()) {
    throw Error(ErrorCode::InvalidTensor, n,
                what + " has " + std::to_string(v.strides.size()) + " strides for " + std::to_string(v.shape.size()) +
                    " dimensions");
  }
  if (!is_contiguous(v)) {
    throw Error(ErrorCode::NotContiguous, n,
                what + " has strides " + shape_text(v.strides) + ", not the dense row-major ones of shape " +
                    shape_text(v.shape) +
                    ": pass a contiguous copy (torch: .contiguous(); numpy: "
                    "numpy.ascontiguousarray)");
  }
  if (v.shape != r.shape[i]) {
    const bool flat = r.shape[i].size() == 1;
    throw Error(ErrorCode::BadShape, n,
                what + " has shape " + shape_text(v.shape) + " but must have " +
                    (flat ? "the element count " : "shape ") + shape_text(r.shape[i]) +
                    " for the call's parameters: pass a tensor of that shape or change the "
                    "parameters");
  }
  if (static_cast<std::uint64_t>(count) != r.extent[i]) {  // a declared shape that disagrees with the extent
    throw Error(ErrorCode::BadShape, n,
                what + " holds " + std::to_string(count) + " elements but the kernel reads or writes " +
                    std::to_string(r.extent[i]) + " with these parameters");
  }
  if (count > 0 && v.data == nullptr) {
    throw Error(ErrorCode::InvalidTensor, n, what + " has " + std::to_string(count) + " elements but no memory (null)");
  }
  if (v.device != DeviceKind::OpenCL) {  // an OpenCL tensor starts at its cl_mem's first byte, which OpenCL aligns
    const auto address = reinterpret_cast<std::uintptr_t>(v.data);
    const std::uint64_t need = std::max<std::uint64_t>(dtype_size(prm.type), r.traced->alignment[i]);
    if (address % need != 0) {
      throw Error(ErrorCode::Misaligned, n,
                  what + " starts at an address that is not a multiple of " + std::to_string(need) +
                      " bytes (the kernel's element size or vector accesses): pass a tensor whose storage starts "
                      "there (a fresh allocation, not a view at an offset)");
    }
  }
}

// An output sharing memory with another tensor of the call would be read while written (and the backends promise
// their compilers `restrict` buffers).
void check_aliasing(const KernelSpec& spec, const Resolved& r, const std::vector<const TensorView*>& views) {
  const auto& params = r.traced->kernel.params;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!views[i]) continue;
    for (std::size_t j = i + 1; j < params.size(); ++j) {
      if (!views[j] || (!writes(params[i].kind) && !writes(params[j].kind))) continue;
      const TensorView& a = *views[i];
      const TensorView& b = *views[j];
      bool overlap = false;
      if (a.device == DeviceKind::OpenCL) {
        overlap = a.data == b.data;
      } else {
        const auto a0 = reinterpret_cast<std::uintptr_t>(a.data);
        const auto b0 = reinterpret_cast<std::uintptr_t>(b.data);
        const auto a1 = a0 + r.extent[i] * dtype_size(params[i].type);
        const auto b1 = b0 + r.extent[j] * dtype_size(params[j].type);
        overlap = a0 < b1 && b0 < a1;
      }
      if (!overlap) continue;
      const std::size_t out = writes(params[j].kind) ? j : i;
      const std::size_t other = out == j ? i : j;
      throw Error(ErrorCode::Aliasing, params[out].name,
                  "tensor '" + params[out].name + "' of " + spec.name + " is written and shares memory with '" +
                      params[other].name + "': pass an output in memory of its own");
    }
  }
}

}  // namespace

std::vector<BufferInfo> describe(Context& ctx, std::string_view kernel, DType t, const harness::Params& params) {
  const KernelSpec& spec = find_kernel(ctx, kernel);
  if (std::find(spec.dtypes.begin(), spec.dtypes.end(), t) == spec.dtypes.end()) {
    throw Error(
        ErrorCode::BadDtype, "dtype",
        spec.name + " has no " + std::string(dtype_name(t)) + " variant (dtypes: " + dtype_list(spec.dtypes) + ")");
  }
  const Resolved r = resolve(ctx, spec, t, params);
  std::vector<BufferInfo> out;
  const auto& ps = r.traced->kernel.params;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (!ir::is_buffer(ps[i].kind)) continue;
    out.push_back({ps[i].name, reads(ps[i].kind), writes(ps[i].kind), ps[i].type, r.shape[i]});
  }
  return out;
}

void call(Context& ctx, std::string_view kernel, const harness::Params& params, const Tensors& tensors) {
  const KernelSpec& spec = find_kernel(ctx, kernel);
  if (tensors.empty()) {
    throw Error(ErrorCode::MissingTensor, "", "a call of " + spec.name + " needs its tensors; none was given");
  }
  // The call's device: that of the first tensor (by name) on memory the context runs on.
  const auto first =
      std::find_if(tensors.begin(), tensors.end(), [&](const auto& t) { return ctx.accepts(t.second.device); });
  if (first == tensors.end()) {
    const auto& [name, v] = *tensors.begin();
    throw Error(ErrorCode::WrongDevice, name,
                "tensor '" + name + "' of " + spec.name + " is on " + device_kind_name(v.device) +
                    " memory but the context runs on " + device_kind_name(ctx.device()) + ": pass " +
                    device_kind_name(ctx.device()) + " tensors or call through a context of that device");
  }
  const DeviceKind device = first->second.device;
  for (const auto& [name, v] : tensors) {
    if (v.device != device) {
      throw Error(ErrorCode::WrongDevice, name,
                  "tensor '" + name + "' is on " + device_kind_name(v.device) + " memory but '" + first->first +
                      "' is on " + device_kind_name(device) + ": pass every tensor of a call on one device");
    }
  }
  const DType t = call_dtype(spec, tensors);
  Resolved r = resolve(ctx, spec, t, params);
  const auto& ps = r.traced->kernel.params;

  // Every check before any memory is touched.
  std::vector<const TensorView*> views(ps.size(), nullptr);
  std::string buffers;
  for (const auto& prm : ps) {
    if (ir::is_buffer(prm.kind)) buffers += (buffers.empty() ? "" : ", ") + prm.name;
  }
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (!ir::is_buffer(ps[i].kind)) continue;
    const auto it = tensors.find(ps[i].name);
    if (it == tensors.end()) {
      throw Error(ErrorCode::MissingTensor, ps[i].name,
                  spec.name + " with " + harness::format_params(params) + " needs tensor '" + ps[i].name + "' (" +
                      std::string(ir::param_kind_name(ps[i].kind)) + ", shape " + shape_text(r.shape[i]) +
                      "); its tensors: " + buffers);
    }
    views[i] = &it->second;
  }
  for (const auto& [name, v] : tensors) {
    bool known = false;
    for (const auto& prm : ps) known = known || (ir::is_buffer(prm.kind) && prm.name == name);
    if (!known) {
      throw Error(ErrorCode::UnexpectedTensor, name,
                  spec.name + " with " + harness::format_params(params) + " has no tensor '" + name +
                      "' (its tensors: " + buffers + ")");
    }
  }
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (views[i]) check_tensor(ctx, spec, r, i, *views[i]);
  }
  check_aliasing(spec, r, views);

  runtime::Backend& dev = ctx.backend();
  try {
    if (device == DeviceKind::Host) {
      // Staged: inputs into the backend's memory, outputs back into the caller's only after the launch succeeded.
      for (std::size_t i = 0; i < ps.size(); ++i) {
        if (!views[i]) continue;
        auto buf = dev.allocate(ps[i].type, r.extent[i]);
        if (reads(ps[i].kind)) dev.upload(*buf, views[i]->data, buf->bytes());
        r.args[i] = std::move(buf);
      }
      dev.launch(r.traced->kernel, r.geometry, r.args);
      for (std::size_t i = 0; i < ps.size(); ++i) {
        if (!views[i] || !writes(ps[i].kind)) continue;
        const auto& buf = std::get<runtime::BufferPtr>(r.args[i]);
        dev.download(*buf, views[i]->data, buf->bytes());
      }
    } else if (device == DeviceKind::OpenCL) {
      auto& cl = static_cast<runtime::OpenCLBackend&>(dev);
      for (std::size_t i = 0; i < ps.size(); ++i) {
        if (views[i]) r.args[i] = cl.wrap_buffer(views[i]->data, ps[i].type, r.extent[i]);
      }
      dev.launch(r.traced->kernel, r.geometry, r.args);
    } else {
      auto& cu = static_cast<runtime::CudaBackend&>(dev);
      for (std::size_t i = 0; i < ps.size(); ++i) {
        if (!views[i]) continue;
        r.args[i] = cu.wrap_device_buffer(reinterpret_cast<std::uint64_t>(views[i]->data), ps[i].type, r.extent[i]);
      }
      dev.launch(r.traced->kernel, r.geometry, r.args);
    }
  } catch (const runtime::ArgumentError& e) {
    throw Error(ErrorCode::BadParameter, "params", spec.name + ": " + e.what());
  } catch (const runtime::BackendUnavailable& e) {
    throw Error(ErrorCode::Unavailable, "", e.what());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorCode::LaunchFailed, "", spec.name + " failed on " + dev.name() + ": " + e.what());
  }
}

}  // namespace ingot::api
