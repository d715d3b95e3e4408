// ingot/api/context.hpp — where library calls run: one backend (the checked interpreter, an OpenCL device, a CUDA
// device and stream), the library's registry, and the kernels traced so far.
//
// A context is used from one thread at a time; two contexts are independent. Kernels are traced once per (kernel,
// dtype, parameters) and kept for the context's life; the backends keep what they compiled in memory and on disk
// (runtime::DiskCache), so a second call of one shape neither traces nor compiles.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ingot/api/tensor.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/ir.hpp"
#include "ingot/runtime/backend.hpp"
#include "ingot/runtime/cuda.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/runtime/opencl.hpp"

namespace ingot::api {

class Context {
 public:
  // Host tensors, run on the checked interpreter (inputs are read into its checked memory and the outputs copied
  // back after the launch succeeded: its checks need their own per-element state).
  [[nodiscard]] static Context interpreter(const runtime::InterpOptions& options = {});
  // An OpenCL device (runtime::OpenCLOptions chooses it). Takes OpenCL buffers of the context's own queue
  // (opencl_queue()) without copies, and host tensors through copies to the device and back.
  // Throws Error(Unavailable) saying why OpenCL cannot be used.
  [[nodiscard]] static Context opencl(const runtime::OpenCLOptions& options = {});
  // A CUDA device; options.stream is the caller's CUstream (nullptr: a stream of the context's own). Takes CUDA
  // device pointers of that device. Throws Error(Unavailable) without a driver or a GPU.
  [[nodiscard]] static Context cuda(const runtime::CudaOptions& options = {});

  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();

  // The memory this context's kernels run on: Host for the interpreter.
  [[nodiscard]] DeviceKind device() const;
  [[nodiscard]] int device_index() const;  // CUDA: the ordinal; otherwise 0
  // Whether a call may take tensors on d (OpenCL contexts also take host tensors, through copies).
  [[nodiscard]] bool accepts(DeviceKind d) const;
  [[nodiscard]] runtime::Backend& backend();
  // The OpenCL context's cl_command_queue (nullptr for other contexts): buffers of its cl_context are the ones an
  // OpenCL context takes.
  [[nodiscard]] void* opencl_queue() const;
  [[nodiscard]] const harness::Registry& registry() const;

  // The kernel of (spec, t, p), traced on first use. Throws std::invalid_argument for parameters the kernel refuses.
  struct Traced {
    ir::Kernel kernel;
    std::vector<std::uint32_t> alignment;  // per parameter: the bytes its vector accesses need
  };
  [[nodiscard]] const Traced& traced(const harness::KernelSpec& spec, DType t, const harness::Params& p);
  // How many kernels were traced (a cached call traces none).
  [[nodiscard]] std::uint64_t traces() const;

 private:
  struct Impl;
  explicit Context(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingot::api
