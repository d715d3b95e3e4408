// simplify, dce and the pipeline runner.
#include <gtest/gtest.h>

#include "ingot/dsl.hpp"
#include "ingot/ir_print.hpp"
#include "ingot/passes/dce.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/passes/simplify.hpp"
#include "ingot/verify.hpp"

using namespace ingot;
using namespace ingot::dsl;

TEST(Simplify, FoldsConstantsAndIdentities) {
  auto k = trace("fold", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto y = b.out<u32>("y", 8);
    Val<u32> three = 3u;
    store(y, 0, three * 4u + n * 1u + 0u);  // -> (12 + n)... folded: n*1 -> n, +0 -> drop
    store(y, 1, (n & 0u) | n);              // -> n
    store(y, 2, select(n < 0u, 5u, n));     // unsigned n < 0 is false -> n
  });
  auto s = passes::simplify(k);
  EXPECT_TRUE(ir::verify(s).empty());
  const auto text = ir::print_kernel(s);
  EXPECT_NE(text.find("store y[0u] = (12u + n)"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[1u] = n"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[2u] = n"), std::string::npos) << text;
}

TEST(Simplify, PropagatesConstantImmutableVariables) {
  auto k = trace("letconst", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto y = b.out<u32>("y", 8);
    auto zero = b.let("zero", b.program_id(0) * 0u);  // folds to 0: every read is 0
    auto full = b.let("full", zero + 8u <= 6u);       // folds to false
    if_(n < 8u && !full, [&] { store(y, zero + 1u, n); });
    Var<u32> m(b, 2u, "m");  // mutable: never propagated
    m = m.get() + n;
    store(y, 0, m.get());
  });
  const auto s = passes::dce(passes::simplify(k));
  EXPECT_TRUE(ir::verify(s).empty());
  const auto text = ir::print_kernel(s);
  EXPECT_NE(text.find("if (n < 8u)"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[1u] = n"), std::string::npos) << text;
  EXPECT_EQ(text.find("zero"), std::string::npos) << text;
  EXPECT_NE(text.find("var %m"), std::string::npos) << text;
}

TEST(Simplify, KeepsRunTimeErrorsAndFloatSignedZero) {
  auto k = trace("keep", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", 1);
    auto y = b.out<u32>("y", 1);
    auto z = b.out<f32>("z", 2);
    store(y, 0, n / (n - n));        // n - n folds to 0, but n / 0 is a run-time error: kept
    store(z, 0, load(x, 0) + 0.0f);  // x + 0.0 is NOT x (x = -0.0 gives +0.0)
    store(z, 1, load(x, 0) * 1.0f);  // x * 1 is x
  });
  auto s = passes::simplify(k);
  const auto text = ir::print_kernel(s);
  EXPECT_NE(text.find("(n / 0u)"), std::string::npos) << text;
  EXPECT_NE(text.find("(%x0 + 0f)"), std::string::npos) << text;
  EXPECT_NE(text.find("store z[1u] = %x1"), std::string::npos) << text;  // loads are never merged
}

