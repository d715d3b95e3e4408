// Registration of winograd_filter_transform and winograd_conv2d: cases, oracles, tolerances,
// bench shapes.
//
// winograd_conv2d is checked against an f64 *direct* convolution of the raw weights, so its
// test includes the error of the transforms. Its case feeds the kernel the raw weights through
// the documented host transform winograd_filter_transform_host (bit-identical to the
// winograd_filter_transform kernel, which is checked against its own f64 oracle).
//
// Measured accuracy against direct convolution (docs/winograd.md has the table; inputs, weights
// and bias uniform in [-1, 1], f64 oracle on the dtype-rounded values, C = 1..512, 5 seeds, odd
// 9x11 output with pad 1, on the interpreter; test Winograd.MeasuredError... re-measures it):
//   f32:  |err| <= 5.1e-8 * (9C + 1) + 2^-24 * |y|   (max |err| 5.4e-5 at C = 512; a direct
//         convolution summed in f32 in one sequence: 1.4e-4)
//   f16:  |err| <= 2^-11 * |y| + 2e-9 * (9C + 1)      (the output rounding, half an ulp, dominates)
//   bf16: |err| <= 2^-8 * |y| + 2e-9 * (9C + 1)       (the output rounding dominates)
// The tolerances (winograd_tolerance): |err| <= 2e-7 * (9C + 1) + rel * |y|, rel = 1e-6 (f32),
// 1e-3 (f16), 8e-3 (bf16): 4x room on the f32 part (OpenCL may contract a*b+c), and one full
// output ulp for f16 and bf16 (an f32 error can move a value across a rounding boundary).
#include "winograd_conv2d.hpp"

#include "common.hpp"
#include "register.hpp"

