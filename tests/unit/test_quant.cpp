// Block-scaled weight formats: host codecs, the quantiser's layouts and error bounds, and the
// DSL decoders checked code by code against the host decoders on the interpreter (and on
// OpenCL where a device is usable).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include "ingot/dsl.hpp"
#include "ingot/harness/backends.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"
#include "quant/decode.hpp"
#include "quant/element_codecs.hpp"
#include "quant/format.hpp"
#include "quant/quantise.hpp"
#include "quant/weights.hpp"

using namespace ingot;
using namespace ingot::dsl;
using namespace ingot::kernels::quant;

namespace {

std::vector<BlockFormat> all_formats() {
  std::vector<BlockFormat> v;
  v.reserve(kNumBlockFormats);
  for (int i = 0; i < kNumBlockFormats; ++i) v.push_back(block_format(i));
  return v;
}

// The interpreter, and OpenCL when a device is usable here (its absence is not a failure: the
// OpenCL tests report it).
std::vector<std::shared_ptr<runtime::Backend>> backends() {
  std::vector<std::shared_ptr<runtime::Backend>> v{std::make_shared<runtime::Interpreter>()};
  auto cl = harness::open_backend("opencl");
  if (cl.backend) {
    v.push_back(cl.backend);
  } else {
    std::printf("decoders checked on the interpreter only: %s\n", cl.why_absent.c_str());
  }
  return v;
}

// Runs y[i] = f(codes[i]) (as raw u32 bits) for every i < n on a backend.
std::vector<std::uint32_t> run_decoder(runtime::Backend& be, const std::string& name, std::uint32_t n,
                                       const std::function<Val<u32>(Val<u32>)>& f) {
  const auto k = passes::optimize(trace(name, [&](KernelBuilder& b) {
    auto x = b.in<u32>("x", n);
    auto y = b.out<u32>("y", n);
    auto gid = b.program_id(0);
    auto i = b.let("i", select(gid < n, gid, 0u));
    auto v = f(load(x, i));
    if_(gid < n, [&] { store(y, gid, v); });
  }));
  std::vector<double> codes(n);
  for (std::uint32_t c = 0; c < n; ++c) codes[c] = c;
  auto x = runtime::make_buffer(be, DType::u32, codes);
  auto y = be.allocate(DType::u32, n);
  be.launch(k, runtime::grid_1d(n, 64), {x, y});
  std::vector<std::uint32_t> out;
  for (double v : runtime::read_buffer(be, *y)) out.push_back(static_cast<std::uint32_t>(v));
  return out;
}

// Exactly the host value: equal bits, or both NaN.
void expect_same_f32(std::uint32_t got, float want, const std::string& what) {
  const float g = std::bit_cast<float>(got);
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(g)) << what << ": got " << g << ", want NaN";
  } else {
    EXPECT_EQ(got, std::bit_cast<std::uint32_t>(want)) << what << ": got " << g << ", want " << want;
  }
}

}  // namespace

// ------------------------------------------------------------------ host codecs

TEST(QuantCodecs, E4M3KnownValues) {
  EXPECT_EQ(e4m3_to_float(0x00), 0.0f);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(e4m3_to_float(0x80)), 0x80000000u);  // -0
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));                       // smallest subnormal
  EXPECT_EQ(e4m3_to_float(0x07), 7 * std::ldexp(1.0f, -9));                   // largest subnormal
  EXPECT_EQ(e4m3_to_float(0x08), std::ldexp(1.0f, -6));                       // smallest normal
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_to_float(0xfe), -448.0f);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xff)));
  EXPECT_EQ(e4m3_to_float(0x77), 240.0f);  // 1.875 * 2^7: e=14 is a normal binade in E4M3
}

