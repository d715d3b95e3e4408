// A retained primary context and scoped use of it.
#include "context.hpp"

#include <new>

#include "ingot/runtime/cuda.hpp"

namespace ingot::runtime::cuda_detail {

void Context::check(CUresult r, const std::string& what) const {
  if (r == kCudaSuccess) return;
  throw CudaError("cuda: " + what + ": " + api_->describe(r), r, api_->error_name(r));
}

ScopedContext::ScopedContext(const Context& c) : c_(c) {
  c.check(c.api().cuCtxPushCurrent(c.handle()), "making the device's primary context current");
  pushed_ = true;
}

ScopedContext::ScopedContext(const Context& c, std::nothrow_t) noexcept : c_(c) {
  pushed_ = c.api().cuCtxPushCurrent(c.handle()) == kCudaSuccess;
}

ScopedContext::~ScopedContext() {
  if (pushed_) {
    CUcontext popped = nullptr;
    c_.api().cuCtxPopCurrent(&popped);
  }
}

}  // namespace ingot::runtime::cuda_detail
