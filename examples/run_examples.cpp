// ingot-examples: traces the example kernels, prints their IR, runs them on the checked
// interpreter and compares them with their CPU oracles. Exit status 0 only if every check ran
// and passed. Closing line: "N passed, N failed, N skipped".
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <ingot/ir_print.hpp>
#include <ingot/passes/pipeline.hpp>
#include <ingot/runtime/interp.hpp>

#include "depthwise_conv1d.hpp"
#include "reference.hpp"
#include "vector_add.hpp"

using namespace ingot;

namespace {

struct Counts {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
};

void check(Counts& c, const std::string& name, const std::function<std::string()>& body) {
  std::string problem;
  try {
    problem = body();
  } catch (const std::exception& e) {
    problem = std::string("exception: ") + e.what();
  }
  if (problem.empty()) {
    ++c.passed;
    std::printf("PASS %s\n", name.c_str());
  } else {
    ++c.failed;
    std::printf("FAIL %s: %s\n", name.c_str(), problem.c_str());
  }
}

template <class T>
std::string run_vector_add(runtime::Backend& be, std::uint32_t n) {
  const DType t = dtype_of<T>;
  auto k = passes::optimize(trace("vector_add_" + std::string(dtype_name(t)), examples::vector_add<T>));
  const auto x = examples::random_values(t, n, 1);
  const auto y = examples::random_values(t, n, 2);
  auto bx = runtime::make_buffer(be, t, x);
  auto by = runtime::make_buffer(be, t, y);
  auto bz = be.allocate(t, n);
  be.launch(k, runtime::grid_1d(n, 256), {runtime::scalar_arg<std::uint32_t>(n), bx, by, bz});
  const auto z = runtime::read_buffer(be, *bz);
  std::vector<double> want(n);
  for (std::uint32_t i = 0; i < n; ++i) want[i] = ir::double_of_bits(t, ir::bits_of_double(t, x[i] + y[i]));
  const auto bad = examples::first_mismatch(want, z, examples::conv_tolerance(t, 2));
  if (bad >= 0) {
    return "element " + std::to_string(bad) + ": expected " + std::to_string(want[bad]) + ", got " +
           std::to_string(z[bad]);
  }
  return "";
}

template <class T>
std::string run_conv(runtime::Backend& be, const examples::Conv1dShape& s, std::uint32_t batch, bool print_ir) {
  const DType t = dtype_of<T>;
  auto traced = trace("depthwise_conv1d_" + std::string(dtype_name(t)),
                      [&](KernelBuilder& k) { examples::depthwise_conv1d<T>(k, s, examples::TailPolicy::Guarded); });
  auto k = passes::optimize(std::move(traced));
  if (print_ir) std::printf("%s", ir::print_kernel(k).c_str());
  const std::uint32_t O = s.out_len();
  const auto x = examples::random_values(t, static_cast<std::size_t>(batch) * s.channels * s.length, 11);
  const auto w = examples::random_values(t, static_cast<std::size_t>(s.channels) * s.ksize, 12);
  const std::size_t n = static_cast<std::size_t>(batch) * s.channels * O;
  auto bx = runtime::make_buffer(be, t, x);
  auto bw = runtime::make_buffer(be, t, w);
  auto by = be.allocate(t, n);
  be.launch(k, runtime::grid_1d(n, 256), {runtime::scalar_arg<std::uint32_t>(batch), bx, bw, by});
  const auto got = runtime::read_buffer(be, *by);
  const auto want = examples::depthwise_conv1d_reference(s, batch, x, w);
  const auto bad = examples::first_mismatch(want, got, examples::conv_tolerance(t, s.ksize));
  if (bad >= 0) {
    return "element " + std::to_string(bad) + ": expected " + std::to_string(want[bad]) + ", got " +
           std::to_string(got[bad]);
  }
  return "";
}

// The negative test: the unguarded kernel must be stopped by the interpreter.
std::string run_unguarded(runtime::Backend& be, const examples::Conv1dShape& s) {
  auto k = trace("depthwise_conv1d_unguarded_f16",
                 [&](KernelBuilder& b) { examples::depthwise_conv1d<f16>(b, s, examples::TailPolicy::Unguarded); });
  const std::uint32_t O = s.out_len();
  auto bx =
      runtime::make_buffer(be, DType::f16, examples::random_values(DType::f16, std::size_t{s.channels} * s.length, 3));
  auto bw =
      runtime::make_buffer(be, DType::f16, examples::random_values(DType::f16, std::size_t{s.channels} * s.ksize, 4));
  auto by = be.allocate(DType::f16, std::size_t{s.channels} * O);
  try {
    be.launch(k, runtime::grid_1d(std::size_t{s.channels} * O, 256),
              {runtime::scalar_arg<std::uint32_t>(1), bx, bw, by});
  } catch (const runtime::LaunchError& e) {
    std::printf("  caught as expected: %s\n", e.what());
    if (e.buffer != "x" || e.problem != "out-of-range load") return std::string("wrong report: ") + e.what();
    return "";
  }
  return "the unguarded kernel ran without an out-of-range report";
}

}  // namespace

int main() {
  runtime::Interpreter interp;
  Counts c;
  for (std::uint32_t n : {1000u, 256u, 1u}) {
    check(c, "vector_add f32 n=" + std::to_string(n), [&] { return run_vector_add<f32>(interp, n); });
  }
  check(c, "vector_add f16 n=1000", [&] { return run_vector_add<f16>(interp, 1000); });
  check(c, "vector_add bf16 n=1000", [&] { return run_vector_add<bf16>(interp, 1000); });

  // 8 channels x 15 outputs = 120 (136 tail threads) and 3 x 17 = 51, as in REFERENCE.md.
  const examples::Conv1dShape s8{8, 17, 3, 1, 0, 1};  // out_len 15
  const examples::Conv1dShape s3{3, 19, 3, 1, 0, 1};  // out_len 17
  const examples::Conv1dShape strided{5, 40, 4, 2, 3, 2};
  bool printed = false;
  for (const auto* s : {&s8, &s3, &strided}) {
    for (std::uint32_t batch : {1u, 3u}) {
      const std::string shape = "C" + std::to_string(s->channels) + " L" + std::to_string(s->length) + " K" +
                                std::to_string(s->ksize) + " stride" + std::to_string(s->stride) + " pad" +
                                std::to_string(s->pad) + " dil" + std::to_string(s->dilation) + " B" +
                                std::to_string(batch);
      check(c, "depthwise_conv1d f32 " + shape, [&] { return run_conv<f32>(interp, *s, batch, !printed); });
      printed = true;
      check(c, "depthwise_conv1d f16 " + shape, [&] { return run_conv<f16>(interp, *s, batch, false); });
      check(c, "depthwise_conv1d bf16 " + shape, [&] { return run_conv<bf16>(interp, *s, batch, false); });
    }
  }
  check(c, "depthwise_conv1d unguarded 8x15 is caught", [&] { return run_unguarded(interp, s8); });
  check(c, "depthwise_conv1d unguarded 3x17 is caught", [&] { return run_unguarded(interp, s3); });

  std::printf("%d passed, %d failed, %d skipped\n", c.passed, c.failed, c.skipped);
  return (c.failed == 0 && c.passed > 0) ? 0 : 1;
}