TEST(QuantCodecs, E2M1ValuesAndE8M0) {
  const float mags[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (std::uint32_t c = 0; c < 16; ++c) EXPECT_EQ(e2m1_to_float(c), (c & 8 ? -1.0f : 1.0f) * mags[c & 7]) << c;
  EXPECT_EQ(e8m0_to_float(127), 1.0f);
  EXPECT_EQ(e8m0_to_float(254), std::ldexp(1.0f, 127));
  EXPECT_EQ(e8m0_to_float(0), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(e8m0_to_float(255)));
  EXPECT_EQ(int4_value(7), 7);
  EXPECT_EQ(int4_value(8), -8);
  EXPECT_EQ(int4_value(15), -1);
}

TEST(QuantCodecs, EncodersRoundTripEveryCode) {
  for (std::uint32_t c = 0; c < 256; ++c) {
    const float v = e4m3_to_float(c);
    if (std::isnan(v)) {
      EXPECT_EQ(float_to_e4m3(v), 0x7f);
    } else {
      EXPECT_EQ(float_to_e4m3(v), v == 0 ? 0 : c) << c;  // zero is always encoded as +0
    }
  }
  for (std::uint32_t c = 0; c < 16; ++c) EXPECT_EQ(float_to_e2m1(e2m1_to_float(c)), c == 8 ? 0 : c) << c;
}

TEST(QuantCodecs, EncodersRoundToNearestEvenAndSaturate) {
  // E2M1 ties go to the even code.
  EXPECT_EQ(float_to_e2m1(0.25), 0);  // 0 | 0.5 -> code 0
  EXPECT_EQ(float_to_e2m1(0.75), 2);  // 0.5 | 1 -> code 2 (1.0)
  EXPECT_EQ(float_to_e2m1(2.5), 4);   // 2 | 3 -> code 4 (2.0)
  EXPECT_EQ(float_to_e2m1(3.5), 6);   // 3 | 4 -> code 6 (4.0)
  EXPECT_EQ(float_to_e2m1(5.0), 6);   // 4 | 6 -> code 6 (4.0)
  EXPECT_EQ(float_to_e2m1(5.01), 7);
  EXPECT_EQ(float_to_e2m1(-2.6), 8 | 5);
  EXPECT_EQ(float_to_e2m1(100.0), 7);  // saturates at 6
  EXPECT_EQ(float_to_e2m1(-0.1), 0);   // rounds to zero: +0
  // E4M3: 1 + 1/16 lies between 1 (0x38) and 1.125 (0x39): even code 0x38.
  EXPECT_EQ(float_to_e4m3(1.0625), 0x38);
  EXPECT_EQ(float_to_e4m3(1.1875), 0x3a);  // 1.125 | 1.25 -> 0x3a
  EXPECT_EQ(float_to_e4m3(1e6), 0x7e);     // saturates at 448
  EXPECT_EQ(float_to_e4m3(-500.0), 0xfe);
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0, -10)), 0x00);  // half the smallest subnormal: tie to 0
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.5, -10)), 0x01);
}

// ------------------------------------------------------------------ DSL decoders, every code

