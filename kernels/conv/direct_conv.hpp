// kernels/conv/direct_conv.hpp — one generic direct convolution, written once in the DSL, for
// every dense convolution of the library: any number of spatial axes (1-D, 2-D, 3-D, ...),
// groups (depthwise included), channels-first (NC[D]HW) or channels-last (N[D]HWC) layout,
// per-axis kernel size, stride, zero padding and dilation, optional bias.
//
//   x [B, C, S0, S1, ...]  (channels-first)   or  [B, S0, S1, ..., C]  (channels-last)
//   w [O, C/groups, K0, K1, ...]              (OI[D]HW, in both layouts)
//   bias [O] (optional)
//   y [B, O, P0, P1, ...]  or  [B, P0, P1, ..., O]  (same layout as x)
//   P_a = (S_a + 2*pad_a - dil_a*(K_a-1) - 1) / stride_a + 1
//   y[b, o, p] = bias[o] + sum_{ci < C/groups} sum_{t} x[b, g*(C/groups) + ci, p*stride + t*dil - pad] * w[o, ci, t]
//   with g = o / (O/groups) and x = 0 outside the input (zero padding).
//
// Contract of the generated kernel (the library's rules, DESIGN.md §7):
// - one thread per output element, flat index = program_id(0) in the output's layout; launch
//   with grid_1d(B * out_per_batch(), any group size);
// - the batch B is a run-time u32 scalar ("batch"); every other size is a specialisation constant;
// - tail threads (flat index >= B*out_per_batch) clamp their index onto element 0 for every read
//   and skip their store; padding taps read a clamped in-range element and select() 0 instead;
// - accumulation in f32 for every element type; the result is rounded once to T on the store;
// - the spec is refused (std::invalid_argument from ConvSpec::validate, which the templates
//   call) when any per-batch element count does not fit 32-bit indices; the run time refuses a
//   batch that makes an extent overflow u32 (required_extent), and the registrations refuse it
//   for their cases at build (ConvSpec::check_batch).
//
// Weight hook. The weights are read through a callable, so that block-scaled (quantised)
// weights reuse this template unchanged:
//
//   direct_conv<T>(k, spec, make_weights)
//     make_weights(KernelBuilder& k, const ConvSpec& s) -> WeightFn
//       is called once, at the weights' place in the parameter list (after x, before bias);
//       it declares the weight buffers it needs (k.in<...>(...)) and returns WeightFn.
//     WeightFn is either
//       Val<f32> f(Val<u32> flat)                                   or
//       Val<f32> f(Val<u32> flat, Val<u32> row, Val<u32> col)
//     and returns the f32 weight at flat OI[D]HW index `flat` = row * s.weight_cols() + col, with
//     row = the output channel o and col = ci * s.taps() + tap (the filter viewed as a matrix
//     [O, (C/groups)*K0*K1*...], the view block-scaled formats scale along).
//     Tail threads call it with in-range indices (their row is clamped like every read).
//   DenseWeights<T> (the default) declares "w" : In<T>[weight_count()] and loads w[flat] as f32.
//
// Parameter order of direct_conv: batch, x, <weight buffers>, [bias], y. For full control of
// the parameter list, declare the buffers yourself and call direct_conv_body().
//
// Example (a quantised engineer's kernel, sketch):
//   direct_conv<T>(k, spec, [](KernelBuilder& k, const ConvSpec& s) {
//     auto q = k.in<u8>("wq", s.weight_count());
//     auto sc = k.in<f32>("w_scale", s.out_channels * (s.weight_cols() / 32));
//     return [=](Val<u32> flat, Val<u32> row, Val<u32> col) {
//       return cast<f32>(cast<i32>(load(q, flat)) - 128) * load(sc, row * (s.weight_cols() / 32) + col / 32u);
//     };
//   });
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

// Where the channel axis lies: NC[D]HW (channels-first) or N[D]HWC (channels-last).
enum class ConvLayout : std::uint8_t { ChannelsFirst, ChannelsLast };

// Every specialisation constant of a direct convolution. Per-axis vectors list the spatial axes
// outermost first (D, H, W); they all have rank() entries.
struct ConvSpec {
  std::string name = "conv";  // used in error messages
  ConvLayout layout = ConvLayout::ChannelsFirst;
  std::uint32_t in_channels = 1;
  std::uint32_t out_channels = 1;
  std::uint32_t groups = 1;
  std::vector<std::uint32_t> in_size;
  std::vector<std::uint32_t> ksize;
  std::vector<std::uint32_t> stride;
  std::vector<std::uint32_t> pad;  // zero padding on both sides of the axis
  std::vector<std::uint32_t> dilation;
  bool bias = false;

