// Properties of individual convolution kernels beyond the harness's oracle check: Winograd's
// measured accuracy against direct convolution, the host filter transform being bit-identical
// to the kernel's, and the causal conv1d decode step continuing a prefill exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <set>

#include "conv/depthwise_conv2d_nchw_smem.hpp"
#include "conv/depthwise_conv2d_nhwc_mma.hpp"
#include "conv/direct_conv_registry.hpp"
#include "conv/smem_banks.hpp"
#include "conv/winograd_conv2d.hpp"
#include "ingot/codegen/printer.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/ir_print.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"
#include "ingot/scalar_eval.hpp"

using namespace ingot;
using namespace ingot::harness;

namespace {

const KernelSpec& spec(const Registry& r, const std::string& name) {
  const KernelSpec* s = r.find(name);
  if (!s) throw std::runtime_error("kernel not registered: " + name);
  return *s;
}

// Runs a registered kernel on the interpreter with the given host data; returns every Out and
// InOut buffer.
std::map<std::string, std::vector<double>> run_interp(const KernelSpec& s, DType t, const Params& p,
                                                      const HostData& in) {
  runtime::Interpreter dev;
  const ir::Kernel k = passes::optimize(s.build(t, p));
  std::vector<runtime::Arg> args(k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const auto& prm = k.params[i];
    if (!ir::is_buffer(prm.kind))
      args[i] = runtime::ScalarArg{prm.type, ir::bits_of_double(prm.type, in.scalars.at(prm.name))};
  }
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const auto& prm = k.params[i];
    if (!ir::is_buffer(prm.kind)) continue;
    if (prm.kind == ir::ParamKind::Out) {
      args[i] = dev.allocate(prm.type, runtime::required_extent(k, i, args));
    } else {
      args[i] = runtime::make_buffer(dev, prm.type, in.buffers.at(prm.name));
    }
  }
  dev.launch(k, s.geometry(t, p), args);
  std::map<std::string, std::vector<double>> out;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const auto& prm = k.params[i];
    if (prm.kind == ir::ParamKind::Out || prm.kind == ir::ParamKind::InOut) {
      out[prm.name] = runtime::read_buffer(dev, *std::get<runtime::BufferPtr>(args[i]));
    }
  }
  return out;
}

Params conv_shape(std::int64_t B, std::int64_t C, std::int64_t O, std::int64_t H, std::int64_t W, std::int64_t pad) {
  return {{"B", B}, {"C", C}, {"O", O}, {"H", H}, {"W", W}, {"pad_h", pad}, {"pad_w", pad}, {"bias", 1}};
}

// A direct convolution computed in f32 on the host (bias first, then c, r, s in order): the
// accuracy Winograd is compared with.
std::vector<double> direct_conv_f32(const Params& p, const HostData& d) {
  const std::int64_t B = param(p, "B"), C = param(p, "C"), O = param(p, "O"), H = param(p, "H"), W = param(p, "W");
  const std::int64_t ph = param(p, "pad_h"), pw = param(p, "pad_w"), OH = H + 2 * ph - 2, OW = W + 2 * pw - 2;
  const auto& x = d.buffers.at("x");
  const auto& w = d.buffers.at("w");
  std::vector<double> y(static_cast<std::size_t>(B * O * OH * OW));
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t o = 0; o < O; ++o) {
      for (std::int64_t i = 0; i < OH; ++i) {
        for (std::int64_t j = 0; j < OW; ++j) {
          float acc = param(p, "bias") ? static_cast<float>(d.buffers.at("bias")[o]) : 0.0f;
          for (std::int64_t c = 0; c < C; ++c) {
            for (std::int64_t r = 0; r < 3; ++r) {
              for (std::int64_t q = 0; q < 3; ++q) {
                const std::int64_t iy = i + r - ph, ix = j + q - pw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const float prod = static_cast<float>(x[((b * C + c) * H + iy) * W + ix]) *
                                   static_cast<float>(w[((o * C + c) * 3 + r) * 3 + q]);
                acc = acc + prod;
              }
            }
          }
          y[((b * O + o) * OH + i) * OW + j] = acc;
        }
      }
    }
  }
  return y;
}

// The measurement behind the accuracy bound documented in docs/winograd.md and in
// kernels/conv/winograd_conv2d.cpp: the error of winograd_conv2d against an f64 direct
// convolution of the same (dtype-rounded) inputs, over reduction lengths C = 1..256, written
// as |err| <= a * (9C + 1) + r * |y| with r the output rounding (half an ulp of the dtype,
// relative). The test prints the measured a (and, for comparison, the same figure of a
// direct convolution in f32) and fails if a exceeds the documented bound.
TEST(Winograd, MeasuredErrorAgainstDirectConvolutionIsWithinTheDocumentedBound) {
  const Registry reg = builtin_registry();
  const KernelSpec& s = spec(reg, "winograd_conv2d");
  struct Bound {
    DType t;
    double half_ulp, documented_a;
  };
  for (const Bound& bd :
       {Bound{DType::f32, 0x1p-24, 5.1e-8}, Bound{DType::f16, 0x1p-11, 2e-9}, Bound{DType::bf16, 0x1p-8, 2e-9}}) {
    double worst_a = 0, worst_abs = 0, worst_rel = 0, direct_a = 0;
    for (std::int64_t C : {1, 8, 64, 256}) {
      for (std::uint64_t seed : {11u}) {
        const Params p = conv_shape(1, C, 2, 9, 11, 1);  // 9x11 output: odd both ways
        const HostData in = s.inputs(bd.t, p, seed);
        const auto want = s.oracle(bd.t, p, in).at("y");
        const auto got = run_interp(s, bd.t, p, in).at("y");
        const auto direct = direct_conv_f32(p, in);
        ASSERT_EQ(want.size(), got.size());
        const double n = 9.0 * static_cast<double>(C) + 1.0;
        for (std::size_t i = 0; i < want.size(); ++i) {
          const double err = std::fabs(got[i] - want[i]);
          worst_abs = std::max(worst_abs, err);
          worst_a = std::max(worst_a, (err - bd.half_ulp * std::fabs(want[i])) / n);
          if (std::fabs(want[i]) > 0.5) worst_rel = std::max(worst_rel, err / std::fabs(want[i]));
          direct_a = std::max(direct_a, std::fabs(direct[i] - want[i]) / n);
        }
      }
    }
    std::printf(
        "winograd_conv2d %-4s: max |err| %.3g, max rel err (|y| > 0.5) %.3g, a = %.3g (documented %.3g; "
        "direct conv in f32 before output rounding: a = %.3g)\n",
        std::string(dtype_name(bd.t)).c_str(), worst_abs, worst_rel, worst_a, bd.documented_a, direct_a);
    EXPECT_LE(worst_a, bd.documented_a) << dtype_name(bd.t);
  }
}

}  // namespace

// The registration feeds winograd_conv2d a filter transformed on the host; that transform must
// be bit-identical to the winograd_filter_transform kernel's.
TEST(Winograd, HostFilterTransformIsBitIdenticalToTheKernel) {
  const Registry reg = builtin_registry();
  const KernelSpec& s = spec(reg, "winograd_filter_transform");
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    const Params p{{"O", 7}, {"C", 13}};
    const HostData in = s.inputs(t, p, 99);
    const auto got = run_interp(s, t, p, in).at("u");
    const auto host = kernels::winograd_filter_transform_host(in.buffers.at("w"), std::size_t{7} * 13);
    ASSERT_EQ(got.size(), host.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], host[i]) << dtype_name(t) << " index " << i;
  }
}

// A decode step after a prefill continues it: prefill(x[0:L]) with its final state, then one
// update with x[L], gives the last output and the final state of prefill(x[0:L+1]).
TEST(CausalConv1d, UpdateAfterPrefillContinuesTheSequence) {
  const Registry reg = builtin_registry();
  const KernelSpec& pre = spec(reg, "causal_conv1d_prefill");
  const KernelSpec& upd = spec(reg, "causal_conv1d_update");
  for (std::int64_t K : {2, 4, 8}) {
    for (std::int64_t L : {1, 5}) {
      const std::int64_t B = 2, C = 3, S = K - 1;
      const DType t = DType::f32;
      const Params full{{"B", B},    {"C", C},    {"L", L + 1}, {"K", K},
                        {"bias", 1}, {"silu", 1}, {"init", 1},  {"final", 1}};
      Params head = full;
      head["L"] = L;
      const HostData in_full = pre.inputs(t, full, 5);
      // The first L positions of each row of x, with the same weights, bias and initial state.
      HostData in_head = in_full;
      auto& xh = in_head.buffers["x"];
      xh.clear();
      std::vector<double> x_last;
      for (std::int64_t bc = 0; bc < B * C; ++bc) {
        for (std::int64_t l = 0; l < L; ++l) xh.push_back(in_full.buffers.at("x")[bc * (L + 1) + l]);
        x_last.push_back(in_full.buffers.at("x")[bc * (L + 1) + L]);
      }
      const auto out_full = run_interp(pre, t, full, in_full);
      const auto out_head = run_interp(pre, t, head, in_head);

      const Params step{{"B", B}, {"C", C}, {"K", K}, {"bias", 1}, {"silu", 1}};
      HostData in_step;
      in_step.scalars["batch"] = static_cast<double>(B);
      in_step.buffers["x"] = x_last;
      in_step.buffers["w"] = in_full.buffers.at("w");
      in_step.buffers["bias"] = in_full.buffers.at("bias");
      in_step.buffers["state"] = out_head.at("final_state");
      const auto out_step = run_interp(upd, t, step, in_step);
      for (std::int64_t bc = 0; bc < B * C; ++bc) {
        EXPECT_EQ(out_step.at("y")[bc], out_full.at("y")[bc * (L + 1) + L]) << "K " << K << " L " << L << " bc " << bc;
        for (std::int64_t j = 0; j < S; ++j) {
          EXPECT_EQ(out_step.at("state")[bc * S + j], out_full.at("final_state")[bc * S + j]) << "K " << K;
        }
      }
    }
  }
}