TEST(QuantDecode, EveryCodeMatchesTheHostDecoder) {
  for (const auto& be : backends()) {
    SCOPED_TRACE(be->name());
    std::printf("every code decoded on %s\n", be->name().c_str());
    auto e4m3 = run_decoder(*be, "dec_e4m3", 256, [](Val<u32> c) { return bitcast<u32>(decode_e4m3(c)); });
    for (std::uint32_t c = 0; c < 256; ++c) expect_same_f32(e4m3[c], e4m3_to_float(c), "E4M3 " + std::to_string(c));
    auto e8m0 = run_decoder(*be, "dec_e8m0", 256, [](Val<u32> c) { return bitcast<u32>(decode_e8m0(c)); });
    for (std::uint32_t c = 0; c < 256; ++c) {
      // 2^-127 is an f32 subnormal: a device that flushes subnormals may read it as 0.
      if (c == 0 && be->name() != "interp" && e8m0[c] == 0) continue;
      expect_same_f32(e8m0[c], e8m0_to_float(c), "E8M0 " + std::to_string(c));
    }
    auto e2m1 = run_decoder(*be, "dec_e2m1", 16, [](Val<u32> c) { return bitcast<u32>(decode_e2m1(c)); });
    for (std::uint32_t c = 0; c < 16; ++c) expect_same_f32(e2m1[c], e2m1_to_float(c), "E2M1 " + std::to_string(c));
    auto int4 = run_decoder(*be, "dec_int4", 16, [](Val<u32> c) { return bitcast<u32>(sign_extend_int4(c)); });
    for (std::uint32_t c = 0; c < 16; ++c) EXPECT_EQ(static_cast<std::int32_t>(int4[c]), int4_value(c)) << c;
    // Nibble order: element j of a word lives in bits 4j+3 .. 4j.
    auto nib =
        run_decoder(*be, "dec_nibble", 64, [](Val<u32> c) { return nibble_of(c * 0x01234567u + 0x89abcdefu, c); });
    for (std::uint32_t c = 0; c < 64; ++c)
      EXPECT_EQ(nib[c], ((c * 0x01234567u + 0x89abcdefu) >> (4 * (c % 8))) & 15u) << c;
  }
}

// Every code of every format, through the kernel-side loader: a matrix whose codes run through
// all values (with the scale buffer running through its own codes or a spread of scale values),
// loaded by BlockScaledWeights and compared bit for bit with dequantise().
TEST(QuantDecode, LoaderMatchesDequantiseForEveryCodeAndFormat) {
  for (const auto& be : backends()) {
    for (BlockFormat f : all_formats()) {
      const FormatInfo& fi = format_info(f);
      SCOPED_TRACE(be->name() + " " + std::string(fi.name));
      const std::uint64_t n_codes = fi.code_bits() == 8 ? 256 : 16;
      // rows x cols with cols not a multiple of the block (padding exercised).
      const std::uint64_t cols = fi.block * 2 + 5, rows = (n_codes * 2 + cols - 1) / cols + 1;
      QuantisedMatrix q;
      q.layout = BlockLayout{f, rows, cols};
      q.codes.assign(q.layout.code_elements(), 0.0);
      q.scales.assign(q.layout.scale_elements(), 0.0);
      for (std::uint64_t r = 0, e = 0; r < rows; ++r) {
        for (std::uint64_t c = 0; c < cols; ++c, ++e) {
          const std::uint64_t pos = r * q.layout.padded_cols() + c;
          const auto code = static_cast<std::uint32_t>((e * 7) % n_codes);  // 7 is odd: every code appears
          if (fi.code_bits() == 8) {
            q.codes[pos] = fi.codes_type == DType::i8 ? static_cast<double>(static_cast<std::int8_t>(code)) : code;
          } else {
            q.codes[pos / 8] =
                static_cast<double>(static_cast<std::uint32_t>(q.codes[pos / 8]) | code << (4 * (pos % 8)));
          }
        }
      }
      for (std::size_t s = 0; s < q.scales.size(); ++s) {
        switch (fi.scale) {
          case ScaleKind::f32:
            q.scales[s] = std::ldexp(1.0 + 0.37 * static_cast<double>(s), static_cast<int>(s % 9) - 4);
            break;
          case ScaleKind::f16: q.scales[s] = f16_bits_to_f32(f32_to_f16_bits(0.01f * static_cast<float>(s + 1))); break;
          case ScaleKind::e8m0: q.scales[s] = static_cast<double>((s * 37 + 100) % 255); break;  // not 255 (NaN)
          case ScaleKind::e4m3: q.scales[s] = static_cast<double>((s * 29 + 40) % 127); break;   // finite, positive
        }
      }
      if (fi.global_scale) q.global_scale = 0.3f;
      const auto want = dequantise(q);
      const std::uint32_t n = static_cast<std::uint32_t>(rows * cols);
      const auto k = passes::optimize(trace("load_weights", [&](KernelBuilder& b) {
        BlockScaledWeights w(b, q.layout);
        auto y = b.out<u32>("y", n);
        auto gid = b.program_id(0);
        auto i = b.let("i", select(gid < n, gid, 0u));
        auto v = bitcast<u32>(w(i));
        if_(gid < n, [&] { store(y, gid, v); });
      }));
      std::vector<runtime::Arg> args{runtime::make_buffer(*be, fi.codes_type, q.codes),
                                     runtime::make_buffer(*be, fi.scales_type, q.scales)};
      if (fi.global_scale) args.emplace_back(runtime::make_buffer(*be, DType::f32, {q.global_scale}));
      auto y = be->allocate(DType::u32, n);
      args.emplace_back(y);
      be->launch(k, runtime::grid_1d(n, 64), args);
      const auto got = runtime::read_buffer(*be, *y);
      for (std::uint32_t e = 0; e < n; ++e) {
        expect_same_f32(static_cast<std::uint32_t>(got[e]), want[e], "element " + std::to_string(e));
      }
    }
  }
}

