// The registration of rotary position embedding (rope.hpp): its cases, inputs, f64 oracle, tolerance and bench
// arithmetic.
#include "rope/rope.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rope/register.hpp"
#include "support/inputs.hpp"
#include "support/trace.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;

// Positions of the cases: uniform in [0, 32768), the context lengths where an f32 angle pos * inv_freq loses ~1e-3 rad.
constexpr std::int64_t kPositions = 32768;

struct Shape {
  std::int64_t tokens, heads, head_dim, rot;
  bool neox = true;
  std::int64_t theta = 10000;
  bool inplace = false;
};

Params shape(const Shape& s) {
  return {{"tokens", s.tokens},     {"heads", s.heads}, {"head_dim", s.head_dim},      {"rot", s.rot},
          {"neox", s.neox ? 1 : 0}, {"theta", s.theta}, {"inplace", s.inplace ? 1 : 0}};
}

std::vector<harness::OptionSpec> rope_options() {
  return {{"tables", 0, 1,
           "tables = 1: each pair's frequency from two select trees of constants and one product; default 0, one "
           "product per bit of the pair index"}};
}

Params with(Params p, const std::string& key, std::int64_t v) {
  p[key] = v;
  return p;
}

RopeSpec spec_of(const Params& p) {
  RopeSpec s;
  s.head_dim = bounded_param(p, "head_dim", 2, 1024, 128, "rope");
  // rot's range is checked with head_dim's (RopeSpec::check) so the refusal names both.
  const std::int64_t rot = param(p, "rot");
  if (rot < 0 || rot > 1024) {
    throw std::invalid_argument("rope: rot = " + std::to_string(rot) +
                                " must be even and in [2, head_dim = " + std::to_string(s.head_dim) + "]");
  }
  s.rot = static_cast<std::uint32_t>(rot);
  s.neox = bounded_param(p, "neox", 0, 1, 1, "rope") == 1;
  s.theta = bounded_param(p, "theta", 2, 1000000000, 10000, "rope");
  s.inplace = bounded_param(p, "inplace", 0, 1, 0, "rope") == 1;
  s.tables = harness::option_value(rope_options(), p, "tables", 0, "rope") == 1;
  s.check();
  return s;
}

// tokens and heads of a case: each >= 1 and tokens x heads x head_dim within 32-bit indexes (the kernel's k.require
// says the same to a caller with its own buffers).
std::pair<std::uint64_t, std::uint64_t> sizes(const Params& p) {
  const std::int64_t tokens = param(p, "tokens");
  const std::int64_t heads = param(p, "heads");
  if (tokens < 1) throw std::invalid_argument("rope: tokens = " + std::to_string(tokens) + " must be >= 1");
  if (heads < 1) throw std::invalid_argument("rope: heads = " + std::to_string(heads) + " must be >= 1");
  const RopeSpec s = spec_of(p);
  check_u32_elements("rope", static_cast<std::uint64_t>(tokens),
                     static_cast<std::uint64_t>(heads) * static_cast<std::uint64_t>(s.head_dim));
  return {static_cast<std::uint64_t>(tokens), static_cast<std::uint64_t>(heads)};
}

}  // namespace

