// Properties of the rope kernel beyond the harness's oracle check: the angle's accuracy over the whole i32 range of
// positions (the cases draw them below 32768), and the refusals of shapes it cannot compute.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

#include "ingot/harness/harness.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/scalar_eval.hpp"

using namespace ingot;
using namespace ingot::harness;

namespace {

// Runs rope on the interpreter with the given host data; returns its output buffer.
std::vector<double> run_rope(const KernelSpec& s, const Params& p, const HostData& in, const std::string& out) {
  runtime::Interpreter dev;
  const ir::Kernel k = passes::optimize(s.build(DType::f32, p));
  std::vector<runtime::Arg> args(k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const auto& prm = k.params[i];
    if (!ir::is_buffer(prm.kind))
      args[i] = runtime::ScalarArg{prm.type, ir::bits_of_double(prm.type, in.scalars.at(prm.name))};
  }
  std::size_t result = 0;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const auto& prm = k.params[i];
    if (!ir::is_buffer(prm.kind)) continue;
    if (prm.name == out) result = i;
    if (prm.kind == ir::ParamKind::Out) {
      args[i] = dev.allocate(prm.type, runtime::required_extent(k, i, args));
    } else {
      args[i] = runtime::make_buffer(dev, prm.type, in.buffers.at(prm.name));
    }
  }
  dev.launch(k, s.geometry(DType::f32, p), args);
  return runtime::read_buffer(dev, *std::get<runtime::BufferPtr>(args[result]));
}

Params rope_case(std::int64_t tokens, std::int64_t rot, std::int64_t neox, std::int64_t theta, std::int64_t tables) {
  return {{"tokens", tokens}, {"heads", 2},     {"head_dim", 128}, {"rot", rot},
          {"neox", neox},     {"theta", theta}, {"inplace", 0},    {"tables", tables}};
}

}  // namespace

// rope.hpp: the angle is reduced exactly in integer turns, so its error does not grow with the position: within
// ~2.5e-7 rad below 2^24 (the registry's f32 tolerance, 1e-6 for x in [-1, 1]) and ~1e-6 rad at |pos| ~ 2^31.
TEST(Rope, AngleErrorStaysBoundedOverEveryI32Position) {
  const Registry reg = builtin_registry();
  const KernelSpec& s = *reg.find("rope");
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> any(-2147483648LL, 2147483647LL);
  std::uniform_int_distribution<std::int64_t> below24(-(1 << 24) + 1, (1 << 24) - 1);
  for (const std::int64_t tables : {0, 1}) {
    for (const std::int64_t neox : {0, 1}) {
      for (const std::int64_t theta : {10000, 1000000}) {
        const std::int64_t tokens = 64;
        const Params p = rope_case(tokens, 96, neox, theta, tables);
        HostData in = s.inputs(DType::f32, p, 3);
        std::vector<double> pos = {0, 1, 32767, 1 << 24, -(1 << 24), 2147483647.0, -2147483648.0};
        while (pos.size() < 36) pos.push_back(static_cast<double>(below24(rng)));
        while (pos.size() < static_cast<std::size_t>(tokens)) pos.push_back(static_cast<double>(any(rng)));
        in.buffers["pos"] = pos;
        const auto want = s.oracle(DType::f32, p, in).at("y");
        const auto got = run_rope(s, p, in, "y");
        ASSERT_EQ(want.size(), got.size());
        double small = 0, large = 0;
        for (std::size_t i = 0; i < want.size(); ++i) {
          const double err = std::fabs(got[i] - want[i]);
          const double position = pos[i / (2 * 128)];
          double& worst = std::fabs(position) < 16777216.0 ? small : large;
          worst = std::max(worst, err);
        }
        std::printf("rope tables=%lld neox=%lld theta=%lld: max |err| %.3g (|pos| < 2^24), %.3g (up to 2^31)\n",
                    static_cast<long long>(tables), static_cast<long long>(neox), static_cast<long long>(theta), small,
                    large);
        EXPECT_LE(small, 1e-6);
        EXPECT_LE(large, 2e-6);
      }
    }
  }
}

TEST(Rope, ShapesItCannotComputeAreRefused) {
  const Registry reg = builtin_registry();
  const KernelSpec& s = *reg.find("rope");
  const Params ok = rope_case(3, 64, 1, 10000, 0);
  for (const auto& [key, v] : std::vector<std::pair<std::string, std::int64_t>>{
           {"rot", 63}, {"rot", 130}, {"rot", 0}, {"tokens", 0}, {"heads", 0}, {"theta", 1}}) {
    Params p = ok;
    p[key] = v;
    EXPECT_THROW((void)s.build(DType::f32, p), std::invalid_argument) << key << " = " << v;
    EXPECT_THROW((void)s.geometry(DType::f32, p), std::invalid_argument) << key << " = " << v;
  }
  EXPECT_NO_THROW((void)s.build(DType::f32, ok));
}