namespace ingot::kernels {

std::uint32_t WinogradConv2dSpec::out_h() const {
  return static_cast<std::uint32_t>(conv_out_len(height, 3, 1, pad_h, pad_h, 1, "winograd_conv2d (height)"));
}
std::uint32_t WinogradConv2dSpec::out_w() const {
  return static_cast<std::uint32_t>(conv_out_len(width, 3, 1, pad_w, pad_w, 1, "winograd_conv2d (width)"));
}

namespace {

using harness::param;
using harness::Params;

std::uint32_t u32_param(const Params& p, const std::string& key) { return static_cast<std::uint32_t>(param(p, key)); }

WinogradConv2dSpec conv_spec_of(const Params& p) {
  return WinogradConv2dSpec{u32_param(p, "C"),     u32_param(p, "O"),     u32_param(p, "H"),    u32_param(p, "W"),
                            u32_param(p, "pad_h"), u32_param(p, "pad_w"), param(p, "bias") != 0};
}

Params conv_shape(std::int64_t B, std::int64_t C, std::int64_t O, std::int64_t H, std::int64_t W, std::int64_t pad_h,
                  std::int64_t pad_w, bool bias) {
  return {{"B", B}, {"C", C}, {"O", O}, {"H", H}, {"W", W}, {"pad_h", pad_h}, {"pad_w", pad_w}, {"bias", bias}};
}

Params filter_shape(std::int64_t O, std::int64_t C) { return {{"O", O}, {"C", C}}; }

// The tolerance of winograd_conv2d against direct convolution, from the measurements above.
harness::Tolerance winograd_tolerance(DType t, std::int64_t channels) {
  const double n = 9.0 * static_cast<double>(channels) + 1.0;
  switch (t) {
    case DType::f16: return {2e-7 * n, 1e-3};
    case DType::bf16: return {2e-7 * n, 8e-3};
    default: return {2e-7 * n, 1e-6};
  }
}

void register_filter_transform(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "winograd_filter_transform";
  s.family = "conv";
  s.description = "Winograd F(2x2,3x3) filter transform: w[O,C,3,3] -> u[O,C,16] (f32) = G g G^T";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"C"};
  s.runtime_params = {"O"};
  s.tests = {
      {"5x3", filter_shape(5, 3)},      // 15 filters
      {"17x19", filter_shape(17, 19)},  // 323 filters: a partial second group
  };
  s.bench = {
      {"O256_C256", filter_shape(256, 256)},
      {"O512_C512", filter_shape(512, 512)},
  };
  s.build = [](DType t, const Params& p) {
    const WinogradFilterSpec sp{u32_param(p, "C")};
    return trace_typed(t, "winograd_filter_transform", p, [&](auto tag, KernelBuilder& k) {
      winograd_filter_transform<typename decltype(tag)::type>(k, sp);
    });
  };
  s.geometry = [](DType, const Params& p) {
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "O")) * param(p, "C"), 256);
  };
  s.scalar_params = {{"out_channels", "O"}};
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    harness::HostData d;
    d.scalars["out_channels"] = static_cast<double>(param(p, "O"));
    d.buffers["w"] = random_values(t, static_cast<std::size_t>(param(p, "O") * param(p, "C") * 9), seed);
    return d;
  };
  s.oracle = [](DType, const Params& p, const harness::HostData& d) {
    // U = G g G^T in f64, G = [[1,0,0],[1/2,1/2,1/2],[1/2,-1/2,1/2],[0,0,1]].
    static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    const auto& w = d.buffers.at("w");
    const std::int64_t F = param(p, "O") * param(p, "C");
    std::vector<double> u(static_cast<std::size_t>(F * 16));
    for (std::int64_t f = 0; f < F; ++f) {
      for (std::int64_t i = 0; i < 4; ++i) {
        for (std::int64_t j = 0; j < 4; ++j) {
          double acc = 0;
          for (std::int64_t r = 0; r < 3; ++r) {
            for (std::int64_t c = 0; c < 3; ++c)
              acc += G[i][r] * w[static_cast<std::size_t>(f * 9 + r * 3 + c)] * G[j][c];
          }
          u[static_cast<std::size_t>(f * 16 + i * 4 + j)] = acc;
        }
      }
    }
    return std::map<std::string, std::vector<double>>{{"u", std::move(u)}};
  };
  // Each element of U is a sum of at most 9 terms of magnitude <= 1/4 computed in f32 and kept
  // in f32 for every dtype: a few f32 ulps of values <= 2.25.
  s.tolerance = [](DType, const Params&) { return harness::Tolerance{1e-6, 1e-6}; };
  s.bytes = [](DType t, const Params& p) {
    const double f = static_cast<double>(param(p, "O")) * param(p, "C");
    return f * (9.0 * dtype_size(t) + 16.0 * 4.0);
  };
  // 8 adds and 4 multiplies per 1-D pass of 3 values: 3 column passes and 4 row passes.
  s.flops = [](const Params& p) { return 7.0 * 12.0 * static_cast<double>(param(p, "O")) * param(p, "C"); };
  r.add(std::move(s));
}

