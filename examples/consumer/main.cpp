// A consumer of the installed ingot package: runs the library's depthwise_conv1d and silu over its own host arrays
// on the checked interpreter (ingot/api/) and checks the results against direct formulas. Exits 0 when every element
// agrees.
#include <cmath>
#include <cstdio>
#include <vector>

#include <ingot/api/activation.hpp>
#include <ingot/api/conv.hpp>

int main() {
  using ingot::DType;
  using ingot::api::host_tensor;
  auto ctx = ingot::api::Context::interpreter();

  // depthwise conv1d, stride 2, padding 1: an output count that leaves the last work-group partial.
  const int B = 2, C = 3, L = 101, K = 3, O = (L + 2 - (K - 1) - 1) / 2 + 1;
  std::vector<float> x(B * C * L), w(C * K), y(B * C * O), s(B * C * O);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) / 13.0f - 0.5f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) / 5.0f - 0.4f;
  ingot::conv::depthwise_conv1d(ctx, host_tensor(x.data(), DType::f32, {B, C, L}),
                                host_tensor(w.data(), DType::f32, {C, K}), host_tensor(y.data(), DType::f32, {B, C, O}),
                                {.stride = 2, .padding = 1});
  ingot::activation::silu(ctx, host_tensor(y.data(), DType::f32, {B, C, O}),
                          host_tensor(s.data(), DType::f32, {B, C, O}));

  int bad = 0;
  for (int b = 0; b < B; ++b) {
    for (int c = 0; c < C; ++c) {
      for (int o = 0; o < O; ++o) {
        double acc = 0;
        for (int k = 0; k < K; ++k) {
          const int i = o * 2 - 1 + k;
          if (i >= 0 && i < L) acc += static_cast<double>(x[(b * C + c) * L + i]) * w[c * K + k];
        }
        const double want = acc / (1.0 + std::exp(-acc));
        const double got = s[(b * C + c) * O + o];
        if (!(std::abs(got - want) <= 1e-5 + 1e-5 * std::abs(want))) ++bad;
      }
    }
  }
  std::printf("consumer: depthwise_conv1d + silu, %d outputs, %d wrong\n", B * C * O, bad);
  return bad == 0 ? 0 : 1;
}
