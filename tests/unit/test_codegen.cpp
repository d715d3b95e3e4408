// The printer: golden sources per dialect (regenerate with scripts/regen-golden.sh), and
// properties every dialect's output must have.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "depthwise_conv1d.hpp"
#include "features.hpp"
#include "ingot/codegen/dialect.hpp"
#include "ingot/codegen/printer.hpp"
#include "ingot/ir.hpp"
#include "ingot/ir_print.hpp"
#include "ingot/passes/legalise.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"
#include "shared_kernels.hpp"
#include "vector_add.hpp"

using namespace ingot;

namespace {

const codegen::Target kTargets[] = {codegen::Target::CUDA, codegen::Target::HIP, codegen::Target::OpenCL,
                                    codegen::Target::Metal, codegen::Target::GLSL};

std::string golden_path(const std::string& name, codegen::Target t) {
  return std::string(INGOT_GOLDEN_DIR) + "/" + name + std::string(codegen::target_file_extension(t));
}

void check_golden(const std::string& name, const ir::Kernel& k) {
  for (auto t : kTargets) {
    const auto src = codegen::emit(k, t).source;
    const auto path = golden_path(name, t);
    if (const char* u = std::getenv("INGOT_UPDATE_GOLDEN"); u && std::string(u) == "1") {
      std::ofstream(path) << src;
      continue;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "missing golden file " << path << ": run scripts/regen-golden.sh";
    std::stringstream want;
    want << in.rdbuf();
    EXPECT_EQ(src, want.str()) << "golden mismatch for " << path << " (if intended, run scripts/regen-golden.sh)";
  }
}

ir::Kernel conv_f16() {
  const examples::Conv1dShape s{8, 17, 3, 1, 1, 1};
  return passes::optimize(trace("depthwise_conv1d_f16", [&](KernelBuilder& b) {
    examples::depthwise_conv1d<f16>(b, s, examples::TailPolicy::Guarded);
  }));
}

}  // namespace

TEST(Codegen, GoldenVectorAdd) {
  check_golden("vector_add_f32", passes::optimize(trace("vector_add_f32", examples::vector_add<f32>)));
}
TEST(Codegen, GoldenDepthwiseConv1dF16) { check_golden("depthwise_conv1d_f16", conv_f16()); }
TEST(Codegen, GoldenFeatures) { check_golden("features", passes::optimize(trace("features", examples::features))); }

TEST(Codegen, GoldenVectorAccess) {
  check_golden("vector_reverse_bf16", passes::optimize(ingot::testing::vector_reverse_kernel<bf16>(8)));
}

TEST(Codegen, OutputIsDeterministic) {
  for (auto t : kTargets) {
    EXPECT_EQ(codegen::emit(conv_f16(), t).source, codegen::emit(conv_f16(), t).source);
  }
}

TEST(Codegen, DialectSpellings) {
  const auto k = passes::optimize(trace("features", examples::features));
  const auto cuda = codegen::emit(k, codegen::Target::CUDA).source;
  EXPECT_NE(cuda.find("extern \"C\" __global__ void features("), std::string::npos);
  EXPECT_NE(cuda.find("__syncthreads();"), std::string::npos);
  EXPECT_NE(cuda.find("__shared__ float tile_s0[64] __attribute__((aligned(16)));"), std::string::npos);
  EXPECT_NE(cuda.find("atomicAdd(&total[0u], "), std::string::npos);
  EXPECT_NE(cuda.find("erff("), std::string::npos);
  const auto hip = codegen::emit(k, codegen::Target::HIP).source;
  EXPECT_NE(hip.find("#include <hip/hip_runtime.h>"), std::string::npos);
  const auto cl = codegen::emit(k, codegen::Target::OpenCL).source;
  EXPECT_NE(cl.find("__kernel void features("), std::string::npos);
  EXPECT_NE(cl.find("__global const ushort* restrict x"), std::string::npos);
  EXPECT_NE(cl.find("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"), std::string::npos);
  EXPECT_NE(cl.find("atomic_cmpxchg("), std::string::npos);  // f32 atomic add emulated
  const auto msl = codegen::emit(k, codegen::Target::Metal).source;
  EXPECT_NE(msl.find("kernel void features("), std::string::npos);
  EXPECT_NE(msl.find("constant uint& n [[buffer(0)]]"), std::string::npos);
  EXPECT_NE(msl.find("[[thread_position_in_threadgroup]]"), std::string::npos);
  EXPECT_EQ(msl.find("erf("), std::string::npos);  // legalised away
  EXPECT_NE(msl.find("precise::exp("), std::string::npos);
}

// A kernel named like a built-in function is printed under another entry name on every target.
TEST(Codegen, EntryNamesThatCollideWithBuiltinsAreRenamed) {
  const auto k = trace("shuffle", [](KernelBuilder& b) {
    auto y = b.out<u32>("y", 1);
    store(y, 0, 7u);
  });
  for (auto t : kTargets) {
    const auto src = codegen::emit(k, t);
    if (t == codegen::Target::GLSL) {  // a shader's entry point is main() whatever the kernel's name
      EXPECT_EQ(src.entry, "main");
      continue;
    }
    EXPECT_EQ(src.entry, "shuffle_kernel") << codegen::target_name(t);
    EXPECT_NE(src.source.find(" shuffle_kernel("), std::string::npos) << codegen::target_name(t);
  }
  EXPECT_EQ(codegen::emit(passes::optimize(trace("features", examples::features)), codegen::Target::OpenCL).entry,
            "features");
}

TEST(Codegen, SignedArithmeticWrapsThroughUnsigned) {
  const auto k = trace("wrap", [](KernelBuilder& b) {
    auto a = b.scalar<i32>("a");
    auto y = b.out<i32>("y", 1);
    store(y, 0, a * 3 + 1);
  });
  const auto cuda = codegen::emit(k, codegen::Target::CUDA).source;
  EXPECT_NE(cuda.find("((int)((unsigned int)((int)((unsigned int)a * (unsigned int)3)) + (unsigned int)1))"),
            std::string::npos)
      << cuda;
}

TEST(Codegen, ReservedParameterNamesAreRenamed) {
  const auto k = trace("names", [](KernelBuilder& b) {
    auto half = b.scalar<u32>("half");
    auto y = b.out<u32>("kernel", half);
    store(y, 0, half);
  });
  const auto cl = codegen::emit(k, codegen::Target::OpenCL).source;
  EXPECT_NE(cl.find("const uint half_p0"), std::string::npos) << cl;
  EXPECT_NE(cl.find("__global uint* restrict kernel_p1"), std::string::npos) << cl;
}

TEST(Legalise, ErfDecompositionIsAccurate) {
  using namespace ingot::dsl;
  const auto k = trace("erf", [](KernelBuilder& b) {
    auto n = b.scalar<u32>("n");
    auto x = b.in<f32>("x", n);
    auto y = b.out<f32>("y", n);
    auto i = b.program_id(0);
    auto v = load(x, select(i < n, i, 0u));
    if_(i < n, [&] { store(y, i, erf(v)); });
  });
  const auto legal = passes::legalise(k, passes::LegaliseOptions{"test", {ir::Op::Erf}});
  for (ir::ExprId e = 0; e < legal.exprs.size(); ++e) ASSERT_NE(legal.exprs[e].op, ir::Op::Erf);
  runtime::Interpreter be;
  std::vector<double> xs;
  for (int i = -2000; i <= 2000; ++i) xs.push_back(i * 0.0025);  // [-5, 5]
  const auto n = static_cast<u32>(xs.size());
  auto bx = runtime::make_buffer(be, DType::f32, xs);
  auto by = be.allocate(DType::f32, n);
  be.launch(legal, runtime::grid_1d(n, 128), {runtime::scalar_arg<u32>(n), bx, by});
  const auto got = runtime::read_buffer(be, *by);
  double worst = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) worst = std::max(worst, std::fabs(got[i] - std::erf(xs[i])));
  EXPECT_LT(worst, 5e-7) << "documented bound: 1.5e-7 + f32 rounding";
}