void register_winograd_main(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "winograd_conv2d";
  s.family = "conv";
  s.description =
      "Winograd F(2x2,3x3) conv2d, stride 1: x[B,C,H,W], u[O,C,16] (+bias[O]) -> y[B,O,OH,OW]; any output size";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"C", "O", "H", "W", "pad_h", "pad_w", "bias"};
  s.runtime_params = {"B"};
  s.tests = {
      {"odd_5x7out_bias", conv_shape(1, 3, 4, 7, 9, 0, 0, true)},       // 140 outputs, 48 tiles
      {"pad1_bias_batch2", conv_shape(2, 4, 3, 6, 6, 1, 1, true)},      // even 6x6 output
      {"1x1out", conv_shape(3, 5, 2, 3, 3, 0, 0, false)},               // each tile stores 1 of its 4
      {"pad2x0_7x4out", conv_shape(2, 3, 2, 5, 6, 2, 0, true)},         // padding larger than 1
      {"c24_11x9out_groups", conv_shape(2, 24, 6, 11, 9, 1, 1, true)},  // 360 tiles: partial group
  };
  s.bench = {
      {"N32_C256_O256_56x56_pad1", conv_shape(32, 256, 256, 56, 56, 1, 1, false)},
  };
  s.build = [](DType t, const Params& p) {
    const auto sp = conv_spec_of(p);
    return trace_typed(t, "winograd_conv2d", p,
                       [&](auto tag, KernelBuilder& k) { winograd_conv2d<typename decltype(tag)::type>(k, sp); });
  };
  s.geometry = [](DType, const Params& p) {
    const auto sp = conv_spec_of(p);
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * sp.out_channels * sp.tiles_h() * sp.tiles_w(),
                            256);
  };
  s.scalar_params = {{"batch", "B"}};
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    harness::HostData d;
    const auto B = param(p, "B"), C = param(p, "C"), O = param(p, "O"), H = param(p, "H"), W = param(p, "W");
    d.scalars["batch"] = static_cast<double>(B);
    d.buffers["x"] = random_values(t, static_cast<std::size_t>(B * C * H * W), seed);
    // The raw weights (used by the oracle) and their transform (used by the kernel).
    d.buffers["w"] = random_values(t, static_cast<std::size_t>(O * C * 9), seed + 1);
    d.buffers["u"] = winograd_filter_transform_host(d.buffers["w"], static_cast<std::size_t>(O * C));
    if (param(p, "bias")) d.buffers["bias"] = random_values(t, static_cast<std::size_t>(O), seed + 2);
    return d;
  };
  s.oracle = [](DType, const Params& p, const harness::HostData& d) {
    const auto sp = conv_spec_of(p);
    const std::int64_t B = param(p, "B"), C = sp.in_channels, O = sp.out_channels, H = sp.height, W = sp.width;
    const std::int64_t OH = sp.out_h(), OW = sp.out_w();
    const auto& x = d.buffers.at("x");
    const auto& w = d.buffers.at("w");
    std::vector<double> y(static_cast<std::size_t>(B * O * OH * OW));
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t o = 0; o < O; ++o) {
        for (std::int64_t i = 0; i < OH; ++i) {
          for (std::int64_t j = 0; j < OW; ++j) {
            double acc = sp.bias ? d.buffers.at("bias")[o] : 0.0;
            for (std::int64_t c = 0; c < C; ++c) {
              for (std::int64_t r = 0; r < 3; ++r) {
                for (std::int64_t q = 0; q < 3; ++q) {
                  const std::int64_t iy = i + r - sp.pad_h, ix = j + q - sp.pad_w;
                  if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                  acc += x[((b * C + c) * H + iy) * W + ix] * w[((o * C + c) * 3 + r) * 3 + q];
                }
              }
            }
            y[((b * O + o) * OH + i) * OW + j] = acc;
          }
        }
      }
    }
    return std::map<std::string, std::vector<double>>{{"y", std::move(y)}};
  };
  s.tolerance = [](DType t, const Params& p) { return winograd_tolerance(t, param(p, "C")); };
  s.bytes = [](DType t, const Params& p) {
    const auto sp = conv_spec_of(p);
    const double B = static_cast<double>(param(p, "B"));
    return static_cast<double>(dtype_size(t)) *
               (B * sp.in_channels * sp.height * sp.width + (sp.bias ? sp.out_channels : 0) +
                B * sp.out_channels * sp.out_h() * sp.out_w()) +
           4.0 * 16.0 * sp.out_channels * sp.in_channels;
  };
  // Counted as the direct convolution it replaces (2 * 9 * C per output), the usual convention
  // for fast-convolution algorithms; the kernel itself does about 2.25x fewer multiplies.
  s.flops = [](const Params& p) {
    const auto sp = conv_spec_of(p);
    return 2.0 * 9.0 * static_cast<double>(param(p, "B")) * sp.out_channels * sp.out_h() * sp.out_w() * sp.in_channels;
  };
  r.add(std::move(s));
}

}  // namespace

void register_winograd_conv2d(harness::Registry& r) {
  register_filter_transform(r);
  register_winograd_main(r);
}

}  // namespace ingot::kernels