// ------------------------------------------------------------------ quantiser layouts

TEST(QuantLayout, ShapesAndPadding) {
  const BlockLayout l{BlockFormat::int4_g32_f16, 3, 45};
  EXPECT_EQ(l.blocks_per_row(), 2u);
  EXPECT_EQ(l.padded_cols(), 64u);
  EXPECT_EQ(l.code_elements(), 3u * 64 / 8);
  EXPECT_EQ(l.scale_elements(), 6u);
  EXPECT_EQ(l.bytes(), 24u * 4 + 6 * 2);
  const BlockLayout nv{BlockFormat::nvfp4, 2, 9};
  EXPECT_EQ(nv.padded_cols(), 16u);
  EXPECT_EQ(nv.code_elements(), 4u);
  EXPECT_EQ(nv.bytes(), 4u * 4 + 2 + 4);
  for (BlockFormat f : all_formats()) {
    EXPECT_EQ(parse_block_format(format_info(f).name), f);
    EXPECT_EQ(BlockLayout({f, 1, 1}).padded_cols() % 8, 0u);
  }
  EXPECT_FALSE(parse_block_format("fp7").has_value());
  EXPECT_THROW((void)block_format(kNumBlockFormats), std::invalid_argument);
}

TEST(QuantLayout, Int8AndInt4CodesAndPackingOrder) {
  // int8, f32 scale: amax 1 -> s = 1/127; -0.25 -> -31.75 -> -32.
  auto q8 = quantise(BlockFormat::int8_g32_f32, 1, 3, {1.0, -0.25, 0.0});
  ASSERT_EQ(q8.codes.size(), 32u);
  EXPECT_EQ(q8.codes[0], 127);
  EXPECT_EQ(q8.codes[1], -32);
  EXPECT_EQ(q8.codes[2], 0);
  for (std::size_t i = 3; i < 32; ++i) EXPECT_EQ(q8.codes[i], 0) << "padding is code 0";
  EXPECT_EQ(static_cast<float>(q8.scales[0]), static_cast<float>(1.0 / 127));
  // int4: amax 7 -> s = 1; elements 0..7 = 1, -1, 2, -2, 3, -3, 7, -7 -> nibbles 1 F 2 E 3 D 7 9,
  // element 0 in the least significant nibble.
  auto q4 = quantise(BlockFormat::int4_g32_f32, 1, 9, {1, -1, 2, -2, 3, -3, 7, -7, 4});
  ASSERT_EQ(q4.codes.size(), 4u);
  EXPECT_EQ(static_cast<std::uint32_t>(q4.codes[0]), 0x97D3E2F1u);
  EXPECT_EQ(static_cast<std::uint32_t>(q4.codes[1]), 0x4u);
  EXPECT_EQ(q4.codes[2], 0);
  EXPECT_EQ(q4.scales[0], 1.0);
  // Scales are per (row, block), row-major.
  std::vector<double> w(std::size_t{2} * 40, 0.0);
  w[0] = 127;        // row 0 block 0
  w[33] = 254;       // row 0 block 1
  w[40 + 5] = 12.7;  // row 1 block 0; row 1 block 1 all zero
  auto qs = quantise(BlockFormat::int8_g32_f32, 2, 40, w);
  ASSERT_EQ(qs.scales.size(), 4u);
  EXPECT_EQ(qs.scales[0], 1.0);
  EXPECT_EQ(qs.scales[1], 2.0);
  EXPECT_EQ(static_cast<float>(qs.scales[2]), 0.1f);
  EXPECT_EQ(qs.scales[3], 0.0);
}

