// Random shapes under every tiling the case lists name. Each registered test case and bench row of the memory-bound
// convolutions fixes a shape and a set of kernel options (tile sizes, tensor-core keys, bands, stages, ...), or none
// (the default the kernel picks for the shape). Here each option set is kept and the shape redrawn at random —
// sizes, window, stride, dilation, padding, bias, channels, batch, dtype — so that the options meet tails, partial
// bands and work-groups, strips, channel blocks and windows the hand-written cases do not. Each draw either is refused
// by the kernel with a message (std::invalid_argument from its build: a spec it does not take) or runs on the checked
// interpreter (every access in bounds, no read of an unwritten element) and matches the CPU oracle within the dtype's
// tolerance, with poisoned outputs: any other outcome fails the test and prints the arguments of `ingot run` that
// reproduce it (with inputs from .npy files). The draws are seeded, so a failure repeats; INGOT_SWEEP_DRAWS and
// INGOT_SWEEP_SEED ask for a longer or another sweep, and INGOT_SWEEP_BACKEND=opencl|cuda runs it on another backend
// (on a GPU under compute-sanitizer, say).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/harness/backends.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/harness/registry.hpp"
#include "ingot/library.hpp"

using namespace ingot;
using namespace ingot::harness;

namespace {

using Rng = std::mt19937_64;

std::int64_t uniform(Rng& rng, std::int64_t lo, std::int64_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
bool chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

// One spatial axis: window k (dilation d, stride s, padding p) over n inputs, at least one output; n in [1, n_hi],
// sometimes (wide) past 64 (a second 64-column strip of the tensor-core kernels); n a multiple of `multiple` where
// that is not 1. Strides and dilations of 2 only where `odd` (a fifth to a third of the draws: most tilings take 1).
void draw_axis(Rng& rng, Params& p, const std::string& n, const std::string& k, const std::string& s,
               const std::string& pad, const std::string& d, std::int64_t k_hi, std::int64_t n_hi, bool wide, bool odd,
               std::int64_t multiple = 1) {
  const std::int64_t kk =
      chance(rng, 0.5) ? std::vector<std::int64_t>{3, 5, 7}[uniform(rng, 0, 2)] : uniform(rng, 1, k_hi);
  const std::int64_t kk_in = std::min(kk, k_hi);
  const std::int64_t dd = odd && chance(rng, 0.5) ? 2 : 1;
  const std::int64_t ss = odd && chance(rng, 0.5) ? 2 : 1;
  const std::int64_t span = dd * (kk_in - 1) + 1;
  std::int64_t pp = chance(rng, 0.6) ? (span - 1) / 2 : uniform(rng, 0, span - 1);
  std::int64_t nn = wide && chance(rng, 0.15) ? uniform(rng, 60, 80) : uniform(rng, 1, n_hi);
  if (chance(rng, 0.15)) {  // a size-1 axis with padding: outputs that see only padding (a 1-wide window included)
    nn = 1;
    pp = uniform(rng, 1, std::max<std::int64_t>(1, span - 1));
  }
  nn = std::max(nn, span - 2 * pp);  // at least one output
  nn = (nn + multiple - 1) / multiple * multiple;
  p[n] = nn, p[k] = kk_in, p[s] = ss, p[pad] = pp, p[d] = dd;
}

// Channels: mostly multiples of 8 (the tensor-core and vector kernels' blocks), sometimes any count.
std::int64_t draw_channels(Rng& rng, std::int64_t hi) {
  return chance(rng, 0.75) ? 8 * uniform(rng, 1, hi / 8) : uniform(rng, 1, hi);
}

// Keeps the interpreter's work small: halves the largest of the named sizes until their product is at most `most`.
void cap(Params& p, const std::vector<std::string>& keys, std::int64_t most) {
  const auto product = [&] {
    std::int64_t n = 1;
    for (const auto& key : keys) n *= p.at(key);
    return n;
  };
  while (product() > most) {
    auto big = std::max_element(keys.begin(), keys.end(), [&](const auto& a, const auto& b) { return p[a] < p[b]; });
    p[*big] = std::max<std::int64_t>(1, p[*big] / 2);
  }
}

void depthwise_2d(Rng& rng, Params& p) {
  p["B"] = uniform(rng, 1, 3);
  p["C"] = draw_channels(rng, 48);
  const bool odd = chance(rng, 0.25);
  draw_axis(rng, p, "H", "kh", "stride_h", "pad_h", "dil_h", 8, 20, false, odd);
  draw_axis(rng, p, "W", "kw", "stride_w", "pad_w", "dil_w", 8, 24, true, odd);
  p["bias"] = chance(rng, 0.5) ? 1 : 0;
  cap(p, {"B", "C"}, 96);
}

void depthwise_1d(Rng& rng, Params& p) {
  p["B"] = uniform(rng, 1, 3);
  p["C"] = draw_channels(rng, 40);
  draw_axis(rng, p, "L", "K", "stride", "pad", "dilation", 8, chance(rng, 0.3) ? 1200 : 90, false, chance(rng, 0.3));
  p["bias"] = chance(rng, 0.5) ? 1 : 0;
  cap(p, {"B", "C"}, std::max<std::int64_t>(1, 40000 / p["L"]));  // (L drawn with its window: not halved)
}

// Causal prefill: the window K (the kernels take 2 to 4 taps, some any), length L, channels; the states (init,
// final) and the tile keys as the case has them.
void causal_1d(Rng& rng, Params& p) {
  p["B"] = uniform(rng, 1, 3);
  p["C"] = draw_channels(rng, 40);
  p["L"] = chance(rng, 0.3) ? uniform(rng, 100, 1200) : uniform(rng, 1, 90);
  p["K"] = uniform(rng, 2, 4);
  p["bias"] = chance(rng, 0.5) ? 1 : 0;
  p["silu"] = chance(rng, 0.5) ? 1 : 0;
  cap(p, {"B", "C", "L"}, 40000);
}

// Grouped: B images, g groups of 1-8 input channels (8 for the tensor-core kernels), 1-16 output channels per
// group, with B * g at most `most`.
void grouped_channels(Rng& rng, Params& p, std::int64_t most) {
  p["B"] = uniform(rng, 1, 2);
  const std::int64_t g = uniform(rng, 1, std::max<std::int64_t>(1, std::min<std::int64_t>(6, most / p["B"])));
  const std::int64_t in = chance(rng, 0.75) ? 8 : std::vector<std::int64_t>{1, 2, 4}[uniform(rng, 0, 2)];
  const std::int64_t out = chance(rng, 0.75) ? 8 * uniform(rng, 1, 2) : uniform(rng, 1, 8);
  p["groups"] = g, p["C"] = g * in, p["O"] = g * out;
  p["bias"] = chance(rng, 0.5) ? 1 : 0;
}

// (W a multiple of 8 half the time: the staged kernels copy rows of 8-pixel vectors)
void grouped_2d(Rng& rng, Params& p) {
  grouped_channels(rng, p, 8);
  const bool odd = chance(rng, 0.2);
  draw_axis(rng, p, "H", "kh", "stride_h", "pad_h", "dil_h", 5, 18, false, odd);
  draw_axis(rng, p, "W", "kw", "stride_w", "pad_w", "dil_w", 5, 24, false, odd, chance(rng, 0.5) ? 8 : 1);
}

void grouped_3d(Rng& rng, Params& p) {
  grouped_channels(rng, p, 6);
  const bool odd = chance(rng, 0.2);
  draw_axis(rng, p, "D", "kd", "stride_d", "pad_d", "dil_d", 3, 6, false, odd);
  draw_axis(rng, p, "H", "kh", "stride_h", "pad_h", "dil_h", 3, 10, false, odd);
  draw_axis(rng, p, "W", "kw", "stride_w", "pad_w", "dil_w", 3, 16, false, odd, chance(rng, 0.5) ? 8 : 1);
}

// Dense: B images, C input and O output channels (1-12 in 2-D, 1-6 in 3-D: the interpreter's work grows with C x O).
void dense_2d(Rng& rng, Params& p) {
  p["B"] = uniform(rng, 1, 2), p["C"] = uniform(rng, 1, 12), p["O"] = uniform(rng, 1, 12);
  p["bias"] = chance(rng, 0.5) ? 1 : 0;
  const bool odd = chance(rng, 0.3);
  draw_axis(rng, p, "H", "kh", "stride_h", "pad_h", "dil_h", 5, 12, false, odd);
  draw_axis(rng, p, "W", "kw", "stride_w", "pad_w", "dil_w", 5, 16, false, odd);
}

void dense_3d(Rng& rng, Params& p) {
  p["B"] = uniform(rng, 1, 2), p["C"] = uniform(rng, 1, 6), p["O"] = uniform(rng, 1, 6);
  p["bias"] = chance(rng, 0.5) ? 1 : 0;
  const bool odd = chance(rng, 0.3);
  draw_axis(rng, p, "D", "kd", "stride_d", "pad_d", "dil_d", 3, 5, false, odd);
  draw_axis(rng, p, "H", "kh", "stride_h", "pad_h", "dil_h", 3, 8, false, odd);
  draw_axis(rng, p, "W", "kw", "stride_w", "pad_w", "dil_w", 3, 10, false, odd);
}

// Winograd F(2x2, 3x3): 3x3, stride 1, padding 0 or 1, any size (odd tails of the 2x2 output tiles).
void winograd_2d(Rng& rng, Params& p) {
  p["B"] = uniform(rng, 1, 2), p["C"] = uniform(rng, 1, 12), p["O"] = uniform(rng, 1, 12);
  p["pad_h"] = uniform(rng, 0, 1), p["pad_w"] = uniform(rng, 0, 1);
  p["H"] = uniform(rng, 3 - 2 * p["pad_h"], 20), p["W"] = uniform(rng, 3 - 2 * p["pad_w"], 20);
  p["bias"] = chance(rng, 0.5) ? 1 : 0;
}

// The filter transform of Winograd's weights: C input and O output channels.
void winograd_filter(Rng& rng, Params& p) { p["C"] = uniform(rng, 1, 40), p["O"] = uniform(rng, 1, 40); }

// The causal decode step: one new token per sequence over a state of K - 1.
void causal_update(Rng& rng, Params& p) {
  p["B"] = uniform(rng, 1, 4), p["C"] = draw_channels(rng, 200), p["K"] = uniform(rng, 2, 4);
  p["bias"] = chance(rng, 0.5) ? 1 : 0, p["silu"] = chance(rng, 0.5) ? 1 : 0;
}

struct SweepReport {
  std::string backend;
  std::size_t passed = 0, refused = 0, skipped = 0;
  std::map<std::string, std::size_t> skip_reasons;
  std::vector<std::string> failures;
};

// The backend the sweep runs on: the interpreter, or INGOT_SWEEP_BACKEND (opencl: PoCL here, a GPU's OpenCL there;
// cuda: a GPU, or where there is none NVRTC compiles every draw, counted as skipped "compiled only").
BackendSlot sweep_backend() {
  const char* name = std::getenv("INGOT_SWEEP_BACKEND");
  return open_backend(name && *name ? name : "interp");
}

// `draws` random shapes (seeded by the kernel's name) for each option set of `kernel` (its test cases and bench rows)
// and as many with no option, on backend `be`.
SweepReport sweep(const std::string& kernel, const std::function<void(Rng&, Params&)>& draw, int draws,
                  const BackendSlot& be, const std::vector<std::string>& semantic) {
  const Registry reg = builtin_registry();
  const KernelSpec* ks = reg.find(kernel);
  if (!ks) throw std::runtime_error("kernel not registered: " + kernel);
  // (INGOT_SWEEP_DRAWS and INGOT_SWEEP_SEED: a longer or another sweep, e.g. INGOT_SWEEP_DRAWS=20 for ~2 minutes)
  if (const char* n = std::getenv("INGOT_SWEEP_DRAWS")) draws = std::max(1, std::atoi(n));
  std::uint64_t seed = 0x5eed;
  if (const char* v = std::getenv("INGOT_SWEEP_SEED")) seed = std::strtoull(v, nullptr, 0);
  Rng rng(std::hash<std::string>{}(kernel) ^ seed);
  SweepReport rep;
  rep.backend = be.name;
  // the option sets of the test cases and of the bench rows (the production tilings and their variants)
  std::vector<TestCase> sets = ks->tests;
  for (const BenchCase& c : ks->bench) sets.push_back({c.name, c.params});
  // and the default: no option at all, only what the operation means (`semantic`: the block format, the states), taken
  // from a random test case; the library must take every valid shape this way, so a refusal is a failure
  const std::size_t defaults = sets.size();
  for (std::size_t i = 0; i < defaults; ++i) {
    Params p;
    const Params& from = ks->tests[static_cast<std::size_t>(uniform(rng, 0, std::ssize(ks->tests) - 1))].params;
    for (const std::string& key : semantic) {
      if (from.count(key)) p[key] = from.at(key);
    }
    sets.push_back({"(default)", p});
  }
  for (std::size_t si = 0; si < sets.size(); ++si) {
    const TestCase& c = sets[si];
    const bool is_default = si >= defaults;
    for (int i = 0; i < draws; ++i) {
      Params p = c.params;
      draw(rng, p);
      // any of the kernel's dtypes (f32, f16, bf16: the tensor-core kernels take the 16-bit two)
      const DType t =
          ks->dtypes[static_cast<std::size_t>(uniform(rng, 0, static_cast<std::int64_t>(ks->dtypes.size()) - 1))];
      // (the arguments of `ingot run` for the draw, inputs from .npy files: --in x=... --in w=...)
      std::string repro = "ingot run " + kernel + " --dtype " + std::string(dtype_name(t));
      for (const auto& [key, v] : p) repro += " --set " + key + "=" + std::to_string(v);
      repro += " (from case " + c.name + ")";
      try {
        (void)ks->build(t, p);
        (void)ks->geometry(t, p);
      } catch (const std::invalid_argument& e) {
        if (is_default) {
          rep.failures.push_back(repro + ": the default refused a valid shape: " + e.what());
          continue;
        }
        ++rep.refused;
        if (std::getenv("INGOT_SWEEP_VERBOSE")) std::printf("refused: %s: %s\n", repro.c_str(), e.what());
        if (std::string(e.what()).size() < 10) rep.failures.push_back(repro + ": a refusal without a reason");
        continue;
      } catch (const std::exception& e) {  // anything else is a defect, not a refusal
        rep.failures.push_back(repro + ": " + e.what());
        continue;
      }
      const CaseResult r = run_case(*ks, t, TestCase{c.name + "_draw" + std::to_string(i), p}, be, rng());
      if (r.status == Status::Pass) {
        ++rep.passed;
      } else if (r.status == Status::Skip) {  // (compiled only; over a CPU OpenCL device's source limit)
        ++rep.skipped;
        ++rep.skip_reasons[r.message];
      } else {
        rep.failures.push_back(repro + ": " + r.message);
      }
    }
  }
  return rep;
}

// The sweep's verdict: no failure, and at least half the draws ran (a sweep of refusals only checks nothing).
void expect_clean(const std::string& kernel, const std::function<void(Rng&, Params&)>& draw, int draws,
                  const std::vector<std::string>& semantic = {}) {
  const BackendSlot be = sweep_backend();
  if (!be.backend && !be.compile_only) GTEST_SKIP() << be.name << " is absent: " << be.why_absent;
  const SweepReport rep = sweep(kernel, draw, draws, be, semantic);
  std::string all;
  for (const auto& f : rep.failures) all += "\n  " + f;
  EXPECT_TRUE(rep.failures.empty()) << rep.failures.size() << " of the draws failed on " << rep.backend << ":" << all;
  EXPECT_GE(rep.passed + rep.skipped, rep.refused)
      << kernel << ": " << rep.passed + rep.skipped << " ran, " << rep.refused << " refused";
  std::printf("%s on %s: %zu draws ran and matched the oracle, %zu refused with a reason, %zu skipped\n",
              kernel.c_str(), rep.backend.c_str(), rep.passed, rep.refused, rep.skipped);
  for (const auto& [why, n] : rep.skip_reasons) std::printf("  skipped %zu: %s\n", n, why.c_str());
}

TEST(ConvSweep, DepthwiseConv2dNhwc) { expect_clean("depthwise_conv2d_nhwc", depthwise_2d, 2); }
TEST(ConvSweep, DepthwiseConv2dNchw) { expect_clean("depthwise_conv2d", depthwise_2d, 2); }
TEST(ConvSweep, DepthwiseConv1d) { expect_clean("depthwise_conv1d", depthwise_1d, 3); }
TEST(ConvSweep, CausalConv1dPrefill) { expect_clean("causal_conv1d_prefill", causal_1d, 3, {"init", "final"}); }
TEST(ConvSweep, CausalConv1dPrefillNlc) { expect_clean("causal_conv1d_prefill_nlc", causal_1d, 3, {"init", "final"}); }
TEST(ConvSweep, GroupedConv2d) { expect_clean("conv2d_grouped", grouped_2d, 2); }
TEST(ConvSweep, GroupedConv3d) { expect_clean("conv3d_grouped", grouped_3d, 2); }
// The rest of the convolution library (dense, Winograd, the decode step, block-scaled weights): the same contract.
TEST(ConvSweep, DenseConv2d) { expect_clean("conv2d", dense_2d, 6); }
TEST(ConvSweep, DenseConv3d) { expect_clean("conv3d", dense_3d, 6); }
TEST(ConvSweep, WinogradConv2d) { expect_clean("winograd_conv2d", winograd_2d, 6); }
TEST(ConvSweep, WinogradFilterTransform) { expect_clean("winograd_filter_transform", winograd_filter, 6); }
TEST(ConvSweep, CausalConv1dUpdate) { expect_clean("causal_conv1d_update", causal_update, 6); }
TEST(ConvSweep, BlockScaledConv2d) { expect_clean("conv2d_blockscaled", dense_2d, 3, {"fmt"}); }
TEST(ConvSweep, BlockScaledConv3d) { expect_clean("conv3d_blockscaled", dense_3d, 3, {"fmt"}); }
TEST(ConvSweep, BlockScaledDepthwiseConv2d) { expect_clean("depthwise_conv2d_blockscaled", depthwise_2d, 3, {"fmt"}); }

// Every spatial axis of every convolution at size 1 with padding 1 under a 1-wide window (stride and dilation 1): the
// outputs on either side see padding only and must come out as bias alone. One draw per option set and per default,
// the rest of the shape drawn as in the sweep above.
struct Axis {
  const char *n, *k, *s, *pad, *d;
};
constexpr Axis kAxisL{"L", "K", "stride", "pad", "dilation"};
constexpr Axis kAxisD{"D", "kd", "stride_d", "pad_d", "dil_d"};
constexpr Axis kAxisH{"H", "kh", "stride_h", "pad_h", "dil_h"};
constexpr Axis kAxisW{"W", "kw", "stride_w", "pad_w", "dil_w"};

void expect_unit_axes_clean(const std::string& kernel, const std::function<void(Rng&, Params&)>& draw,
                            const std::vector<Axis>& axes, const std::vector<std::string>& semantic = {}) {
  for (const Axis& a : axes) {
    SCOPED_TRACE(std::string("axis ") + a.n);
    expect_clean(
        kernel,
        [&](Rng& rng, Params& p) {
          draw(rng, p);
          p[a.n] = 1, p[a.k] = 1, p[a.s] = 1, p[a.pad] = 1, p[a.d] = 1;
        },
        1, semantic);
  }
}

TEST(ConvSweepUnitAxis, DepthwiseConv1d) { expect_unit_axes_clean("depthwise_conv1d", depthwise_1d, {kAxisL}); }
TEST(ConvSweepUnitAxis, DepthwiseConv2dNchw) {
  expect_unit_axes_clean("depthwise_conv2d", depthwise_2d, {kAxisH, kAxisW});
}
TEST(ConvSweepUnitAxis, DepthwiseConv2dNhwc) {
  expect_unit_axes_clean("depthwise_conv2d_nhwc", depthwise_2d, {kAxisH, kAxisW});
}
TEST(ConvSweepUnitAxis, GroupedConv2d) { expect_unit_axes_clean("conv2d_grouped", grouped_2d, {kAxisH, kAxisW}); }
TEST(ConvSweepUnitAxis, GroupedConv3d) {
  expect_unit_axes_clean("conv3d_grouped", grouped_3d, {kAxisD, kAxisH, kAxisW});
}
TEST(ConvSweepUnitAxis, DenseConv2d) { expect_unit_axes_clean("conv2d", dense_2d, {kAxisH, kAxisW}); }
TEST(ConvSweepUnitAxis, DenseConv3d) { expect_unit_axes_clean("conv3d", dense_3d, {kAxisD, kAxisH, kAxisW}); }
TEST(ConvSweepUnitAxis, BlockScaledConv2d) {
  expect_unit_axes_clean("conv2d_blockscaled", dense_2d, {kAxisH, kAxisW}, {"fmt"});
}
TEST(ConvSweepUnitAxis, BlockScaledConv3d) {
  expect_unit_axes_clean("conv3d_blockscaled", dense_3d, {kAxisD, kAxisH, kAxisW}, {"fmt"});
}
TEST(ConvSweepUnitAxis, BlockScaledDepthwiseConv2d) {
  expect_unit_axes_clean("depthwise_conv2d_blockscaled", depthwise_2d, {kAxisH, kAxisW}, {"fmt"});
}

// A window's span (dilation x (k - 1) + 1) far past its taps: the trace grows with the taps, never with the dilation's
// or padding's value (the tiled kernels hand such windows to the direct kernel, and refuse their options for them).
TEST(ConvWideWindow, TraceGrowsWithTheTapsNotTheDilation) {
  const Registry reg = builtin_registry();
  const BackendSlot be = open_backend("interp");
  for (const char* name : {"depthwise_conv2d", "depthwise_conv2d_nhwc", "conv2d_grouped", "conv3d_grouped"}) {
    SCOPED_TRACE(name);
    const KernelSpec& ks = *reg.find(name);
    ASSERT_FALSE(ks.options.empty());
    Params p = ks.tests.front().params;
    for (const auto& o : ks.options) p.erase(o.name);  // the shape alone: the library's default
    for (const char* axis : {"H", "W"}) {
      const std::string a = axis == std::string("H") ? "h" : "w";
      p[axis] = 5, p["k" + a] = 2, p["pad_" + a] = 200000000, p["dil_" + a] = 400000000, p["stride_" + a] = 1;
    }
    for (const DType t : ks.dtypes) {
      const ir::Kernel k = ks.build(t, p);
      EXPECT_LT(k.exprs.size(), 20000u) << dtype_name(t);
      const CaseResult r = run_case(ks, t, TestCase{"wide", p}, be, 7);
      EXPECT_EQ(r.status, Status::Pass) << dtype_name(t) << ": " << r.message;
    }
    Params with_option = p;
    with_option[ks.options.front().name] = ks.options.front().lo;  // a tuning option with the wide window: refused
    EXPECT_THROW((void)ks.build(ks.dtypes.front(), with_option), std::invalid_argument);
  }
}

}  // namespace
