// tests/unit/conversions.hpp — checks that a backend's f16/bf16 conversions give exactly the
// host's bits (dtype.cpp): every 16-bit pattern to f32, and 2^20 random plus edge f32 patterns to
// f16 and bf16, through scalar stores and through 2-element vector stores (the CUDA printer packs
// those with one cvt): bit for bit, except that a NaN may come back as any quiet NaN (ir.hpp).
// Shared by the interpreter, OpenCL and CUDA test suites.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ingot/dsl.hpp"
#include "ingot/runtime/backend.hpp"

namespace ingot::testing {

template <class From, class To>
ir::Kernel conversion_kernel(const std::string& name) {
  return trace(name, [](KernelBuilder& k) {
    using namespace ingot::dsl;
    auto n = k.scalar<u32>("n");
    auto x = k.in<From>("x", n);
    auto y = k.out<To>("y", n);
    auto i = k.program_id(0);
    auto v = load(x, select(i < n, i, 0u));
    if_(i < n, [&] { store(y, i, cast<float>(v)); });
  });
}

// The same conversion to a 16-bit float, two elements per thread through one store_vec.
template <class To>
ir::Kernel conversion_kernel_vec2(const std::string& name) {
  return trace(name, [](KernelBuilder& k) {
    using namespace ingot::dsl;
    auto n = k.scalar<u32>("n");  // even
    auto x = k.in<float>("x", n);
    auto y = k.out<To>("y", n);
    auto i = k.program_id(0);
    auto at = k.let("at", select(i < n / 2u, i, 0u) * 2u);
    std::vector<Val<float>> v{load(x, at), load(x, at + 1u)};
    if_(i < n / 2u, [&] { store_vec(y, at, v); });
  });
}

// Runs kernel on raw input bits, returns raw output bytes.
// threads: launch size (default n).
inline std::vector<std::uint8_t> run_raw(runtime::Backend& be, const ir::Kernel& k, DType in, DType out,
                                         const std::vector<std::uint8_t>& input, std::uint32_t threads,
                                         std::uint32_t n = 0) {
  if (n == 0) n = threads;
  auto x = be.allocate(in, n);
  be.upload(*x, input.data(), input.size());
  auto y = be.allocate(out, n);
  be.launch(k, runtime::grid_1d(threads, 256), {runtime::scalar_arg<std::uint32_t>(n), x, y});
  std::vector<std::uint8_t> bytes(y->bytes());
  be.download(*y, bytes.data(), bytes.size());
  return bytes;
}

inline void expect_conversions_match_host(runtime::Backend& be) {
  // 16-bit -> f32: every pattern.
  std::vector<std::uint8_t> all16(65536 * 2);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    all16[2 * h] = static_cast<std::uint8_t>(h);
    all16[2 * h + 1] = static_cast<std::uint8_t>(h >> 8);
  }
  for (DType t : {DType::f16, DType::bf16}) {
    const auto k = t == DType::f16 ? conversion_kernel<f16, float>("h2f") : conversion_kernel<bf16, float>("b2f");
    const auto got = run_raw(be, k, t, DType::f32, all16, 65536);
    int bad = 0;
    for (std::uint32_t h = 0; h < 65536 && bad < 5; ++h) {
      const float want = t == DType::f16 ? f16_bits_to_f32(static_cast<std::uint16_t>(h))
                                         : bf16_bits_to_f32(static_cast<std::uint16_t>(h));
      std::uint32_t g = 0;
      std::memcpy(&g, got.data() + 4 * h, 4);
      // A NaN may come back as any quiet NaN (ir.hpp: "NaN stays a quiet NaN"; the payload is
      // not specified, and CUDA's cvt does not keep it); everything else bit for bit.
      const bool nan_ok = want != want && (g & 0x7fc00000u) == 0x7fc00000u;
      if (g != std::bit_cast<std::uint32_t>(want) && !nan_ok) {
        ADD_FAILURE() << be.name() << " " << dtype_name(t) << " pattern 0x" << std::hex << h << " -> 0x" << g
                      << ", host 0x" << std::bit_cast<std::uint32_t>(want);
        ++bad;
      }
    }
  }
  // f32 -> 16-bit: edge cases and random patterns.
  std::vector<std::uint32_t> f;
  for (std::uint32_t b : {0x00000000u, 0x80000000u, 0x3f800000u, 0x477fe000u, 0x477ff000u, 0x477fefffu, 0x7f800000u,
                          0xff800000u, 0x7fc00000u, 0xffc00001u, 0x33000000u, 0x33000001u, 0x387fe000u, 0x387ff000u,
                          0x38800000u, 0x3f801000u, 0x3f803000u, 0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0x00000001u}) {
    f.push_back(b);
  }
  std::mt19937 rng(11);
  while (f.size() < (1u << 20)) f.push_back(rng());
  std::vector<std::uint8_t> in(f.size() * 4);
  std::memcpy(in.data(), f.data(), in.size());
  const auto n = static_cast<std::uint32_t>(f.size());
  for (DType t : {DType::f16, DType::bf16}) {
    for (const bool vec : {false, true}) {
      ir::Kernel k;
      if (vec) {
        k = t == DType::f16 ? conversion_kernel_vec2<f16>("f2h_vec2") : conversion_kernel_vec2<bf16>("f2b_vec2");
      } else {
        k = t == DType::f16 ? conversion_kernel<float, f16>("f2h") : conversion_kernel<float, bf16>("f2b");
      }
      const auto got = run_raw(be, k, DType::f32, t, in, vec ? n / 2 : n, n);
      // a quiet NaN of the 16-bit type: exponent all ones and the top mantissa bit set
      const std::uint16_t quiet = t == DType::f16 ? 0x7e00u : 0x7fc0u;
      int bad = 0;
      for (std::uint32_t i = 0; i < n && bad < 5; ++i) {
        const float x = std::bit_cast<float>(f[i]);
        const std::uint16_t want = t == DType::f16 ? f32_to_f16_bits(x) : f32_to_bf16_bits(x);
        const std::uint16_t g = static_cast<std::uint16_t>(got[2 * i] | (got[2 * i + 1] << 8));
        if (g != want && !(x != x && (g & quiet) == quiet)) {
          ADD_FAILURE() << be.name() << (vec ? " (vector store)" : "") << " f32 0x" << std::hex << f[i] << " -> "
                        << dtype_name(t) << " 0x" << g << ", host 0x" << want;
          ++bad;
        }
      }
    }
  }
}

}  // namespace ingot::testing