void register_rope(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = "rope";
  s.family = "rope";
  s.description =
      "rotary position embedding of x[tokens, heads, head_dim] by positions pos[tokens] (i32): the first rot features "
      "rotate in pairs by pos * theta^(-2i/rot) (neox 1: pairs (i, i + rot/2); 0: GPT-J's (2i, 2i + 1)), the rest pass "
      "through; out of place (y) or in place (inplace 1); angles reduced exactly in integers";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"head_dim", "rot", "neox", "theta", "inplace"};
  s.value_names["neox"] = {"gptj", "neox"};
  for (const auto& o : rope_options()) s.add_option(o);
  s.runtime_params = {"tokens", "heads"};
  s.scalar_params = {{"tokens", "tokens"}, {"heads", "heads"}};
  s.tests = {
      {"t1_h1_d64", shape({1, 1, 64, 64})},                                     // one token, one head: 32 threads
      {"t3_h5_d64_gptj", shape({3, 5, 64, 64, false})},                         // odd counts, interleaved pairs
      {"t7_h3_d128", shape({7, 3, 128, 128})},                                  //
      {"t5_h7_d128_rot64", shape({5, 7, 128, 64})},                             // partial rotation: 64 pass through
      {"t5_h7_d128_rot32_gptj", shape({5, 7, 128, 32, false})},                 //
      {"t9_h3_d72_rot18", shape({9, 3, 72, 18})},                               // 9 pairs: not a power of two
      {"t33_h9_d128_theta500000", shape({33, 9, 128, 128, true, 500000})},      // Llama 3's base
      {"t1_h3_d64_rot2_gptj", shape({1, 3, 64, 2, false})},                     // one pair per head
      {"t5_h3_d128_rot64_inplace", shape({5, 3, 128, 64, true, 10000, true})},  // pass-through left alone
      {"t7_h5_d64_gptj_inplace", shape({7, 5, 64, 64, false, 10000, true})},    //
      // Tuning options (ingot test --all-variants): the frequency from tables.
      {"t7_h3_d128_tables", with(shape({7, 3, 128, 128}), "tables", 1)},
      {"t9_h3_d72_rot18_tables", with(shape({9, 3, 72, 18}), "tables", 1)},
      {"t1_h3_d64_rot2_gptj_tables", with(shape({1, 3, 64, 2, false}), "tables", 1)},
  };
  // A 7B-class decoder (32 heads, head_dim 128) at 1, 64 and 256 tokens per step, and a prefill-sized 8192 that is
  // memory-bound.
  for (const std::int64_t T : {1, 64, 256, 8192}) {
    const std::string name = "t" + std::to_string(T) + "_h32_d128";
    s.bench.push_back({name, shape({T, 32, 128, 128})});
    if (T == 8192) {
      s.bench.push_back({name + "_gptj", shape({T, 32, 128, 128, false})});
      s.bench.push_back({name + "_inplace", shape({T, 32, 128, 128, true, 10000, true})});
    }
  }
  s.build = [](DType t, const Params& p) {
    (void)sizes(p);
    const RopeSpec sp = spec_of(p);
    return trace_typed(t, "rope", p, [&](auto tag, KernelBuilder& k) { rope<typename decltype(tag)::type>(k, sp); });
  };
  s.geometry = [](DType, const Params& p) {
    const auto [tokens, heads] = sizes(p);
    return runtime::grid_1d(tokens * heads * spec_of(p).row_threads(), 256);
  };
  s.shapes = [](DType, const Params& p) {
    const auto [tokens, heads] = sizes(p);
    const std::uint64_t D = spec_of(p).head_dim;
    std::map<std::string, std::vector<std::uint64_t>> m{{"x", {tokens, heads, D}}, {"pos", {tokens}}};
    if (!spec_of(p).inplace) m["y"] = {tokens, heads, D};
    return m;
  };
  // x in [-1, 1]; positions uniform in [0, 32768).
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    const auto [tokens, heads] = sizes(p);
    harness::HostData d;
    d.scalars["tokens"] = static_cast<double>(tokens);
    d.scalars["heads"] = static_cast<double>(heads);
    d.buffers["x"] = random_values(t, tokens * heads * spec_of(p).head_dim, seed, -1.0, 1.0);
    std::mt19937_64 rng(seed + 1);
    std::uniform_int_distribution<std::int64_t> dist(0, kPositions - 1);
    std::vector<double> pos(tokens);
    for (auto& v : pos) v = static_cast<double>(dist(rng));
    d.buffers["pos"] = pos;
    return d;
  };
  s.oracle = [](DType, const Params& p, const harness::HostData& d) {
    const RopeSpec sp = spec_of(p);
    const auto& x = harness::buffer_values(d, "x", "rope");
    const auto& pos = harness::buffer_values(d, "pos", "rope");
    const std::size_t D = sp.head_dim, half = sp.rot / 2;
    std::vector<double> y = x;
    for (std::size_t row = 0; row * D < x.size(); ++row) {
      const double position = pos[row / (x.size() / D / pos.size())];
      for (std::size_t i = 0; i < half; ++i) {
        const double angle = position * std::pow(static_cast<double>(sp.theta),
                                                 -2.0 * static_cast<double>(i) / static_cast<double>(sp.rot));
        const std::size_t i1 = row * D + (sp.neox ? i : 2 * i);
        const std::size_t i2 = sp.neox ? i1 + half : i1 + 1;
        y[i1] = x[i1] * std::cos(angle) - x[i2] * std::sin(angle);
        y[i2] = x[i2] * std::cos(angle) + x[i1] * std::sin(angle);
      }
    }
    return std::map<std::string, std::vector<double>>{{sp.inplace ? "x" : "y", y}};
  };
  // The angle is within ~2.5e-7 rad of the exact one at every position below 2^24 (rope.hpp: the turn reduced exactly
  // in integers, the rest truncated to 2^-26 turn, then polynomials on an eighth of a turn), so an f32 output errs by
  // at most ~2.5e-7 (|x1| + |x2|) plus the rotation's own roundings: 1e-6 for x in [-1, 1] (the largest error seen on
  // the interpreter, PoCL and lavapipe, over several seeds and positions up to 2^24, is below 3e-7). 16-bit outputs add
  // their rounding (half an ulp, room for one). The usual f32 angle pos * inv_freq is off by up to ~3e-3 rad at these
  // positions and would fail by three orders of magnitude.
  s.tolerance = [](DType t, const Params&) {
    switch (t) {
      case DType::f16: return harness::Tolerance{1e-6, 1e-3};
      case DType::bf16: return harness::Tolerance{1e-6, 8e-3};
      default: return harness::Tolerance{1e-6, 1e-5};
    }
  };
  // x read and y written once (in place: only the rotated features), and one i32 position per token.
  s.bytes = [](DType t, const Params& p) {
    const RopeSpec sp = spec_of(p);
    const double rows = static_cast<double>(param(p, "tokens")) * static_cast<double>(param(p, "heads"));
    const double moved = sp.inplace ? sp.rot : sp.head_dim;
    return 2.0 * static_cast<double>(dtype_size(t)) * rows * moved + 4.0 * static_cast<double>(param(p, "tokens"));
  };
  // The rotation's 4 products and 2 sums per pair (the angle's reduction and sin / cos are not counted).
  s.flops = [](const Params& p) {
    return 6.0 * static_cast<double>(param(p, "tokens")) * static_cast<double>(param(p, "heads")) *
           static_cast<double>(param(p, "rot") / 2);
  };
  r.add(std::move(s));
}

}  // namespace ingot::kernels
