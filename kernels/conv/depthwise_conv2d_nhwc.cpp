// depthwise_conv2d_nhwc: depthwise 2-D convolution, NHWC in and out, weight [C, kh, kw],
// optional bias; kh != kw allowed; stride, padding and dilation per axis. FMA kernels: the
// shared-ring kernel of depthwise_conv2d_nhwc_stream.hpp (its tiling per window and dtype:
// depthwise_nhwc_stream_default; "we"), the default where it applies, and the register kernel of
// depthwise_conv2d_nhwc.hpp (where the stream kernel does not apply, or for a case naming V, VC, VH,
// preload, ahead or CL: V outputs along W x VC channels x VH rows per thread). Tensor-core kernel
// (16-bit): channel planes with row pairs (depthwise_conv2d_nhwc_mma.hpp, mma = 1; the default for
// windows of 5 or more rows). The parameters, oracle, inputs, tolerances and bench arithmetic are
// the direct convolutions' (direct_conv_registry.hpp).
#include "depthwise_conv2d_nhwc.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "depthwise_conv2d.hpp"
#include "depthwise_conv2d_nhwc_mma.hpp"
#include "depthwise_conv2d_nhwc_stream.hpp"
#include "register.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;

// The tuning options, declared once (ingot list --options); which kernel a case runs and the defaults per window:
// tiling_of, mma_options_of and the kernels below.
const std::vector<harness::OptionSpec>& depthwise_conv2d_nhwc_options() {
  static const std::vector<harness::OptionSpec> options{
      {"V", 1, 16, "FMA kernels: output columns per thread"},
      {"VC", 1, 16, "FMA kernels: channels per thread (one vector)"},
      {"VH", 1, 16, "FMA kernels: output rows per thread"},
      {"preload", 0, 1, "FMA kernels: 1 = every input row loaded before the arithmetic"},
      {"ahead", 0, 32, "FMA kernels with preload: rows loaded this far ahead of their arithmetic (0: all)"},
      {"CL", 0, 1 << 16, "FMA kernels: channel vectors per pixel of consecutive threads"},
      launch_bounds_option(),
      {"we", 0, 1, "stream kernel: 1 = the block's weights copied to shared memory with row 0"},
      {"mma", 0, 1, "1: tensor cores (f16/bf16; f32 runs the other kernels)"},
      {"mr", 2, 64, "tensor cores: output rows per work-group (even)"},
      {"mc", 8, 16, "tensor cores: channels per work-group (8 or 16)"},
      {"mw", 1, 32, "tensor cores: warps per work-group"},
      {"il", 1, 32, "tensor cores: row pairs whose mma chains run side by side"},
      {"lq", 0, 2, "tensor cores: row loads (0 pairs, 1 pairs in A's order, 2 quads)"},
      {"mb", 1, 64, "tensor cores: bands per work-group (> 1: a ring of plane rows)"},
      shared_memory_option("msm", "tensor cores: shared memory allowed, KB (default 48; CUDA: dynamic above)"),
      {"mwp", 0, 1, "tensor cores with bands: 1 = weights as packed tap pairs (0, default: taps)"},
      {"mos", 0, 1, "tensor cores: 1 = the output stage's words rotated per pixel"},
      {"mwr", 0, 1, "tensor cores with bands: 1 = each warp's weights held in registers"}};
  return options;
}

// The tiling of a case (ranges: the option table); absent keys take the defaults for the window width
// (depthwise_nhwc_default_tiling).
DepthwiseNhwcTiling tiling_of(const Params& p) {
  const DepthwiseNhwcTiling d = depthwise_nhwc_default_tiling(static_cast<std::uint32_t>(param(p, "kw")));
  auto get = [&](const char* key, std::uint32_t dflt) {
    return harness::option_value(depthwise_conv2d_nhwc_options(), p, key, dflt, "depthwise_conv2d_nhwc");
  };
  const bool preload = harness::option_value(depthwise_conv2d_nhwc_options(), p, "preload", d.preload ? 1 : 0,
                                             "depthwise_conv2d_nhwc") == 1;
  return {get("V", d.V),
          get("VC", d.VC),
          get("VH", d.VH),
          preload,
          harness::option_value(depthwise_conv2d_nhwc_options(), p, "CL", d.CL, "depthwise_conv2d_nhwc"),
          harness::option_value(depthwise_conv2d_nhwc_options(), p, "ahead", d.ahead, "depthwise_conv2d_nhwc")};
}

