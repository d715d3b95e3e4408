// The typed functions of ingot/api/conv.hpp, ingot/api/activation.hpp and ingot/api/gemm.hpp: parameters from the
// tensors' shapes.
#include <algorithm>
#include <string>

#include "ingot/api/activation.hpp"
#include "ingot/api/conv.hpp"
#include "ingot/api/gemm.hpp"

namespace ingot {

namespace {

void require_rank(const api::TensorView& t, const char* name, std::size_t rank, const char* layout,
                  const char* kernel) {
  if (t.shape.size() == rank) return;
  throw api::Error(api::ErrorCode::BadShape, name,
                   std::string(kernel) + ": tensor '" + name + "' has shape " + api::shape_text(t.shape) +
                       "; it must be " + layout + " (" + std::to_string(rank) + " dimensions)");
}

}  // namespace

void conv::depthwise_conv1d(api::Context& ctx, const api::TensorView& x, const api::TensorView& w,
                            const api::TensorView& y, const Conv1dOptions& o, const api::TensorView* bias) {
  require_rank(x, "x", 3, "[B, C, L]", "depthwise_conv1d");
  require_rank(w, "w", 2, "[C, K]", "depthwise_conv1d");
  const harness::Params p{{"B", x.shape[0]},    {"C", x.shape[1]},  {"L", x.shape[2]},        {"K", w.shape[1]},
                          {"stride", o.stride}, {"pad", o.padding}, {"dilation", o.dilation}, {"bias", bias ? 1 : 0}};
  api::Tensors t{{"x", x}, {"w", w}, {"y", y}};
  if (bias) t.emplace("bias", *bias);
  api::call(ctx, "depthwise_conv1d", p, t);
}

void activation::silu(api::Context& ctx, const api::TensorView& x, const api::TensorView& y) {
  // The kernel sees both tensors as flat arrays: any shape, the same for both, dense.
  if (y.shape != x.shape) {
    throw api::Error(api::ErrorCode::BadShape, "y",
                     "silu: tensor 'y' has shape " + api::shape_text(y.shape) + " but 'x' has " +
                         api::shape_text(x.shape) + ": pass an output of the input's shape");
  }
  api::TensorView fx = x, fy = y;
  for (auto* v : {&fx, &fy}) {
    if (!api::is_contiguous(*v)) continue;  // left as it is, for api::call to refuse with its name
    v->shape = {api::element_count(*v)};
    v->strides.clear();
  }
  api::call(ctx, "silu", {{"n", std::max<std::int64_t>(api::element_count(x), 0)}}, {{"x", fx}, {"y", fy}});
}

void linalg::gemm(api::Context& ctx, const api::TensorView& a, const api::TensorView& b, const api::TensorView& c,
                  const GemmOptions& o, const api::TensorView* bias) {
  const char* k = "gemm";
  const std::size_t rank = a.shape.size();
  if (rank != 2 && rank != 3) {
    throw api::Error(api::ErrorCode::BadShape, "a",
                     std::string(k) + ": tensor 'a' has shape " + api::shape_text(a.shape) + "; it must be " +
                         (o.a_transposed ? "[K, M] or [batch, K, M]" : "[M, K] or [batch, M, K]"));
  }
  require_rank(b, "b", rank, o.b_weight ? "[(batch,) N, K], as 'a'" : "[(batch,) K, N], as 'a'", k);
  require_rank(c, "c", rank, "[(batch,) M, N], as 'a'", k);
  const std::size_t r = rank - 2;  // the first matrix dimension
  const std::int64_t batch = rank == 3 ? a.shape[0] : 1;
  const std::int64_t M = o.a_transposed ? a.shape[r + 1] : a.shape[r];
  const std::int64_t K = o.a_transposed ? a.shape[r] : a.shape[r + 1];
  const std::int64_t N = o.b_weight ? b.shape[r] : b.shape[r + 1];
  // The kernel takes every matrix as [batch, rows, cols]; shapes that disagree (K, the batch) are api::call's to
  // refuse, naming the tensor, against these parameters.
  api::TensorView fa = a, fb = b, fc = c;
  if (rank == 2) {
    for (auto* v : {&fa, &fb, &fc}) {
      v->shape.insert(v->shape.begin(), 1);
      if (!v->strides.empty()) v->strides.insert(v->strides.begin(), v->strides.front() * v->shape[1]);
    }
  }
  const harness::Params p{{"M", M},
                          {"N", N},
                          {"K", K},
                          {"batch", batch},
                          {"alpha", 1},
                          {"beta", 1},
                          {"ta", o.a_transposed ? 1 : 0},
                          {"tb", o.b_weight ? 1 : 0},
                          {"acc", o.accumulate ? 1 : 0},
                          {"bias", bias ? 1 : 0},
                          {"act", static_cast<std::int64_t>(o.activation)},
                          // f32 c from 16-bit a: the sums kept in f32 (out = 1)
                          {"out", c.dtype == DType::f32 && a.dtype != DType::f32 ? 1 : 0}};
  api::Tensors t{{"a", fa}, {"b", fb}, {"c", fc}};
  if (bias) t.emplace("bias", *bias);
  api::call(ctx, k, p, t);
}

}  // namespace ingot
