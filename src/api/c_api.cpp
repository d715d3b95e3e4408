// The C ABI (include/ingot.h) over ingot::api: conversions, and every exception turned into a status.
#include "ingot.h"

#include <optional>
#include <string>

#include "ingot/api/activation.hpp"
#include "ingot/api/call.hpp"
#include "ingot/api/conv.hpp"
#include "ingot/api/gemm.hpp"

struct ingot_context {
  ingot::api::Context ctx;
};

namespace {

using ingot::api::Error;
using ingot::api::ErrorCode;

// The last failure of this thread. C callers read it after a failed call, as they read errno or dlerror(): one
// state per thread, so that threads using separate contexts never see each other's messages.
struct LastError {
  std::string message;
  std::string argument;
};
LastError& last_error() {
  thread_local LastError e;
  return e;
}

ingot_status fail(ErrorCode code, const std::string& argument, const std::string& message) {
  last_error() = {message, argument};
  return static_cast<ingot_status>(code);
}

template <class F>
ingot_status guarded(F&& f) {
  try {
    f();
    last_error() = {};
    return INGOT_OK;
  } catch (const Error& e) {
    return fail(e.code, e.argument, e.what());
  } catch (const std::exception& e) {
    last_error() = {e.what(), ""};
    return INGOT_ERROR_INTERNAL;
  }
}

ingot::api::TensorView view_of(const ingot_tensor* t, const char* what) {
  if (!t) throw Error(ErrorCode::InvalidTensor, what, std::string("tensor '") + what + "' is NULL");
  if (t->rank < 0 || t->rank > INGOT_MAX_RANK) {
    throw Error(ErrorCode::InvalidTensor, what,
                std::string("tensor '") + what + "' has rank " + std::to_string(t->rank) + "; it must be 0 to " +
                    std::to_string(INGOT_MAX_RANK));
  }
  if (t->dtype < INGOT_F32 || t->dtype > INGOT_U16) {
    throw Error(ErrorCode::BadDtype, what,
                std::string("tensor '") + what + "' has dtype " + std::to_string(t->dtype) + ", not an ingot_dtype");
  }
  if (t->device < INGOT_DEVICE_HOST || t->device > INGOT_DEVICE_CUDA) {
    throw Error(ErrorCode::InvalidTensor, what,
                std::string("tensor '") + what + "' has device " + std::to_string(t->device) + ", not an ingot_device");
  }
  ingot::api::TensorView v;
  v.device = static_cast<ingot::api::DeviceKind>(t->device);
  v.device_index = t->device_index;
  v.data = t->data;
  v.dtype = static_cast<ingot::DType>(t->dtype);
  v.shape.assign(t->shape, t->shape + t->rank);
  if (t->strides) v.strides.assign(t->strides, t->strides + t->rank);
  return v;
}

ingot::api::Context& context_of(ingot_context* ctx) {
  if (!ctx) throw Error(ErrorCode::InvalidTensor, "ctx", "the context is NULL: create one first");
  return ctx->ctx;
}

// A context is returned through `out`, which is NULL after a failure.
void require_out(ingot_context** out) {
  if (!out) throw Error(ErrorCode::InvalidTensor, "out", "the address for the new context is NULL");
  *out = nullptr;
}

}  // namespace

