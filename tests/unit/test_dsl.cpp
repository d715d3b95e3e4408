// The DSL front end: tracing, typing rules, specialisation constants, control flow.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <type_traits>

#include "ingot/dsl.hpp"
#include "ingot/ir_print.hpp"
#include "ingot/verify.hpp"

using namespace ingot;
using namespace ingot::dsl;

// A symbolic condition cannot steer a C++ if (also checked by a compile-fail test).
static_assert(!std::is_constructible_v<bool, Val<bool>>);
static_assert(!std::is_convertible_v<Val<bool>, bool>);

TEST(Dsl, ParameterListHasNamesKindsTypesAndExtents) {
  auto k = trace("p", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f16>("x", n * 4u);
    auto y = b.inout<i32>("y", 10);
    auto z = b.out<bf16>("z", n);
    (void)x;
    (void)y;
    (void)z;
  });
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_EQ(k.params[0].name, "n");
  EXPECT_EQ(k.params[0].kind, ir::ParamKind::Scalar);
  EXPECT_EQ(k.params[1].type, DType::f16);
  EXPECT_EQ(k.params[1].kind, ir::ParamKind::In);
  EXPECT_EQ(ir::print_expr(k, k.params[1].extent), "(n * 4u)");
  EXPECT_EQ(k.params[2].kind, ir::ParamKind::InOut);
  EXPECT_EQ(ir::print_expr(k, k.params[2].extent), "10u");
  EXPECT_EQ(k.params[3].type, DType::bf16);
}

TEST(Dsl, SixteenBitFloatsPromoteToF32) {
  auto k = trace("promote", [](KernelBuilder& b) {
    auto x = b.in<f16>("x", 4);
    auto y = b.out<f16>("y", 4);
    auto v = load(x, 0) * load(x, 1);  // f16 * f16 computes in f32
    static_assert(std::is_same_v<decltype(v), Val<float>>);
    store(y, 0, v);  // f32 stored into f16: converted (RNE)
    auto s = select(load(x, 2) > 0.0f, load(x, 2), load(x, 3));
    static_assert(std::is_same_v<decltype(s), Val<f16>>);  // select keeps the storage type
    store(y, 1, s);
  });
  EXPECT_TRUE(ir::verify(k).empty());
  const auto text = ir::print_kernel(k);
  EXPECT_NE(text.find("cast<f32>(%x0)"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[0u] = cast<f16>("), std::string::npos) << text;
}

TEST(Dsl, CppLoopsOverConstantsUnroll) {
  auto k = trace("unroll", [](KernelBuilder& b) {
    auto x = b.in<f32>("x", 8);
    auto y = b.out<f32>("y", 1);
    Val<f32> acc = 0.0f;
    for (u32 t = 0; t < 4; ++t) acc = acc + load(x, t);
    store(y, 0, acc);
  });
  // four loads, one store, no loop
  int lets = 0;
  for (const auto& s : k.body) {
    EXPECT_NE(s.kind, ir::StmtKind::For);
    lets += s.kind == ir::StmtKind::Let;
  }
  EXPECT_EQ(lets, 4);
}

TEST(Dsl, RuntimeLoopsVarsAndElse) {
  auto k = trace("loops", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", 2);
    Var<f32> acc(b, 0.0f, "acc");
    for_(0u, n, [&](Val<u32> i) { acc += load(x, i); });
    if_(acc.get() > 0.0f, [&] { store(y, 0, acc); }).else_([&] { store(y, 1, -acc.get()); });
  });
  EXPECT_TRUE(ir::verify(k).empty()) << ir::print_kernel(k);
  const auto text = ir::print_kernel(k);
  EXPECT_NE(text.find("var %acc0: f32 = 0f"), std::string::npos) << text;
  EXPECT_NE(text.find("for %i1: u32 in [0u, n) step 1u {"), std::string::npos) << text;
  EXPECT_NE(text.find("} else {"), std::string::npos) << text;
}

TEST(Dsl, ConstantGivesARuntimeLoopOverConstantBounds) {
  // for_ over two literals has no kernel to go into; a builder constant gives it one, and the
  // loop stays a loop (it is not unrolled).
  auto k = trace("const_loop", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 1);
    Var<u32> acc(b, 0u, "acc");
    for_(b.constant<u32>(0), 5u, [&](Val<u32> i) { acc += i; });
    store(y, 0, acc);
  });
  EXPECT_TRUE(ir::verify(k).empty()) << ir::print_kernel(k);
  const auto text = ir::print_kernel(k);
  EXPECT_NE(text.find("for %i1: u32 in [0u, 5u) step 1u {"), std::string::npos) << text;
}

