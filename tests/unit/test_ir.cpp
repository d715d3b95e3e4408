// The op table, hash-consing, the text printer and the verifier.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <set>

#include "ingot/dsl.hpp"
#include "ingot/ir_print.hpp"
#include "ingot/scalar_eval.hpp"
#include "ingot/verify.hpp"

using namespace ingot;
using namespace ingot::ir;

TEST(Ir, OpTableNamesAreUniquePerArity) {
  std::set<std::pair<std::string, int>> seen;
  for (int i = 0; i < num_ops(); ++i) {
    const auto& info = op_info(static_cast<Op>(i));
    EXPECT_TRUE(seen.insert({std::string(info.name), info.arity}).second) << info.name;
  }
  EXPECT_EQ(op_info(Op::Add).name, "+");
  EXPECT_EQ(op_info(Op::Fma).arity, 3);
}

TEST(Ir, HashConsingSharesEqualNodes) {
  ExprArena a;
  const auto x = a.const_u32(3);
  const auto y = a.const_u32(3);
  EXPECT_EQ(x, y);
  const auto s1 = a.binary(Op::Add, DType::u32, x, a.const_u32(4));
  const auto s2 = a.binary(Op::Add, DType::u32, y, a.const_u32(4));
  EXPECT_EQ(s1, s2);
  EXPECT_NE(a.const_i32(3), x);  // different type, different node
  EXPECT_EQ(a.size(), 4u);
}

TEST(Ir, ScalarSemantics) {
  std::string err;
  // signed division truncates toward zero, modulo takes the dividend's sign
  EXPECT_EQ(int_of_bits(DType::i32, *eval_op(Op::Div, DType::i32, DType::i32, 0xfffffff9u /*-7*/, 2, 0, &err)), -3);
  EXPECT_EQ(int_of_bits(DType::i32, *eval_op(Op::Mod, DType::i32, DType::i32, 0xfffffff9u, 2, 0, &err)), -1);
  // wrap-around
  EXPECT_EQ(*eval_op(Op::Add, DType::u32, DType::u32, 0xffffffffu, 2, 0, &err), 1u);
  EXPECT_EQ(*eval_op(Op::Add, DType::i32, DType::i32, 0x7fffffffu, 1, 0, &err), 0x80000000u);
  // INT_MIN / -1 is an error, like a zero divisor
  EXPECT_FALSE(eval_op(Op::Div, DType::i32, DType::i32, 0x80000000u, 0xffffffffu, 0, &err).has_value());
  // errors
  EXPECT_FALSE(eval_op(Op::Div, DType::u32, DType::u32, 1, 0, 0, &err).has_value());
  EXPECT_NE(err.find("division by zero"), std::string::npos);
  EXPECT_FALSE(eval_op(Op::Shl, DType::u32, DType::u32, 1, 32, 0, &err).has_value());
  EXPECT_FALSE(convert_bits(DType::f32, DType::i32, std::bit_cast<std::uint32_t>(3e9f), &err).has_value());
  // arithmetic shift for signed
  EXPECT_EQ(*eval_op(Op::Shr, DType::i32, DType::i32, 0xfffffff0u, 2, 0, &err), 0xfffffffcu);
  // NaN: comparisons false except !=, fmin returns the other operand
  const auto nan = std::bit_cast<std::uint32_t>(std::nanf(""));
  EXPECT_EQ(*eval_op(Op::Lt, DType::boolean, DType::f32, nan, 0, 0, &err), 0u);
  EXPECT_EQ(*eval_op(Op::Ne, DType::boolean, DType::f32, nan, nan, 0, &err), 1u);
  EXPECT_EQ(*eval_op(Op::Min, DType::f32, DType::f32, nan, std::bit_cast<std::uint32_t>(2.0f), 0, &err),
            std::bit_cast<std::uint32_t>(2.0f));
  // float -> int truncates
  EXPECT_EQ(int_of_bits(DType::i32, *convert_bits(DType::f32, DType::i32, std::bit_cast<std::uint32_t>(-2.7f), &err)),
            -2);
}

