// buffer.hpp — a buffer in CUDA device memory, owned (cuMemAlloc'd by the backend) or
// wrapped (the caller's memory, never freed here). Internal to the CUDA runtime.
#pragma once

#include <memory>

#include "context.hpp"
#include "ingot/runtime/backend.hpp"

namespace ingot::runtime::cuda_detail {

class CudaBuffer final : public DeviceBuffer {
 public:
  CudaBuffer(std::shared_ptr<const Context> ctx, DType t, std::size_t count, CUdeviceptr ptr, bool owned)
      : DeviceBuffer(t, count), ctx_(std::move(ctx)), ptr_(ptr), owned_(owned) {}
  ~CudaBuffer() override;
  [[nodiscard]] std::string backend_name() const override { return "cuda"; }

  [[nodiscard]] std::uint64_t address() const override { return ptr_; }
  [[nodiscard]] CUdeviceptr ptr() const { return ptr_; }
  [[nodiscard]] bool owned() const { return owned_; }
  [[nodiscard]] const Context& context() const { return *ctx_; }

 private:
  std::shared_ptr<const Context> ctx_;
  CUdeviceptr ptr_;
  bool owned_;
};

}  // namespace ingot::runtime::cuda_detail
