// Registration of depthwise_conv1d: cases, oracle, tolerances, bench shapes.
#include "depthwise_conv1d.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "register.hpp"

namespace ingot::kernels {

std::uint32_t DepthwiseConv1dSpec::out_len() const {
  return static_cast<std::uint32_t>(conv_out_len(length, ksize, stride, pad, pad, dilation, "depthwise_conv1d"));
}

void DepthwiseConv1dSpec::validate() const {
  if (channels < 1) throw std::invalid_argument("depthwise_conv1d: C must be >= 1");
  if (outputs_per_thread < 1 || outputs_per_thread > 64) {
    throw std::invalid_argument("depthwise_conv1d: V (outputs per thread) must be in [1, 64], got " +
                                std::to_string(outputs_per_thread));
  }
  // Positions within a row are i32, element indices u32 (check_batch adds the batch).
  constexpr std::uint64_t kMax = 1ull << 30;
  if (std::uint64_t{length} + 2ull * pad > kMax || std::uint64_t{stride} * outputs_per_thread > kMax) {
    throw std::invalid_argument("depthwise_conv1d: L + 2*pad = " + std::to_string(std::uint64_t{length} + 2ull * pad) +
                                " and stride*V = " + std::to_string(std::uint64_t{stride} * outputs_per_thread) +
                                " must be <= 2^30 (row positions are 32-bit)");
  }
  (void)out_len();  // throws for an impossible shape
}

void DepthwiseConv1dSpec::check_batch(std::uint64_t batch) const {
  validate();
  const std::uint64_t longest =
      std::max<std::uint64_t>({length, out_len(), std::uint64_t{groups()} * outputs_per_thread});
  if (wide_index) {
    check_i64_elements("depthwise_conv1d", batch, std::uint64_t{channels} * longest);
  } else {
    check_u32_elements("depthwise_conv1d", batch, std::uint64_t{channels} * longest);
  }
}

namespace {

using harness::param;
using harness::Params;

// The tuning options, declared once (ingot list --options).
const std::vector<harness::OptionSpec>& depthwise_conv1d_options() {
  static const std::vector<harness::OptionSpec> options{
      {"V", 1, 64,
       "outputs per thread; default 16 with the chunk exchange for 16-bit rows of row-shifted groups, else 8"},
      {"shfl", 0, 1, "1: chunk exchange, each input chunk loaded once and shared by sub-group shuffle"},
      launch_bounds_option(),  // default minb = 8 for 16-bit types with V <= 8, else none
      index_width_option()};
  return options;
}

// The spec of case p for dtype t. Where the case names neither V nor shfl, the default: V = 16 with
// the chunk exchange for 16-bit rows of row-shifted groups (O % 8 != 0) read as
// 16-byte chunks (L % 8 == 0) whose window the exchange takes and whose batch V16 indexes in u32,
// else V = 8 (docs/performance.md s8: each chunk loaded once lifts 16-bit rows of row-shifted groups; f32 loses with
// the exchange). Measured on CUDA only: OpenCL, Metal and HIP have no native
// shuffle (legalise exchanges through local memory with barriers); name V = 8 there if it is
// slower.
// The index width: the case's i64, else 64-bit exactly where B * C * (the longest row) needs it.
DepthwiseConv1dSpec spec_of(const Params& p, DType t) {
  constexpr std::int64_t kI32 = 0x7fffffff;  // row positions are i32
  const std::string n = "depthwise_conv1d";
  DepthwiseConv1dSpec s{bounded_param(p, "C", 1, kI32, 0, n),
                        bounded_param(p, "L", 1, kI32, 0, n),
                        bounded_param(p, "K", 1, kI32, 0, n),
                        bounded_param(p, "stride", 1, kI32, 0, n),
                        bounded_param(p, "pad", 0, kI32, 0, n),
                        bounded_param(p, "dilation", 1, kI32, 0, n),
                        param(p, "bias") != 0,
                        harness::option_value(depthwise_conv1d_options(), p, "V", 8, n),
                        harness::option_value(depthwise_conv1d_options(), p, "shfl", 0, n) == 1};
  const std::uint64_t batch = p.count("B") ? static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)) : 1;
  s.validate();
  // The longest row of any V (<= 64): the threads of a row cover at most O + 2V outputs (check_batch).
  const std::uint64_t longest = std::max<std::uint64_t>(s.length, std::uint64_t{s.out_len()} + 128);
  s.wide_index = wide_index_param(p, batch * std::uint64_t{s.channels} * longest, n);
  if (!p.count("V") && !p.count("shfl") && dtype_size(t) == 2) {
    DepthwiseConv1dSpec e = s;
    e.outputs_per_thread = 16, e.chunk_shuffle = true;
    s.validate();
    const Rows1dGeom eg = e.geom();
    if (eg.out_len % 8 != 0 && row_vector_width(2, 16, s.length) == 8 && chunk_exchange_refusal(eg, 2, false).empty()) {
      try {  // V16 must take the shape and the batch V8 takes (positions and indices)
        e.check_batch(batch);
        s = e;
      } catch (const std::invalid_argument&) {
      }
    }
  }
  return s;
}