  [[nodiscard]] std::size_t rank() const { return in_size.size(); }
  [[nodiscard]] std::uint32_t in_per_group() const { return in_channels / groups; }
  [[nodiscard]] std::uint32_t out_per_group() const { return out_channels / groups; }

  // Output length of spatial axis a (validate() first).
  [[nodiscard]] std::uint64_t out_len(std::size_t a) const {
    const std::uint64_t span = std::uint64_t{dilation[a]} * (ksize[a] - 1) + 1;
    return (std::uint64_t{in_size[a]} + 2ull * pad[a] - span) / stride[a] + 1;
  }
  [[nodiscard]] std::vector<std::uint64_t> out_size() const {
    std::vector<std::uint64_t> o(rank());
    for (std::size_t a = 0; a < rank(); ++a) o[a] = out_len(a);
    return o;
  }
  [[nodiscard]] std::uint64_t in_spatial() const {
    std::uint64_t n = 1;
    for (auto s : in_size) n *= s;
    return n;
  }
  [[nodiscard]] std::uint64_t out_spatial() const {
    std::uint64_t n = 1;
    for (std::size_t a = 0; a < rank(); ++a) n *= out_len(a);
    return n;
  }
  // Kernel taps per (output channel, input channel) pair: K0*K1*...
  [[nodiscard]] std::uint64_t taps() const {
    std::uint64_t n = 1;
    for (auto k : ksize) n *= k;
    return n;
  }
  [[nodiscard]] std::uint64_t in_per_batch() const { return in_spatial() * in_channels; }
  [[nodiscard]] std::uint64_t out_per_batch() const { return out_spatial() * out_channels; }
  // The filter viewed as a matrix [O, weight_cols()]; weight_cols() is also the reduction length
  // of one output (without the bias).
  [[nodiscard]] std::uint64_t weight_cols() const { return taps() * in_per_group(); }
  [[nodiscard]] std::uint64_t weight_count() const { return weight_cols() * out_channels; }

  // Throws std::invalid_argument naming the problem for an impossible spec, or for one whose
  // per-batch element counts (or position arithmetic) would overflow 32-bit indices.
  void validate() const {
    auto fail = [&](const std::string& why) { throw std::invalid_argument(name + ": " + why); };
    const std::size_t r = rank();
    if (r == 0) fail("at least one spatial axis is needed");
    if (ksize.size() != r || stride.size() != r || pad.size() != r || dilation.size() != r) {
      fail("in_size, ksize, stride, pad and dilation need one entry per spatial axis");
    }
    if (in_channels < 1 || out_channels < 1 || groups < 1) fail("channels and groups must be >= 1");
    if (in_channels % groups != 0 || out_channels % groups != 0) {
      fail("groups (" + std::to_string(groups) + ") must divide the input channels (" + std::to_string(in_channels) +
           ") and the output channels (" + std::to_string(out_channels) + ")");
    }
    constexpr std::uint64_t kU32 = std::numeric_limits<std::uint32_t>::max();
    constexpr std::uint64_t kI32 = std::numeric_limits<std::int32_t>::max();
    for (std::size_t a = 0; a < r; ++a) {
      const std::string ax = "axis " + std::to_string(a);
      if (in_size[a] < 1 || ksize[a] < 1 || stride[a] < 1 || dilation[a] < 1) {
        fail(ax + ": size, kernel size, stride and dilation must be >= 1");
      }
      const std::uint64_t span = std::uint64_t{dilation[a]} * (ksize[a] - 1) + 1;
      const std::uint64_t padded = std::uint64_t{in_size[a]} + 2ull * pad[a];
      if (padded > kI32 || span > kI32) fail(ax + ": padded size and kernel span must be below 2^31");
      if (padded < span) fail(ax + ": the kernel (span " + std::to_string(span) + ") is wider than the padded input");
    }
    auto fits = [&](std::uint64_t v, const std::string& what) {
      if (v > kU32) {
        fail(what + " (" + std::to_string(v) + " elements) does not fit 32-bit indices; this kernel indexes with u32");
      }
    };
    // Products checked in steps so that no intermediate wraps 64 bits.
    std::uint64_t sp = 1;
    for (auto s : in_size) fits(sp *= s, "the input per batch");
    fits(in_per_batch(), "the input per batch");
    sp = 1;
    for (std::size_t a = 0; a < r; ++a) fits(sp *= out_len(a), "the output per batch");
    fits(out_per_batch(), "the output per batch");
    std::uint64_t t = 1;
    for (auto k : ksize) fits(t *= k, "the kernel taps");
    fits(weight_cols(), "a filter row");
    fits(weight_count(), "the weights");
  }

