// kernels/support/trace.hpp — what every family's registration shares to trace a kernel: the element type of a
// run-time dtype as a template argument, a bounded integer option, and the refusal of shapes past 32-bit indices.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "ingot/dsl.hpp"
#include "ingot/harness/registry.hpp"

namespace ingot::kernels {

template <class T>
struct TypeTag {
  using type = T;
};

// Traces body(TypeTag<T>{}, builder) for the element type named by t (f32, f16 or bf16), under
// the name "<name>_<dtype>".
template <class F>
ir::Kernel trace_typed(DType t, const std::string& name, const harness::Params&, F&& body) {
  const std::string full = name + "_" + std::string(dtype_name(t));
  switch (t) {
    case DType::f32: return trace(full, [&](KernelBuilder& k) { body(TypeTag<float>{}, k); });
    case DType::f16: return trace(full, [&](KernelBuilder& k) { body(TypeTag<f16>{}, k); });
    case DType::bf16: return trace(full, [&](KernelBuilder& k) { body(TypeTag<bf16>{}, k); });
    default: break;
  }
  throw std::invalid_argument(name + ": dtype " + std::string(dtype_name(t)) + " is not supported (f32, f16, bf16)");
}

// A case parameter that must be an integer in [lo, hi]; `dflt` when the case does not carry it.
// Throws std::invalid_argument naming the kernel, the key and the range otherwise (never a silent
// wrap to 32 bits).
inline std::uint32_t bounded_param(const harness::Params& p, const std::string& key, std::int64_t lo, std::int64_t hi,
                                   std::uint32_t dflt, const std::string& kernel) {
  if (!p.count(key)) return dflt;
  const std::int64_t v = harness::param(p, key);
  if (v < lo || v > hi) {
    throw std::invalid_argument(kernel + ": " + key + " = " + std::to_string(v) + " must be in [" + std::to_string(lo) +
                                ", " + std::to_string(hi) + "]");
  }
  return static_cast<std::uint32_t>(v);
}

// Kernels that index with u32: throws std::invalid_argument unless `elements` (the largest
// buffer, batch included) fits, saying what to change.
inline void check_u32_elements(const std::string& kernel, std::uint64_t batch, std::uint64_t per_batch) {
  constexpr std::uint64_t kU32 = 0xffffffffu;
  if (batch < 1) throw std::invalid_argument(kernel + ": the batch must be >= 1");
  if (per_batch > kU32 / batch) {
    throw std::invalid_argument(
        kernel + ": batch " + std::to_string(batch) + " x " + std::to_string(per_batch) +
        " elements does not fit 32-bit indices (this kernel indexes with u32): use a smaller batch or shape");
  }
}

// Kernels traced with 64-bit indexes (blocks/index_width.hpp): throws std::invalid_argument unless `batch` x
// `per_batch` elements fit 2^62 (far past any device's memory; the products of indexes stay in i64).
inline void check_i64_elements(const std::string& kernel, std::uint64_t batch, std::uint64_t per_batch) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 62;
  if (batch < 1) throw std::invalid_argument(kernel + ": the batch must be >= 1");
  if (per_batch > kMax / batch) {
    throw std::invalid_argument(kernel + ": batch " + std::to_string(batch) + " x " + std::to_string(per_batch) +
                                " elements is past 2^62, even for 64-bit indices: use a smaller batch or shape");
  }
}

// The index-width option of kernels that come in both widths (blocks/index_width.hpp).
inline harness::OptionSpec index_width_option() {
  return {"i64", 0, 1,
          "i64 = 1: 64-bit indexes; default 1 exactly where the launch reaches 2^32 elements (smaller ones keep u32)"};
}

// The index width of a case: its i64, or by default i64 exactly where `elements` (the largest buffer or thread count of
// the launch) needs it. The default is chosen per launch, so launches below 2^32 elements keep the 32-bit form's speed.
inline bool wide_index_param(const harness::Params& p, std::uint64_t elements, const std::string& kernel) {
  if (p.count("i64")) return harness::option_value({index_width_option()}, p, "i64", 0, kernel) == 1;
  return elements > 0xffffffffull;
}

}  // namespace ingot::kernels