TEST(Legalise, UndecomposableOpIsAClearError) {
  const auto k = trace("pow", [](KernelBuilder& b) {
    auto s = b.scalar<f32>("s");
    auto y = b.out<f32>("y", 1);
    store(y, 0, pow(s, 2.0f));
  });
  try {
    (void)passes::legalise(k, passes::LegaliseOptions{"toy", {ir::Op::Pow}});
    FAIL();
  } catch (const passes::LegaliseError& e) {
    EXPECT_NE(std::string(e.what()).find("the toy dialect cannot print op 'pow'"), std::string::npos) << e.what();
  }
}

// The shared-memory exchanges are sized by the launch bounds: without them, a clear error.
TEST(Legalise, ExchangesWithoutLaunchBoundsAreAClearError) {
  const auto k = trace("unbounded", [](KernelBuilder& b) {
    auto y = b.out<f32>("y", 64);
    auto v = cast<f32>(b.local_id(0));
    store(y, b.local_id(0), shuffle(v, 0u, 4));
    const auto d = mma_m16n8k16<bf16>(b, {v, v, v, v, v, v, v, v}, {v, v, v, v}, {v, v, v, v});
    store(y, b.local_id(0), d[0]);
  });
  for (const bool mma : {true, false}) {
    try {
      (void)passes::legalise(k, passes::LegaliseOptions{"toy", {}, mma, !mma});
      FAIL();
    } catch (const passes::LegaliseError& e) {
      const std::string want =
          std::string("the ") + (mma ? "mma" : "shuffle") + " statements on the toy dialect need launch bounds";
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

// The shared-memory emulation of an mma reads each of a lane's 64 A and B operands once (two A and two B values per
// step k feed four products) and computes the linear local id once per kernel: ~10 kB of OpenCL C per mma (the form
// that read every product's operands anew printed ~44 kB per mma, and PoCL took ~30x longer to build it unoptimized).
TEST(Legalise, MmaEmulationReadsEachOperandOnce) {
  constexpr int kMmas = 3;
  const auto k = trace("mmas", [](KernelBuilder& b) {
    auto y = b.out<f32>("y", 64);
    b.launch_bounds(64);
    auto v = cast<f32>(b.local_id(0));
    std::array<dsl::Val<f32>, 4> d{v, v, v, v};
    for (int i = 0; i < kMmas; ++i) d = mma_m16n8k16<f16>(b, {v, v, v, v, v, v, v, v}, {v, v, v, v}, d);
    store(y, b.local_id(0), d[0] + d[1] + d[2] + d[3]);
  });
  const ir::Kernel legal = passes::legalise(passes::optimize(k), passes::LegaliseOptions{"toy", {}, true, false});
  std::uint32_t scratch = 0;
  for (std::uint32_t i = 0; i < legal.shared.size(); ++i) {
    if (legal.shared[i].hint == "mma") scratch = i;
  }
  EXPECT_EQ(legal.shared[scratch].count, 12u * 64u);
  int mmas = 0, operand_loads = 0, fmas = 0, barriers = 0, local_ids = 0;
  std::vector<const ir::Block*> stack{&legal.body};
  while (!stack.empty()) {
    const ir::Block* blk = stack.back();
    stack.pop_back();
    for (const auto& st : *blk) {
      mmas += st.kind == ir::StmtKind::Mma;
      barriers += st.kind == ir::StmtKind::Barrier;
      if (st.kind == ir::StmtKind::Let) {
        const ir::Node& n = legal.exprs[st.a];
        operand_loads += n.op == ir::Op::Load && ir::decode_mem(n.imm) == ir::MemRef{ir::Space::Shared, scratch};
        fmas += n.op == ir::Op::Fma;
        local_ids += legal.vars[st.var].hint == "lid";
      }
      stack.push_back(&st.body);
      stack.push_back(&st.else_body);
    }
  }
  EXPECT_EQ(mmas, 0);
  EXPECT_EQ(operand_loads, kMmas * 64);
  EXPECT_EQ(fmas, kMmas * 64);
  EXPECT_EQ(barriers, kMmas * 2);
  EXPECT_EQ(local_ids, 1);
  const std::string cl = codegen::emit(k, codegen::Target::OpenCL).source;
  EXPECT_LT(cl.size(), 12000u * kMmas) << cl;
}

// Where the f32 slots of the mma exchange would take a kernel's shared memory over the dialect's budget (OpenCL: the
// 48 KB of NVIDIA's OpenCL), the slots hold the 16-bit operands: half the bytes, one 4-byte store per pair of slots
// and one 4-byte load per pair of steps; under the budget, or with Mmas of two element types, the f32 slots stay.
TEST(Legalise, MmaExchangeTakesSixteenBitSlotsOverTheSharedBudget) {
  constexpr int kMmas = 2;
  const auto kernel = [](std::uint32_t floats, bool mixed) {
    return passes::optimize(trace("mmas_big", [=](KernelBuilder& b) {
      auto y = b.out<f32>("y", 256);
      b.launch_bounds(256);
      auto s = b.shared<f32>("s", floats);
      auto l = b.local_id(0);
      store(s, l, cast<f32>(l));
      b.barrier();
      auto v = load(s, (l + 1u) % 256u);
      std::array<dsl::Val<f32>, 4> d{v, v, v, v};
      d = mma_m16n8k16<f16>(b, {v, v, v, v, v, v, v, v}, {v, v, v, v}, d);
      if (mixed) {
        d = mma_m16n8k16<bf16>(b, {v, v, v, v, v, v, v, v}, {v, v, v, v}, d);
      } else {
        d = mma_m16n8k16<f16>(b, {v, v, v, v, v, v, v, v}, {v, v, v, v}, d);
      }
      store(y, l, d[0] + d[1] + d[2] + d[3]);
    }));
  };
  passes::LegaliseOptions opt{"toy", {}, true, false};
  opt.shared_budget = 48 * 1024;
  const ir::Kernel legal = passes::legalise(kernel(10000, false), opt);  // 40000 + 12288 bytes with f32 slots
  ASSERT_EQ(legal.shared.back().hint, "mma");
  EXPECT_EQ(legal.shared.back().type, DType::f16);
  EXPECT_EQ(legal.shared.back().count, 12u * 256u);
  const ir::MemRef scratch{ir::Space::Shared, static_cast<std::uint32_t>(legal.shared.size() - 1)};
  int pair_loads = 0, pair_stores = 0, fmas = 0;
  std::vector<const ir::Block*> stack{&legal.body};
  while (!stack.empty()) {
    const ir::Block* blk = stack.back();
    stack.pop_back();
    for (const auto& st : *blk) {
      pair_loads += st.kind == ir::StmtKind::LoadVec && st.mem == scratch && st.vars.size() == 2;
      pair_stores += st.kind == ir::StmtKind::StoreVec && st.mem == scratch && st.values.size() == 2;
      fmas += st.kind == ir::StmtKind::Let && legal.exprs[st.a].op == ir::Op::Fma;
      stack.push_back(&st.body);
      stack.push_back(&st.else_body);
    }
  }
  EXPECT_EQ(pair_loads, kMmas * 32);
  EXPECT_EQ(pair_stores, kMmas * 6);
  EXPECT_EQ(fmas, kMmas * 64);
  EXPECT_EQ(codegen::emit(kernel(10000, false), codegen::Target::OpenCL).shared_bytes, 40000u + 6144u);
  EXPECT_EQ(codegen::emit(kernel(8000, false), codegen::Target::OpenCL).shared_bytes, 32000u + 12288u);
  opt.shared_budget = 64 * 1024;
  EXPECT_EQ(passes::legalise(kernel(10000, false), opt).shared.back().type, DType::f32);
  opt.shared_budget = 1;
  EXPECT_EQ(passes::legalise(kernel(10000, true), opt).shared.back().type, DType::f32);
}

TEST(Codegen, FingerprintTracksEveryChangeThatAltersTheSource) {
  const auto a = passes::optimize(trace("vector_add_f32", examples::vector_add<f32>));
  const auto b = passes::optimize(trace("vector_add_f32", examples::vector_add<f32>));
  EXPECT_EQ(ir::fingerprint(a), ir::fingerprint(b));  // same IR, traced twice
  EXPECT_EQ(ir::fingerprint(a).size(), 32u);
  auto renamed = a;
  renamed.name = "vector_add_g";
  EXPECT_NE(ir::fingerprint(renamed), ir::fingerprint(a));
  auto retyped = a;
  retyped.params[1].type = DType::f16;
  EXPECT_NE(ir::fingerprint(retyped), ir::fingerprint(a));
  const auto half = passes::optimize(trace("vector_add_f32", examples::vector_add<ingot::f16>));
  EXPECT_NE(ir::fingerprint(half), ir::fingerprint(a));
  auto hint = a;
  hint.vars[0].hint = "other";  // changes printed names, so changes the source
  EXPECT_NE(ir::fingerprint(hint), ir::fingerprint(a));
}

TEST(Codegen, SourceCacheReturnsWhatEmitPrints) {
  codegen::SourceCache cache(codegen::Target::OpenCL);
  const auto a = passes::optimize(trace("vector_add_f32", examples::vector_add<f32>));
  const auto c = conv_f16();
  const auto& first = cache.get(a);
  EXPECT_EQ(first.source, codegen::emit(a, codegen::Target::OpenCL).source);
  EXPECT_EQ(&cache.get(a), &first);  // served from the memo, not re-printed
  EXPECT_EQ(cache.get(c).source, codegen::emit(c, codegen::Target::OpenCL).source);
  EXPECT_NE(cache.get(c).source, first.source);
}