TEST(Simplify, ConstantBranchesAndEmptyLoops) {
  auto k = trace("branches", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 2);
    auto n = b.scalar<u32>("n");
    if_(n * 0u > 2u, [&] { store(y, 0, 7u); }).else_([&] { store(y, 1, 8u); });
    for_(n, n, [&](Val<u32> i) { store(y, i, 9u); });  // not constant: stays
    for_(Val<u32>(5u) + n * 0u, Val<u32>(5u) + n * 0u + 0u, [&](Val<u32> i) { store(y, i, 9u); });
  });
  auto s = passes::simplify(k);
  EXPECT_TRUE(ir::verify(s).empty()) << ir::print_kernel(s);
  const auto text = ir::print_kernel(s);
  EXPECT_EQ(text.find("if "), std::string::npos) << text;
  EXPECT_EQ(text.find("7u"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[1u] = 8u"), std::string::npos) << text;
  // one loop (n..n) remains; the constant empty [5,5) loop is gone
  std::size_t loops = 0;
  for (std::size_t p = text.find("for "); p != std::string::npos; p = text.find("for ", p + 1)) ++loops;
  EXPECT_EQ(loops, 1u) << text;
}

// select(c, f32(x16), +0.0f) selects the raw 16-bit value first (either arm order); any other
// constant arm, or an f32 operand, is left as it is.
TEST(Simplify, SelectsSixteenBitValuesBeforeWidening) {
  auto k = trace("narrow_select", [](KernelBuilder& b) {
    auto x = b.in<f16>("x", 2);
    auto w = b.in<bf16>("w", 1);
    auto f = b.in<f32>("f", 1);
    auto y = b.out<f32>("y", 5);
    auto ok = b.program_id(0) < 3u;
    store(y, 0, select(ok, cast<f32>(load(x, 0)), 0.0f));
    store(y, 1, select(ok, 0.0f, cast<f32>(load(w, 0))));
    store(y, 2, select(ok, cast<f32>(load(x, 1)), -0.0f));  // -0.0 is not the widened +0: kept
    store(y, 3, select(ok, cast<f32>(load(x, 1)), 1.0f));   // kept
    store(y, 4, select(ok, load(f, 0), 0.0f));              // no widening: kept
  });
  const auto s = passes::simplify(k);
  EXPECT_TRUE(ir::verify(s).empty()) << ir::print_kernel(s);
  const auto text = ir::print_kernel(s);
  EXPECT_NE(text.find("store y[0u] = cast<f32>(select((program_id(0) < 3u), %x0, 0))"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[1u] = cast<f32>(select((program_id(0) < 3u), 0, %w1))"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[2u] = select((program_id(0) < 3u), cast<f32>(%x2), -0f)"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[3u] = select((program_id(0) < 3u), cast<f32>(%x3), 1f)"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[4u] = select((program_id(0) < 3u), %f4, 0f)"), std::string::npos) << text;
}

TEST(Dce, RemovesUnusedLoadsAndVariables) {
  auto k = trace("dce", [](KernelBuilder& b) {
    auto x = b.in<f32>("x", 4);
    auto y = b.inout<u32>("y", 4);
    auto unused = load(x, 1);
    (void)unused;
    Var<f32> never_read(b, 1.0f);
    never_read = 2.0f;
    (void)atomic_add(y, 0, 1u);   // atomic stays, its old value is dropped
    if_(load(y, 1) > 0u, [] {});  // empty if goes; its condition's load then goes too
    store(y, 2, 5u);
  });
  auto d = passes::dce(k);
  EXPECT_TRUE(ir::verify(d).empty()) << ir::print_kernel(d);
  const auto text = ir::print_kernel(d);
  EXPECT_EQ(text.find("load"), std::string::npos) << text;
  EXPECT_EQ(text.find("var "), std::string::npos) << text;
  EXPECT_NE(text.find("atomic_add y[0u], 1u"), std::string::npos) << text;
  EXPECT_EQ(text.find("let %old"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[2u] = 5u"), std::string::npos) << text;
}

TEST(Pipeline, RecordsEachPassAndVerifies) {
  auto k = trace("pipe", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto y = b.out<u32>("y", n);
    auto i = b.program_id(0);
    if_(i < n, [&] { store(y, i, i * 1u); });
  });
  passes::PipelineOptions opt;
  opt.record_ir = true;
  auto r = passes::run_pipeline(k, passes::default_passes(), opt);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].name, "input");
  EXPECT_EQ(r.records[1].name, "simplify");
  EXPECT_EQ(r.records[2].name, "dce");
  EXPECT_NE(r.records[0].ir.find("(program_id(0) * 1u)"), std::string::npos);
  EXPECT_EQ(r.records[1].ir.find("* 1u"), std::string::npos);
}

TEST(Pipeline, NamesThePassThatBrokeTheIr) {
  auto k = trace("ok", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 1);
    store(y, 0, 1u);
  });
  std::vector<passes::Pass> ps = passes::default_passes();
  ps.push_back(passes::Pass{"breaker", [](const ir::Kernel& in) {
                              ir::Kernel out = in;
                              out.body[0].mem.id = 7;  // no such buffer
                              return out;
                            }});
  try {
    (void)passes::run_pipeline(k, ps);
    FAIL() << "expected a verification error";
  } catch (const ir::VerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("after pass 'breaker'"), std::string::npos) << e.what();
  }
}
