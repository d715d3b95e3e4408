// depthwise_conv2d_nhwc: depthwise 2-D convolution, NHWC in and out, weight [C, kh, kw],
// optional bias; kh != kw allowed; stride, padding and dilation per axis. FMA kernels: the
// shared-ring kernel of depthwise_conv2d_nhwc_stream.hpp (stream = 1; V, VC, CL, NQ, PB, ahead), the
// default where it applies, and the register kernel of depthwise_conv2d_nhwc.hpp (stream = 0, or a
// case naming V, VC, VH, preload, ahead or CL without stream; V outputs along W x VC channels x VH
// rows per thread). Tensor-core kernels (16-bit): channel planes with row pairs
// (depthwise_conv2d_nhwc_mma.hpp, mma = 1; the default for windows of 5 or more rows) and pixels along M with
// channels along N (depthwise_conv2d_nhwc_pix.hpp, px = 1). The parameters, oracle, inputs, tolerances and bench
// arithmetic are the direct convolutions' (direct_conv_registry.hpp).
#include "depthwise_conv2d_nhwc.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "depthwise_conv2d.hpp"
#include "depthwise_conv2d_nhwc_mma.hpp"
#include "depthwise_conv2d_nhwc_pix.hpp"
#include "depthwise_conv2d_nhwc_stream.hpp"
#include "register.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;

// The tiling of a case: V, VC and VH in [1, 16], preload 0 or 1, CL in [0, 65536], ahead in [0, 32]; absent keys
// take the defaults for the window width (depthwise_nhwc_default_tiling).
DepthwiseNhwcTiling tiling_of(const Params& p) {
  const DepthwiseNhwcTiling d = depthwise_nhwc_default_tiling(static_cast<std::uint32_t>(param(p, "kw")));
  auto get = [&](const char* key, std::uint32_t dflt) {
    return bounded_param(p, key, 1, 16, dflt, "depthwise_conv2d_nhwc");
  };
  const bool preload = bounded_param(p, "preload", 0, 1, d.preload ? 1 : 0, "depthwise_conv2d_nhwc") == 1;
  return {get("V", d.V),
          get("VC", d.VC),
          get("VH", d.VH),
          preload,
          bounded_param(p, "CL", 0, 1 << 16, d.CL, "depthwise_conv2d_nhwc"),
          bounded_param(p, "ahead", 0, 32, d.ahead, "depthwise_conv2d_nhwc")};
}

// stream = 1: the shared-ring kernel (depthwise_conv2d_nhwc_stream.hpp) with V, VC, CL, NQ, PB and ahead (absent keys:
// depthwise_nhwc_stream_default); VH and preload do not apply to it. Without a stream key, a case that names none of
// the tiling keys runs the stream kernel's default where it applies (depthwise_nhwc_stream_refusal empty), and the
// register kernel otherwise or when it names one (V, VC, VH, preload, CL, ahead).
DepthwiseNhwcStream stream_of(DType t, const ConvSpec& sp, const Params& p) {
  const DepthwiseNhwcStream d = depthwise_nhwc_stream_default(sp.ksize[1], dtype_size(t));
  for (const char* key : {"VH", "preload"}) {
    if (p.count(key)) {
      throw std::invalid_argument(std::string("depthwise_conv2d_nhwc: ") + key +
                                  " does not apply to stream = 1 (its rows per thread are PB); drop it");
    }
  }
  auto get = [&](const char* key, std::int64_t lo, std::int64_t hi, std::uint32_t dflt) {
    return bounded_param(p, key, lo, hi, dflt, "depthwise_conv2d_nhwc");
  };
  DepthwiseNhwcStream st{get("V", 1, 16, d.V),   get("VC", 1, 16, d.VC), get("CL", 0, 1024, d.CL),
                         get("NQ", 1, 32, d.NQ), get("PB", 1, 16, d.PB), get("ahead", 1, 8, d.ahead),
                         get("pf", 0, 1, d.pf),  get("we", 0, 1, d.we)};
  // we: the block's weights through shared memory, the default wherever the tiling takes it (H100, 2026-12-06
  // thirty-eighth session, N32 C384 56x56: 3x3 bf16 0.0564 ms against 0.0569-0.0570, f16 0.0564-0.0565 against 0.0568,
  // f32 0.1091-0.1093 against 0.1116-0.1118; 7x7 f32 0.1314-0.1316 against 0.1366-0.1367).
  if (!p.count("we")) {
    st.we = 1;
    if (!depthwise_nhwc_stream_refusal(sp, st, static_cast<std::uint32_t>(dtype_size(t))).empty()) st.we = 0;
  }
  return st;
}
bool streams(DType t, const ConvSpec& sp, const Params& p) {
  const bool asked = p.count("stream") > 0;
  if (asked && bounded_param(p, "stream", 0, 1, 0, "depthwise_conv2d_nhwc") == 1) return true;
  for (const char* key : {"NQ", "PB", "pf", "we"}) {
    if (p.count(key)) {
      throw std::invalid_argument(std::string("depthwise_conv2d_nhwc: ") + key +
                                  " applies to the stream kernel: set stream = 1 (or drop it)");
    }
  }
  if (asked) return false;
  for (const char* key : {"V", "VC", "VH", "preload", "CL", "ahead"}) {
    if (p.count(key)) return false;
  }
  return depthwise_nhwc_stream_refusal(sp, stream_of(t, sp, p), static_cast<std::uint32_t>(dtype_size(t))).empty();
}

// The keys of the FMA kernels (register and stream), which the tensor-core kernel refuses.
constexpr std::array<const char*, 11> kFmaKernelKeys{"V",      "VC", "VH", "preload", "CL", "ahead",
                                                     "stream", "NQ", "PB", "pf",      "we"};
// The tensor-core kernel's keys (mma itself first), which the other kernels refuse.
constexpr std::array<const char*, 17> kMmaKernelKeys{"mma", "mr",  "mc",  "mw",  "il",  "lq",  "mb",  "msm", "mpf",
                                                     "mwp", "mos", "msw", "mwr", "mrf", "mcg", "mtc", "mop"};