Params shape(std::int64_t B, std::int64_t C, std::int64_t L, std::int64_t K, std::int64_t stride, std::int64_t pad,
             std::int64_t dil, bool bias, std::int64_t V = 1) {
  return {{"B", B},     {"C", C},          {"L", L},       {"K", K}, {"stride", stride},
          {"pad", pad}, {"dilation", dil}, {"bias", bias}, {"V", V}};
}

Params with_minb(Params p, std::int64_t minb) {
  p["minb"] = minb;
  return p;
}

Params with_i64(Params p) {
  p["i64"] = 1;
  return p;
}

Params chunk_shuffle(Params p) {
  p["shfl"] = 1;
  return p;
}

// The case without V: the kernel's default (spec_of).
Params default_v(Params p) {
  p.erase("V");
  return p;
}

}  // namespace

void register_depthwise_conv1d(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "depthwise_conv1d";
  s.family = "conv";
  s.description = "depthwise 1-D convolution: x[B,C,L] * w[C,K] (+bias[C]) -> y[B,C,O]; stride, pad, dilation";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"C", "L", "K", "stride", "pad", "dilation", "bias"};
  for (const auto& o : depthwise_conv1d_options()) s.add_option(o);
  s.value_names["i64"] = {"u32index", "i64index"};
  s.runtime_params = {"B"};
  s.tests = {
      {"8ch_x_15out", shape(1, 8, 17, 3, 1, 0, 1, false)},  // 120 outputs: 136 tail threads
      {"3ch_x_17out", shape(1, 3, 19, 3, 1, 0, 1, false)},  // 51 outputs
      {"batch3_bias", shape(3, 8, 17, 3, 1, 1, 1, true)},
      {"stride2_pad3_dil2", shape(2, 5, 40, 4, 2, 3, 2, true)},
      {"k1", shape(2, 4, 9, 1, 1, 0, 1, false)},
      {"k7_wide", shape(2, 6, 300, 7, 1, 3, 1, true)},  // several groups, partial last one
      // V outputs per thread: rows whose length is not a multiple of V, strided/dilated windows
      {"8ch_x_15out_v4", shape(1, 8, 17, 3, 1, 0, 1, false, 4)},
      {"stride2_pad3_dil2_v4", shape(2, 5, 40, 4, 2, 3, 2, true, 4)},
      {"k7_wide_v4", shape(2, 6, 300, 7, 1, 3, 1, true, 4)},
      {"k1_v3", shape(2, 4, 9, 1, 1, 0, 1, false, 3)},
      // V = 8: vector loads (L % 8 == 0; f32 uses two 4-wide vectors per group)
      {"k4_pad3_v8_O35", shape(2, 3, 32, 4, 1, 3, 1, false, 8)},  // O % 8 == 3: row-shifted groups
      {"k4_pad3_v8_O35_bias", shape(1, 5, 32, 4, 1, 3, 1, true, 8)},
      {"k3_s2_v8", shape(2, 3, 64, 3, 2, 1, 1, false, 8)},               // O = 32: aligned groups
      {"k3_s2_pad0_v8_O31", shape(1, 4, 64, 3, 2, 0, 1, true, 8)},       // stride 2, O % 8 == 7
      {"k5_dil2_pad4_v8", shape(2, 3, 48, 5, 1, 4, 2, true, 8)},         // O = 48
      {"k4_dil3_v8_O7", shape(2, 2, 16, 4, 1, 0, 3, false, 8)},          // O = 7 < V: every group partial
      {"k4_pad3_v16_O43", shape(1, 3, 40, 4, 1, 3, 1, false, 16)},       // L % 16 != 0: 8-wide vectors
      {"k4_pad1_v8_L36", shape(2, 2, 36, 4, 1, 1, 1, false, 8)},         // L % 8 != 0: 4-wide (bf16) vectors
      {"k4_pad3_v8_L35_scalar", shape(1, 3, 35, 4, 1, 3, 1, false, 8)},  // odd L: scalar loads
      {"k4_pad3_v8_O35_minb8", with_minb(shape(2, 3, 32, 4, 1, 3, 1, true, 8), 8)},  // launch_bounds(256, 8)
      // chunk exchange: rows shorter than, as long as and longer than a warp's groups, row-shifted
      // groups, strided and dilated windows, 4-wide vectors, tails, a partial last work-group
      {"k4_pad3_v8_O35_shfl", chunk_shuffle(shape(2, 3, 32, 4, 1, 3, 1, true, 8))},
      {"k4_pad3_v8_O259_c5_shfl", chunk_shuffle(shape(2, 5, 256, 4, 1, 3, 1, false, 8))},
      {"k3_s2_pad0_v8_O31_shfl", chunk_shuffle(shape(1, 4, 64, 3, 2, 0, 1, true, 8))},
      {"k5_dil2_pad4_v8_shfl", chunk_shuffle(shape(2, 3, 48, 5, 1, 4, 2, true, 8))},
      {"k4_pad1_v8_L36_shfl", chunk_shuffle(shape(2, 2, 36, 4, 1, 1, 1, false, 8))},
      {"k7_wide_v4_shfl", chunk_shuffle(shape(2, 6, 300, 7, 1, 3, 1, true, 4))},
      {"k4_dil3_v8_O7_shfl", chunk_shuffle(shape(2, 2, 16, 4, 1, 0, 3, false, 8))},
      {"k4_pad3_v8_O35_shfl_minb8", with_minb(chunk_shuffle(shape(2, 3, 32, 4, 1, 3, 1, true, 8)), 8)},
      // the default V (16 with the exchange for 16-bit row-shifted groups, else 8)
      {"k4_pad3_default_O35", default_v(shape(2, 3, 32, 4, 1, 3, 1, true))},
      {"k4_pad3_default_O259_c5", default_v(shape(2, 5, 256, 4, 1, 3, 1, false))},
      {"k3_s2_default_O32", default_v(shape(2, 3, 64, 3, 2, 1, 1, false))},
      {"k4_pad3_default_L35", default_v(shape(1, 3, 35, 4, 1, 3, 1, false))},
      {"k3_s2_pad2_default_O33", default_v(shape(2, 3, 64, 3, 2, 2, 1, true))},     // strided, row-shifted
      {"k4_dil81_default_O787", default_v(shape(1, 2, 1024, 4, 1, 3, 81, false))},  // too wide for the exchange
      // 64-bit indexes (the default past 2^32 elements) on small rows: aligned, row-shifted, the exchange
      {"k3_s2_v8_i64", with_i64(shape(2, 3, 64, 3, 2, 1, 1, false, 8))},
      {"k4_pad3_default_O35_i64", with_i64(default_v(shape(2, 3, 32, 4, 1, 3, 1, true)))},
      {"k4_pad3_v8_O35_shfl_i64", with_i64(chunk_shuffle(shape(2, 3, 32, 4, 1, 3, 1, true, 8)))},
      {"k4_pad3_v8_L35_scalar_i64", with_i64(shape(1, 3, 35, 4, 1, 3, 1, false, 8))},
  };
  // The first case per shape takes the kernel's default V (spec_of); the others let one GPU run compare.
  s.bench = {
      {"B8_C4096_L4096_K4_pad3", default_v(shape(8, 4096, 4096, 4, 1, 3, 1, false))},
      {"B4_C512_L65536_K3_s2", default_v(shape(4, 512, 65536, 3, 2, 1, 1, false))},
      // V8 (the f32 default; slower than V16 with the exchange in 16-bit, s8)
      {"B8_C4096_L4096_K4_pad3_v8", shape(8, 4096, 4096, 4, 1, 3, 1, false, 8)},
      {"B8_C4096_L4096_K4_pad3_v4", shape(8, 4096, 4096, 4, 1, 3, 1, false, 4)},
      {"B4_C512_L65536_K3_s2_v4", shape(4, 512, 65536, 3, 2, 1, 1, false, 4)},
      // chunk exchange (shfl): each chunk loaded once, the overlap from the next lanes (V16: the
      // 16-bit default above; here for f32; s5).
      {"B8_C4096_L4096_K4_pad3_v16_shfl", chunk_shuffle(shape(8, 4096, 4096, 4, 1, 3, 1, false, 16))},
      {"B4_C512_L65536_K3_s2_shfl", chunk_shuffle(shape(4, 512, 65536, 3, 2, 1, 1, false, 8))},
  };
  s.build = [](DType t, const Params& p) {
    const auto sp = spec_of(p, t);
    sp.check_batch(static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)));
    // Default register cap for 16-bit types: 8 work-groups of 256 per SM (32 registers, no spills for
    // V <= 8): the O % V != 0 case runs faster capped in 16-bit and slower in f32, so f32 stays uncapped
    // (docs/performance.md s3).
    Params q = p;
    if (!q.count("minb") && t != DType::f32 && sp.outputs_per_thread <= 8) q["minb"] = 8;
    return trace_typed(t, sp.wide_index ? "depthwise_conv1d_i64" : "depthwise_conv1d", q,
                       [&](auto tag, KernelBuilder& k) {
                         using T = typename decltype(tag)::type;
                         apply_launch_bounds(k, q, 256, sp.chunk_shuffle);  // shuffles need declared bounds
                         if (sp.wide_index) {
                           depthwise_conv1d<T, i64>(k, sp);
                         } else {
                           depthwise_conv1d<T>(k, sp);
                         }
                       });
  };
  s.geometry = [](DType t, const Params& p) {
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * param(p, "C") * spec_of(p, t).groups(), 256);
  };
  s.scalar_params = {{"batch", "B"}};
  s.shapes = [](DType, const Params& p) {
    const auto u = [&](const char* key) { return static_cast<std::uint64_t>(param(p, key)); };
    const auto sp = spec_of(p, DType::f32);
    std::map<std::string, std::vector<std::uint64_t>> m{
        {"x", {u("B"), u("C"), u("L")}}, {"w", {u("C"), u("K")}}, {"y", {u("B"), u("C"), sp.out_len()}}};
    if (param(p, "bias")) m["bias"] = {u("C")};
    return m;
  };
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    harness::HostData d;
    const auto B = param(p, "B"), C = param(p, "C"), L = param(p, "L"), K = param(p, "K");
    d.scalars["batch"] = static_cast<double>(B);
    d.buffers["x"] = random_values(t, static_cast<std::size_t>(B * C * L), seed);
    d.buffers["w"] = random_values(t, static_cast<std::size_t>(C * K), seed + 1);
    if (param(p, "bias")) d.buffers["bias"] = random_values(t, static_cast<std::size_t>(C), seed + 2);
    return d;
  };
  s.oracle = [](DType t, const Params& p, const harness::HostData& d) {
    const auto sp = spec_of(p, t);
    const std::int64_t B = param(p, "B"), C = sp.channels, L = sp.length, K = sp.ksize, O = sp.out_len();
    const auto& x = d.buffers.at("x");
    const auto& w = d.buffers.at("w");
    std::vector<double> y(static_cast<std::size_t>(B * C * O));
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t c = 0; c < C; ++c) {
        for (std::int64_t o = 0; o < O; ++o) {
          double acc = sp.bias ? d.buffers.at("bias")[c] : 0.0;
          for (std::int64_t t = 0; t < K; ++t) {
            const std::int64_t pos = o * sp.stride + t * sp.dilation - sp.pad;
            if (pos >= 0 && pos < L) acc += x[(b * C + c) * L + pos] * w[c * K + t];
          }
          y[(b * C + c) * O + o] = acc;
        }
      }
    }
    return std::map<std::string, std::vector<double>>{{"y", std::move(y)}};
  };
  s.tolerance = [](DType t, const Params& p) { return dot_tolerance(t, param(p, "K") + 1); };
  s.bytes = [](DType t, const Params& p) {
    const auto sp = spec_of(p, t);
    const double B = static_cast<double>(param(p, "B"));
    return static_cast<double>(dtype_size(t)) * (B * sp.channels * sp.length + double(sp.channels) * sp.ksize +
                                                 (sp.bias ? sp.channels : 0) + B * sp.channels * sp.out_len());
  };
  s.flops = [](const Params& p) {
    const auto sp = spec_of(p, DType::f32);
    return 2.0 * static_cast<double>(param(p, "B")) * sp.channels * sp.out_len() * sp.ksize;
  };
  r.add(std::move(s));
}

}  // namespace ingot::kernels