namespace {
// A depthwise 7x7 convolution of `channels` 56x56 planes, stride 1, padding 3 (the bench's 7x7 shape).
ingot::kernels::ConvSpec depthwise_7x7_56x56_spec(std::uint32_t channels) {
  ingot::kernels::ConvSpec sp;
  sp.name = "dw7";
  sp.in_channels = sp.out_channels = sp.groups = channels;
  sp.in_size = {56, 56};
  sp.ksize = {7, 7};
  sp.stride = {1, 1};
  sp.pad = {3, 3};
  sp.dilation = {1, 1};
  return sp;
}

// Builds kernel `name` of dtype t from the first test case with `set` applied; returns the error
// text, or "" when it builds (k receives the kernel).
std::string build_with(const Registry& reg, const std::string& name, DType t, const Params& set,
                       ir::Kernel* k = nullptr) {
  const KernelSpec& s = spec(reg, name);
  Params p = s.tests.at(0).params;
  for (const auto& [key, v] : set) p[key] = v;
  try {
    ir::Kernel built = s.build(t, p);
    if (k) *k = std::move(built);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// How often `what` occurs in kernel kk's optimised CUDA print.
std::size_t count_in_cuda(const ir::Kernel& kk, const std::string& what) {
  const std::string cu = codegen::emit(passes::optimize(kk), codegen::Target::CUDA).source;
  std::size_t n = 0;
  for (std::size_t at = cu.find(what); at != std::string::npos; at = cu.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

// conv2d_grouped: the tensor-core kernel is the 16-bit default where it applies (8 input channels
// per group, stride and dilation 1) — the pixel-stage one with 8-row bands, 2 per work-group (2-D) where that fits,
// else the unstaged one —, f32 keeps the FMA kernel, and mma = 1 elsewhere says why not.
TEST(ConvKernels, GroupedConvMmaIsTheSixteenBitDefaultOrSaysWhyNot) {
  const Registry reg = builtin_registry();
  const KernelSpec& g2 = spec(reg, "conv2d_grouped");
  Params p;
  for (const auto& b : g2.bench) {
    if (b.name == "N32_C256_56x56_3x3_g32") p = b.params;
  }
  ASSERT_FALSE(p.empty());
  const auto has_mma = [](const ir::Kernel& k) {
    return ir::print_kernel(k).find("mma_m16n8k16") != std::string::npos;
  };
  const ir::Kernel bf = g2.build(DType::bf16, p);
  EXPECT_TRUE(has_mma(bf));
  EXPECT_EQ(bf.bounds.max_group_threads, 128u);
  EXPECT_NE(ir::print_kernel(bf).find("shared:xt"), std::string::npos);          // the pixel stage
  EXPECT_EQ(g2.geometry(DType::bf16, p).total_threads(), 32ull * 32 * 7 * 128);  // B * groups * 7 bands * 128
  const std::string cu = codegen::emit(passes::optimize(bf), codegen::Target::CUDA).source;
  EXPECT_NE(cu.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos);
  EXPECT_EQ(cu.find("ingot_pack_bf16x2("), std::string::npos);  // the loaded elements are packed as they are
  EXPECT_FALSE(has_mma(g2.build(DType::f32, p)));
  // Rows too wide for the staged band in shared memory: the unstaged tensor-core kernel.
  Params wide = p;
  wide["W"] = 2000;
  const ir::Kernel wk = g2.build(DType::bf16, wide);
  EXPECT_TRUE(has_mma(wk));
  EXPECT_EQ(ir::print_kernel(wk).find("shared:xs"), std::string::npos);
  // Naming the unstaged kernel's rows selects it.
  wide = p;
  wide["rows"] = 4;
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, wide)).find("shared:xs"), std::string::npos);
  EXPECT_EQ(g2.geometry(DType::bf16, wide).total_threads(), 32ull * 32 * 32 * 14 * 4);  // B * groups * bands * q-tiles
  Params q = p;
  q["mma"] = 1;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::f32, q).find("needs f16 or bf16"), std::string::npos);
  q["stride_h"] = 2;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("needs stride 1 and dilation 1"), std::string::npos);
  // rank 3 takes tensor cores too; its first case (1 channel per group) does not apply
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, {{"mma", 1}}).find("needs 8 input channels per group"),
            std::string::npos);
  q = p;
  // 1-column rows and 1-row bands: 4 threads per output; the buffers fit u32 indices, the threads do not
  q["W"] = 1, q["pad_w"] = 1, q["rows"] = 1, q["B"] = 1 << 17;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("exceed 32-bit thread indices"), std::string::npos);
  q = p;
  q["rows"] = 0;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("rows = 0 must be in [1, 1024]"), std::string::npos);
}

// The planar grouped kernel (stage = 2): channel rows staged by asynchronous copies, A by load_matrix_trans (ldmatrix
// .trans on CUDA), one fragment per input tile and step for every tap column; what it refuses and why.
// Two 16-bit tensor-core kernels at bench size whose OpenCL print held the mma exchange in f32 slots needed more than
// the 48 KB of local memory NVIDIA's OpenCL gives, which skipped them: the NHWC 7x7 default (53.8 KB) and the staged
// grouped 3-D kernel (stage=1, 54.0 KB). With the 16-bit slots legalise takes over the budget, they fit; the grouped
// 3-D default (the planar kernel, 41 KB) keeps its f32 slots.
TEST(ConvKernels, TensorCoreKernelsFitNvidiaOpenclLocalMemory) {
  const Registry reg = builtin_registry();
  struct Row {
    std::string kernel, bench;
    Params overrides;
    bool compact;
  };
  // (the NHWC default with its weights as tap pairs and the rotated output stage: 48064 bytes since the planes lost
  // their unread row, 50112 before)
  const std::vector<Row> rows{{"depthwise_conv2d_nhwc", "N32_C384_56x56_7x7", {}, true},
                              {"depthwise_conv2d_nhwc", "N32_C384_56x56_7x7", {{"mwp", 1}, {"mos", 1}}, true},
                              {"conv3d_grouped", "N4_C64_16x56x56_3x3x3_g8", {{"stage", 1}}, true},
                              {"conv3d_grouped", "N4_C64_16x56x56_3x3x3_g8", {}, false}};
  for (const Row& r : rows) {
    const KernelSpec& ks = spec(reg, r.kernel);
    Params p;
    for (const auto& b : ks.bench) {
      if (b.name == r.bench) p = ks.with_overrides(b.params, r.overrides);
    }
    ASSERT_FALSE(p.empty()) << r.kernel << " " << r.bench;
    for (const DType t : {DType::bf16, DType::f16}) {
      const ir::Kernel k = passes::optimize(ks.build(t, p));
      ASSERT_TRUE(ir::has_mma(k)) << r.kernel;
      const codegen::KernelSource cl = codegen::emit(k, codegen::Target::OpenCL);
      EXPECT_LE(cl.shared_bytes, 48u * 1024) << r.kernel << " " << dtype_name(t);
      EXPECT_EQ(cl.source.find("ushort mma_s") != std::string::npos, r.compact) << r.kernel << " " << dtype_name(t);
      EXPECT_EQ(cl.source.find("float mma_s") != std::string::npos, !r.compact) << r.kernel << " " << dtype_name(t);
    }
  }
}

TEST(ConvKernels, GroupedConvPlanarMmaBuildsOrSaysWhyNot) {
  const Registry reg = builtin_registry();
  const KernelSpec& g2 = spec(reg, "conv2d_grouped");
  Params p;
  for (const auto& b : g2.bench) {
    if (b.name == "N32_C256_56x56_3x3_g32_planar") p = b.params;
  }
  ASSERT_FALSE(p.empty());
  const ir::Kernel bf = g2.build(DType::bf16, p);
  EXPECT_EQ(bf.bounds.max_group_threads, 128u);
  EXPECT_EQ(g2.geometry(DType::bf16, p).total_threads(), 32ull * 32 * 7 * 128);  // B * groups * 8-row bands * 128
  const std::string cu = codegen::emit(passes::optimize(bf), codegen::Target::CUDA).source;
  EXPECT_NE(cu.find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), std::string::npos);
  EXPECT_NE(cu.find("cp.async.cg.shared.global"), std::string::npos);
  // 7 input tiles x 2 steps: 14 matrix loads, each feeding the 3 tap columns' mma
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = cu.find(what); at != std::string::npos; at = cu.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("ldmatrix.sync"), 14u);
  EXPECT_EQ(count("mma.sync"), 42u);
  EXPECT_EQ(ir::print_kernel(g2.build(DType::f32, p)).find("mma_m16n8k16"), std::string::npos);  // f32: FMA kernel
  Params q = p;
  q["bw"] = 2;  // two bands per work-group: half the work-groups (7 bands: 4 blocks)
  EXPECT_EQ(g2.geometry(DType::bf16, q).total_threads(), 32ull * 32 * 4 * 128);
  const auto why = [&](const Params& qq, DType t = DType::bf16) { return build_with(reg, "conv2d_grouped", t, qq); };
  q = p, q["mma"] = 0;
  EXPECT_NE(why(q).find("stage = 2 is a staged tensor-core kernel; it cannot run with mma = 0"), std::string::npos);
  q = p, q["W"] = 52;
  EXPECT_NE(why(q).find("needs an input width that is a multiple of 8"), std::string::npos);
  q = p, q["pad_w"] = 8, q["kw"] = 17;
  EXPECT_NE(why(q).find("pad_w <= 7 and kw - 1 - pad_w <= 7"), std::string::npos);
  q = p, q["kw"] = 11;
  EXPECT_NE(why(q).find("pad_w <= 7 and kw - 1 - pad_w <= 7"), std::string::npos);
  q = p, q["rows"] = 5;
  EXPECT_NE(why(q).find("rows = 5 must be even"), std::string::npos);
  q = p, q["W"] = 1024;
  EXPECT_NE(why(q, DType::f16).find("fewer rows per band or os = 0 would shrink it"), std::string::npos);
  // Outputs through shared memory (os, the default where Q % 8 == 0), or stored from the fragments.
  EXPECT_NE(ir::print_kernel(bf).find("shared:ys"), std::string::npos);
  q = p, q["os"] = 0;
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, q)).find("shared:ys"), std::string::npos);
  q = p, q["bw"] = 7, q["rows"] = 16;
  EXPECT_NE(why(q).find("stages 4 bands x 8 channels"), std::string::npos);  // 7 bands x ... clamped to 4 bands of 16
  q = p, q["bw"] = 9;
  EXPECT_NE(why(q).find("bw = 9 must be in [1, 8]"), std::string::npos);
  q = p, q["threads"] = 96;
  EXPECT_NE(why(q).find("32, 64, 128 or 256"), std::string::npos);
  q = p, q["minb"] = 4;
  EXPECT_EQ(g2.build(DType::bf16, q).bounds, (ir::LaunchBounds{128, 4}));
  // 2 x 8 planes, 256 threads per work-group: 8192 threads per image against 4096 elements; the buffers fit u32
  // indices, the threads do not
  q = p, q["H"] = 2, q["W"] = 8, q["rows"] = 2, q["threads"] = 256, q["B"] = (1 << 19) + 1;
  EXPECT_NE(why(q).find("threads of the planar tensor-core kernel exceed 32-bit thread indices"), std::string::npos);
  // 3-D: the 16-bit default (no stage named), 4 output depth slices and 128 threads; f32 and the other kernels'
  // parameters keep theirs
  const KernelSpec& g3 = spec(reg, "conv3d_grouped");
  Params p3;
  for (const auto& b : g3.bench) {
    if (b.name == "N4_C64_16x56x56_3x3x3_g8") p3 = b.params;
  }
  ASSERT_FALSE(p3.empty());
  EXPECT_EQ(g3.geometry(DType::bf16, p3).total_threads(), 4ull * 8 * 4 * 28 * 128);  // B * groups * OD/4 * bands * 128
  EXPECT_NE(codegen::emit(passes::optimize(g3.build(DType::f16, p3)), codegen::Target::CUDA).source.find(".trans"),
            std::string::npos);
  EXPECT_EQ(ir::print_kernel(g3.build(DType::f32, p3)).find("mma_m16n8k16"), std::string::npos);
  Params q3 = p3;
  q3["lm"] = 1;  // a staged-kernel parameter: the staged kernel (8 slices, 256 threads)
  EXPECT_EQ(g3.geometry(DType::bf16, q3).total_threads(), 4ull * 8 * 2 * 28 * 256);
  q = p, q["ds"] = 2;
  EXPECT_NE(why(q).find("applies to 3-D convolutions only"), std::string::npos);
  // we (the 3-D default, 8 output channels per group): the group's 8 x 8 x 27 weights copied into shared memory with
  // the first band's rows; we = 0 loads them from global memory; 16 output channels per group keep the global loads,
  // and naming we there is refused.
  EXPECT_NE(ir::print_kernel(g3.build(DType::bf16, p3)).find("shared:ws"), std::string::npos);
  q3 = p3, q3["we"] = 0;
  EXPECT_EQ(ir::print_kernel(g3.build(DType::bf16, q3)).find("shared:ws"), std::string::npos);
  q3 = p3, q3["O"] = 128;
  EXPECT_EQ(ir::print_kernel(g3.build(DType::bf16, q3)).find("shared:ws"), std::string::npos);
  q3["we"] = 1;
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3)
                .find("copies the weights to shared memory (we = 1) only with 8 output channels per group"),
            std::string::npos);
  // msm: more shared memory than the portable 48 KB (CUDA's dynamic shared memory). 8 slices with 256 threads and
  // their output stage take 56832 bytes (53376 and the weights): refused within 48 KB with the allowance named,
  // printed from `extern __shared__` with 64; the default (33792 bytes) prints static arrays whatever msm says.
  q3 = p3, q3["stage"] = 2, q3["ds"] = 8, q3["threads"] = 256;
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3).find("53376 bytes, more than 49152"), std::string::npos);
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3).find("msm allows more, in KB, on CUDA"),
            std::string::npos);
  q3["msm"] = 64;
  const codegen::KernelSource big = codegen::emit(passes::optimize(g3.build(DType::bf16, q3)), codegen::Target::CUDA);
  EXPECT_EQ(big.dynamic_shared_bytes, 56832u);
  EXPECT_NE(big.source.find("extern __shared__"), std::string::npos);
  EXPECT_EQ(g3.geometry(DType::bf16, q3).total_threads(), 4ull * 8 * 2 * 28 * 256);
  q3["msm"] = 55;  // the weights' copy no longer fits: they are loaded from global memory (53376 bytes)
  EXPECT_EQ(codegen::emit(passes::optimize(g3.build(DType::bf16, q3)), codegen::Target::CUDA).dynamic_shared_bytes,
            53376u);
  q3["msm"] = 52;
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3).find("53376 bytes, more than 53248"), std::string::npos);
  q3 = p3, q3["msm"] = 100;
  const codegen::KernelSource dflt = codegen::emit(passes::optimize(g3.build(DType::bf16, q3)), codegen::Target::CUDA);
  EXPECT_EQ(dflt.dynamic_shared_bytes, 0u);
  EXPECT_EQ(dflt.shared_bytes, 33792u);
  q3["msm"] = 228;
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3).find("msm = 228 must be in [16, 227]"),
            std::string::npos);
  q3 = p3, q3["stage"] = 1, q3["msm"] = 64;
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3)
                .find("msm (shared memory allowed, KB) applies to the planar tensor-core kernel only"),
            std::string::npos);
}