TEST(Dsl, ElseMustFollowItsIf) {
  EXPECT_THROW((void)trace("bad_else",
                           [](KernelBuilder& b) {
                             auto n = b.scalar<u32>("n");
                             auto y = b.out<u32>("y", 1);
                             auto branch = if_(n > 0u, [&] { store(y, 0, 1u); });
                             store(y, 0, 2u);
                             branch.else_([&] { store(y, 0, 3u); });
                           }),
               TraceError);
}

TEST(Dsl, DuplicateParameterIsAnError) {
  EXPECT_THROW((void)trace("dup",
                           [](KernelBuilder& b) {
                             (void)b.scalar<u32>("n");
                             (void)b.scalar<u32>("n");
                           }),
               TraceError);
}

TEST(Dsl, ValuesFromAnotherTraceAreRejected) {
  Val<u32> leaked;
  (void)trace("a", [&](KernelBuilder& b) { leaked = b.scalar<u32>("n"); });
  EXPECT_THROW((void)trace("b",
                           [&](KernelBuilder& b) {
                             auto y = b.out<u32>("y", 1);
                             store(y, 0, leaked + 1u);
                           }),
               TraceError);
}

TEST(Dsl, SharedMemoryBarrierAndAtomics) {
  auto k = trace("shared", [](KernelBuilder& b) {
    auto y = b.inout<u32>("y", 4);
    auto tile = b.shared<u32>("tile", 64);
    auto l = b.local_id(0);
    store(tile, l, l);
    b.barrier();
    auto old = atomic_add(y, 0, load(tile, 63u - l));
    (void)old;
  });
  EXPECT_TRUE(ir::verify(k).empty()) << ir::print_kernel(k);
  const auto text = ir::print_kernel(k);
  EXPECT_NE(text.find("shared shared:tile: u32[64]"), std::string::npos) << text;
  EXPECT_NE(text.find("barrier"), std::string::npos) << text;
  EXPECT_NE(text.find("atomic_add y[0u]"), std::string::npos) << text;
}

TEST(Dsl, MathFunctionsTypeCheck) {
  auto k = trace("math", [](KernelBuilder& b) {
    auto x = b.in<bf16>("x", 1);
    auto y = b.out<f32>("y", 16);
    auto v = load(x, 0);
    store(y, 0, exp(v));
    store(y, 1, log(v));
    store(y, 2, sqrt(v));
    store(y, 3, rsqrt(v));
    store(y, 4, tanh(v));
    store(y, 5, erf(v));
    store(y, 6, sin(v));
    store(y, 7, cos(v));
    store(y, 8, abs(v));
    store(y, 9, min(v, 1.0f));
    store(y, 10, max(v, 1.0f));
    store(y, 11, fma(v, v, 1.0f));
    store(y, 12, floor(v));
    store(y, 13, ceil(v));
    store(y, 14, pow(v, 2.0f));
    store(y, 15, cast<f32>(cast<i32>(v) + 1));
  });
  EXPECT_TRUE(ir::verify(k).empty()) << ir::print_kernel(k);
}