// The tensor-core kernel's options where a case names no mma key: a ring of plane rows walked by each work-group over
// the whole image in bands of 4 output rows, the weights as tap pairs (40 KB of shared memory for 7x7 and 16 channels).
DepthwiseNhwcMma mma_ring_default(const ConvSpec& sp) {
  DepthwiseNhwcMma o;
  o.rows = 4;
  // (clamped to the image's bands: one run per image column. H200 7x7 bf16, 2026-12-05 step 31: 768 work-groups, 1.45
  // waves, 0.0830 ms; shorter runs fill the device better and run slower: mb 7 / 5 / 4 (2.9 / 4.4 / 5.8 waves) 0.0867
  // / 0.0950 / 0.1017, each run paying its first band's synchronous fill and halo again)
  o.bands = 64;
  o.channels = sp.in_channels % 16 == 0 ? 16 : 8;
  o.weight_pairs = true;  // (mwp 1: the weights as packed tap pairs; H200 7x7 bf16 0.0830 ms against 0.0932, step 30)
  // (mos 1: the output stage's words rotated, its stores conflict-free; with the output stage's rows 64 pixels apart
  // (2026-12-05) the rotation costs no instruction per store. H100 7x7 bf16, 2026-12-05 step 32, three calls:
  // 0.0773-0.0779 ms against 0.0828-0.0839 for the old stage. The NHWC stage's swizzle (msw 1) alone 0.0802-0.0806,
  // with mos 0.0828-0.0840, slower than either alone in every call: not taken.)
  o.rotated_stage = true;
  // (mwr 1: each warp's weights held in registers across the bands, 3 work-groups of 80 registers per SM, where each
  // warp has one task and the image more than one band. H200 7x7 bf16, 2026-12-05 step 33: 0.0686 ms against 0.0753
  // (f16 0.0683 / 0.0752); H100 0.0755 against 0.0774. With 4 work-groups it spills: 0.0870.)
  o.weights_in_registers = true;
  if (!depthwise_nhwc_mma_refusal(sp, 2, o).empty()) o.weights_in_registers = false;
  return o;
}

