// kernels/activation/gelu.hpp — GELU elementwise over n values, and the gated activations SwiGLU / GeGLU over rows of a
// concatenated gate-up tensor.
//
//   gelu:  y = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))                         (exact)
//          y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))              (tanh approximation)
//   glu:   gu [rows, 2 D] holds each row's gate in columns 0 .. D-1 and its up projection in D .. 2D-1;
//          y [rows, D] = act(gate) * up, act = SiLU (SwiGLU), GELU (GeGLU) or GELU-tanh.
//
// One thread per output element, computed in f32 whatever the stored type and rounded once on store. n (gelu) and
// rows, D (glu) are run-time scalars: one compiled variant per dtype and form serves every size. Threads past the end
// of the launch skip the load and the store (ir.hpp, "Tail threads").
#pragma once

#include <cstdint>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

enum class GeluForm : std::uint32_t { exact = 0, tanh = 1 };
enum class GluAct : std::uint32_t { silu = 0, gelu = 1, gelu_tanh = 2 };
inline constexpr std::uint32_t kGluActs = 3;

// GELU of an f32 value in the chosen form.
inline dsl::Val<f32> gelu_of(const dsl::Val<f32>& v, GeluForm form) {
  using namespace ingot::dsl;
  if (form == GeluForm::exact) return 0.5f * v * (1.0f + erf(v * 0.70710678118654752f));
  const auto inner = 0.79788456080286536f * (v + 0.044715f * v * v * v);
  return 0.5f * v * (1.0f + tanh(inner));
}

template <class T>
void gelu(dsl::KernelBuilder& k, GeluForm form) {
  using namespace ingot::dsl;
  auto n = k.scalar<u32>("n");
  auto x = k.in<T>("x", n);
  auto y = k.out<T>("y", n);
  auto i = k.program_id(0);
  if_(i < n, [&] {
    auto v = k.let("v", cast<f32>(load(x, i)));
    store(y, i, cast<T>(gelu_of(v, form)));
  });
}

template <class T>
void glu(dsl::KernelBuilder& k, GluAct act) {
  using namespace ingot::dsl;
  auto rows = k.scalar<u32>("rows");
  auto D = k.scalar<u32>("D");
  k.require(rows >= 1u && D >= 1u);
  // gu holds 2 rows D elements: every index below fits 32 bits.
  k.require(cast<i64>(rows) * cast<i64>(D) * k.constant<i64>(2) <= k.constant<i64>(0xffffffffLL));
  auto gu = k.in<T>("gu", rows * D * 2u);
  auto y = k.out<T>("y", rows * D);
  auto i = k.program_id(0);
  if_(i < rows * D, [&] {
    auto r = k.let("r", i / D);
    auto d = k.let("d", i - r * D);
    auto at = k.let("at", 2u * r * D + d);
    auto gate = k.let("gate", cast<f32>(load(gu, at)));
    auto up = k.let("up", cast<f32>(load(gu, at + D)));
    Val<f32> a = gate / (1.0f + exp(-gate));
    if (act == GluAct::gelu) a = gelu_of(gate, GeluForm::exact);
    if (act == GluAct::gelu_tanh) a = gelu_of(gate, GeluForm::tanh);
    store(y, i, cast<T>(a * up));
  });
}

}  // namespace ingot::kernels