// The pixel-stage grouped kernel (stage = 3, the 2-D 16-bit default): channel rows copied asynchronously, transposed
// into pixels of 8 channels by load_matrix_trans, A by load_matrix with one fragment per pair of rows and tap column
// for every output row that reads it, outputs through shared memory; what it refuses and why.
TEST(ConvKernels, GroupedConvPixelMmaBuildsOrSaysWhyNot) {
  const Registry reg = builtin_registry();
  const KernelSpec& g2 = spec(reg, "conv2d_grouped");
  Params p;
  for (const auto& b : g2.bench) {
    if (b.name == "N32_C256_56x56_3x3_g32_pixel_bw1") p = b.params;
  }
  ASSERT_FALSE(p.empty());
  const ir::Kernel bf = g2.build(DType::bf16, p);
  EXPECT_EQ(bf.bounds.max_group_threads, 128u);
  EXPECT_EQ(g2.geometry(DType::bf16, p).total_threads(), 32ull * 32 * 7 * 128);  // B * groups * 8-row bands * 128
  const std::string cu = codegen::emit(passes::optimize(bf), codegen::Target::CUDA).source;
  EXPECT_NE(cu.find("cp.async.cg.shared.global"), std::string::npos);
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = cu.find(what); at != std::string::npos; at = cu.find(what, at + 1)) ++n;
    return n;
  };
  // Transposition: 10 staged rows x 2 groups of 4 tiles over 4 warps: 5 rounds. Products per warp (a 16-column
  // segment of 8 rows): 5 pairs of rows x 3 tap columns = 15 matrix loads, 8 rows x 2 pairs x 3 columns = 48 mma.
  EXPECT_EQ(count("ldmatrix.sync.aligned.m8n8.x4.trans"), 5u);
  EXPECT_EQ(count("ldmatrix.sync"), 20u);
  EXPECT_EQ(count("mma.sync"), 48u);
  EXPECT_NE(cu.find("uint4"), std::string::npos);  // the outputs leave as 16-byte vectors
  Params q = p;
  q["os"] = 0;  // outputs stored from the fragments: no output stage
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, q)).find("shared:ys"), std::string::npos);
  q = p, q["ya"] = 0;  // the output stage in an array of its own (by default it lies in the band's planar buffer, ya)
  EXPECT_NE(ir::print_kernel(g2.build(DType::bf16, q)).find("shared:ys"), std::string::npos);
  EXPECT_EQ(ir::print_kernel(g2.build(DType::f32, p)).find("mma_m16n8k16"), std::string::npos);  // f32: FMA kernel
  q = p, q["bw"] = 3;  // three bands per work-group (7 bands: 3 blocks), two alternating buffers
  EXPECT_EQ(g2.geometry(DType::bf16, q).total_threads(), 32ull * 32 * 3 * 128);
  const auto why = [&](const Params& qq, DType t = DType::bf16) { return build_with(reg, "conv2d_grouped", t, qq); };
  q = p, q["mma"] = 0;
  EXPECT_NE(why(q).find("stage = 3 is a staged tensor-core kernel; it cannot run with mma = 0"), std::string::npos);
  q = p, q["W"] = 52;
  EXPECT_NE(why(q).find("needs an input width that is a multiple of 8"), std::string::npos);
  q = p, q["rows"] = 5;
  EXPECT_NE(why(q).find("rows = 5 must be even and in [2, 32]"), std::string::npos);
  q = p, q["rows"] = 34;
  EXPECT_NE(why(q).find("rows = 34 must be even and in [2, 32]"), std::string::npos);
  q = p, q["W"] = 1024;
  EXPECT_NE(why(q, DType::f16).find("fewer rows per band or os = 0 would shrink it"), std::string::npos);
  q = p, q["bw"] = 65;
  EXPECT_NE(why(q).find("bw = 65 must be in [1, 64]"), std::string::npos);
  q = p, q["os"] = 2;
  EXPECT_NE(why(q).find("os = 2 must be in [0, 1]"), std::string::npos);
  q = p, q["threads"] = 96;
  EXPECT_NE(why(q).find("32, 64, 128 or 256"), std::string::npos);
  q = p, q["minb"] = 4;
  EXPECT_EQ(g2.build(DType::bf16, q).bounds, (ir::LaunchBounds{128, 4}));
  // 2 x 8 planes, 256 threads per work-group: 8192 threads per image against 4096 elements; the buffers fit u32
  // indices, the threads do not
  q = p, q["H"] = 2, q["W"] = 8, q["rows"] = 2, q["threads"] = 256, q["B"] = (1 << 19) + 1;
  EXPECT_NE(why(q).find("threads of the pixel-stage tensor-core kernel exceed 32-bit thread indices"),
            std::string::npos);
  // 3-D: refused with what to use instead; without a stage, 3-D keeps the planar kernel.
  const KernelSpec& g3 = spec(reg, "conv3d_grouped");
  Params p3;
  for (const auto& b : g3.bench) {
    if (b.name == "N4_C64_16x56x56_3x3x3_g8") p3 = b.params;
  }
  ASSERT_FALSE(p3.empty());
  Params q3 = p3;
  q3["stage"] = 3;
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3).find("is 2-D only (conv3d_grouped: stage = 1 or 2)"),
            std::string::npos);
  // Without a stage: the default; naming another kernel's parameter (lm: the staged kernel) or 2-D rows too wide for
  // shared memory (W = 2000: not even the staged kernel) select the others.
  Params d = p;
  d.erase("stage"), d.erase("bw");
  EXPECT_NE(ir::print_kernel(g2.build(DType::bf16, d)).find("shared:xt"), std::string::npos);
  d["lm"] = 1;
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, d)).find("shared:xt"), std::string::npos);
  d.erase("lm"), d["ds"] = 2;  // a 3-D parameter: not the pixel-stage kernel, which would ignore it
  EXPECT_NE(why(d).find("applies to 3-D convolutions only"), std::string::npos);
  q = p, q["stage"] = 1, q["os"] = 1;  // the staged kernel has no output stage
  EXPECT_NE(why(q).find("os (outputs through shared memory) applies to the planar and pixel-stage"), std::string::npos);
  q.erase("os");
  EXPECT_TRUE(why(q).empty());
  EXPECT_TRUE(why(p, DType::f32).empty());  // f32 runs the FMA kernel whatever the case names
  // we (the default where it fits): the group's weights copied into shared memory with the first band's rows, then
  // read from there (4-byte words); without it, loaded from global memory. 8 x 8 x 3 x 3 weights = 72 16-byte copies
  // beside the band's 10 rows x 8 channels x 7 chunks = 560.
  const std::string with = ir::print_kernel(bf);
  EXPECT_NE(with.find("shared:ws"), std::string::npos);
  EXPECT_EQ(count("cp.async.cg.shared.global"), 6u);  // rounds of 128 threads: 5 of the band's, 1 of the weights
  q = p, q["we"] = 0;
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, q)).find("shared:ws"), std::string::npos);
  q = p, q["O"] = 512;  // 16 output channels per group: two blocks, the weights per unit from global memory
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, q)).find("shared:ws"), std::string::npos);
  q["we"] = 1;
  EXPECT_NE(why(q).find("copies the weights to shared memory (we = 1) only with 8 output channels per group"),
            std::string::npos);
  q = p, q["W"] = 248, q["rows"] = 4;  // fits without the weights (48704 bytes), not with them: we falls back to 0
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, q)).find("shared:ws"), std::string::npos);
  q["we"] = 1;
  EXPECT_NE(why(q).find("and the group's weights in shared memory"), std::string::npos);
  q = p, q["stage"] = 1, q["we"] = 1;
  EXPECT_NE(why(q).find("we (weights copied with the first band) applies to the planar and pixel-stage"),
            std::string::npos);
  q = p, q["we"] = 2;
  EXPECT_NE(why(q).find("we = 2 must be in [0, 1]"), std::string::npos);
  // skip (the default): a band past P (56 rows in 8-row bands, two per work-group: the last block's second band) is
  // not computed; skip = 0 computes it and drops its stores. Where the bands fill every block (64 rows) the two are
  // one kernel.
  Params b2 = p;
  b2["bw"] = 2;
  const std::string skipped = ir::print_kernel(g2.build(DType::bf16, b2));
  q = b2, q["skip"] = 0;
  EXPECT_NE(ir::print_kernel(g2.build(DType::bf16, q)), skipped);
  q = b2, q["skip"] = 1;
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, q)), skipped);
  q = b2, q["H"] = 64, q["skip"] = 0;
  Params h64 = b2;
  h64["H"] = 64;
  EXPECT_EQ(ir::print_kernel(g2.build(DType::bf16, q)), ir::print_kernel(g2.build(DType::bf16, h64)));
  q = p, q["stage"] = 1, q["skip"] = 1;
  EXPECT_NE(why(q).find("skip applies to the pixel-stage tensor-core kernel only (stage = 3)"), std::string::npos);
  q3 = p3, q3["skip"] = 0;  // the planar kernel (3-D) has no such band
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3).find("applies to the pixel-stage tensor-core kernel"),
            std::string::npos);
  q = p, q["skip"] = 2;
  EXPECT_NE(why(q).find("skip = 2 must be in [0, 1]"), std::string::npos);
  // ya: the output stage in the planar buffer of its band (no array of its own: 37184 - 7296 bytes of shared memory
  // with two bands per work-group); refused without an output stage, with more than 2 bands per work-group, where the
  // stage outgrows the buffer (16 output channels per group: two blocks), and for other kernels.
  q = b2, q["ya"] = 1;
  const ir::Kernel ya = g2.build(DType::bf16, q);
  EXPECT_EQ(ir::print_kernel(ya).find("shared:ys"), std::string::npos);
  q = b2, q["ya"] = 0;
  EXPECT_NE(ir::print_kernel(g2.build(DType::bf16, q)).find("shared:ys"), std::string::npos);
  q = b2, q["ya"] = 1;
  q["os"] = 0;
  EXPECT_NE(why(q).find("ya = 1 needs os = 1"), std::string::npos);
  q = p, q["ya"] = 1, q["bw"] = 3;
  EXPECT_NE(why(q).find("only with at most 2 bands per work-group"), std::string::npos);
  q = p, q["ya"] = 1, q["O"] = 512;
  EXPECT_NE(why(q).find("in its planar buffer (ya = 1), which holds"), std::string::npos);
  q = p, q["stage"] = 1, q["ya"] = 1;
  EXPECT_NE(why(q).find("ya applies to the pixel-stage tensor-core kernel only"), std::string::npos);
  EXPECT_TRUE(why(q, DType::f32).empty());  // f32 runs the FMA kernel whatever the case names
}