TEST(Dsl, BitcastReinterpretsBits) {
  auto k = trace("bits", [](KernelBuilder& b) {
    auto e = b.scalar<u32>("e");
    auto y = b.out<f32>("y", 2);
    store(y, 0, bitcast<f32>(e << 23));  // 2^(e-127): an E8M0 scale
    store(y, 1, bitcast<f32>(bitcast<u32>(Val<f32>(-1.5f))));
  });
  EXPECT_TRUE(ir::verify(k).empty()) << ir::print_kernel(k);
  const auto text = ir::print_kernel(k);
  EXPECT_NE(text.find("bitcast((e << 23u))"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[1u] = -1.5f"), std::string::npos) << text;  // literals fold
}

// A cast of a trace-time constant (a kernel's first tile at row 0, say: 0u * stride) folds as the IR converts; it
// dereferenced a null builder until 2026-12-05 (found by the random-shape sweep, test_conv_sweep.cpp).
TEST(Dsl, CastsOfLiteralsFold) {
  auto k = trace("casts", [](KernelBuilder& b) {
    auto y = b.out<i32>("y", 3);
    auto z = b.out<f32>("z", 1);
    const Val<u32> zero = 0u;
    store(y, 0, cast<i32>(zero * 2u) - 3);
    store(y, 1, cast<i32>(Val<u32>(0xffffffffu)));  // u32 -> i32 wraps
    store(y, 2, cast<i32>(Val<f32>(-2.75f)));       // f32 -> i32 truncates
    store(z, 0, cast<f32>(Val<i32>(-7)));
  });
  EXPECT_TRUE(ir::verify(k).empty()) << ir::print_kernel(k);
  const auto text = ir::print_kernel(k);
  EXPECT_NE(text.find("store y[0u] = -3"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[1u] = -1"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[2u] = -2"), std::string::npos) << text;
  EXPECT_NE(text.find("store z[0u] = -7"), std::string::npos) << text;
}

TEST(Dsl, SelectsAndFmasOfLiteralsFold) {
  auto k = trace("folded", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 2);
    auto z = b.out<f32>("z", 2);
    const Val<u32> zero = 0u;
    const Val<bool> yes = true;
    store(y, 0, select(zero < 1u, Val<u32>(7u), Val<u32>(9u)));
    store(y, 1, select(!yes, Val<u32>(7u), Val<u32>(9u)));
    store(z, 0, fma(Val<f32>(1.5f), Val<f32>(-2.0f), 0.25f));
    store(z, 1, select(zero == 0u, Val<f32>(0.5f), 2.0f));
  });
  EXPECT_TRUE(ir::verify(k).empty()) << ir::print_kernel(k);
  const auto text = ir::print_kernel(k);
  EXPECT_NE(text.find("store y[0u] = 7u"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[1u] = 9u"), std::string::npos) << text;
  EXPECT_NE(text.find("store z[0u] = -2.75"), std::string::npos) << text;
  EXPECT_EQ(text.find("fma"), std::string::npos) << text;
  EXPECT_EQ(text.find("select"), std::string::npos) << text;
  EXPECT_NE(text.find("store z[1u] = 0.5"), std::string::npos) << text;
  // one rounding, as the IR's fma: (1 + 2^-12)^2 - 1 keeps its 2^-24, which a product rounded first would lose
  const float e = 1.0f + 0x1p-12f;
  const Val<f32> fused = fma(Val<f32>(e), Val<f32>(e), -1.0f);
  EXPECT_EQ(fused.builder(), nullptr);
  EXPECT_EQ(std::bit_cast<float>(static_cast<std::uint32_t>(fused.literal_bits())), 0x1p-11f + 0x1p-24f);
}

TEST(Dsl, VectorAccessWidthsAreCheckedAtTrace) {
  auto bad_width = [](std::uint32_t width) {
    return [width](KernelBuilder& b) {
      auto x = b.in<f32>("x", 64);
      (void)load_vec(x, 0u, width);
    };
  };
  for (std::uint32_t w : {1u, 3u, 8u}) {
    try {
      (void)trace("bad", bad_width(w));
      FAIL() << "width " << w << " accepted";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("use 4, 8 or 16 bytes"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)trace("shared_vec",
                           [](KernelBuilder& b) {
                             auto t = b.shared<f32>("t", 8);  // shared arrays: the same widths
                             store_vec(t, 0u, std::vector<Val<f32>>{1.0f, 2.0f, 3.0f});
                           }),
               TraceError);
  EXPECT_THROW((void)trace("i64_vec",
                           [](KernelBuilder& b) {
                             auto y = b.out<i64>("y", 8);
                             store_vec(y, 0u, std::vector<Val<i64>>{i64{1}, i64{2}});
                           }),
               TraceError);
  // A correct one verifies and prints as one statement.
  const auto k = trace("ok", [](KernelBuilder& b) {
    auto x = b.in<bf16>("x", 64);
    auto y = b.out<bf16>("y", 64);
    auto v = load_vec(x, b.program_id(0) * 4u, 4);
    store_vec(y, b.program_id(0) * 4u, v);
  });
  EXPECT_TRUE(ir::verify(k).empty());
  ASSERT_EQ(k.body.size(), 2u);
  EXPECT_EQ(k.body[0].kind, ir::StmtKind::LoadVec);
  EXPECT_EQ(k.body[1].kind, ir::StmtKind::StoreVec);
}