TEST(QuantLayout, MxScaleRule) {
  // amax 1.0: floor(log2 1) = 0 -> E4M3 scale 2^-8 (code 119), E2M1 scale 2^-2 (code 125).
  auto m8 = quantise(BlockFormat::mxfp8, 1, 2, {1.0, -0.5});
  EXPECT_EQ(m8.scales[0], 119);
  EXPECT_EQ(m8.codes[0], float_to_e4m3(256.0));
  EXPECT_EQ(m8.codes[1], float_to_e4m3(-128.0));
  auto m4 = quantise(BlockFormat::mxfp4, 1, 3, {1.9, -0.5, 0.0});  // 1.9 / 0.25 = 7.6 saturates at 6
  EXPECT_EQ(m4.scales[0], 125);
  EXPECT_EQ(static_cast<std::uint32_t>(m4.codes[0]), (8u | 4u) << 4 | 7u);  // 7.6 -> 6 (7), -2 (8|4), 0
  auto zero = quantise(BlockFormat::mxfp4, 1, 4, {0, 0, 0, 0});
  EXPECT_EQ(zero.scales[0], 127);
  EXPECT_EQ(zero.codes[0], 0);
}

TEST(QuantLayout, Nvfp4ScaleRule) {
  // amax 6*448 -> g = 1; block amax 6*448 -> scale code 0x7e (448); block amax 3 -> 0.5 (0x30).
  std::vector<double> w(32, 0.0);
  w[0] = 6 * 448.0;
  w[16] = 3.0;
  w[17] = -1.5;
  auto q = quantise(BlockFormat::nvfp4, 1, 32, w);
  EXPECT_EQ(q.global_scale, 1.0f);
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_EQ(q.scales[0], 0x7e);
  EXPECT_EQ(q.scales[1], 0x30);
  EXPECT_EQ(code_at(q, 0, 0), 7u);
  EXPECT_EQ(code_at(q, 0, 16), 7u);       // 3 / 0.5 = 6
  EXPECT_EQ(code_at(q, 0, 17), 8u | 5u);  // -1.5 / 0.5 = -3
  const auto d = dequantise(q);
  EXPECT_EQ(d[0], 2688.0f);
  EXPECT_EQ(d[16], 3.0f);
  EXPECT_EQ(d[17], -1.5f);
  EXPECT_THROW((void)quantise(BlockFormat::nvfp4, 1, 2, {1.0, NAN}), std::invalid_argument);
  EXPECT_THROW((void)quantise(BlockFormat::nvfp4, 1, 2, {1.0}), std::invalid_argument);
}

// ------------------------------------------------------------------ quantisation error

