// The registration of the GEMM (gemm.hpp): its form and options, cases, inputs, f64 oracle, tolerance and bench
// arithmetic.
#include "gemm/gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gemm/register.hpp"
#include "support/inputs.hpp"
#include "support/trace.hpp"

namespace ingot::kernels {

namespace {

using harness::param;
using harness::Params;

constexpr const char* kName = "gemm";

// The tuning options, declared once (ingot list --options).
const std::vector<harness::OptionSpec>& gemm_options() {
  static const std::vector<harness::OptionSpec> options{
      {"tile", 0, kGemmTiles.size() - 1,
       "f16/bf16 tensor-core block tiling (gemm.hpp kGemmTiles): 0 128x128 (default), 1 128x256, 2 64x64, "
       "3 256x128, 4 16x64 with k-steps of 128 (few rows: decode); the exact f32 kernel has one tiling (64x64)"},
      {"stages", 2, 5, "f16/bf16 tensor-core kernel: shared-memory pipeline depth (tiles in flight); default 3"},
      {"mma", 0, 1,
       "f16/bf16: 1 warp matrix instructions (load_matrix, mma_m16n8k16: tensor cores on CUDA; default), 0 plain "
       "loops over the same shared tiles (the compact source for backends without matrix instructions)"},
      {"minb", 1, 4,
       "f16/bf16 tensor-core kernel: launch_bounds(threads, minb), registers chosen for minb work-groups per "
       "multiprocessor (CUDA); default the tiling's (gemm.hpp kGemmTiles: 2, 1, 4, 1, 2)"},
  };
  return options;
}

// What case p computes (spec parameters ta, tb, acc, bias, act, out; 0 where absent).
GemmForm form_of(const Params& p) {
  GemmForm f;
  f.a_trans = bounded_param(p, "ta", 0, 1, 0, kName) == 1;
  f.b_nk = bounded_param(p, "tb", 0, 1, 0, kName) == 1;
  f.accumulate = bounded_param(p, "acc", 0, 1, 0, kName) == 1;
  f.bias = bounded_param(p, "bias", 0, 1, 0, kName) == 1;
  f.act = static_cast<GemmActivation>(bounded_param(p, "act", 0, kGemmActivations - 1, 0, kName));
  f.c_f32 = bounded_param(p, "out", 0, 1, 0, kName) == 1;
  return f;
}

struct GemmShape {
  std::uint64_t M, N, K, batch;
};

GemmShape shape_of(const Params& p) {
  constexpr std::int64_t kU32 = 0xffffffffLL;
  GemmShape s{bounded_param(p, "M", 1, kU32, 1, kName), bounded_param(p, "N", 1, kU32, 1, kName),
              bounded_param(p, "K", 1, kU32, 1, kName), bounded_param(p, "batch", 1, kU32, 1, kName)};
  check_u32_elements(kName, s.batch, s.M * s.K);
  check_u32_elements(kName, s.batch, s.K * s.N);
  check_u32_elements(kName, s.batch, s.M * s.N);
  return s;
}

// The tiling of case p for dtype t: the tensor-core kernel's option (default 0), or for f32 the exact kernel's one
// tiling (tile and stages are the tensor-core kernel's options, as their meaning says; f32 cases share them so that one
// case list serves every dtype).
GemmTile tile_of(DType t, const Params& p) {
  const GemmTile mma = kGemmTiles[harness::option_value(gemm_options(), p, "tile", 0, kName)];
  return t == DType::f32 ? kGemmSimtTile : mma;
}

Params gemm_case(std::int64_t M, std::int64_t N, std::int64_t K, Params extra = {}) {
  Params p{{"M", M}, {"N", N}, {"K", K}, {"batch", 1}, {"alpha", 1}};
  for (const auto& [key, v] : extra) p[key] = v;
  return p;
}

double activation(GemmActivation a, double v) {
  switch (a) {
    case GemmActivation::none: return v;
    case GemmActivation::relu: return std::max(v, 0.0);
    case GemmActivation::silu: return v / (1.0 + std::exp(-v));
    case GemmActivation::gelu: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  }
  return v;
}

}  // namespace

void register_gemm(harness::Registry& r) {
  harness::KernelSpec s;
  s.name = kName;
  s.family = "gemm";
  s.description =
      "C = alpha * op(A) op(B) (+ beta * C) (+ bias[N]), activation; a [batch,M,K] (ta: [batch,K,M]), b [batch,K,N] "
      "(tb: [batch,N,K]); f32 accumulation; c of the inputs' dtype or (out = 1) f32";
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.spec_params = {"ta", "tb", "acc", "bias", "act", "out"};
  for (const auto& o : gemm_options()) s.add_option(o);
  s.value_names["act"] = {"noact", "relu", "silu", "gelu"};
  s.value_names["out"] = {"cdtype", "cf32"};
  s.runtime_params = {"M", "N", "K", "batch", "alpha", "beta"};
  s.scalar_params = {{"M", "M"}, {"N", "N"}, {"K", "K"}, {"batch", "batch"}, {"alpha", "alpha"}, {"beta", "beta"}};
  const auto with = [](Params p, const Params& more) {
    for (const auto& [key, v] : more) p[key] = v;
    return p;
  };
  const Params relu_bias{{"ta", 1}, {"bias", 1}, {"act", 1}};
  const Params silu_ta_tb{{"ta", 1}, {"tb", 1}, {"act", 2}};
  const Params acc_gelu{{"acc", 1}, {"alpha", 2}, {"beta", -1}, {"bias", 1}, {"act", 3}};
  // Five forms (one compiled variant each per dtype: M, N, K and batch are run-time) over sizes 1, 7, 17, 129, 4097
  // in each dimension. A contiguous dimension that is a multiple of 8 takes the 16-byte asynchronous copies, any other
  // the scalar staging.
  s.tests = {
      {"m1_n1_k1", gemm_case(1, 1, 1)},
      {"m7_n17_k129", gemm_case(7, 17, 129)},
      {"m4097_n8_k16", gemm_case(4097, 8, 16)},
      {"m16_n16_k4097", gemm_case(16, 16, 4097)},
      {"m129_n7_k17_tb", gemm_case(129, 7, 17, {{"tb", 1}})},
      {"m8_n4097_k24_tb", gemm_case(8, 4097, 24, {{"tb", 1}})},
      {"m72_n40_k4104_tb", gemm_case(72, 40, 4104, {{"tb", 1}})},
      {"m17_n129_k7_ta_bias_relu", gemm_case(17, 129, 7, relu_bias)},
      {"m136_n264_k72_ta_bias_relu", gemm_case(136, 264, 72, relu_bias)},
      {"m129_n136_k48_ta_tb_silu", gemm_case(129, 136, 48, silu_ta_tb)},
      {"batch3_m33_n24_k40_acc_bias_gelu", gemm_case(33, 24, 40, with(acc_gelu, {{"batch", 3}}))},
      {"batch2_m17_n7_k9_acc_bias_gelu", gemm_case(17, 7, 9, with(acc_gelu, {{"batch", 2}}))},
      // c in f32 from 16-bit inputs (f32: the same kernel as out = 0)
      {"m129_n136_k48_out_f32", gemm_case(129, 136, 48, {{"out", 1}})},
      {"batch2_m17_n7_k9_acc_out_f32", gemm_case(17, 7, 9, with(acc_gelu, {{"batch", 2}, {"out", 1}}))},
      // The tensor-core kernel's tilings, pipeline depths and plain-loop form (f16/bf16; f32 has one kernel).
      {"m136_n264_k104_tile1_stages2", gemm_case(136, 264, 104, {{"tile", 1}, {"stages", 2}})},
      {"m65_n72_k72_tile2_ta_bias_relu", gemm_case(65, 72, 72, with(relu_bias, {{"tile", 2}}))},
      {"m264_n136_k40_tile3_stages4_tb", gemm_case(264, 136, 40, {{"tile", 3}, {"stages", 4}, {"tb", 1}})},
      {"m70_n66_k300_tile2_stages5", gemm_case(70, 66, 300, {{"tile", 2}, {"stages", 5}})},
      {"m129_n136_k48_ta_tb_silu_mma0", gemm_case(129, 136, 48, with(silu_ta_tb, {{"mma", 0}}))},
      {"batch3_m33_n24_k40_acc_bias_gelu_mma0", gemm_case(33, 24, 40, with(acc_gelu, {{"batch", 3}, {"mma", 0}}))},
      {"m264_n136_k40_tile3_tb_mma0", gemm_case(264, 136, 40, {{"tile", 3}, {"tb", 1}, {"mma", 0}})},
      // the variant within 32 KiB of shared memory (lavapipe's limit) and without warp exchanges
      {"m70_n66_k300_tile2_ta_mma0", gemm_case(70, 66, 300, {{"tile", 2}, {"ta", 1}, {"mma", 0}})},
      {"m17_n136_k300_tile4_tb", gemm_case(17, 136, 300, {{"tile", 4}, {"tb", 1}})},
      {"m33_n72_k264_tile4_stages4", gemm_case(33, 72, 264, {{"tile", 4}, {"stages", 4}})},
  };
  s.bench = {
      {"8192cube", gemm_case(8192, 8192, 8192)},
      {"4096cube", gemm_case(4096, 4096, 4096)},
      {"8192cube_tile1", gemm_case(8192, 8192, 8192, {{"tile", 1}})},
      {"8192cube_tile3_stages4", gemm_case(8192, 8192, 8192, {{"tile", 3}, {"stages", 4}})},
      // decode: 16 tokens through a [8192, 8192] weight ([N, K]): memory-bound on the weight
      {"decode_m16_n8192_k8192_tb", gemm_case(16, 8192, 8192, {{"tb", 1}})},
      {"decode_m16_n8192_k8192_tb_tile4", gemm_case(16, 8192, 8192, {{"tb", 1}, {"tile", 4}})},
      {"decode_m16_n8192_k8192_tb_tile4_stages4", gemm_case(16, 8192, 8192, {{"tb", 1}, {"tile", 4}, {"stages", 4}})},
      {"batch64_m512_n512_k64", gemm_case(512, 512, 64, {{"batch", 64}})},
  };
  s.build = [](DType t, const Params& p) {
    const GemmForm f = form_of(p);
    (void)shape_of(p);
    const GemmTile tile = tile_of(t, p);
    if (t == DType::f32) {
      return trace_typed(t, kName, p,
                         [&](auto tag, KernelBuilder& k) { gemm_simt<typename decltype(tag)::type>(k, f); });
    }
    const std::uint32_t stages = harness::option_value(gemm_options(), p, "stages", 3, kName);
    const std::uint32_t minb = harness::option_value(gemm_options(), p, "minb", tile.min_groups, kName);
    const bool mma = harness::option_value(gemm_options(), p, "mma", 1, kName) == 1;
    return trace_typed(t, kName, p, [&](auto tag, KernelBuilder& k) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, float>) {
        throw std::logic_error("gemm: f32 takes the f32 kernel");
      } else {
        gemm_mma<T>(k, f, tile, stages, minb, mma);
      }
    });
  };
  s.geometry = [](DType t, const Params& p) {
    const GemmShape sh = shape_of(p);
    const GemmTile tile = tile_of(t, p);
    const std::uint64_t tiles = ((sh.M + tile.bm - 1) / tile.bm) * ((sh.N + tile.bn - 1) / tile.bn);
    if (tiles * sh.batch > 0x7fffffffULL) {
      throw std::invalid_argument(std::string(kName) + ": " + std::to_string(tiles * sh.batch) +
                                  " output tiles exceed 2^31 - 1 work-groups: split the batch");
    }
    return runtime::grid_1d(tiles * sh.batch * tile.threads(), tile.threads());
  };
  s.shapes = [](DType, const Params& p) {
    const GemmForm f = form_of(p);
    const GemmShape sh = shape_of(p);
    std::map<std::string, std::vector<std::uint64_t>> out{
        {"a", f.a_trans ? std::vector<std::uint64_t>{sh.batch, sh.K, sh.M} : std::vector{sh.batch, sh.M, sh.K}},
        {"b", f.b_nk ? std::vector<std::uint64_t>{sh.batch, sh.N, sh.K} : std::vector{sh.batch, sh.K, sh.N}},
        {"c", {sh.batch, sh.M, sh.N}}};
    if (f.bias) out["bias"] = {sh.N};
    return out;
  };
  s.inputs = [](DType t, const Params& p, std::uint64_t seed) {
    const GemmForm f = form_of(p);
    const GemmShape sh = shape_of(p);
    harness::HostData d;
    for (const char* key : {"M", "N", "K", "batch", "alpha"}) d.scalars[key] = static_cast<double>(param(p, key));
    if (f.accumulate) d.scalars["beta"] = static_cast<double>(param(p, "beta"));
    d.buffers["a"] = random_values(t, sh.batch * sh.M * sh.K, seed);
    d.buffers["b"] = random_values(t, sh.batch * sh.K * sh.N, seed + 1);
    if (f.bias) d.buffers["bias"] = random_values(t, sh.N, seed + 2);
    if (f.accumulate) d.buffers["c"] = random_values(f.c_f32 ? DType::f32 : t, sh.batch * sh.M * sh.N, seed + 3);
    return d;
  };
  // In f64, each batch's operands first laid out k-contiguous (A as [M][K], B as [N][K]) and its rows spread over the
  // machine's threads: --check at a bench size (8192^3: 5.5e11 multiply-adds) is then seconds on a GPU machine's
  // cores, not an hour on one.
  s.oracle = [](DType, const Params& p, const harness::HostData& d) {
    const GemmForm f = form_of(p);
    const GemmShape sh = shape_of(p);
    const auto& a = harness::buffer_values(d, "a", kName);
    const auto& b = harness::buffer_values(d, "b", kName);
    const double alpha = harness::scalar_value(d, "alpha", kName);
    const double beta = f.accumulate ? harness::scalar_value(d, "beta", kName) : 0.0;
    const std::vector<double>* c_in = f.accumulate ? &harness::buffer_values(d, "c", kName) : nullptr;
    const std::vector<double>* bias = f.bias ? &harness::buffer_values(d, "bias", kName) : nullptr;
    const std::uint64_t M = sh.M, N = sh.N, K = sh.K;
    std::vector<double> c(sh.batch * M * N);
    std::vector<double> ak(f.a_trans ? M * K : 0), bk(f.b_nk ? 0 : N * K);
    for (std::uint64_t bi = 0; bi < sh.batch; ++bi) {
      const double* ab = a.data() + bi * M * K;
      const double* bb = b.data() + bi * K * N;
      if (f.a_trans) {
        for (std::uint64_t kk = 0; kk < K; ++kk)
          for (std::uint64_t m = 0; m < M; ++m) ak[m * K + kk] = ab[kk * M + m];
        ab = ak.data();
      }
      if (!f.b_nk) {
        for (std::uint64_t kk = 0; kk < K; ++kk)
          for (std::uint64_t n = 0; n < N; ++n) bk[n * K + kk] = bb[kk * N + n];
        bb = bk.data();
      }
      const auto rows = [&](std::uint64_t m_begin, std::uint64_t m_end) {
        for (std::uint64_t m = m_begin; m < m_end; ++m) {
          for (std::uint64_t n = 0; n < N; ++n) {
            double sum = 0;
            for (std::uint64_t kk = 0; kk < K; ++kk) sum += ab[m * K + kk] * bb[n * K + kk];
            const std::uint64_t at = (bi * M + m) * N + n;
            double v = alpha * sum;
            if (c_in) v += beta * (*c_in)[at];
            if (bias) v += (*bias)[n];
            c[at] = activation(f.act, v);
          }
        }
      };
      // Threads only where there is work for them (the test cases are small).
      const std::uint64_t work = M * N * K;
      const std::uint64_t threads =
          work < (1u << 22) ? 1 : std::min<std::uint64_t>(M, std::max(1u, std::thread::hardware_concurrency()));
      std::vector<std::thread> pool;
      for (std::uint64_t t = 1; t < threads; ++t) pool.emplace_back(rows, M * t / threads, M * (t + 1) / threads);
      rows(0, M / threads);
      for (auto& th : pool) th.join();
    }
    return std::map<std::string, std::vector<double>>{{"c", c}};
  };
  // An f32 dot product of K terms rounded once to the dtype (dot_tolerance), its absolute error scaled by alpha and
  // by the activations' slope (at most 1.13, GELU's).
  s.tolerance = [](DType t, const Params& p) {
    harness::Tolerance tol = dot_tolerance(form_of(p).c_f32 ? DType::f32 : t, param(p, "K"));
    tol.abs *= 1.25 * std::max<double>(1.0, std::abs(static_cast<double>(param(p, "alpha"))));
    return tol;
  };
  s.bytes = [](DType t, const Params& p) {
    const GemmForm f = form_of(p);
    const GemmShape sh = shape_of(p);
    const double e = static_cast<double>(dtype_size(t));
    const double c = static_cast<double>(sh.batch * sh.M * sh.N) * (f.accumulate ? 2.0 : 1.0) * (f.c_f32 ? 4.0 : e);
    return e * (static_cast<double>(sh.batch * (sh.M * sh.K + sh.K * sh.N)) + (f.bias ? sh.N : 0.0)) + c;
  };
  s.flops = [](const Params& p) {
    return 2.0 * static_cast<double>(param(p, "batch")) * static_cast<double>(param(p, "M")) *
           static_cast<double>(param(p, "N")) * static_cast<double>(param(p, "K"));
  };
  r.add(std::move(s));
}

}  // namespace ingot::kernels
