// The typed functions of ingot/api/conv.hpp and ingot/api/activation.hpp: parameters from the tensors' shapes.
#include <algorithm>
#include <string>

#include "ingot/api/activation.hpp"
#include "ingot/api/conv.hpp"

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

}  // namespace ingot