  // Throws std::invalid_argument if `batch` batches of input or output overflow 32-bit indices.
  void check_batch(std::uint64_t batch) const {
    constexpr std::uint64_t kU32 = std::numeric_limits<std::uint32_t>::max();
    if (batch < 1) throw std::invalid_argument(name + ": the batch must be >= 1");
    if (batch > kU32 / in_per_batch() || batch > kU32 / out_per_batch()) {
      throw std::invalid_argument(name + ": batch " + std::to_string(batch) + " x " +
                                  std::to_string(std::max(in_per_batch(), out_per_batch())) +
                                  " elements does not fit 32-bit indices; this kernel indexes with u32");
    }
  }
};

// The buffers and batch scalar a direct convolution reads and writes (bias only when spec.bias).
template <class T>
struct ConvIO {
  dsl::Val<u32> batch;
  dsl::In<T> x;
  dsl::In<T> bias;
  dsl::Out<T> y;
};

// The default weight source: dense weights of the element type T, in a buffer named `name`.
template <class T>
struct DenseWeights {
  std::string name = "w";
  auto operator()(dsl::KernelBuilder& k, const ConvSpec& s) const {
    auto w = k.in<T>(name, static_cast<std::uint32_t>(s.weight_count()));
    return [w](const dsl::Val<u32>& flat) { return dsl::cast<f32>(dsl::load(w, flat)); };
  }
};

namespace detail {

// Printer-friendly name of spatial axis a of r: the last three are d, h, w.
inline std::string conv_axis_name(std::size_t a, std::size_t r) {
  const std::size_t from_end = r - 1 - a;
  if (from_end < 3) return std::string(1, "whd"[from_end]);
  return "a" + std::to_string(a);
}

// One tap position along one axis: the clamped (always in-range) coordinate, and whether the
// true coordinate is inside the input (nullopt: always inside, known at trace time).
struct AxisTap {
  dsl::Val<u32> index;
  std::optional<dsl::Val<bool>> ok;
};

template <class F>
dsl::Val<f32> call_weight(const F& f, const dsl::Val<u32>& flat, const dsl::Val<u32>& row, const dsl::Val<u32>& col) {
  if constexpr (std::is_invocable_v<const F&, dsl::Val<u32>, dsl::Val<u32>, dsl::Val<u32>>) {
    return f(flat, row, col);
  } else {
    static_assert(std::is_invocable_v<const F&, dsl::Val<u32>>,
                  "a weight function takes (Val<u32> flat) or (Val<u32> flat, Val<u32> row, Val<u32> col)");
    return f(flat);
  }
}

}  // namespace detail

