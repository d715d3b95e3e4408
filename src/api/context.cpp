// Contexts: a backend, the library's registry and the kernels traced so far.
#include "ingot/api/context.hpp"

#include <string>
#include <unordered_map>

#include "ingot/api/error.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"

namespace ingot::api {

struct Context::Impl {
  DeviceKind device = DeviceKind::Host;
  int device_index = 0;
  std::unique_ptr<runtime::Backend> backend;
  runtime::OpenCLBackend* opencl = nullptr;  // the backend, where it is OpenCL
  harness::Registry registry = harness::builtin_registry();
  std::unordered_map<std::string, Traced> traced;  // key: kernel, dtype and every parameter
  std::uint64_t traces = 0;
};

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;
Context::~Context() = default;

Context Context::interpreter(const runtime::InterpOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->backend = std::make_unique<runtime::Interpreter>(options);
  return Context(std::move(impl));
}

Context Context::opencl(const runtime::OpenCLOptions& options) {
  auto impl = std::make_unique<Impl>();
  try {
    auto b = runtime::OpenCLBackend::create(options);
    impl->opencl = b.get();
    impl->backend = std::move(b);
  } catch (const runtime::BackendUnavailable& e) {
    throw Error(ErrorCode::Unavailable, "", e.what());
  }
  impl->device = DeviceKind::OpenCL;
  return Context(std::move(impl));
}

Context Context::cuda(const runtime::CudaOptions& options) {
  auto impl = std::make_unique<Impl>();
  try {
    impl->backend = runtime::CudaBackend::create(options);
  } catch (const runtime::BackendUnavailable& e) {
    throw Error(ErrorCode::Unavailable, "", e.what());
  }
  impl->device = DeviceKind::Cuda;
  impl->device_index = options.device;
  return Context(std::move(impl));
}

DeviceKind Context::device() const { return impl_->device; }
int Context::device_index() const { return impl_->device_index; }
bool Context::accepts(DeviceKind d) const {
  return d == impl_->device || (impl_->device == DeviceKind::OpenCL && d == DeviceKind::Host);
}
runtime::Backend& Context::backend() { return *impl_->backend; }
void* Context::opencl_queue() const { return impl_->opencl ? impl_->opencl->queue() : nullptr; }
const harness::Registry& Context::registry() const { return impl_->registry; }
std::uint64_t Context::traces() const { return impl_->traces; }

const Context::Traced& Context::traced(const harness::KernelSpec& spec, DType t, const harness::Params& p) {
  std::string key = spec.name;
  key += '|';
  key += dtype_name(t);
  for (const auto& [k, v] : p) key += '|' + k + '=' + std::to_string(v);
  auto it = impl_->traced.find(key);
  if (it != impl_->traced.end()) return it->second;
  Traced tr{passes::optimize(spec.build(t, p)), {}};
  tr.alignment = ir::vector_access_alignment(tr.kernel);
  ++impl_->traces;
  return impl_->traced.emplace(std::move(key), std::move(tr)).first->second;
}

}  // namespace ingot::api