extern "C" {

ingot_status ingot_context_create_interpreter(ingot_context** out) {
  return guarded([&] {
    require_out(out);
    *out = new ingot_context{ingot::api::Context::interpreter()};
  });
}

ingot_status ingot_context_create_opencl(const char* device_filter, ingot_context** out) {
  return guarded([&] {
    require_out(out);
    ingot::runtime::OpenCLOptions o;
    if (device_filter) o.device_filter = device_filter;
    *out = new ingot_context{ingot::api::Context::opencl(o)};
  });
}

ingot_status ingot_context_create_cuda(int device, void* stream, ingot_context** out) {
  return guarded([&] {
    require_out(out);
    ingot::runtime::CudaOptions o;
    o.device = device;
    o.stream = stream;
    *out = new ingot_context{ingot::api::Context::cuda(o)};
  });
}

void ingot_context_destroy(ingot_context* ctx) { delete ctx; }

void* ingot_context_opencl_queue(const ingot_context* ctx) { return ctx ? ctx->ctx.opencl_queue() : nullptr; }

ingot_status ingot_call(ingot_context* ctx, const char* kernel, const ingot_param* params, size_t num_params,
                        const ingot_tensor* tensors, size_t num_tensors) {
  return guarded([&] {
    auto& c = context_of(ctx);
    if (!kernel) throw Error(ErrorCode::UnknownKernel, "kernel", "the kernel name is NULL");
    ingot::harness::Params p;
    for (size_t i = 0; i < num_params; ++i) {
      if (!params[i].name)
        throw Error(ErrorCode::BadParameter, "params", "parameter " + std::to_string(i) + " has no name");
      p[params[i].name] = params[i].value;
    }
    ingot::api::Tensors ts;
    for (size_t i = 0; i < num_tensors; ++i) {
      const char* name = tensors[i].name;
      if (!name) throw Error(ErrorCode::InvalidTensor, "tensors", "tensor " + std::to_string(i) + " has no name");
      if (!ts.emplace(name, view_of(&tensors[i], name)).second) {
        throw Error(ErrorCode::UnexpectedTensor, name, std::string("tensor '") + name + "' is given twice");
      }
    }
    ingot::api::call(c, kernel, p, ts);
  });
}

ingot_status ingot_depthwise_conv1d(ingot_context* ctx, const ingot_tensor* x, const ingot_tensor* w,
                                    const ingot_tensor* bias, const ingot_tensor* y, int64_t stride, int64_t padding,
                                    int64_t dilation) {
  return guarded([&] {
    auto& c = context_of(ctx);
    const auto xv = view_of(x, "x"), wv = view_of(w, "w"), yv = view_of(y, "y");
    std::optional<ingot::api::TensorView> bv;
    if (bias) bv = view_of(bias, "bias");
    ingot::conv::depthwise_conv1d(c, xv, wv, yv, {stride, padding, dilation}, bv ? &*bv : nullptr);
  });
}

ingot_status ingot_silu(ingot_context* ctx, const ingot_tensor* x, const ingot_tensor* y) {
  return guarded([&] { ingot::activation::silu(context_of(ctx), view_of(x, "x"), view_of(y, "y")); });
}

ingot_status ingot_gemm(ingot_context* ctx, const ingot_tensor* a, const ingot_tensor* b, const ingot_tensor* bias,
                        const ingot_tensor* c, unsigned flags, ingot_activation activation) {
  return guarded([&] {
    constexpr unsigned kKnown = INGOT_GEMM_A_TRANSPOSED | INGOT_GEMM_B_WEIGHT | INGOT_GEMM_ACCUMULATE;
    if ((flags & ~kKnown) != 0) {
      throw ingot::api::Error(ingot::api::ErrorCode::BadParameter, "flags",
                              "ingot_gemm: flags " + std::to_string(flags) +
                                  " name bits other than "
                                  "INGOT_GEMM_A_TRANSPOSED, INGOT_GEMM_B_WEIGHT and INGOT_GEMM_ACCUMULATE");
    }
    if (activation < INGOT_ACT_NONE || activation > INGOT_ACT_GELU) {
      throw ingot::api::Error(ingot::api::ErrorCode::BadParameter, "activation",
                              "ingot_gemm: activation " + std::to_string(static_cast<int>(activation)) +
                                  " is not one of INGOT_ACT_NONE, _RELU, _SILU, _GELU");
    }
    ingot::linalg::GemmOptions o;
    o.a_transposed = (flags & INGOT_GEMM_A_TRANSPOSED) != 0;
    o.b_weight = (flags & INGOT_GEMM_B_WEIGHT) != 0;
    o.accumulate = (flags & INGOT_GEMM_ACCUMULATE) != 0;
    o.activation = static_cast<ingot::linalg::Activation>(activation);
    const ingot::api::TensorView bv = bias ? view_of(bias, "bias") : ingot::api::TensorView{};
    ingot::linalg::gemm(context_of(ctx), view_of(a, "a"), view_of(b, "b"), view_of(c, "c"), o, bias ? &bv : nullptr);
  });
}

const char* ingot_last_error(void) { return last_error().message.c_str(); }
const char* ingot_last_error_argument(void) { return last_error().argument.c_str(); }

const char* ingot_status_name(ingot_status status) {
  switch (status) {
    case INGOT_OK: return "INGOT_OK";
    case INGOT_ERROR_UNKNOWN_KERNEL: return "INGOT_ERROR_UNKNOWN_KERNEL";
    case INGOT_ERROR_BAD_PARAMETER: return "INGOT_ERROR_BAD_PARAMETER";
    case INGOT_ERROR_MISSING_TENSOR: return "INGOT_ERROR_MISSING_TENSOR";
    case INGOT_ERROR_UNEXPECTED_TENSOR: return "INGOT_ERROR_UNEXPECTED_TENSOR";
    case INGOT_ERROR_BAD_DTYPE: return "INGOT_ERROR_BAD_DTYPE";
    case INGOT_ERROR_BAD_SHAPE: return "INGOT_ERROR_BAD_SHAPE";
    case INGOT_ERROR_NOT_CONTIGUOUS: return "INGOT_ERROR_NOT_CONTIGUOUS";
    case INGOT_ERROR_MISALIGNED: return "INGOT_ERROR_MISALIGNED";
    case INGOT_ERROR_WRONG_DEVICE: return "INGOT_ERROR_WRONG_DEVICE";
    case INGOT_ERROR_ALIASING: return "INGOT_ERROR_ALIASING";
    case INGOT_ERROR_INVALID_TENSOR: return "INGOT_ERROR_INVALID_TENSOR";
    case INGOT_ERROR_UNAVAILABLE: return "INGOT_ERROR_UNAVAILABLE";
    case INGOT_ERROR_LAUNCH_FAILED: return "INGOT_ERROR_LAUNCH_FAILED";
    case INGOT_ERROR_INTERNAL: return "INGOT_ERROR_INTERNAL";
  }
  return "INGOT_ERROR_UNKNOWN";
}

}  // extern "C"