// The body of a direct convolution over buffers the caller declared: io.x must hold
// batch*in_per_batch() elements, io.y batch*out_per_batch(), io.bias out_channels (when
// s.bias); weight(...) returns the f32 weight at a flat OI[D]HW index (see the file comment).
template <class T, class WeightFn>
void direct_conv_body(dsl::KernelBuilder& k, const ConvSpec& s, const ConvIO<T>& io, const WeightFn& weight) {
  using namespace ingot::dsl;
  s.validate();
  const std::size_t R = s.rank();
  const bool last = s.layout == ConvLayout::ChannelsLast;
  const auto u = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };  // validated to fit
  const std::uint32_t O = s.out_channels, Cg = s.in_per_group(), Og = s.out_per_group();
  const std::uint32_t taps = u(s.taps()), wcols = u(s.weight_cols());
  const std::uint32_t out_sp = u(s.out_spatial()), in_sp = u(s.in_spatial());
  const auto P = s.out_size();

  // Row-major strides of the spatial axes (in elements of one channel plane).
  std::vector<std::uint32_t> out_stride(R), in_stride(R);
  for (std::size_t a = R, os = 1, is = 1; a-- > 0;) {
    out_stride[a] = u(os);
    in_stride[a] = u(is);
    os *= P[a];
    is *= s.in_size[a];
  }
  // In channels-last layouts the channel is innermost: every spatial stride is scaled by it.
  const std::uint32_t out_chan_mul = last ? O : 1, in_chan_mul = last ? s.in_channels : 1;
  const std::uint32_t in_chan_stride = last ? 1 : in_sp;

  auto gid = k.let("gid", k.program_id(0));
  auto n = k.let("n", io.batch * u(s.out_per_batch()));
  auto i = k.let("i", select(gid < n, gid, 0u));  // tail threads read element 0's operands
  // Decompose the flat output index in the output's layout.
  auto oc = last ? k.let("oc", i % O) : k.let("oc", (i / out_sp) % O);
  auto b = k.let("b", i / u(s.out_per_batch()));
  std::vector<Val<u32>> pos(R);
  for (std::size_t a = 0; a < R; ++a) {
    const std::uint32_t st = out_stride[a] * out_chan_mul;
    pos[a] = k.let("o" + detail::conv_axis_name(a, R), (st == 1 ? Val<u32>(i) : i / st) % u(P[a]));
  }

  // Per axis and tap: the input coordinate, clamped in range, and whether it is really inside.
  // Bounds known at trace time emit no test (no padding, or taps that never reach an edge).
  std::vector<std::vector<detail::AxisTap>> axis_taps(R);
  for (std::size_t a = 0; a < R; ++a) {
    const std::string ax = detail::conv_axis_name(a, R);
    const std::int64_t in = s.in_size[a], pd = s.pad[a], last_out = static_cast<std::int64_t>(P[a]) - 1;
    for (std::uint32_t t = 0; t < s.ksize[a]; ++t) {
      const std::int64_t off = static_cast<std::int64_t>(t) * s.dilation[a] - pd;
      const bool lo_safe = off >= 0;                           // never below 0
      const bool hi_safe = last_out * s.stride[a] + off < in;  // never past the end
      const std::string tag = ax + std::to_string(t);
      detail::AxisTap tap;
      if (lo_safe && hi_safe) {
        tap.index = k.let("p" + tag, pos[a] * s.stride[a] + static_cast<std::uint32_t>(off));
      } else {
        auto p = k.let("p" + tag, cast<i32>(pos[a] * s.stride[a]) + static_cast<std::int32_t>(off));
        Val<bool> ok = lo_safe   ? Val<bool>(p < static_cast<std::int32_t>(in))
                       : hi_safe ? Val<bool>(p >= 0)
                                 : Val<bool>(p >= 0 && p < static_cast<std::int32_t>(in));
        tap.ok = k.let("ok" + tag, ok);
        tap.index = k.let("q" + tag, select(*tap.ok, cast<u32>(p), 0u));
      }
      axis_taps[a].push_back(tap);
    }
  }
  // Per tap of the whole kernel window: the spatial offset into one input channel plane (times
  // the channel count in channels-last layouts) and the combined in-range flag.
  std::vector<std::uint32_t> tap_stride(R);  // row-major strides of the kernel window
  for (std::size_t a = R, ts = 1; a-- > 0;) {
    tap_stride[a] = u(ts);
    ts *= s.ksize[a];
  }
  std::vector<Val<u32>> tap_off(taps);
  std::vector<std::optional<Val<bool>>> tap_ok(taps);
  for (std::uint32_t t = 0; t < taps; ++t) {
    std::optional<Val<u32>> off;
    std::optional<Val<bool>> ok;
    int tests = 0;
    for (std::size_t a = 0; a < R; ++a) {
      const auto& at = axis_taps[a][(t / tap_stride[a]) % s.ksize[a]];
      const Val<u32> term = at.index * (in_stride[a] * in_chan_mul);
      off = off ? Val<u32>(*off + term) : term;
      if (at.ok) {
        ok = ok ? Val<bool>(*ok && *at.ok) : *at.ok;
        ++tests;
      }
    }
    const std::string tag = std::to_string(t);
    tap_off[t] = k.let("off" + tag, *off);
    if (tests > 1) ok = k.let("in" + tag, *ok);
    tap_ok[t] = ok;
  }

  // Channel base of this output's group and the row of its filter.
  Val<u32> c0 = 0u;
  if (s.groups > 1) c0 = k.let("c0", (oc / Og) * Cg);
  auto x_batch = k.let("xb", b * u(s.in_per_batch()));
  auto w_row = k.let("wr", oc * wcols);

  // acc += sum over taps of x * w, for input channel ci of the group.
  auto accumulate = [&](Val<f32> acc, const Val<u32>& ci) {
    auto xc = k.let("xc", x_batch + (c0 + ci) * in_chan_stride);
    const Val<u32> col0 = ci * taps;
    for (std::uint32_t t = 0; t < taps; ++t) {
      auto xv = cast<f32>(load(io.x, xc + tap_off[t]));
      if (tap_ok[t]) xv = select(*tap_ok[t], xv, 0.0f);
      const Val<u32> col = col0 + t;
      auto wv = detail::call_weight(weight, w_row + col, oc, col);
      acc = acc + xv * wv;
    }
    return acc;
  };

  Val<f32> init = s.bias ? cast<f32>(load(io.bias, oc)) : Val<f32>(0.0f);
  Val<f32> result;
  if (Cg == 1) {
    result = accumulate(init, 0u);
  } else {
    Var<f32> acc(k, init, "acc");
    const Val<u32> zero(&k, k.kernel().exprs.const_u32(0));
    for_(zero, Cg, [&](Val<u32> ci) { acc = accumulate(acc, ci); });
    result = acc;
  }
  if_(gid < n, [&] { store(io.y, gid, result); });
}