// The stream kernel (depthwise_conv2d_nhwc_stream.hpp) with its tiling for the window and dtype
// (depthwise_nhwc_stream_default) and "we" (0 or 1): the block's weights through shared memory, the default wherever
// the ring and the weights fit (loaded from global memory, ptxas moves them past the first barrier, where every
// work-group then waits for them; docs/performance.md s40).
DepthwiseNhwcStream stream_of(DType t, const ConvSpec& sp, const Params& p) {
  DepthwiseNhwcStream st = depthwise_nhwc_stream_default(sp.ksize[1], dtype_size(t));
  st.we = harness::option_value(depthwise_conv2d_nhwc_options(), p, "we", 1, "depthwise_conv2d_nhwc");
  if (!p.count("we") && !depthwise_nhwc_stream_refusal(sp, st, static_cast<std::uint32_t>(dtype_size(t))).empty()) {
    st.we = 0;
  }
  return st;
}
// Whether a case runs the stream kernel: where it names none of the register kernel's keys (V, VC, VH, preload, CL,
// ahead) and the stream kernel takes the spec. "we" applies to the stream kernel only: refused with the reason where
// the case does not run it.
bool streams(DType t, const ConvSpec& sp, const Params& p) {
  bool tiled = false;
  for (const char* key : {"V", "VC", "VH", "preload", "CL", "ahead"}) tiled = tiled || p.count(key) > 0;
  const std::string why =
      tiled ? std::string()
            : depthwise_nhwc_stream_refusal(sp, stream_of(t, sp, p), static_cast<std::uint32_t>(dtype_size(t)));
  if (!tiled && why.empty()) return true;
  if (p.count("we")) {
    throw std::invalid_argument(
        "depthwise_conv2d_nhwc: we (the block's weights through shared memory) applies to the stream kernel, " +
        (tiled ? std::string("which a case naming V, VC, VH, preload, CL or ahead does not run") : "which " + why) +
        "; drop we");
  }
  return false;
}

// The keys of the FMA kernels (register and stream), which the tensor-core kernel refuses.
constexpr std::array<const char*, 7> kFmaKernelKeys{"V", "VC", "VH", "preload", "CL", "ahead", "we"};
// The tensor-core kernel's keys (mma itself first), which the other kernels refuse.
constexpr std::array<const char*, 11> kMmaKernelKeys{"mma", "mr",  "mc",  "mw",  "il", "lq",
                                                     "mb",  "msm", "mwp", "mos", "mwr"};

// The tensor-core kernel's options where a case names no mma key: a ring of plane rows walked by each work-group over
// the whole image in bands of 4 output rows, the weights as tap pairs (40 KB of shared memory for 7x7 and 16 channels).
DepthwiseNhwcMma mma_ring_default(const ConvSpec& sp) {
  DepthwiseNhwcMma o;
  o.rows = 4;
  // (clamped to the image's bands: one run per image column. Shorter runs fill the device better but run slower, each
  // paying its first band's synchronous fill and halo again: docs/performance.md s31)
  o.bands = 64;
  o.channels = sp.in_channels % 16 == 0 ? 16 : 8;
  o.weight_pairs = true;  // (mwp 1: the weights as packed tap pairs, two 4-byte loads per tap row; s30)
  // (mos 1: the output stage's words rotated, its stores conflict-free; with the output stage's rows 64 pixels apart
  // the rotation costs no instruction per store; s32)
  o.rotated_stage = true;
  // (mwr 1: each warp's weights held in registers across the bands, 3 work-groups of 80 registers per SM, where each
  // warp has one task and the image more than one band: the weights were a quarter of a band's shared-memory
  // wavefronts; with 4 work-groups it spills; s33)
  o.weights_in_registers = true;
  if (!depthwise_nhwc_mma_refusal(sp, 2, o).empty()) o.weights_in_registers = false;
  return o;
}

// Whether a case that names no kernel runs the tensor-core kernel: 16-bit, a window of 5 or more rows, and the ring
// default applies (docs/performance.md s21: faster than the stream kernel for 7x7; 3x3 stays on the stream kernel).
bool mma_by_default(DType t, const ConvSpec& sp, const Params& p) {
  if (dtype_size(t) != 2 || sp.ksize[0] < 5 || p.count("mma") || p.count("minb")) return false;
  for (const char* key : kFmaKernelKeys) {
    if (p.count(key)) return false;
  }
  return depthwise_nhwc_mma_refusal(sp, dtype_size(t), mma_ring_default(sp)).empty();
}

