// A consumer of the installed ingot package: runs the library's silu on the checked interpreter and checks the
// result against the formula. Exits 0 when every element agrees.
#include <cmath>
#include <cstdio>
#include <vector>

#include <ingot/library.hpp>
#include <ingot/runtime/interp.hpp>

int main() {
  using namespace ingot;
  const harness::Registry registry = harness::builtin_registry();
  const harness::KernelSpec* silu = registry.find("silu");
  if (!silu) {
    std::fprintf(stderr, "consumer: the installed library has no silu\n");
    return 1;
  }
  const std::int64_t n = 1000;  // not a multiple of the work-group size: tail threads run
  const harness::Params params{{"n", n}};
  const ir::Kernel kernel = silu->build(DType::f32, params);
  std::vector<double> x(n);
  for (std::int64_t i = 0; i < n; ++i) x[i] = -4.0 + 8.0 * static_cast<double>(i) / static_cast<double>(n);

  runtime::Interpreter cpu;
  auto xb = runtime::make_buffer(cpu, DType::f32, x);
  auto yb = cpu.allocate(DType::f32, n);
  cpu.launch(kernel, silu->geometry(DType::f32, params), {runtime::scalar_arg<std::uint32_t>(n), xb, yb});
  const std::vector<double> y = runtime::read_buffer(cpu, *yb);

  int bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double want = x[i] / (1.0 + std::exp(-x[i]));
    if (!(std::abs(y[i] - want) <= 1e-5 + 1e-5 * std::abs(want))) ++bad;
  }
  std::printf("consumer: silu on %lld elements, %d wrong\n", static_cast<long long>(n), bad);
  return bad == 0 ? 0 : 1;
}
