// CUDA device buffers.
#include "buffer.hpp"

#include <new>

namespace ingot::runtime::cuda_detail {

CudaBuffer::~CudaBuffer() {
  if (!owned_ || ptr_ == 0) return;
  // cuMemFree synchronises with outstanding work on the memory. A failure here (a context
  // broken by an earlier kernel fault) cannot be reported from a destructor; the memory then
  // goes with the context.
  ScopedContext scope(*ctx_, std::nothrow);
  if (scope.active()) ctx_->api().cuMemFree(ptr_);
}

}  // namespace ingot::runtime::cuda_detail