// mma = 1: the tensor-core kernel (depthwise_conv2d_nhwc_mma.hpp; f16/bf16, f32 runs the other kernels) with mr
// (output rows per work-group, default 8), mc (channels per work-group, 8 or 16; default 16 where C allows, else 8), mw
// (warps, default 8), il (row pairs side by side, default 2), lq, mb (bands per work-group, default 1) and msm
// (KB of shared memory allowed, default 48). Its keys are refused without it, the other kernels' keys with it. The
// default for 16-bit windows of 5 or more rows without an mma key (mma_by_default: mr 4, mb the whole image).
bool uses_mma(DType t, const ConvSpec& sp, const Params& p) {
  if (mma_by_default(t, sp, p)) return true;
  const bool asked = harness::option_value(depthwise_conv2d_nhwc_options(), p, "mma", 0, "depthwise_conv2d_nhwc") == 1;
  if (!asked) {
    for (std::size_t i = 1; i < kMmaKernelKeys.size(); ++i) {  // (mma = 0 itself is a choice, not a misuse)
      const char* key = kMmaKernelKeys[i];
      if (p.count(key)) {
        throw std::invalid_argument(std::string("depthwise_conv2d_nhwc: ") + key +
                                    " applies to the tensor-core kernel: set mma = 1 (or drop it)");
      }
    }
    return false;
  }
  for (const char* key : kFmaKernelKeys) {
    if (p.count(key)) {
      std::string own;
      for (std::size_t i = 1; i < kMmaKernelKeys.size(); ++i) own += std::string(i > 1 ? ", " : "") + kMmaKernelKeys[i];
      throw std::invalid_argument(std::string("depthwise_conv2d_nhwc: ") + key +
                                  " does not apply to mma = 1 (the tensor-core kernel: " + own + "); drop it");
    }
  }
  return dtype_size(t) == 2;
}
// (Where the kernel is the default, the keys a case names start from the ring default.)
DepthwiseNhwcMma mma_of(DType t, const ConvSpec& sp, const Params& p) {
  const DepthwiseNhwcMma d = mma_by_default(t, sp, p) ? mma_ring_default(sp) : DepthwiseNhwcMma{};
  const std::uint32_t mc_default = sp.in_channels % 16 == 0 ? 16 : 8;
  const std::uint32_t rows =
      harness::option_value(depthwise_conv2d_nhwc_options(), p, "mr", d.rows, "depthwise_conv2d_nhwc");
  DepthwiseNhwcMma o;
  o.rows = rows;
  o.channels = harness::option_value(depthwise_conv2d_nhwc_options(), p, "mc", mc_default, "depthwise_conv2d_nhwc");
  o.warps = harness::option_value(depthwise_conv2d_nhwc_options(), p, "mw", d.warps, "depthwise_conv2d_nhwc");
  o.il = harness::option_value(depthwise_conv2d_nhwc_options(), p, "il", std::min(d.il, rows / 2),
                               "depthwise_conv2d_nhwc");
  o.loads = static_cast<RowPairLoads>(harness::option_value(
      depthwise_conv2d_nhwc_options(), p, "lq", static_cast<std::uint32_t>(d.loads), "depthwise_conv2d_nhwc"));
  o.bands = harness::option_value(depthwise_conv2d_nhwc_options(), p, "mb", d.bands, "depthwise_conv2d_nhwc");
  o.smem_bytes = shared_memory_allowance(p, "msm", d.smem_bytes, "depthwise_conv2d_nhwc");
  // (mwp 1, the ring default's: each band reads its B fragments as packed tap pairs, two 4-byte loads per tap row; 0
  // reads the taps, four 2-byte loads and four selects per tap row; s30)
  o.weight_pairs = harness::option_value(depthwise_conv2d_nhwc_options(), p, "mwp", d.weight_pairs ? 1 : 0,
                                         "depthwise_conv2d_nhwc") == 1;
  if (p.count("mwp") && o.bands < 2) {
    throw std::invalid_argument(
        "depthwise_conv2d_nhwc: mwp (how bands read the weights from shared memory) applies to 2 or more bands per "
        "work-group (mb); one band reads them from global memory: drop it or set mb");
  }
  // (mos 1: the output stage's words rotated per pixel, conflict-free stores; the ring default's, s32)
  o.rotated_stage = harness::option_value(depthwise_conv2d_nhwc_options(), p, "mos", d.rotated_stage ? 1 : 0,
                                          "depthwise_conv2d_nhwc") == 1;
  // (mwr 1: each warp's weights held in registers across the bands; refused without bands or with more tasks than
  // warps. The ring default's where it applies (step 33): below, where the case names no mwr and its other keys leave
  // it refused, it is dropped.)
  o.weights_in_registers = harness::option_value(depthwise_conv2d_nhwc_options(), p, "mwr",
                                                 d.weights_in_registers ? 1 : 0, "depthwise_conv2d_nhwc") == 1;
  if (o.weights_in_registers && !p.count("mwr")) {  // (the default's mwr, where the case's keys leave it refused)
    DepthwiseNhwcMma without = o;
    without.weights_in_registers = false;
    const std::size_t es = dtype_size(t);
    if (!depthwise_nhwc_mma_refusal(sp, es, o).empty() && depthwise_nhwc_mma_refusal(sp, es, without).empty()) {
      o = without;
    }
  }
  return o;
}