// The staged tensor-core kernel (stage = 1): the band and the weights in shared memory, one
// 128-thread work-group per band; f32 keeps the FMA kernel; refusals say what to change.
TEST(ConvKernels, GroupedConvStagedMmaBuildsOrSaysWhyNot) {
  const Registry reg = builtin_registry();
  const KernelSpec& g2 = spec(reg, "conv2d_grouped");
  Params p;
  for (const auto& b : g2.bench) {
    if (b.name == "N32_C256_56x56_3x3_g32") p = b.params;
  }
  ASSERT_FALSE(p.empty());
  p["stage"] = 1, p["rows"] = 8;
  const ir::Kernel bf = g2.build(DType::bf16, p);
  const std::string ir_text = ir::print_kernel(bf);
  EXPECT_NE(ir_text.find("mma_m16n8k16"), std::string::npos);
  EXPECT_NE(ir_text.find("xs"), std::string::npos);
  EXPECT_EQ(bf.bounds.max_group_threads, 128u);
  EXPECT_EQ(g2.geometry(DType::bf16, p).total_threads(), 32ull * 32 * 7 * 128);  // B * groups * bands * 128
  const std::string cu = codegen::emit(passes::optimize(bf), codegen::Target::CUDA).source;
  EXPECT_NE(cu.find("__shared__"), std::string::npos);
  EXPECT_NE(cu.find("__syncthreads()"), std::string::npos);
  EXPECT_EQ(ir::print_kernel(g2.build(DType::f32, p)).find("mma_m16n8k16"), std::string::npos);
  Params q = p;
  q["mma"] = 0;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("cannot run with mma = 0"), std::string::npos);
  q = p, q["stride_w"] = 2;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("needs stride 1 and dilation 1"), std::string::npos);
  q = p, q["W"] = 1000;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::f16, q).find("fewer rows per band would shrink it"),
            std::string::npos);
  q = p, q["rows"] = 65;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("rows = 65 must be in [1, 64]"), std::string::npos);
  q = p, q["stage"] = 4;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("stage = 4 must be in [0, 3]"), std::string::npos);
  // Feeds: in 2-D A by pair loads by default, by load_matrix (ldmatrix on CUDA) with lm = 1; pair stores shuffle.
  EXPECT_FALSE(ir::has_load_matrix(bf));
  q = p, q["lm"] = 1;
  const ir::Kernel with_lm = g2.build(DType::bf16, q);
  EXPECT_TRUE(ir::has_load_matrix(with_lm));
  EXPECT_NE(codegen::emit(passes::optimize(with_lm), codegen::Target::CUDA).source.find("ldmatrix"), std::string::npos);
  q = p, q["sp"] = 1;
  EXPECT_NE(codegen::emit(passes::optimize(g2.build(DType::bf16, q)), codegen::Target::CUDA).source.find("__shfl_sync"),
            std::string::npos);
  q = p, q["lm"] = 2;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("lm = 2 must be in [0, 1]"), std::string::npos);
  // Row units (ru = 1; Q = 56, 8-row bands: 2-row units): no division by Q in the products; the 2-D default (ru = 0)
  // divides per pixel. minb caps the registers (launch bounds), and only the staged kernel takes it.
  const auto div_by_q = [](const ir::Kernel& kk) {
    return codegen::emit(passes::optimize(kk), codegen::Target::CUDA).source.find(" % 56u)") != std::string::npos;
  };
  EXPECT_TRUE(div_by_q(bf));
  q = p, q["ru"] = 1;
  EXPECT_FALSE(div_by_q(g2.build(DType::bf16, q)));
  q = p, q["minb"] = 6;
  EXPECT_EQ(g2.build(DType::bf16, q).bounds, (ir::LaunchBounds{128, 6}));
  q.erase("stage"), q.erase("rows"), q["mma"] = 0;  // the FMA kernel
  EXPECT_NE(
      build_with(reg, "conv2d_grouped", DType::bf16, q).find("minb applies to the staged tensor-core kernels only"),
      std::string::npos);
  // Output depth slices per work-group: 3-D only; in 3-D fewer work-groups and a deeper stage.
  q = p, q["ds"] = 2;
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::bf16, q).find("applies to 3-D convolutions only"),
            std::string::npos);
  const KernelSpec& g3 = spec(reg, "conv3d_grouped");
  Params p3;
  for (const auto& b : g3.bench) {
    if (b.name == "N4_C64_16x56x56_3x3x3_g8_staged") p3 = b.params;
  }
  ASSERT_FALSE(p3.empty());
  Params q3 = p3;
  q3["ds"] = 1;
  const auto one = g3.geometry(DType::bf16, q3).total_threads();
  q3["ds"] = 4;
  EXPECT_EQ(g3.geometry(DType::bf16, q3).total_threads() * 4, one);  // OD = 16: a quarter of the work-groups
  EXPECT_EQ(g3.geometry(DType::bf16, p3).total_threads() * 8, one);  // 8 by default where it fits
  EXPECT_NE(ir::print_kernel(g3.build(DType::bf16, q3)).find("xs"), std::string::npos);
  EXPECT_TRUE(ir::has_load_matrix(g3.build(DType::bf16, p3)));  // in 3-D load_matrix by default
  q3["ds"] = 17;
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3).find("ds = 17 must be in [1, 16]"), std::string::npos);
  q3["ds"] = 16, q3["rows"] = 16, q3["stage"] = 1;
  EXPECT_NE(build_with(reg, "conv3d_grouped", DType::bf16, q3).find("or depth slices (ds) would shrink it"),
            std::string::npos);
}

// depthwise_conv1d's chunk exchange (shfl): declared launch bounds, __shfl_sync in CUDA, fewer
// loads than without it, and refusals that say what to change.
TEST(ConvKernels, Conv1dChunkExchangeBuildsOrSaysWhyNot) {
  const Registry reg = builtin_registry();
  const Params o35{{"C", 3}, {"L", 32}, {"K", 4}, {"pad", 3}, {"V", 8}};  // O = 35: row-shifted groups
  Params with_shfl = o35;
  with_shfl["shfl"] = 1;
  ir::Kernel shfl, plain;
  ASSERT_EQ(build_with(reg, "depthwise_conv1d", DType::bf16, with_shfl, &shfl), "");
  ASSERT_EQ(build_with(reg, "depthwise_conv1d", DType::bf16, o35, &plain), "");
  EXPECT_EQ(shfl.bounds.max_group_threads, 256u);
  const std::string cu = codegen::emit(passes::optimize(shfl), codegen::Target::CUDA).source;
  EXPECT_NE(cu.find("__shfl_sync("), std::string::npos);
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  // One own chunk plus the loads of the row-end lanes, against up to three chunks in each of the 8 bodies.
  const std::string cu_plain = codegen::emit(passes::optimize(plain), codegen::Target::CUDA).source;
  EXPECT_LT(count(cu, "x["), count(cu_plain, "x["));
  with_shfl["L"] = 35;  // odd rows: scalar loads, no chunks to exchange
  EXPECT_NE(build_with(reg, "depthwise_conv1d", DType::bf16, with_shfl).find("needs vector chunks"), std::string::npos);
  with_shfl["L"] = 32;
  with_shfl["shfl"] = 2;
  EXPECT_NE(build_with(reg, "depthwise_conv1d", DType::bf16, with_shfl).find("shfl = 2 must be in [0, 1]"),
            std::string::npos);
}

// depthwise_conv1d's default V: 16 with the chunk exchange for 16-bit row-shifted groups read as
// 16-byte chunks, else 8; a case that names V or shfl keeps it.
TEST(ConvKernels, Conv1dDefaultVFollowsTheDtypeAndTheRows) {
  const Registry reg = builtin_registry();
  const KernelSpec& k = *reg.find("depthwise_conv1d");
  Params p = k.tests.at(0).params;
  for (const auto& [key, v] : Params{{"B", 2}, {"C", 3}, {"L", 4096}, {"K", 4}, {"pad", 3}}) p[key] = v;  // O = 4099
  p.erase("V");
  const auto threads = [&](DType t, const Params& q) { return k.geometry(t, q).total_threads(); };
  const auto round = [](std::uint64_t n) { return (n + 255) / 256 * 256; };
  EXPECT_EQ(threads(DType::bf16, p), round(2ull * 3 * 258));  // V16: ceil(4099/16) + 1 groups per row
  EXPECT_EQ(threads(DType::f32, p), round(2ull * 3 * 514));   // V8
  const ir::Kernel b = k.build(DType::f16, p);
  EXPECT_EQ(b.bounds, (ir::LaunchBounds{256, 0}));  // the exchange's bounds, no register cap
  EXPECT_NE(codegen::emit(passes::optimize(b), codegen::Target::CUDA).source.find("__shfl_sync("), std::string::npos);
  Params q = p;
  q["shfl"] = 0;  // named: V8 without the exchange
  EXPECT_EQ(threads(DType::bf16, q), round(2ull * 3 * 514));
  q = p, q["pad"] = 0, q["K"] = 1;  // O = 4096: aligned groups, V8
  EXPECT_EQ(threads(DType::bf16, q), round(2ull * 3 * 512));
  q = p, q["L"] = 4095;  // odd rows: no 16-byte chunks, V8
  EXPECT_EQ(threads(DType::bf16, q), round(2ull * 3 * (4098 / 8 + 1 + 1)));
  q = p, q["L"] = 1024, q["dilation"] = 81;  // O = 787: a window too wide for the exchange, V8
  EXPECT_EQ(threads(DType::bf16, q), round(2ull * 3 * (787 / 8 + 1 + 1)));
  q = p, q["B"] = 255, q["C"] = 4096, q["i64"] = 0;  // V16's indices would pass u32 where V8's do not: V8
  EXPECT_EQ(threads(DType::bf16, q), round(255ull * 4096 * 514));
  q.erase("i64");  // by default such a launch takes the 64-bit form, and V16 with it
  EXPECT_EQ(threads(DType::bf16, q), round(255ull * 4096 * 258));
}

