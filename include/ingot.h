/* ingot.h — ingot's C ABI: the library's kernels over the caller's memory, for C and for languages that bind C (Rust,
 * Swift, ...). Every function returns an ingot_status; on failure ingot_last_error() says what to change and
 * ingot_last_error_argument() names the tensor or parameter at fault. Nothing is written to a caller's tensor when a
 * call fails its checks. The C++ API underneath is ingot/api/call.hpp. */
#ifndef INGOT_H
#define INGOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The values of ingot::api::ErrorCode, plus INGOT_ERROR_INTERNAL for anything unforeseen. */
typedef enum ingot_status {
  INGOT_OK = 0,
  INGOT_ERROR_UNKNOWN_KERNEL = 1,
  INGOT_ERROR_BAD_PARAMETER = 2,
  INGOT_ERROR_MISSING_TENSOR = 3,
  INGOT_ERROR_UNEXPECTED_TENSOR = 4,
  INGOT_ERROR_BAD_DTYPE = 5,
  INGOT_ERROR_BAD_SHAPE = 6,
  INGOT_ERROR_NOT_CONTIGUOUS = 7,
  INGOT_ERROR_MISALIGNED = 8,
  INGOT_ERROR_WRONG_DEVICE = 9,
  INGOT_ERROR_ALIASING = 10,
  INGOT_ERROR_INVALID_TENSOR = 11,
  INGOT_ERROR_UNAVAILABLE = 12,
  INGOT_ERROR_LAUNCH_FAILED = 13,
  INGOT_ERROR_INTERNAL = 14
} ingot_status;

/* The values of ingot::DType. */
typedef enum ingot_dtype {
  INGOT_F32 = 0,
  INGOT_F16 = 1,
  INGOT_BF16 = 2,
  INGOT_I32 = 3,
  INGOT_U32 = 4,
  INGOT_I64 = 5,
  INGOT_BOOL = 6,
  INGOT_U8 = 7,
  INGOT_I8 = 8,
  INGOT_U16 = 9
} ingot_dtype;

typedef enum ingot_device { INGOT_DEVICE_HOST = 0, INGOT_DEVICE_OPENCL = 1, INGOT_DEVICE_CUDA = 2 } ingot_device;

#define INGOT_MAX_RANK 8

/* A view of the caller's memory (see ingot/api/tensor.hpp). */
typedef struct ingot_tensor {
  const char* name; /* the kernel's buffer name ("x", "w", "y", ...); the typed calls ignore it */
  ingot_device device;
  int device_index; /* CUDA: the device ordinal */
  void* data;       /* host: first element; OpenCL: the cl_mem; CUDA: the CUdeviceptr */
  ingot_dtype dtype;
  int rank; /* 0 .. INGOT_MAX_RANK */
  int64_t shape[INGOT_MAX_RANK];
  const int64_t* strides; /* rank strides in elements, or NULL: dense row-major */
} ingot_tensor;

typedef struct ingot_param {
  const char* name; /* as `ingot list` names the kernel's parameters */
  int64_t value;
} ingot_param;

typedef struct ingot_context ingot_context;

/* The checked interpreter (host memory). */
ingot_status ingot_context_create_interpreter(ingot_context** out);
/* Each create function sets *out to the new context, or to NULL when it fails. */
/* An OpenCL device: device_filter is a case-insensitive substring of its platform or device name (NULL or "": the
 * default choice). Takes cl_mem of ingot_context_opencl_queue()'s context, and host memory through copies. */
ingot_status ingot_context_create_opencl(const char* device_filter, ingot_context** out);
/* A CUDA device and the caller's CUstream (NULL: a stream of the context's own). */
ingot_status ingot_context_create_cuda(int device, void* stream, ingot_context** out);
void ingot_context_destroy(ingot_context* ctx);
/* The OpenCL context's cl_command_queue; NULL for other contexts. */
void* ingot_context_opencl_queue(const ingot_context* ctx);

/* The generic call: a library kernel by name, its parameters, its tensors by buffer name. */
ingot_status ingot_call(ingot_context* ctx, const char* kernel, const ingot_param* params, size_t num_params,
                        const ingot_tensor* tensors, size_t num_tensors);

/* y[B,C,O] = depthwise conv1d of x[B,C,L] with w[C,K] (+ bias[C]; bias may be NULL). */
ingot_status ingot_depthwise_conv1d(ingot_context* ctx, const ingot_tensor* x, const ingot_tensor* w,
                                    const ingot_tensor* bias, const ingot_tensor* y, int64_t stride, int64_t padding,
                                    int64_t dilation);
/* y = x * sigmoid(x), any shape. */
ingot_status ingot_silu(ingot_context* ctx, const ingot_tensor* x, const ingot_tensor* y);

/* ingot_gemm's flags (or-ed). */
#define INGOT_GEMM_A_TRANSPOSED 1u /* a is [K, M] ([batch, K, M]) instead of [M, K] */
#define INGOT_GEMM_B_WEIGHT 2u     /* b is [N, K] (a weight matrix) instead of [K, N] */
#define INGOT_GEMM_ACCUMULATE 4u   /* c += a b: c is read */
/* ingot_gemm's activations. */
typedef enum { INGOT_ACT_NONE = 0, INGOT_ACT_RELU = 1, INGOT_ACT_SILU = 2, INGOT_ACT_GELU = 3 } ingot_activation;
/* c[M, N] = act(a b (+ c) (+ bias[N]; bias may be NULL)), optionally batched ([batch, ...] on a, b and c alike);
 * products summed in f32, rounded once to c's dtype (a's, or f32 with 16-bit a and b). */
ingot_status ingot_gemm(ingot_context* ctx, const ingot_tensor* a, const ingot_tensor* b, const ingot_tensor* bias,
                        const ingot_tensor* c, unsigned flags, ingot_activation activation);

/* The calling thread's last failure: its message and the argument it names ("" when none). Valid until the thread's
 * next ingot call. */
const char* ingot_last_error(void);
const char* ingot_last_error_argument(void);
const char* ingot_status_name(ingot_status status); /* "INGOT_ERROR_BAD_DTYPE", ... */

#ifdef __cplusplus
}
#endif

#endif /* INGOT_H */