Params with(Params p, std::int64_t V, std::int64_t VC = 0, std::int64_t VH = 0) {
  p["V"] = V;
  if (VC) p["VC"] = VC;
  if (VH) p["VH"] = VH;
  return p;
}

}  // namespace

void register_depthwise_conv2d_nhwc(harness::Registry& r) {
  const ConvForm f{"depthwise_conv2d_nhwc", 2, ConvLayout::ChannelsLast, ConvChannels::Depthwise};
  const ConvCase k3{.B = 32, .C = 384, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}};
  const ConvCase k7{.B = 32, .C = 384, .size = {56, 56}, .k = {7, 7}, .pad = {3, 3}};
  harness::KernelSpec s = direct_conv_kernel(
      f,
      "depthwise 2-D convolution, NHWC: x[B,H,W,C] * w[C,kh,kw] (+bias[C]) -> y[B,P,Q,C]; stride, "
      "pad, dilation per axis; V outputs per thread along W, VC channels per thread",
      [] {
        auto cases = depthwise_conv2d_cases();
        // the 7x7 window of the NHWC bench case
        cases.push_back(
            {"7x7_pad3_bias", {.B = 1, .C = 4, .size = {16, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true}});
        return cases;
      }(),
      {{"N32_C384_56x56_3x3", k3}, {"N32_C384_56x56_7x7", k7}});
  for (const auto& o : depthwise_conv2d_nhwc_options()) s.add_option(o);

  // Cases for the tiling: Q not a multiple of V, C not a multiple of VC (narrower vectors or
  // scalars), strides, dilation, kh != kw, batches, bias, 7x7, a row of one thread group.
  auto tcase = [&](const std::string& name, const ConvCase& c, std::int64_t V, std::int64_t VC = 0,
                   std::int64_t VH = 0) {
    s.tests.push_back({name, with(conv_params(f, c), V, VC, VH)});
  };
  tcase("c16_9x11_3x3_pad1_bias_v4", {.B = 2, .C = 16, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true}, 4);
  tcase("c24_7x10_3x3_pad1_v3_vc8", {.B = 1, .C = 24, .size = {7, 10}, .k = {3, 3}, .pad = {1, 1}}, 3, 8);
  tcase("c12_8x9_3x3_pad1_v2", {.B = 2, .C = 12, .size = {8, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true}, 2);
  tcase("c6_kh3_kw5_s2x1_p1x2_v4",
        {.B = 2, .C = 6, .size = {11, 13}, .k = {3, 5}, .stride = {2, 1}, .pad = {1, 2}, .bias = true}, 4);
  tcase("c8_s2_pad1_v3", {.B = 1, .C = 8, .size = {13, 15}, .k = {3, 3}, .stride = {2, 2}, .pad = {1, 1}}, 3);
  tcase("c16_d2x3_p2x3_v4_vc4",
        {.B = 2, .C = 16, .size = {10, 13}, .k = {3, 3}, .pad = {2, 3}, .dil = {2, 3}, .bias = true}, 4, 4);
  tcase("c16_7x7_pad3_bias_v8_vc4", {.B = 1, .C = 16, .size = {12, 13}, .k = {7, 7}, .pad = {3, 3}, .bias = true}, 8,
        4);
  tcase("c8_7x7_pad3_v4_vc2", {.B = 2, .C = 8, .size = {9, 10}, .k = {7, 7}, .pad = {3, 3}}, 4, 2);
  tcase("c5_k2x4_s2_nopad_v2", {.B = 3, .C = 5, .size = {9, 12}, .k = {2, 4}, .stride = {2, 2}}, 2);
  tcase("c8_4x5_1x1_v8_onegroup", {.B = 2, .C = 8, .size = {4, 5}, .k = {1, 1}}, 8);
  tcase("c32_5x6_3x2_pad1_v1_vc1", {.B = 1, .C = 32, .size = {5, 6}, .k = {3, 2}, .pad = {1, 1}}, 1, 1);
  // Several output rows per thread: P not a multiple of VH, strides, dilation, 7x7, VH > P.
  tcase("c16_9x11_3x3_pad1_bias_v2_vh2", {.B = 2, .C = 16, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
        2, 4, 2);
  tcase("c8_10x7_3x3_pad1_v4_vc8_vh4", {.B = 3, .C = 8, .size = {10, 7}, .k = {3, 3}, .pad = {1, 1}}, 4, 8, 4);
  tcase("c6_kh3_kw5_s2x1_p1x2_v3_vh3",
        {.B = 2, .C = 6, .size = {13, 11}, .k = {3, 5}, .stride = {2, 1}, .pad = {1, 2}, .bias = true}, 3, 2, 3);
  tcase("c16_d2x3_p2x3_v2_vh5",
        {.B = 1, .C = 16, .size = {12, 13}, .k = {3, 3}, .pad = {2, 3}, .dil = {2, 3}, .bias = true}, 2, 4, 5);
  tcase("c8_7x7_pad3_v4_vc2_vh3", {.B = 2, .C = 8, .size = {11, 10}, .k = {7, 7}, .pad = {3, 3}}, 4, 2, 3);
  tcase("c4_5x6_3x3_s2_nopad_v1_vh16", {.B = 2, .C = 4, .size = {5, 6}, .k = {3, 3}, .stride = {2, 2}}, 1, 4, 16);
  // Each path of the row loop (rows preloaded or loaded under their branch) with both windows.
  {
    auto p = with(conv_params(f, {.B = 2, .C = 8, .size = {9, 10}, .k = {7, 7}, .pad = {3, 3}}), 4, 2, 2);
    p["preload"] = 1;
    s.tests.push_back({"c8_7x7_pad3_v4_vc2_vh2_preload", p});
    p = with(conv_params(f, {.B = 2, .C = 16, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true}), 4, 4, 3);
    p["preload"] = 0;
    s.tests.push_back({"c16_9x11_3x3_pad1_bias_v4_vh3_nopreload", p});
  }
  // Rows loaded 1 and 2 rows ahead of their arithmetic: partial row tiles, 7x7, bias.
  for (const auto& [name, c, ahead] : std::vector<std::tuple<std::string, ConvCase, int>>{
           {"c16_19x11_3x3_pad1_bias_v2_vh8_ahead1",
            {.B = 2, .C = 16, .size = {19, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            1},
           {"c8_13x10_7x7_pad3_v2_vh5_ahead2", {.B = 1, .C = 8, .size = {13, 10}, .k = {7, 7}, .pad = {3, 3}}, 2}}) {
    auto p = with(conv_params(f, c), 2, 2, c.k[0] == 3 ? 8 : 5);
    p["preload"] = 1;
    p["ahead"] = ahead;
    s.tests.push_back({name, p});
  }
  // Channel blocks: C/VC = 6 channel vectors in blocks of 2, of 1.
  {
    auto p =
        with(conv_params(f, {.B = 2, .C = 24, .size = {7, 10}, .k = {3, 3}, .pad = {1, 1}, .bias = true}), 3, 4, 2);
    p["CL"] = 4;  // largest power of two <= 4 dividing 6: 2
    s.tests.push_back({"c24_7x10_3x3_pad1_bias_v3_vc4_vh2_cl2", p});
    p = with(conv_params(f, {.B = 1, .C = 16, .size = {6, 9}, .k = {3, 3}, .pad = {1, 1}}), 2, 4, 1);
    p["CL"] = 1;
    s.tests.push_back({"c16_6x9_3x3_pad1_v2_vc4_cl1", p});
  }
  {
    auto p = with(conv_params(f, {.B = 2, .C = 12, .size = {7, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true}), 4, 4);
    p["minb"] = 6;  // launch_bounds(256, 6)
    s.tests.push_back({"c12_7x9_3x3_pad1_bias_minb6", p});
  }

  // we (the block's weights through shared memory with the ring's first row, the stream kernel's default where it fits)
  // named: 0 (the weights loaded from global memory by each thread) with bias, and with a 7x7 window (named, the 16-bit
  // 7x7 runs the stream kernel, not the tensor-core default); 1 with 256 channels (two blocks of the 16-bit default
  // tiling's 64 channel vectors: 1152 weights each).
  for (const auto& [name, value, c] : std::vector<std::tuple<std::string, int, ConvCase>>{
           {"we0_c16_9x11_3x3_pad1_bias",
            0,
            {.B = 2, .C = 16, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
           {"we0_c8_11x10_7x7_pad3", 0, {.B = 2, .C = 8, .size = {11, 10}, .k = {7, 7}, .pad = {3, 3}}},
           {"we_c256_13x9_3x3_pad1_bias",
            1,
            {.B = 1, .C = 256, .size = {13, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true}}}) {
    auto p = conv_params(f, c);
    p["we"] = value;
    s.tests.push_back({name, p});
  }

  // mma = 1 (tensor cores; f32 runs the default kernels): a partial last band (P = 13, 8 rows per work-group), Q over
  // 64 (two strips) with two channel blocks, 8 channels per work-group with Q odd and kh != kw, an 8-wide window, 1x1,
  // bias, several rounds of tasks per warp (the last clamped) with one pair at a time, more rows per work-group than P.
  for (const auto& [name, c, extra] : std::vector<std::tuple<std::string, ConvCase, Params>>{
           {"mma_c16_13x16_7x7_pad3_bias",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {}},
           {"mma_c32_9x70_3x3_pad1", {.B = 1, .C = 32, .size = {9, 70}, .k = {3, 3}, .pad = {1, 1}}, {}},
           {"mma_c8_9x17_5x4_pad2_mc8", {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}}, {}},
           {"mma_c16_6x11_2x8_pad0x4", {.B = 1, .C = 16, .size = {6, 11}, .k = {2, 8}, .pad = {0, 4}}, {}},
           {"mma_c16_4x5_1x1_b2", {.B = 2, .C = 16, .size = {4, 5}, .k = {1, 1}}, {}},
           {"mma_c16_12x20_7x7_pad3_b3_mr4_mw3_il1",
            {.B = 3, .C = 16, .size = {12, 20}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mw", 3}, {"il", 1}}},
           {"mma_c32_5x9_3x3_pad1_mr6_il3_mc8",
            {.B = 2, .C = 32, .size = {5, 9}, .k = {3, 3}, .pad = {1, 1}},
            {{"mr", 6}, {"il", 3}, {"mc", 8}}},
           // 6 x 9 pixels of 8 channels: 54 chunks of the stage, the last group of 8 partial and every row stored
           {"mma_c8_6x9_3x3_pad1_mr6", {.B = 1, .C = 8, .size = {6, 9}, .k = {3, 3}, .pad = {1, 1}}, {{"mr", 6}}},
           // The row loads: the old order (lq 0) with several rounds per warp, the last clamped; quads (lq 2) with 8
           // channels and Q odd.
           {"mma_c16_12x20_7x7_pad3_b3_mr4_mw3_il1_lq0",
            {.B = 3, .C = 16, .size = {12, 20}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mw", 3}, {"il", 1}, {"lq", 0}}},
           {"mma_c8_9x17_5x4_pad2_mc8_lq2", {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}}, {{"lq", 2}}},
           // Bands through a ring of plane rows (mb): 4 bands of 4 rows over P = 13 (the last band partial), bias,
           // 7x7, shared memory over 48 KB allowed (not taken here); 3 bands per work-group over 5 bands (the second
           // run's third band past P), two strips; 8 channels, Q odd, kh != kw, one band per run past the last.
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}}},
           {"mma_c32_9x70_3x3_pad1_mr2_mb3",
            {.B = 1, .C = 32, .size = {9, 70}, .k = {3, 3}, .pad = {1, 1}},
            {{"mr", 2}, {"mb", 3}}},
           {"mma_c8_9x17_5x4_pad2_mc8_mr4_mb2",
            {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}},
            {{"mr", 4}, {"mb", 2}}},
           // The weights as tap pairs (mwp 1): 7x7 with bias, the window's widths 8 and 1 (every lane's pairs past
           // both ends of the tap row).
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}, {"mwp", 1}}},
           {"mma_c16_10x13_3x8_pad1x4_mr2_mb3_mwp1",
            {.B = 1, .C = 16, .size = {10, 13}, .k = {3, 8}, .pad = {1, 4}, .bias = true},
            {{"mr", 2}, {"mb", 3}, {"mwp", 1}}},
           {"mma_c8_9x12_4x1_pad2x0_mc8_mr2_mb5_mwp1",
            {.B = 2, .C = 8, .size = {9, 12}, .k = {4, 1}, .pad = {2, 0}},
            {{"mr", 2}, {"mb", 5}, {"mwp", 1}}},
           // The output stage's words rotated (mos 1): one band per work-group, two strips (Q = 70) with bias; bands
           // with pairs and 8 channels (a chunk per pixel), Q odd.
           {"mma_c16_13x70_7x7_pad3_bias_mr4_mos1",
            {.B = 1, .C = 16, .size = {13, 70}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mos", 1}}},
           {"mma_c8_9x17_5x4_pad2_mc8_mr4_mb2_mwp1_mos1",
            {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}},
            {{"mr", 4}, {"mb", 2}, {"mwp", 1}, {"mos", 1}}},
           // Each warp's weights held in registers across the bands (mwr 1): 7x7 pairs with bias and the rotated
           // stage; the taps with 8 channels (4 warps), kh != kw.
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1_mos1_mwr1",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mwr", 1}}},
           {"mma_c8_9x17_5x4_pad2_mc8_mr4_mb2_mwr1",
            {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}},
            {{"mr", 4}, {"mb", 2}, {"mwr", 1}}},
           // 82 KB of shared memory: CUDA's dynamic shared memory (the printer's carve-outs, the runtime's opt-in)
           {"mma_c16_34x20_7x7_pad3_b2_mr16_mb2_msm96",
            {.B = 2, .C = 16, .size = {34, 20}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 16}, {"mb", 2}, {"msm", 96}}}}) {
    auto p = conv_params(f, c);
    p["mma"] = 1;
    for (const auto& [key, v] : extra) p[key] = v;
    s.tests.push_back({name, p});
  }
  // The 16-bit default for windows of 5 or more rows, as no key names it (the ring: bands of 4 rows, every band of the
  // image per work-group, tap pairs, rotated output stage); f32 runs the stream kernel.
  s.tests.push_back({"ring_c16_13x16_7x7_pad3_bias",
                     conv_params(f, {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true})});

  // Bench: the first two cases are the reference shapes with the defaults (the stream kernel for 3x3 and f32, the
  // tensor-core ring for 16-bit 7x7); the variants, the register kernel's tilings, let one GPU run compare
  // (docs/performance.md s4, s10).
  auto variant = [&](const ConvCase& c, const std::string& shape, int V, int VC, int VH, int preload) {
    auto p = with(conv_params(f, c), V, VC, VH);
    p["preload"] = preload;
    s.bench.push_back({"N32_C384_56x56_" + shape + "_v" + std::to_string(V) + "_vc" + std::to_string(VC) +
                           (VH > 1 ? "_vh" + std::to_string(VH) : "") + (preload ? "_pre" : "_nopre"),
                       p});
  };
  variant(k3, "3x3", 4, 4, 1, 0);
  variant(k3, "3x3", 4, 2, 1, 0);
  variant(k3, "3x3", 4, 2, 2, 1);  // the default of 28c8168
  variant(k3, "3x3", 2, 2, 4, 1);  // the register kernel's tile before s10
  variant(k7, "7x7", 4, 2, 1, 0);
  variant(k7, "7x7", 8, 2, 1, 0);  // the register kernel's default for wide windows
  // Tall tiles with rows loaded `ahead` rows ahead of their arithmetic.
  // (V, VC, VH, ahead, minb; 0: the default; V4 VC2 VH8 two ahead is the register kernel's default, s10.)
  for (const auto& [V, VC, VH, ahead, minb] : std::vector<std::array<int, 5>>{{4, 2, 8, 2, 0},
                                                                              {4, 2, 8, 1, 0},
                                                                              {4, 2, 8, 3, 0},
                                                                              {4, 2, 16, 2, 0},
                                                                              {4, 2, 16, 3, 0},
                                                                              {4, 2, 6, 2, 0},
                                                                              {4, 2, 7, 2, 0},
                                                                              {8, 2, 7, 2, 0},
                                                                              {8, 2, 8, 2, 0},
                                                                              {2, 2, 8, 2, 0},
                                                                              {2, 2, 8, 3, 0},
                                                                              {4, 2, 8, 2, 4},
                                                                              {4, 2, 12, 2, 0},
                                                                              {4, 2, 14, 2, 0},
                                                                              {4, 2, 8, 0, 0}}) {
    auto p = with(conv_params(f, k3), V, VC, VH);
    p["preload"] = 1;
    p["ahead"] = ahead;
    if (minb) p["minb"] = minb;
    s.bench.push_back({"N32_C384_56x56_3x3_v" + std::to_string(V) + "_vc" + std::to_string(VC) + "_vh" +
                           std::to_string(VH) + "_ahead" + std::to_string(ahead) +
                           (minb ? "_minb" + std::to_string(minb) : ""),
                       p});
  }

  // The 7x7 stream kernel (naming minb runs it in 16-bit too) with registers capped for 10 work-groups of 64 per SM (96
  // registers against 128, 40 bytes spilled): within run-to-run spread of the uncapped kernel.
  {
    auto p = conv_params(f, k7);
    p["minb"] = 10;
    s.bench.push_back({"N32_C384_56x56_7x7_minb10", p});
  }

  // Bench rows of one kernel (kernel_key = 1) with the keys of each row, named N32_C384_56x56_<shape>_<kernel_key>_<key
  // value>...
  using KeyedRow = std::tuple<ConvCase, std::string, std::vector<std::pair<const char*, int>>>;
  const auto keyed_rows = [&](const char* kernel_key, const std::vector<KeyedRow>& rows) {
    for (const auto& [c, shape, keys] : rows) {
      auto p = conv_params(f, c);
      p[kernel_key] = 1;
      std::string name = "N32_C384_56x56_" + shape + "_" + kernel_key;
      for (const auto& [key, v] : keys) {
        p[key] = v;
        name += std::string("_") + key + std::to_string(v);
      }
      s.bench.push_back({name, p});
    }
  };
  // mma = 1 (tensor cores, row-pair tiles on transposed planes): one band per work-group costs the transposition and
  // the output stage more than the FMAs they replace (docs/performance.md s18); bands through a ring of plane rows
  // (mb, msm) make it the 16-bit default for windows of 5 or more rows (mr 4 with every band, s21); the row loads in
  // A's order (lq 1, the default; lq 0 the order before).
  keyed_rows("mma", {{k7, "7x7", {}},
                     {k7, "7x7", {{"lq", 0}}},
                     {k7, "7x7", {{"mr", 8}, {"mb", 7}, {"msm", 112}}},
                     {k7, "7x7", {{"mr", 8}, {"mb", 4}, {"msm", 112}}},
                     {k7, "7x7", {{"mr", 16}, {"mb", 4}, {"msm", 200}}},
                     {k7, "7x7", {{"mr", 6}, {"mb", 10}, {"msm", 112}}},
                     {k7, "7x7", {{"mr", 4}, {"mb", 14}}},
                     {k7, "7x7", {{"mr", 4}, {"mb", 7}}},
                     {k7, "7x7", {{"mr", 4}, {"mb", 14}, {"il", 1}}},
                     {k7, "7x7", {{"mr", 4}, {"mb", 14}, {"minb", 3}}},
                     {k7, "7x7", {{"mr", 4}, {"mb", 14}, {"il", 1}, {"minb", 3}}},
                     {k3, "3x3", {{"mr", 4}, {"mb", 14}}},
                     {k7, "7x7", {{"mr", 4}, {"mb", 14}, {"msm", 112}}},
                     {k3, "3x3", {}},
                     {k3, "3x3", {{"mr", 8}, {"mb", 7}, {"msm", 112}}}});

  // Batch probes: the 3x3 default at other batch sizes (N1 and N4: inference). The time grows linearly with the batch
  // whatever the waves: the last wave's fill is not the gap (docs/performance.md s15).
  for (const int n : {1, 4, 28, 36}) {
    ConvCase c = k3;
    c.B = n;
    s.bench.push_back({"N" + std::to_string(n) + "_C384_56x56_3x3", conv_params(f, c)});
  }

  s.build = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    sp.check_batch(static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)));
    const bool mma = uses_mma(t, sp, p);
    return trace_typed(t, f.name, p, [&](auto tag, KernelBuilder& k) {
      using T = typename decltype(tag)::type;
      if constexpr (sizeof(T) == 2) {
        if (mma) {
          const DepthwiseNhwcMma o = mma_of(t, sp, p);  // (the kernel refuses what it does not take, with the reason)
          const std::uint32_t G = depthwise_nhwc_mma_geometry(sp, sizeof(T), o).G();
          // The ring default as it is (no tensor-core key named but mwp, mos, mwr) with its weights as tap
          // pairs (mwp 1) is held to 64 registers (launch bounds of 65536 / (64 G) work-groups: 4 of 256 threads per
          // SM, 4 x 40 KB of shared memory), the count the taps gave it without bounds (the pairs fit it without
          // spills); with its weights in registers (mwr 1) to 80: 3 work-groups per SM (at 64 it spills; s33).
          Params bounds = p;
          bool as_default = mma_by_default(t, sp, p) && o.weight_pairs;
          for (const char* key : kMmaKernelKeys) {
            const std::string_view named(key);
            as_default = as_default && (named == "mwp" || named == "mos" || named == "mwr" || p.count(key) == 0);
          }
          const std::uint32_t regs = o.weights_in_registers ? 80 : 64;
          if (as_default) bounds["minb"] = std::max<std::uint32_t>(65536 / (regs * G), 1);
          apply_launch_bounds(k, bounds, G, true);
          depthwise_conv2d_nhwc_mma<T>(k, sp, o);
          return;
        }
      }
      if (streams(t, sp, p)) {
        const DepthwiseNhwcStream st = stream_of(t, sp, p);
        apply_launch_bounds(k, p, depthwise_nhwc_stream_group(sp, st, sizeof(T)), true);
        depthwise_conv2d_nhwc_stream<T>(k, sp, st);
        return;
      }
      apply_launch_bounds(k, p, 256);
      depthwise_conv2d_nhwc<T>(k, sp, tiling_of(p));
    });
  };
  s.geometry = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    const auto B = static_cast<std::uint64_t>(param(p, "B"));
    if (uses_mma(t, sp, p)) {
      const NhwcMmaLayout L = depthwise_nhwc_mma_geometry(sp, dtype_size(t), mma_of(t, sp, p));
      return runtime::grid_1d(depthwise_nhwc_mma_groups(L, B) * L.G(), L.G());
    }
    if (streams(t, sp, p)) {
      const DepthwiseNhwcStream st = stream_of(t, sp, p);
      const auto es = static_cast<std::uint32_t>(dtype_size(t));
      const std::uint32_t G = depthwise_nhwc_stream_group(sp, st, es);
      return runtime::grid_1d(depthwise_nhwc_stream_groups(sp, st, es, B) * G, G);
    }
    return runtime::grid_1d(
        static_cast<std::uint64_t>(param(p, "B")) * depthwise_nhwc_threads_per_batch(sp, tiling_of(p)), 256);
  };
  route_wide_windows(s, f);  // (a large dilation: the direct kernel)
  r.add(std::move(s));
}

}  // namespace ingot::kernels
