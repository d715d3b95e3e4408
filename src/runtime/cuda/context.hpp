// context.hpp — a device's retained primary context and the driver API it is used through
// (internal to the CUDA runtime).
//
// Shared by the backend and every buffer it made, so memory can be freed after the backend
// is gone. ScopedContext makes the context current for one call and restores the caller's.
#pragma once

#include <memory>
#include <string>

#include "driver_api.hpp"

namespace ingot::runtime::cuda_detail {

class Context {
 public:
  // Takes over one retain of dev's primary context (released in the destructor).
  Context(std::shared_ptr<const DriverApi> api, CUdevice dev, CUcontext ctx)
      : api_(std::move(api)), device_(dev), ctx_(ctx) {}
  ~Context() { api_->cuDevicePrimaryCtxRelease(device_); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  [[nodiscard]] const DriverApi& api() const { return *api_; }
  [[nodiscard]] CUdevice device() const { return device_; }
  [[nodiscard]] CUcontext handle() const { return ctx_; }

  // Throws CudaError("cuda: <what>: <name> (<string>)") unless r is CUDA_SUCCESS.
  void check(CUresult r, const std::string& what) const;

 private:
  std::shared_ptr<const DriverApi> api_;
  CUdevice device_;
  CUcontext ctx_;
};

// Pushes the context for the lifetime of the object. The throwing form is for calls that do
// work; the non-throwing one is for destructors (which must not throw and just skip work
// when the push fails).
class ScopedContext {
 public:
  explicit ScopedContext(const Context& c);  // throws CudaError
  ScopedContext(const Context& c, std::nothrow_t) noexcept;
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  [[nodiscard]] bool active() const { return pushed_; }

 private:
  const Context& c_;
  bool pushed_ = false;
};

}  // namespace ingot::runtime::cuda_detail