// direct_conv's parameter list with dense weights (batch, x, w, [bias], y), for kernels that read
// the weights themselves (grouped_conv_nchw.hpp, grouped_conv_mma.hpp).
template <class T>
struct DenseConvParams {
  ConvIO<T> io;
  dsl::In<T> w;
};

// Throws std::invalid_argument unless k declares launch bounds of a multiple of 32 threads and at least G (the
// sub-group kernels: mma, load_matrix, shuffles need whole warps); `what` names the kernel in the message.
inline void require_warp_launch_bounds(dsl::KernelBuilder& k, const ConvSpec& s, std::uint32_t G,
                                       const std::string& what) {
  const std::uint32_t bound = k.kernel().bounds.max_group_threads;
  if (bound < G || bound % 32 != 0) {
    throw std::invalid_argument(s.name + ": " + what + " needs launch bounds of a multiple of 32 threads, at least " +
                                std::to_string(G));
  }
}

// Validates s and throws std::invalid_argument unless it is a 2-D NHWC depthwise spec (groups = C = O); `kernel` names
// the kernel in the message.
inline void require_depthwise_nhwc_spec(const ConvSpec& s, const std::string& kernel) {
  s.validate();
  if (s.rank() != 2 || s.layout != ConvLayout::ChannelsLast || s.groups != s.in_channels ||
      s.out_channels != s.in_channels) {
    throw std::invalid_argument(s.name + ": " + kernel + " needs a 2-D NHWC depthwise spec (groups = C = O)");
  }
}

template <class T>
DenseConvParams<T> declare_dense_conv_params(dsl::KernelBuilder& k, const ConvSpec& s) {
  DenseConvParams<T> p;
  p.io.batch = k.scalar<u32>("batch");
  p.io.x = k.in<T>("x", p.io.batch * static_cast<std::uint32_t>(s.in_per_batch()));
  p.w = k.in<T>("w", static_cast<std::uint32_t>(s.weight_count()));
  if (s.bias) p.io.bias = k.in<T>("bias", s.out_channels);
  p.io.y = k.out<T>("y", p.io.batch * static_cast<std::uint32_t>(s.out_per_batch()));
  return p;
}

// A whole direct-convolution kernel: declares batch, x, the weights (through make_weights),
// bias (when s.bias) and y, in that order, then emits the body. T is the element type of x,
// bias and y (f32, f16 or bf16).
template <class T, class MakeWeights = DenseWeights<T>>
void direct_conv(dsl::KernelBuilder& k, const ConvSpec& s, const MakeWeights& make_weights = {}) {
  s.validate();
  ConvIO<T> io;
  io.batch = k.scalar<u32>("batch");
  io.x = k.in<T>("x", io.batch * static_cast<std::uint32_t>(s.in_per_batch()));
  const auto weight = make_weights(k, s);
  if (s.bias) io.bias = k.in<T>("bias", s.out_channels);
  io.y = k.out<T>("y", io.batch * static_cast<std::uint32_t>(s.out_per_batch()));
  direct_conv_body<T>(k, s, io, weight);
}

}  // namespace ingot::kernels