// Launch bounds: the case parameter minb, and depthwise_conv1d's default cap (16-bit types, V <= 8).
TEST(ConvKernels, LaunchBoundsFollowMinbAndTheDefaultCap) {
  const Registry reg = builtin_registry();
  ir::Kernel k;
  ASSERT_EQ(build_with(reg, "depthwise_conv1d", DType::bf16, {{"V", 8}}, &k), "");
  EXPECT_EQ(k.bounds, (ir::LaunchBounds{256, 8}));
  ASSERT_EQ(build_with(reg, "depthwise_conv1d", DType::f16, {{"V", 8}}, &k), "");
  EXPECT_EQ(k.bounds, (ir::LaunchBounds{256, 8}));
  ASSERT_EQ(build_with(reg, "depthwise_conv1d", DType::f32, {{"V", 8}}, &k), "");
  EXPECT_EQ(k.bounds, ir::LaunchBounds{});  // f32: uncapped
  ASSERT_EQ(build_with(reg, "depthwise_conv1d", DType::bf16, {{"V", 16}}, &k), "");
  EXPECT_EQ(k.bounds, ir::LaunchBounds{});  // V > 8: uncapped
  ASSERT_EQ(build_with(reg, "depthwise_conv1d", DType::bf16, {{"V", 8}, {"minb", 1}}, &k), "");
  EXPECT_EQ(k.bounds, (ir::LaunchBounds{256, 1}));
  for (const char* name : {"depthwise_conv2d", "depthwise_conv2d_nhwc"}) {
    ASSERT_EQ(build_with(reg, name, DType::f32, {{"minb", 6}}, &k), "") << name;
    EXPECT_EQ(k.bounds, (ir::LaunchBounds{256, 6})) << name;
    ASSERT_EQ(build_with(reg, name, DType::bf16, {}, &k), "") << name;
    // (the NCHW 16-bit default is the tensor-core kernel: declared 256-thread bounds, no minimum)
    const ir::LaunchBounds want =
        std::string(name) == "depthwise_conv2d" ? ir::LaunchBounds{256, 0} : ir::LaunchBounds{};
    EXPECT_EQ(k.bounds, want) << name;
    for (const std::int64_t bad : {0, 33}) {
      EXPECT_NE(build_with(reg, name, DType::f32, {{"minb", bad}}).find("must be in [1, 32]"), std::string::npos)
          << name << " minb=" << bad;
    }
  }
}

// Shapes whose element indices do not fit u32 (in the 32-bit form of the kernels that have a 64-bit one too, i64 = 0;
// test_index_width.cpp), and parameters that do not fit 32 bits, are refused with the reason (never a silent wrap).
TEST(ConvKernels, SizesBeyond32BitIndicesAreRefused) {
  const Registry reg = builtin_registry();
  EXPECT_NE(build_with(reg, "depthwise_conv1d", DType::f32, {{"C", 65536}, {"L", 65536}, {"i64", 0}})
                .find("does not fit 32-bit indices"),
            std::string::npos);
  EXPECT_NE(build_with(reg, "depthwise_conv1d", DType::f32, {{"C", (std::int64_t{1} << 32) + 8}}).find("C = "),
            std::string::npos);
  EXPECT_NE(build_with(reg, "causal_conv1d_prefill", DType::f32, {{"C", 70000}, {"L", 70000}, {"i64", 0}})
                .find("does not fit 32-bit indices"),
            std::string::npos);
  EXPECT_NE(build_with(reg, "causal_conv1d_prefill_nlc", DType::f32, {{"C", 70000}, {"L", 70000}})
                .find("does not fit 32-bit indices"),
            std::string::npos);
  EXPECT_NE(build_with(reg, "causal_conv1d_update", DType::f32, {{"B", 1 << 20}, {"C", 1 << 20}})
                .find("does not fit 32-bit indices"),
            std::string::npos);
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::f32, {{"VH", -1}}).find("VH = -1 must be in [1, 16]"),
            std::string::npos);
  EXPECT_NE(build_with(reg, "conv2d_grouped", DType::f32, {{"OC", 5000}}).find("OC = 5000"), std::string::npos);
}

// The work-group-per-plane kernels of depthwise_conv2d: tensor cores (the 16-bit default for windows
// of 5 or more rows, mma) and the shared-memory tiles (smem): their launches, and refusals with the reason.
TEST(ConvKernels, SharedBankModelAndTheStagedPlaneStride) {
  namespace kn = ingot::kernels;
  std::vector<std::uint64_t> lanes(32);
  for (std::uint32_t l = 0; l < 32; ++l) lanes[l] = 4ull * l;  // consecutive words: one wavefront
  EXPECT_EQ(kn::shared_wavefronts(lanes, 4), 1u);
  for (std::uint32_t l = 0; l < 32; ++l) lanes[l] = 128ull * l;  // one bank, 32 words
  EXPECT_EQ(kn::shared_wavefronts(lanes, 4), 32u);
  for (std::uint32_t l = 0; l < 32; ++l) lanes[l] = 0;  // one word: a broadcast
  EXPECT_EQ(kn::shared_wavefronts(lanes, 4), 1u);
  for (std::uint32_t l = 0; l < 32; ++l) lanes[l] = 16ull * l;  // aligned 16-byte vectors: one per quarter warp
  EXPECT_EQ(kn::shared_wavefronts(lanes, 16), 4u);
  // 7x7 tiles of a 56x56 f32 plane (8 per row, a warp spans 4 tile rows): a row stride of 64 hits each bank 4 times,
  // 72 none; so the staged-plane kernel's layout takes 72 (and the copies in row-aligned rounds).
  EXPECT_EQ(kn::bank_friendly_row_stride(64, 200, 1, 4, 4, 64, 8, 7, 7), 72u);
  EXPECT_EQ(kn::bank_friendly_row_stride(64, 70, 1, 4, 4, 64, 8, 7, 7), 68u);  // within the limit: 2-way, not 4
  const kn::ConvSpec sp = depthwise_7x7_56x56_spec(5);
  const kn::DepthwiseSmemLayout L = kn::depthwise_conv2d_smem_layout(sp, {7u, 7u, false}, 4);
  EXPECT_EQ(L.plane.ws, 72u);
  EXPECT_TRUE(L.plane.row_rounds);
  EXPECT_EQ(L.group, 64u);
  // f32 windows of 5 or more rows run 7x8 tiles from the staged plane by default, 2x8 from global memory where the
  // plane does not fit (or with smem = 0)
  const Registry reg = builtin_registry();
  const auto& dw = spec(reg, "depthwise_conv2d");
  Params p{{"B", 2},     {"C", 3},    {"H", 56},       {"W", 56},       {"kh", 7},    {"kw", 7},   {"pad_h", 3},
           {"pad_w", 3}, {"bias", 0}, {"stride_h", 1}, {"stride_w", 1}, {"dil_h", 1}, {"dil_w", 1}};
  EXPECT_EQ(dw.geometry(DType::f32, p).group_size[0], 64u);  // 56 tiles of 7x8
  EXPECT_EQ(dw.geometry(DType::f32, p).total_threads(), 6u * 64);
  Params big = p;
  big["H"] = 120;
  big["W"] = 120;
  const auto groups_of_256 = [](std::uint64_t n) { return (n + 255) / 256 * 256; };
  EXPECT_EQ(dw.geometry(DType::f32, big).total_threads(), groups_of_256(std::uint64_t{2} * 3 * 60 * 15));  // 2x8 tiles
  Params off = p;
  off["smem"] = 0;
  EXPECT_EQ(dw.geometry(DType::f32, off).total_threads(), groups_of_256(std::uint64_t{2} * 3 * 28 * 7));
  Params named = p;  // a tile named without smem: the tiled kernel from global memory, as before the default
  named["VH"] = 2;
  EXPECT_EQ(dw.geometry(DType::f32, named).total_threads(), groups_of_256(std::uint64_t{2} * 3 * 28 * 7));
  named["smem"] = 1;  // with smem: 2x8 tiles of the staged plane, 196 per work-group of 224
  EXPECT_EQ(dw.geometry(DType::f32, named).total_threads(), 6u * 224);
}