namespace {
Kernel small_kernel() {
  return trace("k", [](KernelBuilder& b) {
    using namespace ingot::dsl;
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0);
    if_(i < n, [&] { store(y, i, load(x, i) * 2.0f); });
  });
}
}  // namespace

TEST(Ir, PrinterShowsSignatureAndStatements) {
  const auto k = small_kernel();
  const std::string text = print_kernel(k);
  EXPECT_NE(text.find("kernel k(n: scalar u32, x: in f32[n], y: out f32[n])"), std::string::npos) << text;
  EXPECT_NE(text.find("if (program_id(0) < n) {"), std::string::npos) << text;
  EXPECT_NE(text.find("let %x0: f32 = load x[program_id(0)]"), std::string::npos) << text;
  EXPECT_NE(text.find("store y[program_id(0)] = (%x0 * 2f)"), std::string::npos) << text;
}

TEST(Ir, VerifierAcceptsTracedKernel) { EXPECT_TRUE(verify(small_kernel()).empty()); }

TEST(Ir, VerifierRejectsBrokenKernels) {
  {
    auto k = small_kernel();
    k.params[2].kind = ParamKind::In;  // y becomes input-only: the store is now illegal
    const auto errs = verify(k);
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs[0].find("store to an input-only buffer"), std::string::npos) << errs[0];
  }
  {
    auto k = small_kernel();
    // use the loaded variable outside the if that declares it
    Stmt s;
    s.kind = StmtKind::Store;
    s.mem = MemRef{Space::Global, 2};
    s.a = k.exprs.const_u32(0);
    s.b = k.exprs.make({Op::VarRef, DType::f32, kNoExpr, kNoExpr, kNoExpr, 0});
    k.body.push_back(s);
    const auto errs = verify(k);
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs[0].find("outside its scope"), std::string::npos) << errs[0];
  }
  {
    auto k = small_kernel();
    // a type error: f32 + u32
    Stmt s;
    s.kind = StmtKind::Store;
    s.mem = MemRef{Space::Global, 2};
    s.a = k.exprs.const_u32(0);
    s.b = k.exprs.binary(Op::Add, DType::f32, k.exprs.const_f32(1), k.exprs.const_u32(1));
    k.body.push_back(s);
    EXPECT_THROW(verify_or_throw(k, "test"), VerifyError);
  }
  {
    auto k = small_kernel();
    // a load nested inside an expression (not the whole value of a let)
    const auto load = k.exprs.make(
        {Op::Load, DType::f32, k.exprs.const_u32(0), kNoExpr, kNoExpr, encode_mem(MemRef{Space::Global, 1})});
    Stmt s;
    s.kind = StmtKind::Store;
    s.mem = MemRef{Space::Global, 2};
    s.a = k.exprs.const_u32(0);
    s.b = k.exprs.binary(Op::Add, DType::f32, load, k.exprs.const_f32(1));
    k.body.push_back(s);
    const auto errs = verify(k);
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs[0].find("a load may only be the whole value of a let"), std::string::npos) << errs[0];
  }
  {
    // a vector load from the out-only buffer y
    const auto k = trace("k", [](KernelBuilder& b) {
      using namespace ingot::dsl;
      auto x = b.in<f32>("x", 4u);
      auto y = b.out<f32>("y", 4u);
      store(y, 0u, load(x, 0u));
    });
    auto bad = k;
    Stmt s;
    s.kind = StmtKind::LoadVec;
    s.mem = MemRef{Space::Global, 1};
    s.a = bad.exprs.const_u32(0);
    for (int j = 0; j < 4; ++j) {
      s.vars.push_back(static_cast<VarId>(bad.vars.size()));
      bad.vars.push_back({DType::f32, false, "v"});
    }
    bad.body.push_back(s);
    const auto errs = verify(bad);
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs[0].find("load_vec from an out-only buffer"), std::string::npos) << errs[0];
  }
}