// Whether a case that names no kernel runs the tensor-core kernel: 16-bit, a window of 5 or more rows, and the ring
// default applies (H200, 2026-12-04 nineteenth session: 7x7 bf16 0.1037 ms, f16 0.1041, against the stream kernel's
// 0.1122 and 0.1135; 3x3 stays on the stream kernel, 0.0432 against 0.0754).
bool mma_by_default(DType t, const ConvSpec& sp, const Params& p) {
  if (dtype_size(t) != 2 || sp.ksize[0] < 5 || p.count("mma") || p.count("minb") || p.count("px")) return false;
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
  const bool asked = bounded_param(p, "mma", 0, 1, 0, "depthwise_conv2d_nhwc") == 1;
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
  const std::uint32_t rows = bounded_param(p, "mr", 2, 64, d.rows, "depthwise_conv2d_nhwc");
  DepthwiseNhwcMma o;
  o.rows = rows;
  o.channels = bounded_param(p, "mc", 8, 16, mc_default, "depthwise_conv2d_nhwc");
  o.warps = bounded_param(p, "mw", 1, 32, d.warps, "depthwise_conv2d_nhwc");
  o.il = bounded_param(p, "il", 1, 32, std::min(d.il, rows / 2), "depthwise_conv2d_nhwc");
  o.loads = static_cast<RowPairLoads>(
      bounded_param(p, "lq", 0, 2, static_cast<std::uint32_t>(d.loads), "depthwise_conv2d_nhwc"));
  o.bands = bounded_param(p, "mb", 1, 64, d.bands, "depthwise_conv2d_nhwc");
  o.smem_bytes = shared_memory_allowance(p, "msm", d.smem_bytes, "depthwise_conv2d_nhwc");
  // (Off by default: the next band's rows are copied while a band multiplies; mpf 1 asks for the band after it too.
  // H200 7x7 bf16, 2026-12-05: 0.1196 ms against 0.0933 without, docs/performance.md step 26.)
  o.prefetch = bounded_param(p, "mpf", 0, 1, 0, "depthwise_conv2d_nhwc") == 1;
  if (o.prefetch && o.bands < 3) {
    throw std::invalid_argument(
        "depthwise_conv2d_nhwc: mpf (L2 prefetch of the band after next) needs 3 or more bands "
        "per work-group (mb), has " +
        std::to_string(o.bands));
  }
  // (mwp 1, the ring default's: each band reads its B fragments as packed tap pairs, two 4-byte loads per tap row; 0
  // reads the taps, four 2-byte loads and four selects per tap row: H200 7x7 bf16 0.0830 ms against 0.0932, step 30.)
  o.weight_pairs = bounded_param(p, "mwp", 0, 1, d.weight_pairs ? 1 : 0, "depthwise_conv2d_nhwc") == 1;
  if (p.count("mwp") && o.bands < 2) {
    throw std::invalid_argument(
        "depthwise_conv2d_nhwc: mwp (how bands read the weights from shared memory) applies to 2 or more bands per "
        "work-group (mb); one band reads them from global memory: drop it or set mb");
  }
  // (mos 1: the output stage's words rotated per pixel, conflict-free stores; the ring default's since step 32, within
  // noise at step 30, when each store computed its rotation.)
  o.rotated_stage = bounded_param(p, "mos", 0, 1, d.rotated_stage ? 1 : 0, "depthwise_conv2d_nhwc") == 1;
  // (msw 1: the NHWC stage of bands swizzled, the transposition's reads conflict-free; off by default: H100 7x7 bf16,
  // step 32, 0.0802-0.0806 ms alone against 0.0830, but 0.0828-0.0843 with mos 1 against mos 1's 0.0773-0.0779.)
  o.stage_swizzle = bounded_param(p, "msw", 0, 1, d.stage_swizzle ? 1 : 0, "depthwise_conv2d_nhwc") == 1;
  // (mwr 1: each warp's weights held in registers across the bands; refused without bands or with more tasks than
  // warps. The ring default's where it applies (step 33): below, where the case names no mwr and its other keys leave
  // it refused, it is dropped.)
  o.weights_in_registers = bounded_param(p, "mwr", 0, 1, d.weights_in_registers ? 1 : 0, "depthwise_conv2d_nhwc") == 1;
  // (mrf 1 / 2: later bands' rows through registers into the ring, no NHWC stage, stored after / amid the products;
  // refused without bands or with msw; 2 also where the ring does not hold the next band's rows. 1 measured slower,
  // step 33.)
  o.register_fill = bounded_param(p, "mrf", 0, 2, d.register_fill, "depthwise_conv2d_nhwc");
  // (mcg 1 / 2: mrf's loads streamed, coherent through L2, so that ptxas keeps them on their side of the barriers;
  // issued after / before the band's first barrier; step 34.)
  o.streamed_fill = bounded_param(p, "mcg", 0, 2, d.streamed_fill, "depthwise_conv2d_nhwc");
  // (mop 1: the odd tap rows into odd output-row pairs, no register moves for their A; odd windows only; step 34.)
  o.odd_pairs = bounded_param(p, "mop", 0, 1, d.odd_pairs ? 1 : 0, "depthwise_conv2d_nhwc") == 1;
  // (mtc 1: each thread copies the NHWC stage's chunks it transposes, one barrier less per band. H100 step 33: within
  // 1% of the default; off.)
  o.own_copies = bounded_param(p, "mtc", 0, 1, d.own_copies ? 1 : 0, "depthwise_conv2d_nhwc") == 1;
  if (p.count("msw") && o.bands < 2) {
    throw std::invalid_argument(
        "depthwise_conv2d_nhwc: msw (the swizzle of the bands' NHWC stage) applies to 2 or more bands per work-group "
        "(mb); one band has no such stage: drop it or set mb");
  }
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

// px = 1: the pixel tensor-core kernel (depthwise_conv2d_nhwc_pix.hpp; f16/bf16, f32 runs the other kernels) with pr
// (output rows per work-group, default 8), ps (16-column segments, default 1), pc (channels, default 64), pw (warps,
// default 4), pa (row pairs in flight, default 0: the whole band first) and pm (KB of shared memory allowed, default
// 48). Its keys are refused without it, the other kernels' keys with it (minb applies to every kernel).
bool uses_pix(DType t, const Params& p) {
  const bool asked = bounded_param(p, "px", 0, 1, 0, "depthwise_conv2d_nhwc") == 1;
  if (!asked) {
    for (const char* key : {"pr", "ps", "pc", "pw", "pa", "pm"}) {
      if (p.count(key)) {
        throw std::invalid_argument(std::string("depthwise_conv2d_nhwc: ") + key +
                                    " applies to the pixel tensor-core kernel: set px = 1 (or drop it)");
      }
    }
    return false;
  }
  for (const auto& keys : {std::vector<const char*>(kFmaKernelKeys.begin(), kFmaKernelKeys.end()),
                           std::vector<const char*>(kMmaKernelKeys.begin(), kMmaKernelKeys.end())}) {
    for (const char* key : keys) {
      if (p.count(key)) {
        throw std::invalid_argument(
            std::string("depthwise_conv2d_nhwc: ") + key +
            " does not apply to px = 1 (the pixel tensor-core kernel: pr, ps, pc, pw, pa, pm); drop it");
      }
    }
  }
  return dtype_size(t) == 2;
}
DepthwiseNhwcPix pix_of(const Params& p) {
  const DepthwiseNhwcPix d;
  return {bounded_param(p, "pr", 2, 32, d.rows, "depthwise_conv2d_nhwc"),
          bounded_param(p, "ps", 1, 8, d.segs, "depthwise_conv2d_nhwc"),
          bounded_param(p, "pc", 8, 512, d.channels, "depthwise_conv2d_nhwc"),
          bounded_param(p, "pw", 1, 32, d.warps, "depthwise_conv2d_nhwc"),
          bounded_param(p, "pa", 0, 7, d.ahead, "depthwise_conv2d_nhwc"),
          shared_memory_allowance(p, "pm", d.smem_bytes, "depthwise_conv2d_nhwc")};
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
  s.spec_params.emplace_back("V");
  s.spec_params.emplace_back("VC");
  s.spec_params.emplace_back("VH");
  s.spec_params.emplace_back("preload");  // 1: every input row loaded before the arithmetic
  s.spec_params.emplace_back("ahead");    // preload: rows loaded this far ahead of their arithmetic (0: all first)
  s.spec_params.emplace_back("CL");       // channel vectors per pixel of consecutive threads
  s.spec_params.emplace_back("minb");     // launch bounds (register.hpp, apply_launch_bounds)
  s.spec_params.emplace_back("stream");   // 1: rows through a shared ring by asynchronous copies
  s.spec_params.emplace_back("NQ");       // stream: column groups per work-group
  s.spec_params.emplace_back("PB");       // stream: output rows per work-group
  s.spec_params.emplace_back("pf");       // stream: 1 = the band's later rows prefetched into L2 at the start
  s.spec_params.emplace_back("we");       // stream: 1 = the block's weights copied to shared memory with row 0
  s.spec_params.emplace_back("mma");      // 1: tensor cores (f16/bf16; f32 runs the other kernels)
  s.spec_params.emplace_back("mr");       // tensor cores: output rows per work-group (even)
  s.spec_params.emplace_back("mc");       // tensor cores: channels per work-group (8 or 16)
  s.spec_params.emplace_back("mw");       // tensor cores: warps per work-group
  s.spec_params.emplace_back("il");       // tensor cores: row pairs whose mma chains run side by side
  s.spec_params.emplace_back("lq");       // tensor cores: row loads (0 pairs, 1 pairs in A's order, 2 quads)
  s.spec_params.emplace_back("mb");       // tensor cores: bands per work-group (> 1: a ring of plane rows)
  s.spec_params.emplace_back("msm");      // tensor cores: shared memory allowed, KB (default 48; CUDA: dynamic above)
  s.spec_params.emplace_back("mpf");      // tensor cores with bands: 1 = L2 prefetch of the band after next
  s.spec_params.emplace_back("mwp");      // tensor cores with bands: 1 = weights as packed tap pairs (0, default: taps)
  s.spec_params.emplace_back("mos");      // tensor cores: 1 = the output stage's words rotated per pixel
  s.spec_params.emplace_back("msw");      // tensor cores with bands: 1 = the NHWC stage's chunks swizzled
  s.spec_params.emplace_back("mwr");      // tensor cores with bands: 1 = each warp's weights held in registers
  s.spec_params.emplace_back("mrf");      // tensor cores with bands: 1 = later bands' rows through registers
  s.spec_params.emplace_back("mcg");      // tensor cores with mrf: 1 / 2 = its loads streamed, after / before a barrier
  s.spec_params.emplace_back("mtc");      // tensor cores with bands: 1 = each thread copies the chunks it transposes
  s.spec_params.emplace_back("mop");      // tensor cores: 1 = odd tap rows into odd output-row pairs (odd kh)
  s.spec_params.emplace_back("px");       // 1: pixel tensor cores (pixels along M, channels along N; f16/bf16)
  s.spec_params.emplace_back("pr");       // pixel tensor cores: output rows per work-group (even)
  s.spec_params.emplace_back("ps");       // pixel tensor cores: 16-column segments per work-group
  s.spec_params.emplace_back("pc");       // pixel tensor cores: channels per work-group (multiple of 8)
  s.spec_params.emplace_back("pw");       // pixel tensor cores: warps per work-group
  s.spec_params.emplace_back("pa");       // pixel tensor cores: row pairs in flight (0: the whole band first)
  s.spec_params.emplace_back("pm");       // pixel tensor cores: shared memory allowed, KB (default 48)

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

  // stream = 1 (rows through a shared ring): tails of strips and bands, strides, dilation, kh != kw, 7x7, bias,
  // batches, one row per band, one column group per work-group, rows 1-3 ahead, every channel in one block, 16-byte
  // reads of VC = 8, a narrow block (C = 6: CL = 1, 2 channels), 1x1.
  for (const auto& [name, c, tl] : std::vector<std::tuple<std::string, ConvCase, std::array<int, 6>>>{
           {"stream_c16_9x11_3x3_pad1_bias",
            {.B = 2, .C = 16, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {4, 2, 4, 2, 4, 2}},
           {"stream_c6_kh3_kw5_s2x1_p1x2",
            {.B = 2, .C = 6, .size = {11, 13}, .k = {3, 5}, .stride = {2, 1}, .pad = {1, 2}, .bias = true},
            {3, 2, 4, 2, 3, 1}},
           {"stream_c16_d2x3_p2x3_vc4",
            {.B = 1, .C = 16, .size = {12, 13}, .k = {3, 3}, .pad = {2, 3}, .dil = {2, 3}, .bias = true},
            {2, 4, 2, 3, 5, 3}},
           {"stream_c8_7x7_pad3", {.B = 2, .C = 8, .size = {11, 10}, .k = {7, 7}, .pad = {3, 3}}, {4, 2, 4, 1, 3, 2}},
           {"stream_c24_7x10_3x3_pad1_vc8_pb1",
            {.B = 3, .C = 24, .size = {7, 10}, .k = {3, 3}, .pad = {1, 1}},
            {2, 8, 4, 2, 1, 1}},
           {"stream_c32_10x9_3x3_pad1_all_channels",
            {.B = 1, .C = 32, .size = {10, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {4, 2, 0, 1, 16, 2}},
           {"stream_c8_5x12_3x3_s2_nopad",
            {.B = 2, .C = 8, .size = {5, 12}, .k = {3, 3}, .stride = {2, 2}},
            {2, 2, 2, 2, 2, 2}},
           {"stream_c4_6x7_1x1", {.B = 2, .C = 4, .size = {6, 7}, .k = {1, 1}}, {4, 2, 2, 1, 4, 1}}}) {
    auto p = conv_params(f, c);
    p["stream"] = 1;
    for (std::size_t i = 0; i < tl.size(); ++i)
      p[std::array<const char*, 6>{"V", "VC", "CL", "NQ", "PB", "ahead"}[i]] = tl[i];
    s.tests.push_back({name, p});
  }
  // One stream-kernel option set with a tiling (V, VC, CL, NQ, PB, ahead):
  // - pf (the band's later rows prefetched into L2): padding rows and columns outside the input skipped, partial bands
  //   and strips, a last round of items shorter than the work-group;
  // - we (the block's weights copied into shared memory with row 0; the default, named here with tilings that take
  //   it): four channel blocks of 36 weights with bias (8-byte copies in 16-bit, 16-byte in f32), a strided 3x5 window
  //   with C = 6 (three blocks of 30: 4-byte copies in 16-bit), 7x7 with VC 4 (one block of 392), the 16-bit default
  //   tiling (64 channel vectors, 6 rows, three ahead) with 256 channels (two blocks of 1152); we = 0 (the weights
  //   loaded from global memory by each thread) with bias and 7x7.
  for (const auto& [name, key, value, c, tl] :
       std::vector<std::tuple<std::string, const char*, int, ConvCase, std::array<int, 6>>>{
           {"stream_pf_c16_9x11_3x3_pad1_bias",
            "pf",
            1,
            {.B = 2, .C = 16, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {4, 2, 4, 2, 4, 2}},
           {"stream_pf_c8_11x10_7x7_pad3",
            "pf",
            1,
            {.B = 2, .C = 8, .size = {11, 10}, .k = {7, 7}, .pad = {3, 3}},
            {4, 2, 4, 1, 3, 1}},
           {"stream_we_c16_9x11_3x3_pad1_bias",
            "we",
            1,
            {.B = 2, .C = 16, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {4, 2, 2, 2, 4, 2}},
           {"stream_we_c6_kh3_kw5_s2x1_p1x2",
            "we",
            1,
            {.B = 2, .C = 6, .size = {11, 13}, .k = {3, 5}, .stride = {2, 1}, .pad = {1, 2}},
            {3, 2, 4, 2, 3, 1}},
           {"stream_we_c8_11x10_7x7_pad3_vc4",
            "we",
            1,
            {.B = 1, .C = 8, .size = {11, 10}, .k = {7, 7}, .pad = {3, 3}},
            {4, 4, 2, 1, 3, 2}},
           {"stream_we_c256_13x9_3x3_pad1_default_tiling",
            "we",
            1,
            {.B = 1, .C = 256, .size = {13, 9}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {4, 2, 64, 1, 6, 3}},
           {"stream_we0_c16_9x11_3x3_pad1_bias",
            "we",
            0,
            {.B = 2, .C = 16, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {4, 2, 2, 2, 4, 2}},
           {"stream_we0_c8_11x10_7x7_pad3",
            "we",
            0,
            {.B = 2, .C = 8, .size = {11, 10}, .k = {7, 7}, .pad = {3, 3}},
            {4, 2, 4, 1, 3, 1}}}) {
    auto p = conv_params(f, c);
    p["stream"] = 1;
    p[key] = value;
    for (std::size_t i = 0; i < tl.size(); ++i)
      p[std::array<const char*, 6>{"V", "VC", "CL", "NQ", "PB", "ahead"}[i]] = tl[i];
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
           // The odd tap rows into odd output-row pairs (mop): the ring default's keys with bias; one pair at a time
           // (each group's last odd pair carried into the next) over 3 rounds; three pairs side by side, 8 channels;
           // two groups of two pairs with quads, 5x5; 1x1 (no odd tap row).
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1_mos1_mwr1_mop1",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"mwp", 1}, {"mos", 1}, {"mwr", 1}, {"mop", 1}}},
           {"mma_c16_12x20_7x7_pad3_b3_mr4_mw3_il1_mop1",
            {.B = 3, .C = 16, .size = {12, 20}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mw", 3}, {"il", 1}, {"mop", 1}}},
           {"mma_c32_5x9_3x3_pad1_mr6_il3_mc8_mop1",
            {.B = 2, .C = 32, .size = {5, 9}, .k = {3, 3}, .pad = {1, 1}},
            {{"mr", 6}, {"il", 3}, {"mc", 8}, {"mop", 1}}},
           {"mma_c16_11x18_5x5_pad2_mr8_il2_lq2_mop1",
            {.B = 2, .C = 16, .size = {11, 18}, .k = {5, 5}, .pad = {2, 2}, .bias = true},
            {{"mr", 8}, {"il", 2}, {"lq", 2}, {"mop", 1}}},
           {"mma_c16_4x5_1x1_b2_mop1", {.B = 2, .C = 16, .size = {4, 5}, .k = {1, 1}}, {{"mop", 1}}},
           // Bands through a ring of plane rows (mb): 4 bands of 4 rows over P = 13 (the last band partial), bias,
           // 7x7, shared memory over 48 KB allowed (not taken here); 3 bands per work-group over 5 bands (the second
           // run's third band past P), two strips; 8 channels, Q odd, kh != kw, one band per run past the last.
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}}},
           {"mma_c32_9x70_3x3_pad1_mr2_mb3",
            {.B = 1, .C = 32, .size = {9, 70}, .k = {3, 3}, .pad = {1, 1}},
            {{"mr", 2}, {"mb", 3}}},
           // the band after next prefetched into L2 (mpf): rows above and below the input skipped, a partial last run
           {"mma_c16_11x18_5x5_pad2_b2_mr2_mb4_mpf",
            {.B = 2, .C = 16, .size = {11, 18}, .k = {5, 5}, .pad = {2, 2}},
            {{"mr", 2}, {"mb", 4}, {"mpf", 1}}},
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
           // The bands' NHWC stage swizzled (msw 1): 8 channels (bit 0 of the chunk flips), Q odd; two strips (Q =
           // 70: the output stage's rows 128 pixels apart) with the rotated words, 16 channels (bit 1 flips).
           {"mma_c8_9x17_5x4_pad2_mc8_mr4_mb2_msw1",
            {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}},
            {{"mr", 4}, {"mb", 2}, {"msw", 1}}},
           {"mma_c32_9x70_3x3_pad1_mr2_mb3_mos1_msw1",
            {.B = 1, .C = 32, .size = {9, 70}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"mr", 2}, {"mb", 3}, {"mos", 1}, {"msw", 1}}},
           // Each warp's weights held in registers across the bands (mwr 1): 7x7 pairs with bias and the rotated
           // stage; the taps with 8 channels (4 warps), kh != kw.
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1_mos1_mwr1",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mwr", 1}}},
           {"mma_c8_9x17_5x4_pad2_mc8_mr4_mb2_mwr1",
            {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}},
            {{"mr", 4}, {"mb", 2}, {"mwr", 1}}},
           // Later bands' rows through registers (mrf 1): the 7x7 ring default's keys with bias and the weights held
           // (ring rows past the first fill get their zero border once); 8 channels, the taps, kh != kw; two strips
           // (Q = 70) whose new rows take two rounds of 256 threads, the second partial.
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1_mos1_mwr1_mrf1",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mwr", 1}, {"mrf", 1}}},
           {"mma_c8_9x17_5x4_pad2_mc8_mr4_mb2_mrf1",
            {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}},
            {{"mr", 4}, {"mb", 2}, {"mrf", 1}}},
           {"mma_c16_13x70_7x7_pad3_mr4_mb3_mwp1_mos1_mrf1",
            {.B = 1, .C = 16, .size = {13, 70}, .k = {7, 7}, .pad = {3, 3}},
            {{"mr", 4}, {"mb", 3}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mrf", 1}}},
           // ... its loads streamed (mcg 1: the same values through L2 only)
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1_mos1_mwr1_mrf1_mcg1",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mwr", 1}, {"mrf", 1}, {"mcg", 1}}},
           {"mma_c16_13x70_7x7_pad3_mr4_mb3_mwp1_mos1_mrf2_mcg1",
            {.B = 1, .C = 16, .size = {13, 70}, .k = {7, 7}, .pad = {3, 3}},
            {{"mr", 4}, {"mb", 3}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mrf", 2}, {"mcg", 1}}},
           // ... issued before the band's first barrier (mcg 2): 8 channels, the taps, kh != kw
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1_mos1_mwr1_mrf1_mcg2",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mwr", 1}, {"mrf", 1}, {"mcg", 2}}},
           {"mma_c8_9x17_5x4_pad2_mc8_mr4_mb2_mrf1_mcg2",
            {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}},
            {{"mr", 4}, {"mb", 2}, {"mrf", 1}, {"mcg", 2}}},
           // Each thread copies the NHWC stage's chunks it transposes (mtc 1): the 7x7 ring default's keys with the
           // weights held; 8 channels with the stage swizzled; two strips (rows of two rounds).
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1_mos1_mwr1_mtc1",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"mwp", 1}, {"mos", 1}, {"mwr", 1}, {"mtc", 1}}},
           {"mma_c8_9x17_5x4_pad2_mc8_mr4_mb2_msw1_mtc1",
            {.B = 2, .C = 8, .size = {9, 17}, .k = {5, 4}, .pad = {2, 2}},
            {{"mr", 4}, {"mb", 2}, {"msw", 1}, {"mtc", 1}}},
           {"mma_c16_13x70_7x7_pad3_mr4_mb3_mwp1_mos1_mtc1",
            {.B = 1, .C = 16, .size = {13, 70}, .k = {7, 7}, .pad = {3, 3}},
            {{"mr", 4}, {"mb", 3}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mtc", 1}}},
           // ... stored amid the products (mrf 2: the ring holds the band's rows and the next band's)
           {"mma_c16_13x16_7x7_pad3_bias_mr4_mb4_mwp1_mos1_mwr1_mrf2",
            {.B = 2, .C = 16, .size = {13, 16}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"mr", 4}, {"mb", 4}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mwr", 1}, {"mrf", 2}}},
           {"mma_c16_13x70_7x7_pad3_mr4_mb3_mwp1_mos1_mrf2",
            {.B = 1, .C = 16, .size = {13, 70}, .k = {7, 7}, .pad = {3, 3}},
            {{"mr", 4}, {"mb", 3}, {"msm", 100}, {"mwp", 1}, {"mos", 1}, {"mrf", 2}}},
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

  // px = 1 (pixels along M, channels along N; f32 runs the default kernels): a partial last band and a strip tail with
  // bias; 7x7 with 24 channels (3 blocks, an odd pixel stride) and several rounds of units per warp; kh != kw with
  // uneven padding, batch 3 and more warps than units; 1x1 with three segments over Q = 33; the default options (64
  // channels, 8 rows) over a partial band.
  for (const auto& [name, c, extra] : std::vector<std::tuple<std::string, ConvCase, Params>>{
           {"px_c16_13x20_3x3_pad1_bias_pr2",
            {.B = 2, .C = 16, .size = {13, 20}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"pr", 2}, {"pc", 16}}},
           {"px_c24_9x17_7x7_pad3_pr6_ps2_pw2",
            {.B = 1, .C = 24, .size = {9, 17}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"pr", 6}, {"ps", 2}, {"pw", 2}}},
           {"px_c8_6x9_5x3_pad2x1_b3_pr2_pw3",
            {.B = 3, .C = 8, .size = {6, 9}, .k = {5, 3}, .pad = {2, 1}},
            {{"pr", 2}, {"pw", 3}}},
           {"px_c32_5x33_1x1_pc16_ps3_pw8",
            {.B = 2, .C = 32, .size = {5, 33}, .k = {1, 1}},
            {{"pc", 16}, {"ps", 3}, {"pw", 8}}},
           {"px_c64_10x18_3x3_pad1", {.B = 1, .C = 64, .size = {10, 18}, .k = {3, 3}, .pad = {1, 1}}, {}},
           // row pairs through a ring (pa): 6 pairs in 3 slots (1x1), 5 pairs in 4 slots with a partial band (7x7)
           {"px_c16_13x17_1x1_bias_pr12_pa1",
            {.B = 2, .C = 16, .size = {13, 17}, .k = {1, 1}, .bias = true},
            {{"pr", 12}, {"pa", 1}, {"pc", 16}}},
           {"px_c16_11x18_7x7_pad3_bias_pr4_pa2",
            {.B = 2, .C = 16, .size = {11, 18}, .k = {7, 7}, .pad = {3, 3}, .bias = true},
            {{"pr", 4}, {"pa", 2}}},
           // over 48 KB of shared memory (pm; CUDA's dynamic shared memory): 16 pairs in 9 slots, 47 KB of rows
           {"px_c64_32x16_3x3_pad1_pr30_pa7_pm80",
            {.B = 1, .C = 64, .size = {32, 16}, .k = {3, 3}, .pad = {1, 1}},
            {{"pr", 30}, {"pa", 7}, {"pm", 80}}}}) {
    auto p = conv_params(f, c);
    p["px"] = 1;
    for (const auto& [key, v] : extra) p[key] = v;
    s.tests.push_back({name, p});
  }

  // Bench: the first two cases are the reference shapes with the defaults (the stream kernel,
  // depthwise_nhwc_stream_default); the variants let one GPU run compare. Measured worse and
  // dropped (2026-11-30, 2026-12-01, docs/performance.md): V2 VC4, V4 VC8, V2 VC2, V4 VC4 VH2, V8 VC2 VH2, V4 VC2
  // VH3/VH4, register caps, channel blocks CL 8/16/32, preloading 7x7 rows.
  auto variant = [&](const ConvCase& c, const std::string& shape, int V, int VC, int VH, int preload) {
    auto p = with(conv_params(f, c), V, VC, VH);
    p["preload"] = preload;
    s.bench.push_back({"N32_C384_56x56_" + shape + "_v" + std::to_string(V) + "_vc" + std::to_string(VC) +
                           (VH > 1 ? "_vh" + std::to_string(VH) : "") + (preload ? "_pre" : "_nopre"),
                       p});
  };
  variant(k3, "3x3", 4, 4, 1, 0);  // the default before 2026-12-01 (second session)
  variant(k3, "3x3", 4, 2, 1, 0);
  variant(k3, "3x3", 4, 2, 2, 1);  // the default of 28c8168
  variant(k3, "3x3", 2, 2, 4, 1);  // the default before 2026-12-02 (eighth session)
  variant(k7, "7x7", 4, 2, 1, 0);
  variant(k7, "7x7", 8, 2, 1, 0);  // the register kernel's default for wide windows (the default before stream)
  // Tall tiles with rows loaded `ahead` rows ahead of their arithmetic.
  // (V, VC, VH, ahead, minb; 0: the default; V4 VC2 VH8 two ahead is the register kernel's default, the default before
  // stream). (Measured worse on the H200, 2026-12-02 eighth session: V2 VH8/14/16 with rows 1-2 ahead, VC = 4 with tall
  // tiles, channel blocks CL 16-64 with tall tiles, and the next column group after the channel lanes instead of the
  // next row group: dropped.)
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

  // stream = 1: (V, VC, CL, NQ, PB, ahead): each dtype's default as the other's variant,
  // and the runners-up. (Measured worse on the H200, 2026-12-02 ninth session, docs/performance.md step 11, and
  // dropped: 3x3 ahead 1, 4 and 6, PB 7, 10 and 14, CL 16, NQ 4 and 7, V2, V8, VC 4, register caps (minb 18); 7x7 VC 2
  // with PB 2, NQ 4, V2, CL 64 with PB 4. The last 7x7 row is the f32 default before 2026-12-05, the 16-bit stream
  // tiling for wide windows.)
  for (const auto& [c, shape, tl] :
       std::vector<std::tuple<ConvCase, std::string, std::array<int, 6>>>{{k3, "3x3", {4, 2, 64, 1, 8, 3}},
                                                                          {k3, "3x3", {4, 2, 32, 2, 8, 3}},
                                                                          {k3, "3x3", {4, 2, 32, 2, 8, 2}},
                                                                          {k3, "3x3", {4, 2, 64, 1, 8, 2}},
                                                                          {k3, "3x3", {4, 2, 64, 1, 6, 3}},
                                                                          {k3, "3x3", {4, 2, 0, 1, 8, 3}},
                                                                          {k3, "3x3", {4, 2, 32, 2, 4, 2}},
                                                                          {k3, "3x3", {4, 2, 64, 2, 8, 3}},
                                                                          {k3, "3x3", {4, 2, 64, 2, 14, 3}},
                                                                          {k3, "3x3", {4, 2, 64, 1, 14, 3}},
                                                                          {k7, "7x7", {4, 2, 32, 2, 4, 2}},
                                                                          {k7, "7x7", {4, 1, 32, 2, 8, 2}},
                                                                          {k7, "7x7", {8, 1, 32, 1, 8, 2}},
                                                                          {k7, "7x7", {4, 1, 32, 2, 14, 2}}}) {
    auto p = conv_params(f, c);
    p["stream"] = 1;
    std::string name = "N32_C384_56x56_" + shape + "_stream";
    for (std::size_t i = 0; i < tl.size(); ++i) {
      const char* key = std::array<const char*, 6>{"V", "VC", "CL", "NQ", "PB", "ahead"}[i];
      p[key] = tl[i];
      name += std::string("_") + key + std::to_string(tl[i]);
    }
    s.bench.push_back({name, p});
  }

  // The 7x7 stream default with registers capped for 10 work-groups of 64 per SM (96 registers against 128, 40 bytes
  // spilled: ncu of f32, 2026-12-03 twelfth session, 16 warps per SM, issue 58% with not-selected stalls first).
  // H200, the same session: f32 54.3% of copy against 53.2%, 16-bit unchanged (within run-to-run spread).
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
  // mma = 1 (tensor cores, row-pair tiles on transposed planes; 2026-12-03 sixteenth session). H200, the same session,
  // bf16: 7x7 0.1113 ms (32.5% of copy, the stream kernel 0.1121 in the same run), minb 3 0.1142, mr 6 0.1308, mr 4
  // 0.1470, mw 4 0.1213, il 4 0.1151, mc 8 with mr 16 / 8 0.1706 / 0.1512; 3x3 0.0831 against the stream kernel's
  // 0.0435 (those rows since dropped). Not the default: the transposition (16-byte loads of 16 channels, 8 scalar
  // shared stores each), 32 bytes per pixel per work-group (every warp access spans 16 lines) and the output stage's
  // 4-way conflicts cost more than the FMAs they replace (docs/performance.md, step 18). Since the nineteenth
  // session (2026-12-04): the row loads in A's order (lq 1, the default; lq 0 the order before) and bands through a
  // ring of plane rows (mb, msm; the 16-bit default for windows of 5 or more rows is mr 4 with every band). (A fill by
  // channel pairs and an output stage over the planes, with 12-16-row bands, measured no faster and were removed.)
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

  // px = 1 (pixel tensor cores, 2026-12-04 twentieth session). H200, the same session, bf16, whole bands (pa 0):
  // 3x3 pr8 pc64 pw4 0.0880 ms, pw8 0.0733, pc32 0.0810, pr16 0.0794, ps2 pc32 0.0870, pr4 0.0786; 7x7 pr8 pc32 0.1168,
  // pc64 0.1220, pr16 ps2 pc16 0.1360, pr16 pc32 0.1290 (ncu: latency-bound on the band's copy, MIO-throttled: issue
  // 22%). Row pairs in flight (pa): 3x3 pr8 pc64 pw8 pa1 0.0652, pa2 0.0647, pr16 pa2 0.0661, pr32 pa3 0.0677, pc32
  // pw4 pa2 0.0711-0.0724; 7x7 pr16/32 pc32 pa2 0.158-0.169 (166 registers: every tap in registers). With the output
  // stage (16-byte stores): 3x3 pr8 pa0 0.0472, pa2 0.0491, pa4 0.0469, pr16 pa4 0.0456, pc32 pw4 0.0494, ps2 pc32
  // 0.0503; with the weights in shared memory: pr14 pa4 0.0455-0.0457, pa3 0.0489, pa2 0.0503, pr28 0.0464, pw4 0.0466,
  // pc32 pw4 0.0509, minb5 0.0507, pa6 pm64 0.0450, pa7 pm80 0.0449, pr28 pa6 pm64 0.0463; 7x7 pr14 pc32 pw4 pa4
  // 0.1007-0.1015 (f16 0.1008), pc16 pw2 0.1024, pr28 0.1006, pa6 pm64 0.1031, pc64 pw8 pm64 0.1059; the defaults in
  // the same runs: 3x3 (stream) 0.0434-0.0439, 7x7 (tensor-core ring) 0.1032-0.1046.
  keyed_rows("px", {{k3, "3x3", {{"pr", 14}, {"pc", 64}, {"pw", 8}, {"pa", 4}}},
                    {k3, "3x3", {{"pr", 14}, {"pc", 64}, {"pw", 8}, {"pa", 6}, {"pm", 64}}},
                    {k3, "3x3", {{"pr", 14}, {"pc", 64}, {"pw", 8}, {"pa", 7}, {"pm", 80}}},
                    {k3, "3x3", {{"pr", 28}, {"pc", 64}, {"pw", 8}, {"pa", 6}, {"pm", 64}}},
                    {k3, "3x3", {{"pr", 14}, {"pc", 32}, {"pw", 4}, {"pa", 7}}},
                    {k7, "7x7", {{"pr", 14}, {"pc", 32}, {"pw", 4}, {"pa", 4}}},
                    {k7, "7x7", {{"pr", 14}, {"pc", 16}, {"pw", 2}, {"pa", 4}}},
                    {k7, "7x7", {{"pr", 28}, {"pc", 32}, {"pw", 4}, {"pa", 4}}},
                    {k7, "7x7", {{"pr", 14}, {"pc", 32}, {"pw", 4}, {"pa", 6}, {"pm", 64}}},
                    {k7, "7x7", {{"pr", 14}, {"pc", 64}, {"pw", 8}, {"pa", 4}, {"pm", 64}}}});

  // Batch probes (2026-12-03 thirteenth session): the 3x3 default at other batch sizes. H200: the time grows by ~1.2 us
  // per image in 16-bit (92% of the copy ceiling) over a ~4 us intercept, and N28 (3.9 waves of 16 work-groups per
  // SM) is no better than N29 (4.04) or N32 (4.45): the last wave's fill is not the gap. N1 and N4 (inference): 5.7 us
  // and 9.7 us in bf16, at 103% and 90% of a same-size copy.
  for (const int n : {1, 4, 28, 36}) {
    ConvCase c = k3;
    c.B = n;
    s.bench.push_back({"N" + std::to_string(n) + "_C384_56x56_3x3", conv_params(f, c)});
  }

  s.build = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    sp.check_batch(static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)));
    const bool pix = uses_pix(t, p);
    const bool mma = !pix && uses_mma(t, sp, p);
    return trace_typed(t, f.name, p, [&](auto tag, KernelBuilder& k) {
      using T = typename decltype(tag)::type;
      if constexpr (sizeof(T) == 2) {
        if (pix) {
          const DepthwiseNhwcPix o = pix_of(p);  // (the kernel refuses what it does not take, with the reason)
          apply_launch_bounds(k, p, depthwise_nhwc_pix_geometry(sp, o).G(), true);
          depthwise_conv2d_nhwc_pix<T>(k, sp, o);
          return;
        }
        if (mma) {
          const DepthwiseNhwcMma o = mma_of(t, sp, p);  // (the kernel refuses what it does not take, with the reason)
          const std::uint32_t G = depthwise_nhwc_mma_geometry(sp, sizeof(T), o).G();
          // The ring default as it is (no tensor-core key named but mwp, mos, msw, mwr, mop) with its weights as tap
          // pairs (mwp 1) is held to 64 registers (launch bounds of 65536 / (64 G) work-groups: 4 of 256 threads per
          // SM, 4 x 40 KB of shared memory), the count the taps gave it without bounds (NVRTC for sm_90, 2026-12-05: 64
          // registers with the taps, 70 with the pairs uncapped, 64 with the pairs capped, no spills); with its
          // weights in registers (mwr 1) to 80: 3 work-groups per SM (79 registers, no spills; at 64 it spills 32
          // bytes and runs 27% slower, H200 step 33).
          Params bounds = p;
          bool as_default = mma_by_default(t, sp, p) && o.weight_pairs;
          for (const char* key : kMmaKernelKeys) {
            const std::string_view named(key);
            as_default = as_default && (named == "mwp" || named == "mos" || named == "msw" || named == "mwr" ||
                                        named == "mop" || p.count(key) == 0);
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
    if (uses_pix(t, p)) {
      const NhwcPixLayout L = depthwise_nhwc_pix_geometry(sp, pix_of(p));
      return runtime::grid_1d(depthwise_nhwc_pix_groups(L, B) * L.G(), L.G());
    }
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
  declare_conv_options(s, f);
  route_wide_windows(s, f);  // (a large dilation: the direct kernel)
  r.add(std::move(s));
}

}  // namespace ingot::kernels