TEST(ConvKernels, DepthwiseConv2dPlaneKernelsAndTheirRefusals) {
  const Registry reg = builtin_registry();
  const auto& dw = spec(reg, "depthwise_conv2d");
  Params p{{"B", 3},     {"C", 5},    {"H", 56},       {"W", 56},       {"kh", 7},    {"kw", 7},   {"pad_h", 3},
           {"pad_w", 3}, {"bias", 0}, {"stride_h", 1}, {"stride_w", 1}, {"dil_h", 1}, {"dil_w", 1}};
  // 7x7 bf16: tensor cores by default, with the tuned schedule and row pairs: work-groups of 4 warps (4 bands of 7 row
  // pairs), up to 8 images of one channel per work-group through two buffers (here all 3).
  ir::Kernel k7;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, p, &k7), "");
  EXPECT_TRUE(ir::has_mma(k7));
  EXPECT_TRUE(ir::has_load_matrix(k7));  // A fragments by load_matrix in the tuned schedule
  EXPECT_EQ(dw.geometry(DType::bf16, p).total_threads(), 5u * 128);
  EXPECT_EQ(dw.geometry(DType::bf16, p).group_size[0], 128u);
  {
    Params b9 = p;  // 9 images: 2 work-groups of 8 images per channel (row pairs, 7x7), the last with one
    b9["B"] = 9;
    EXPECT_EQ(dw.geometry(DType::bf16, b9).total_threads(), 5u * 2 * 128);
    Params odd = p;  // rows of 55 elements admit no vector copy: one plane per work-group, synchronously
    odd["W"] = 55;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, odd, &k7), "");
    EXPECT_TRUE(ir::has_mma(k7));
    EXPECT_EQ(dw.geometry(DType::bf16, odd).total_threads(), 3u * 5 * 128);
    Params former = p;  // naming imgs, async or mw leaves the rest at the kernel's own defaults: 7 warps
    former["imgs"] = 1;
    EXPECT_EQ(dw.geometry(DType::bf16, former).group_size[0], 224u);
    former["mw"] = 2;  // 14 rounds per warp
    ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, former, &k7), "");
    EXPECT_FALSE(ir::has_load_matrix(k7));  // lm only where asked outside the tuned schedule
    EXPECT_EQ(dw.geometry(DType::bf16, former).group_size[0], 64u);
    former["mw"] = 9;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, former, &k7).find("mw = 9 must be in [1, 8]"),
              std::string::npos);
    Params tiled_mw = p;
    tiled_mw["VH"] = 2;
    tiled_mw["mw"] = 4;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, tiled_mw, &k7).find("mw (warps per work-group) applies"),
              std::string::npos);
    Params tiled_lm = p;
    tiled_lm["VH"] = 2;
    tiled_lm["lm"] = 1;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, tiled_lm, &k7).find("lm (A fragments by load_matrix)"),
              std::string::npos);
    // lmfirst needs load_matrix; minb gives the launch bounds of the 4-warp work-group
    Params lmf = p;
    lmf["lmfirst"] = 1;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, lmf, &k7), "");
    EXPECT_TRUE(ir::has_load_matrix(k7));
    // the order it changes: a second ldmatrix before the first mma with lmfirst, after it without
    const auto second_ldmatrix_first = [](const ir::Kernel& kk) {
      const std::string cu = codegen::emit(passes::optimize(kk), codegen::Target::CUDA).source;
      return cu.find("ldmatrix", cu.find("ldmatrix") + 1) < cu.find("mma.sync");
    };
    EXPECT_TRUE(second_ldmatrix_first(k7));
    ir::Kernel plain;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, p, &plain), "");
    EXPECT_FALSE(second_ldmatrix_first(plain));
    lmf["lm"] = 0;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, lmf, &k7).find("lmfirst orders load_matrix"),
              std::string::npos);
    Params capped = p;
    capped["minb"] = 8;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, capped, &k7), "");
    EXPECT_EQ(k7.bounds, (ir::LaunchBounds{128, 8}));
  }
  {
    // Row pairs (rp, the tuned schedule's default): each layout row loaded once per band — a 56x56 plane in 4 bands of
    // 7 pairs loads 10 pairs of rows per band (7x7) against 49 load_matrix for the 16 x 8 tiles' 7 rounds.
    const auto count = count_in_cuda;
    ir::Kernel pairs, tiles;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, p, &pairs), "");
    Params p0 = p;
    p0["rp"] = 0;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, p0, &tiles), "");
    EXPECT_EQ(count(pairs, "mma.sync"), count(tiles, "mma.sync"));
    EXPECT_EQ(count(tiles, "ldmatrix") - count(pairs, "ldmatrix"), 49u - 10u);
    // lq: rows in pairs (0), pairs in A's register order (1, the default: the same loads), every row's A (2: one
    // load_matrix per layout row, 19 for a band of 7 pairs); 3 refused, and lq without rp.
    // In A's order a pair (R, R + 1) with R even takes one load's four registers as they are: the mma whose A operands
    // are .x, .y, .z, .w of one load_matrix result are the 4 tap rows of 7 with R even in each of the 7 pairs (28 of
    // 49) with lq 1, all 49 with lq 2, none with lq 0 (its A is .x, .z, .y, .w).
    const auto whole_loads = [](const ir::Kernel& kk) {
      const std::string cu = codegen::emit(passes::optimize(kk), codegen::Target::CUDA).source;
      static const std::regex a_in_order(R"re("r"\((ingot_lm[0-9]+)\.x\), "r"\(\1\.y\), "r"\(\1\.z\), "r"\(\1\.w\))re");
      return static_cast<std::size_t>(
          std::distance(std::sregex_iterator(cu.begin(), cu.end(), a_in_order), std::sregex_iterator()));
    };
    for (const auto& [lq, loads, whole] :
         std::vector<std::tuple<int, std::size_t, std::size_t>>{{0, 10, 0}, {1, 10, 28}, {2, 19, 49}}) {
      Params l = p;
      l["lq"] = lq;
      ir::Kernel kl;
      ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, l, &kl), "") << lq;
      EXPECT_EQ(count(kl, "ldmatrix"), loads) << lq;
      EXPECT_EQ(count(kl, "mma.sync"), count(pairs, "mma.sync")) << lq;
      EXPECT_EQ(whole_loads(kl), whole) << lq;
    }
    Params lq3 = p;
    lq3["lq"] = 3;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, lq3).find("lq = 3 must be in [0, 2]"),
              std::string::npos);
    lq3["lq"] = 1, lq3["rp"] = 0;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, lq3).find("lq (row loads) applies"), std::string::npos);
    // 8 warps: 7 bands of 4 pairs (Q = 56: one strip; no empty band), so 7 warps; il up to the pairs of a band
    Params w = p;
    w["rp"] = 1, w["mw"] = 8, w["async"] = 1, w["imgs"] = 4;
    EXPECT_EQ(dw.geometry(DType::bf16, w).group_size[0], 224u);
    w["il"] = 4;
    EXPECT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, w), "");
    w["il"] = 5;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, w).find("il = 5 must be in [1, 4]"), std::string::npos);
    w["mw"] = 2, w["W"] = 130;  // 3 strips of 64 columns x 1 band (the 2 warps take 2 of the 3 tasks per round)
    w.erase("il");
    EXPECT_EQ(dw.geometry(DType::bf16, w).group_size[0], 64u);
    // refusals: il without rp, rp on the tiled kernel, lmfirst or lm = 0 with rp
    Params bad = p;
    bad["il"] = 2, bad["rp"] = 0;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, bad).find("il (row pairs interleaved) applies"),
              std::string::npos);
    bad = p, bad["VH"] = 2, bad["rp"] = 1;
    EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, bad).find("rp (row-pair tiles) applies"),
              std::string::npos);
    for (const char* key : {"lmfirst", "lm"}) {
      bad = p, bad["rp"] = 1, bad[key] = std::string(key) == "lm" ? 0 : 1;
      EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, bad).find("drop lmfirst and lm = 0"),
                std::string::npos)
          << key;
    }
    // f32 with mma = 1 and rp = 1 runs the tiled kernel (like lm)
    bad = p, bad["mma"] = 1, bad["rp"] = 1;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::f32, bad, &k7), "");
    EXPECT_FALSE(ir::has_mma(k7));
  }
  // f32 and a case naming a tile run the tiled kernel
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::f32, p, &k7), "");
  EXPECT_FALSE(ir::has_mma(k7));
  Params tiled = p;
  tiled["VH"] = 2;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, tiled, &k7), "");
  EXPECT_FALSE(ir::has_mma(k7));
  // 3x3 16-bit: tensor cores with row pairs too (f32 keeps the tiled kernel); 2 images per work-group halve the groups
  // (rounded up)
  Params p3 = p;
  p3["kh"] = 3, p3["kw"] = 3, p3["pad_h"] = 1, p3["pad_w"] = 1;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, p3, &k7), "");
  EXPECT_TRUE(ir::has_mma(k7));
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::f32, p3, &k7), "");
  EXPECT_FALSE(ir::has_mma(k7));
  p3["mma"] = 1, p3["imgs"] = 2;
  EXPECT_EQ(dw.geometry(DType::f16, p3).total_threads(), 5u * 2 * 224);
  // refusals: stride, a window wider than 8 columns, a plane too large for shared memory
  Params bad = p;
  bad["mma"] = 1, bad["stride_w"] = 2;
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, bad).find("needs stride 1 and dilation 1; use mma = 0"),
            std::string::npos);
  bad = p, bad["mma"] = 1, bad["kw"] = 9, bad["pad_w"] = 4;
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, bad).find("at most 8 columns wide"), std::string::npos);
  bad = p, bad["mma"] = 1, bad["H"] = 200, bad["W"] = 200;
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::f16, bad).find("more than 49152"), std::string::npos);
  bad.erase("mma");  // the default falls back to the tiled kernel where the plane does not fit
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::f16, bad, &k7), "");
  EXPECT_FALSE(ir::has_mma(k7));
  bad["smem"] = 1;
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::f16, bad).find("use smem = 0"), std::string::npos);
  bad = p3, bad.erase("imgs"), bad["smem"] = 1;
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, bad).find("drop smem and shfl"), std::string::npos);
  // the staged plane with halo columns by shuffle: built where the halos of a row's end tiles lie
  // outside the row, refused where they do not (stride 2 along W)
  bad.erase("mma"), bad["shfl"] = 1;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, bad, &k7), "");
  EXPECT_EQ(ir::max_shuffle_lanes(k7), 32u);
  bad["stride_w"] = 2;
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, bad).find("halo shuffle with smem = 1"),
            std::string::npos);
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::bf16, bad).find("use shfl = 0"), std::string::npos);
}

// The 2-D depthwise tilings: default tiles per window (what the launch covers), and out-of-range
// tiling parameters refused with the reason.
TEST(ConvKernels, DepthwiseConv2dTilingsAndTheirLaunch) {
  const Registry reg = builtin_registry();
  // NCHW 3x3 16-bit default: tensor cores, work-groups of 4 warps per channel and 2 images; f32: 1x8 tiles, one
  // thread per tile of each (b, c) plane: 4*64 planes * 56*7 tiles; a named 2x8 tile: 28*7
  Params p = spec(reg, "depthwise_conv2d").tests.at(0).params;
  p["B"] = 4, p["C"] = 64, p["H"] = 56, p["W"] = 56, p["kh"] = 3, p["kw"] = 3, p["pad_h"] = 1, p["pad_w"] = 1;
  p["bias"] = 0, p["stride_h"] = 1, p["stride_w"] = 1, p["dil_h"] = 1, p["dil_w"] = 1;
  EXPECT_EQ(spec(reg, "depthwise_conv2d").geometry(DType::bf16, p).total_threads(), 64u * 2 * 128);
  EXPECT_EQ(spec(reg, "depthwise_conv2d").geometry(DType::f32, p).total_threads(), 4u * 64 * 56 * 7);
  p["VH"] = 2;  // naming a tile runs the tiled kernel in 16-bit too
  EXPECT_EQ(spec(reg, "depthwise_conv2d").geometry(DType::bf16, p).total_threads(), 4u * 64 * 28 * 7);
  p["VH"] = 1;
  EXPECT_EQ(spec(reg, "depthwise_conv2d").geometry(DType::bf16, p).total_threads(), 4u * 64 * 56 * 7);
  // NHWC 3x3 default: the stream kernel, V4 x VC2 per thread: 16-bit PB6, 10 bands x 14 strips of 32 threads (64
  // channels x 4 columns per work-group); f32 PB4, 14 bands x 7 strips of 64 (64 channels x 8 columns)
  Params q = p;
  q.erase("VH");
  q["B"] = 2;
  EXPECT_EQ(spec(reg, "depthwise_conv2d_nhwc").geometry(DType::bf16, q).total_threads(), 2u * 10 * 14 * 32);
  EXPECT_EQ(spec(reg, "depthwise_conv2d_nhwc").geometry(DType::bf16, q).group_size[0], 32u);
  EXPECT_EQ(spec(reg, "depthwise_conv2d_nhwc").geometry(DType::f32, q).total_threads(), 2u * 14 * 7 * 64);
  EXPECT_EQ(spec(reg, "depthwise_conv2d_nhwc").geometry(DType::f32, q).group_size[0], 64u);
  // a register-kernel key named (V 4, its default): the register kernel's V4 x VC2 x VH8: 7*14 tiles * 32 channel
  // pairs per image (25 groups of 256)
  q["V"] = 4;
  EXPECT_EQ(spec(reg, "depthwise_conv2d_nhwc").geometry(DType::bf16, q).total_threads(), 25u * 256);
  EXPECT_EQ(spec(reg, "depthwise_conv2d_nhwc").geometry(DType::f32, q).total_threads(), 25u * 256);
  // odd C: the stream kernel does not apply, the default is the register kernel's (7*14 tiles * 5 channels)
  Params odd = q;
  odd.erase("V");
  odd["C"] = 5;
  EXPECT_EQ(spec(reg, "depthwise_conv2d_nhwc").geometry(DType::f16, odd).total_threads(), 4u * 256);
  q["VH"] = 4, q["V"] = 2, q["ahead"] = 0;  // 14*28 tiles
  EXPECT_EQ(spec(reg, "depthwise_conv2d_nhwc").geometry(DType::bf16, q).total_threads(), 2u * 14 * 28 * 32);
  // preload changes the code, not the launch or the results (the harness cases cover both paths)
  ir::Kernel pre, rows;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, {{"preload", 1}}, &pre), "");
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, {{"preload", 0}}, &rows), "");
  EXPECT_NE(ir::print_kernel(pre), ir::print_kernel(rows));
  for (const char* name : {"depthwise_conv2d", "depthwise_conv2d_nhwc"}) {
    EXPECT_NE(build_with(reg, name, DType::f32, {{"preload", 2}}).find("preload = 2 must be in [0, 1]"),
              std::string::npos)
        << name;
  }
  // f32 3x3 default: 1x8 tiles with the halo exchange where it applies (declared bounds, no minb),
  // loads where it does not (no padding: the halo columns lie inside the row)
  const Params f32_3x3{{"H", 8},     {"W", 16},       {"kh", 3},       {"kw", 3},    {"pad_h", 1},
                       {"pad_w", 1}, {"stride_h", 1}, {"stride_w", 1}, {"dil_h", 1}, {"dil_w", 1}};
  ir::Kernel f32_default;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::f32, f32_3x3, &f32_default), "");
  EXPECT_EQ(f32_default.bounds, (ir::LaunchBounds{256, 0}));
  EXPECT_NE(codegen::emit(passes::optimize(f32_default), codegen::Target::CUDA).source.find("__shfl_sync("),
            std::string::npos);
  Params no_pad = f32_3x3;
  no_pad["pad_w"] = 0;  // W 18, Q 16: the last tile's right halo (columns 16, 17) is inside the row
  no_pad["W"] = 18;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::f32, no_pad, &f32_default), "");
  EXPECT_EQ(codegen::emit(passes::optimize(f32_default), codegen::Target::CUDA).source.find("__shfl_sync("),
            std::string::npos);
  p["B"] = 4, p.erase("VH");
  EXPECT_EQ(spec(reg, "depthwise_conv2d").geometry(DType::f32, p).total_threads(), 4u * 64 * 56 * 7);
  // halo by shuffle: the CUDA source exchanges with __shfl_sync; refused without preload or padding
  ir::Kernel shfl;
  const Params same3x3{{"H", 8},     {"W", 16},       {"kh", 3},       {"kw", 3},    {"pad_h", 1},
                       {"pad_w", 1}, {"stride_h", 1}, {"stride_w", 1}, {"dil_h", 1}, {"dil_w", 1}};
  Params with_shfl = same3x3;
  with_shfl["shfl"] = 1;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d", DType::bf16, with_shfl, &shfl), "");
  EXPECT_NE(codegen::emit(passes::optimize(shfl), codegen::Target::CUDA).source.find("__shfl_sync("),
            std::string::npos);
  EXPECT_EQ(shfl.bounds.max_group_threads, 256u);
  with_shfl["preload"] = 0;
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::f32, with_shfl).find("needs preload = 1"), std::string::npos);
  with_shfl["preload"] = 1;
  with_shfl["pad_w"] = 0;  // W 18, Q 16: the last tile's right halo (columns 16, 17) is inside the row
  with_shfl["W"] = 18;
  EXPECT_NE(build_with(reg, "depthwise_conv2d", DType::f32, with_shfl).find("does not apply"), std::string::npos);
  EXPECT_NE(build_with(reg, "depthwise_conv2d_nhwc", DType::f32, {{"VH", 0}}).find("VH = 0 must be in [1, 16]"),
            std::string::npos);
  EXPECT_NE(build_with(reg, "depthwise_conv2d_nhwc", DType::f32, {{"CL", -1}}).find("CL = -1 must be in [0, 65536]"),
            std::string::npos);
}