namespace {

// The largest error the scale rule allows for weight v of a block with multiplier x (the
// dequantised value of a code c is value(c) * x), given the element format.
double element_error_bound(ElementKind k, double v, double x) {
  const double a = std::fabs(v) / x;
  if (k == ElementKind::e4m3) {
    if (a > kE4M3Max) return (a - kE4M3Max) * x;
    return std::max(a * 0.0625, std::ldexp(1.0, -10)) * x;  // half an ulp: 2^-4 relative, 2^-10 absolute
  }
  // E2M1: spacing 0.5 below 2, 1 below 4, 2 up to 6.
  if (a > kE2M1Max) return (a - kE2M1Max) * x;
  return (a < 2 ? 0.25 : a < 4 ? 0.5 : 1.0) * x;
}

struct ErrorStats {
  double rms_rel = 0;        // rms(w - deq) / rms(w)
  double max_rel_block = 0;  // max |w - deq| / amax(block)
};

ErrorStats check_error(BlockFormat f, std::uint64_t rows, std::uint64_t cols, const std::vector<double>& w) {
  const FormatInfo& fi = format_info(f);
  const auto q = quantise(f, rows, cols, w);
  const auto d = dequantise(q);
  const BlockLayout& l = q.layout;
  double se = 0, sw = 0, worst = 0;
  int violations = 0;
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t b = 0; b < l.blocks_per_row(); ++b) {
      const std::uint64_t c0 = b * fi.block, c1 = std::min<std::uint64_t>(c0 + fi.block, cols);
      double amax = 0;
      for (auto c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(w[r * cols + c]));
      const double s = scale_value(f, q.scales[r * l.blocks_per_row() + b]) * (fi.global_scale ? q.global_scale : 1.0f);
      for (auto c = c0; c < c1; ++c) {
        const double v = w[r * cols + c], err = std::fabs(v - d[r * cols + c]);
        se += err * err;
        sw += v * v;
        if (amax > 0) worst = std::max(worst, err / amax);
        double bound = 0;
        switch (fi.element) {
          case ElementKind::int8:
          case ElementKind::int4: {
            const double qmax = fi.element == ElementKind::int8 ? 127 : 7;
            // half a step, plus what clamping costs when the scale rounded down (f16)
            bound = 0.5 * s + std::max(0.0, std::fabs(v) - qmax * s);
            break;
          }
          default: bound = element_error_bound(fi.element, v, s); break;
        }
        // (plus the f32 rounding of the dequantised product)
        if (err > bound * (1 + 1e-6) + 1e-6 * std::fabs(v) + 1e-30 && ++violations <= 3) {
          ADD_FAILURE() << "error above the bound (" << bound << "): " << fi.name << " row " << r << " col " << c
                        << ": w " << v << " deq " << d[r * cols + c] << " scale " << s;
        }
      }
    }
  }
  return {std::sqrt(se / sw), worst};
}

}  // namespace

TEST(QuantError, BoundsPerFormatOnRandomData) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  // Conv-filter-like matrices: 64 output channels x 3*3*37 = 333 (not a multiple of 16 or 32),
  // one with a per-row magnitude spread over 2^-6 .. 2^6.
  const std::uint64_t rows = 64, cols = 333;
  std::vector<double> wn(rows * cols), wu(rows * cols), ws(rows * cols);
  for (std::uint64_t i = 0; i < rows * cols; ++i) {
    wn[i] = normal(rng);
    wu[i] = uniform(rng);
    ws[i] = normal(rng) * std::ldexp(1.0, static_cast<int>(i / cols % 13) - 6);
  }
  std::printf("%-14s %14s %14s %14s %18s\n", "format", "rms rel N(0,1)", "rms rel U(-1,1)", "rms rel spread",
              "max |err|/amax_blk");
  for (BlockFormat f : all_formats()) {
    const auto n = check_error(f, rows, cols, wn);
    const auto u = check_error(f, rows, cols, wu);
    const auto s = check_error(f, rows, cols, ws);
    std::printf("%-14s %14.3e %14.3e %14.3e %18.3e\n", std::string(format_info(f).name).c_str(), n.rms_rel, u.rms_rel,
                s.rms_rel, std::max({n.max_rel_block, u.max_rel_block, s.max_rel_block}));
  }
}