// The NHWC tensor-core kernel (depthwise_conv2d_nhwc mma = 1): one work-group per (image, band of mr rows, block of mc
// channels), 8 warps by default (8 channel pairs of one strip); its refusals and its keys' scope.
TEST(ConvKernels, DepthwiseNhwcMmaLaunchAndRefusals) {
  const Registry reg = builtin_registry();
  const KernelSpec& s = spec(reg, "depthwise_conv2d_nhwc");
  Params p{{"B", 3},     {"C", 384},      {"H", 56},       {"W", 56},    {"kh", 7},    {"kw", 7},   {"pad_h", 3},
           {"pad_w", 3}, {"stride_h", 1}, {"stride_w", 1}, {"dil_h", 1}, {"dil_w", 1}, {"bias", 0}, {"mma", 1}};
  // 7 bands of 8 rows x 24 blocks of 16 channels per image, 256 threads; the stage and planes fit 48 KB
  EXPECT_EQ(s.geometry(DType::bf16, p).total_threads(), 3u * 7 * 24 * 256);
  ir::Kernel k;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::bf16, p, &k), "");
  EXPECT_TRUE(ir::has_mma(k));
  EXPECT_TRUE(ir::has_load_matrix(k));
  EXPECT_EQ(k.bounds.max_group_threads, 256u);
  namespace kn = ingot::kernels;
  const kn::ConvForm form{"depthwise_conv2d_nhwc", 2, kn::ConvLayout::ChannelsLast, kn::ConvChannels::Depthwise};
  const kn::NhwcMmaLayout L = kn::depthwise_nhwc_mma_geometry(kn::conv_spec(form, p), 2, kn::DepthwiseNhwcMma{});
  EXPECT_EQ(L.ps % 64, 32u);  // the fill's two channel halves in disjoint banks
  EXPECT_LE(L.bytes, kn::kPlaneSmemBytes);
  // f32 with mma = 1 runs the default kernel; 8 channels per work-group where C is not a multiple of 16
  ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::f32, p, &k), "");
  EXPECT_FALSE(ir::has_mma(k));
  Params c8 = p;
  c8["C"] = 24;
  EXPECT_EQ(s.geometry(DType::f16, c8).total_threads(), 3u * 7 * 3 * 256 / 2);  // 4 channel pairs: 4 warps
  // refusals with the reason
  const auto why = [&](const Params& q, DType t = DType::bf16) {
    return build_with(reg, "depthwise_conv2d_nhwc", t, q);
  };
  Params bad = p;
  bad["C"] = 12;
  EXPECT_NE(why(bad).find("needs C a multiple of the 8 channels per work-group"), std::string::npos);
  bad = p, bad["mr"] = 16;
  EXPECT_NE(why(bad).find("use fewer rows (mr) or channels (mc)"), std::string::npos);
  bad = p, bad["mr"] = 5;
  EXPECT_NE(why(bad).find("even number of output rows"), std::string::npos);
  bad = p, bad["mc"] = 12;
  EXPECT_NE(why(bad).find("8 or 16 channels per work-group"), std::string::npos);
  bad = p, bad["il"] = 5;
  EXPECT_NE(why(bad).find("interleaves 1 to 4 row pairs"), std::string::npos);
  bad = p, bad["stride_w"] = 2;
  EXPECT_NE(why(bad).find("needs stride 1 and dilation 1; use mma = 0"), std::string::npos);
  bad = p, bad["kw"] = 9, bad["pad_w"] = 4;
  EXPECT_NE(why(bad).find("at most 8 columns wide"), std::string::npos);
  bad = p, bad["mb"] = 0;  // (mo, the output stage over the planes, which mb refused, was removed)
  EXPECT_NE(why(bad).find("mb = 0 must be in [1, 64]"), std::string::npos);
  bad = p, bad["mb"] = 4, bad["msm"] = 56;  // 8-row bands through a ring of 15 or 16 rows: 64 or 65 KB
  EXPECT_NE(why(bad).find("or allow more (msm, KB)"), std::string::npos);
  bad["msm"] = 100;
  EXPECT_EQ(why(bad), "");
  // Bands (mb): one work-group per (image, run of mb bands, channel block): 7 bands of 8 rows in runs of 4 -> 2 runs
  Params runs = p;
  runs["mb"] = 4, runs["msm"] = 100;
  EXPECT_EQ(s.geometry(DType::bf16, runs).total_threads(), 3u * 2 * 24 * 256);
  // Without an mma key, a 16-bit window of 5 or more rows runs the ring default (bands of 4 rows, every band of the
  // image in one work-group: one work-group per image and channel block, 38 KB); f32, 3x3, or a case naming another
  // kernel's key (or minb) runs the others.
  Params dflt = p;
  dflt.erase("mma");
  EXPECT_EQ(s.geometry(DType::bf16, dflt).total_threads(), 3u * 24 * 256);
  ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::f16, dflt, &k), "");
  EXPECT_TRUE(ir::has_mma(k));
  const kn::NhwcMmaLayout ring =
      kn::depthwise_nhwc_mma_geometry(kn::conv_spec(form, dflt), 2, kn::DepthwiseNhwcMma{.rows = 4, .bands = 64});
  EXPECT_EQ(ring.nbw, 14u);
  // the 10 layout rows a band of 4 output rows reads with 7 tap rows (11 until 2026-12-05, one never read); a ring of
  // 16 rows would not fit 48 KB
  EXPECT_EQ(ring.nrl, 10u);
  EXPECT_EQ(ring.rr, 10u);
  // planes, output stage (4 rows of 64 pixels: the strip's columns), NHWC stage, taps
  EXPECT_EQ(ring.qs, 64u);
  EXPECT_EQ(ring.bytes, 2u * (16 * 672 + 4 * 64 * 16 + 4 * 64 * 16 + 16 * 49));
  // an even window height keeps the pair's second row: 4 output rows and 6 tap rows read layout rows 0-8, loaded in
  // pairs up to row 9
  Params even = dflt;
  even["kh"] = 6, even["pad_h"] = 3;
  EXPECT_EQ(
      kn::depthwise_nhwc_mma_geometry(kn::conv_spec(form, even), 2, kn::DepthwiseNhwcMma{.rows = 4, .bands = 64}).nrl,
      10u);
  EXPECT_LE(ring.bytes, kn::kPlaneSmemBytes);
  ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::f32, dflt, &k), "");
  EXPECT_FALSE(ir::has_mma(k));
  for (const char* key : {"we", "minb"}) {
    Params other = dflt;
    other[key] = 1;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::bf16, other, &k), "") << key;
    EXPECT_FALSE(ir::has_mma(k)) << key;
  }
  Params k3 = dflt;
  k3["kh"] = 3, k3["kw"] = 3, k3["pad_h"] = 1, k3["pad_w"] = 1;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::bf16, k3, &k), "");
  EXPECT_FALSE(ir::has_mma(k));
  bad = p, bad["V"] = 4;
  EXPECT_NE(why(bad).find("V does not apply to mma = 1"), std::string::npos);
  // 7x7 16-bit runs the tensor-core kernel by default, so its keys apply from the ring default (every band of the
  // image per work-group): 8-row bands need 64 KB
  bad = p, bad.erase("mma"), bad["mr"] = 8;
  EXPECT_NE(why(bad).find("or allow more (msm, KB)"), std::string::npos);
  bad["msm"] = 100;
  EXPECT_EQ(why(bad), "");
  EXPECT_EQ(s.geometry(DType::bf16, bad).total_threads(), 3u * 24 * 256);
  bad.erase("msm");
  // mwp 1: with bands, the block's weights as packed tap pairs (16 channels x 7 tap rows x 9 pairs: 4032 bytes against
  // the taps' 1568), each band's B fragments two 4-byte loads per tap row (no 2-byte shared loads left; the ring
  // default's since step 30); mwp 0 the taps; refused with one band
  {
    const kn::NhwcMmaLayout pair_ring = kn::depthwise_nhwc_mma_geometry(
        kn::conv_spec(form, dflt), 2, kn::DepthwiseNhwcMma{.rows = 4, .bands = 64, .weight_pairs = true});
    EXPECT_EQ(pair_ring.bytes - ring.bytes, 2u * (16 * 7 * 9 * 2 - 16 * 49));
    // (and the ring default as it is with pairs declares bounds for 3 work-groups of 256 with its weights in registers
    // (80 registers; since step 33), 4 without (64, as the taps took without bounds): mwr 0 named, or an image of two
    // strips (more tasks than warps); not where a tensor-core key other than mwp, mos, mwr is named, nor with the
    // taps)
    std::string src;
    const auto lds16 = [&](const Params& q) {
      EXPECT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::bf16, q, &k), "");
      src = codegen::emit(passes::optimize(k), codegen::Target::CUDA).source;
      std::size_t n = 0;
      for (std::size_t at = src.find("ingot_lds16(("); at != std::string::npos; at = src.find("ingot_lds16((", at + 1))
        ++n;
      return n;
    };
    Params wp = dflt;
    EXPECT_EQ(lds16(wp), 0u);  // (the pairs are the default since step 30)
    EXPECT_NE(src.find("__launch_bounds__(256, 3)"), std::string::npos);
    wp["mwr"] = 0;
    EXPECT_EQ(lds16(wp), 0u);
    EXPECT_NE(src.find("__launch_bounds__(256, 4)"), std::string::npos);
    wp.erase("mwr"), wp["W"] = 70;
    EXPECT_EQ(lds16(wp), 0u);
    EXPECT_NE(src.find("__launch_bounds__(256, 4)"), std::string::npos);
    wp["W"] = dflt.at("W"), wp["mwp"] = 0;
    EXPECT_EQ(lds16(wp), 2u * 7 * 4);  // a warp's task: 2 channels x 7 tap rows x 4 taps
    EXPECT_NE(src.find("__launch_bounds__(256)"), std::string::npos);
    EXPECT_EQ(src.find("__launch_bounds__(256, 4)"), std::string::npos);
    wp["mwp"] = 1;
    EXPECT_EQ(lds16(wp), 0u);
    EXPECT_NE(src.find("__launch_bounds__(256, 3)"), std::string::npos);
    wp["mb"] = 14;
    EXPECT_EQ(lds16(wp), 0u);
    EXPECT_NE(src.find("__launch_bounds__(256)"), std::string::npos);
    // (the default's mwr is dropped, not refused, where the case's other keys or the image leave it refused: one band
    // per work-group, fewer warps than tasks, an image of one band (4 output rows: 64 registers, 4 work-groups))
    for (const auto& [key, v] : std::vector<std::pair<std::string, std::int64_t>>{{"mb", 1}, {"mw", 4}, {"H", 4}}) {
      Params q = dflt;
      q[key] = v;
      EXPECT_EQ(why(q), "") << key;
    }
    Params one_band = dflt;
    one_band["H"] = 4;
    EXPECT_EQ(lds16(one_band), 0u);
    EXPECT_NE(src.find("__launch_bounds__(256, 4)"), std::string::npos);
    wp["mb"] = 1, wp["mr"] = 8;
    EXPECT_NE(why(wp).find("mwp (how bands read the weights from shared memory) applies to 2 or more bands"),
              std::string::npos)
        << why(wp);
  }
  {  // mwr (each warp's weights held in registers across bands): refused with one band, and with more tasks than
     // warps (16 channels x 2 strips: 16 tasks for 8 warps); with one task per warp the weights are read from shared
     // memory before the band loop only (no 4-byte shared load of the pairs inside it)
    Params wr = p;
    wr["mwr"] = 1;
    EXPECT_NE(why(wr).find("holds the weights in registers across bands (mwr): needs 2 or more bands"),
              std::string::npos)
        << why(wr);
    wr["mb"] = 2, wr["mr"] = 4, wr["W"] = 70;
    EXPECT_NE(why(wr).find("needs one task per warp, has 16 tasks (channel pairs x 64-column strips) for 8 warps"),
              std::string::npos)
        << why(wr);
    wr["mw"] = 16;
    EXPECT_EQ(why(wr), "");
    wr["W"] = 56, wr["mw"] = 8, wr["mwp"] = 1;
    ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::bf16, wr, &k), "");
    const std::string src = codegen::emit(passes::optimize(k), codegen::Target::CUDA).source;
    const std::size_t loop = src.find("for (");
    ASSERT_NE(loop, std::string::npos);
    EXPECT_NE(src.find("ingot_lds1w((wpt"), std::string::npos);
    EXPECT_EQ(src.find("ingot_lds1w((wpt", loop), std::string::npos);
  }
  EXPECT_NE(why(bad, DType::f32).find("mr applies to the tensor-core kernel: set mma = 1"), std::string::npos);
  bad["kh"] = 3, bad["kw"] = 3, bad["pad_h"] = 1, bad["pad_w"] = 1;  // 3x3: the stream kernel by default
  EXPECT_NE(why(bad).find("mr applies to the tensor-core kernel: set mma = 1"), std::string::npos);
}

// The NHWC tensor-core kernel's output stage in the bank model (smem_banks.hpp), for a band of 4 rows x 56 pixels x 16
// channels (the bench's 7x7; stage rows qs = 64 pixels apart, the strip's columns): D's 4-byte stores of channel pairs
// (lane gl, tl of a warp: pixel 8 gl + 2 tl + f of a row, pair cp; every lane stores, those past Q too) and the
// read-out (the stage's chunks, 32 per warp instruction, the lanes past Q idle). The words rotated per pixel (mos 1)
// make both conflict-free: stores 256 to 64 wavefronts; the read-out's word loads one wavefront per warp instruction.
// A chunk's permuted place and its rotated words depend on the pixel's column only: a row adds 64 pixels.
TEST(ConvKernels, DepthwiseNhwcMmaRotatedStageIsConflictFree) {
  namespace kn = ingot::kernels;
  constexpr std::uint32_t Q = 56, qs = 64, H8 = 2, rows = 4;
  const auto at_of = [&](std::uint32_t p, std::uint32_t cp, bool rotated) {
    return kn::nhwc_mma_stage_chunk(p * H8 + cp / 4) * 8 +
           (rotated ? kn::nhwc_mma_stage_word(p, cp % 4, true) * 2 : (cp * 2) % 8);
  };
  const auto stores = [&](bool rotated) {
    std::uint32_t total = 0;
    for (std::uint32_t row = 0; row < rows; ++row) {
      for (std::uint32_t f = 0; f < 2; ++f) {
        for (std::uint32_t cp = 0; cp < 4 * H8; ++cp) {
          std::vector<std::uint64_t> offsets;
          for (std::uint32_t lane = 0; lane < 32; ++lane) {
            const std::uint32_t col = 8 * (lane / 4) + 2 * (lane % 4) + f;
            const std::uint32_t at = at_of(row * qs + col, cp, rotated);
            EXPECT_EQ(at, at_of(col, cp, rotated) + row * qs * H8 * 8);  // the kernel's row offset
            offsets.push_back(std::uint64_t{at} * 2);
          }
          total += kn::shared_wavefronts(offsets, 4);
        }
      }
    }
    return total;
  };
  EXPECT_EQ(stores(false), 256u);
  EXPECT_EQ(stores(true), 64u);
  std::uint32_t words = 0, vectors = 0;
  for (std::uint32_t q0 = 0; q0 < rows * qs * H8; q0 += 32) {
    const auto inside = [&](std::uint32_t q) { return (q / H8) % qs < Q; };
    std::vector<std::uint64_t> chunks;
    for (std::uint32_t q = q0; q < q0 + 32; ++q) {
      if (inside(q)) chunks.push_back(std::uint64_t{kn::nhwc_mma_stage_chunk(q)} * 16);
    }
    vectors += kn::shared_wavefronts(chunks, 16);
    for (std::uint32_t j = 0; j < 4; ++j) {
      std::vector<std::uint64_t> offsets;
      for (std::uint32_t q = q0; q < q0 + 32; ++q) {
        if (!inside(q)) continue;
        offsets.push_back(
            std::uint64_t{kn::nhwc_mma_stage_chunk(q) * 8 + kn::nhwc_mma_stage_word(q / H8, j, true) * 2} * 2);
      }
      words += kn::shared_wavefronts(offsets, 4);
    }
  }
  // (16 warp instructions of the 512 stage chunks, 14 of them holding a 56-pixel row's chunks: the 16-byte loads take
  // one wavefront per quarter warp, 56 in all; each word load one: conflict-free)
  EXPECT_EQ(vectors, 56u);
  EXPECT_EQ(words, 4u * 16);
  // Each chunk's four words hold its four channel pairs once (a permutation), for every pixel.
  for (std::uint32_t p = 0; p < 64; ++p) {
    std::uint32_t seen = 0;
    for (std::uint32_t j = 0; j < 4; ++j) seen |= 1u << kn::nhwc_mma_stage_word(p, j, true);
    EXPECT_EQ(seen, 15u) << p;
  }
}

// The NHWC stream kernel (the default where it applies): one work-group per (image, channel block, band, strip) with
// its tiling's CL*NQ threads (declared as launch bounds); "we", and where the kernel does not apply.
TEST(ConvKernels, DepthwiseNhwcStreamLaunchAndRefusals) {
  const Registry reg = builtin_registry();
  const KernelSpec& s = spec(reg, "depthwise_conv2d_nhwc");
  Params p{{"B", 3},     {"C", 384},      {"H", 56},       {"W", 56},    {"kh", 3},    {"kw", 3},  {"pad_h", 1},
           {"pad_w", 1}, {"stride_h", 1}, {"stride_w", 1}, {"dil_h", 1}, {"dil_w", 1}, {"bias", 0}};
  // 16-bit tiling V4 VC2 CL64 NQ1 PB6: 3 channel blocks x 10 bands x 14 strips per image, 64 threads each (f32: CL32
  // NQ2 PB4, 6 x 14 x 7)
  EXPECT_EQ(s.geometry(DType::bf16, p).total_threads(), 3u * 3 * 10 * 14 * 64);
  EXPECT_EQ(s.geometry(DType::f32, p).total_threads(), 3u * 6 * 14 * 7 * 64);
  EXPECT_EQ(s.geometry(DType::bf16, p).group_size[0], 64u);
  ir::Kernel k;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::bf16, p, &k), "");
  EXPECT_EQ(k.bounds.max_group_threads, 64u);
  EXPECT_NE(codegen::emit(passes::optimize(k), codegen::Target::CUDA).source.find("cp.async"), std::string::npos);
  // we (the default where it fits): the block's 128 x 9 weights copied into shared memory with row 0 and read from
  // there; we = 0 loads them from global memory
  EXPECT_NE(ir::print_kernel(s.build(DType::bf16, p)).find("shared:ws"), std::string::npos);
  Params nw = p;
  nw["we"] = 0;
  EXPECT_EQ(ir::print_kernel(s.build(DType::bf16, nw)).find("shared:ws"), std::string::npos);
  // f32 7x7 with stride 8 along W: the ring (6 slots x 63 columns x 32 channels, 48384 bytes) fits, ring and weights
  // (6272 more) do not: the default falls back to we = 0, and naming we = 1 is refused with the sizes
  Params wide = p;
  wide["kh"] = 7, wide["kw"] = 7, wide["pad_h"] = 3, wide["pad_w"] = 3, wide["stride_w"] = 8;
  EXPECT_EQ(ir::print_kernel(s.build(DType::f32, wide)).find("shared:ws"), std::string::npos);
  EXPECT_NE(ir::print_kernel(s.build(DType::f32, wide)).find("shared:xs"), std::string::npos);
  wide["we"] = 1;
  EXPECT_NE(build_with(reg, "depthwise_conv2d_nhwc", DType::f32, wide)
                .find("ring of 6 rows x 63 columns x 32 channels and the block's weights = 54656 bytes exceeds 49152"),
            std::string::npos)
      << build_with(reg, "depthwise_conv2d_nhwc", DType::f32, wide);
  // odd C: a pixel's channels admit no vector copy (the register kernel runs; we is refused with the reason); C = 6
  // copies pairs
  Params odd = p;
  odd["C"] = 5;
  for (const DType t : {DType::f16, DType::f32}) {
    ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", t, odd, &k), "");
    EXPECT_EQ(codegen::emit(passes::optimize(k), codegen::Target::CUDA).source.find("cp.async"), std::string::npos);
    Params odd_we = odd;
    odd_we["we"] = 1;
    EXPECT_NE(build_with(reg, "depthwise_conv2d_nhwc", t, odd_we).find("allow only 1-channel copies"),
              std::string::npos);
  }
  odd["C"] = 6;
  ASSERT_EQ(build_with(reg, "depthwise_conv2d_nhwc", DType::f16, odd, &k), "");
  EXPECT_NE(codegen::emit(passes::optimize(k), codegen::Target::CUDA).source.find("cp.async"), std::string::npos);
  // a register-kernel key runs the register kernel, which we does not apply to
  Params tiled = p;
  tiled["VH"] = 2, tiled["we"] = 1;
  EXPECT_NE(build_with(reg, "depthwise_conv2d_nhwc", DType::f32, tiled)
                .find("we (the block's weights through shared memory) applies to the stream kernel, which a case "
                      "naming V, VC, VH, preload, CL or ahead does not run"),
            std::string::npos);
}
