// conv3d_grouped: grouped 3-D convolution, NCDHW input, weight [O, C/groups, kd, kh, kw],
// optional bias; kernel size, stride, padding and dilation per axis. The cases, oracle and bench
// arithmetic are direct_conv_registry's; the kernels are grouped_conv_mma.hpp (tensor cores: the
// f16/bf16 default where it applies — 8 input channels per group, stride and dilation 1; spec
// parameters "mma", "rows", "mmatx") and grouped_conv_nchw.hpp (OC output channels x a VH x VW tile
// of one depth slice per thread, spec parameters "OC", "VH", "VW", default 8, 1, 8).
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "grouped_conv_registry.hpp"
#include "register.hpp"

namespace ingot::kernels {

void register_conv3d_grouped(harness::Registry& r) {
  const ConvForm f{"conv3d_grouped", 3, ConvLayout::ChannelsFirst, ConvChannels::Grouped};
  auto s = grouped_conv_kernel(
      f,
      "grouped 3-D convolution: x[B,C,D,H,W] * w[O,C/groups,kd,kh,kw] (+bias[O]) -> y[B,O,P,Q,R]; stride, pad, "
      "dilation per axis",
      {
          // groups = C = O (depthwise); 960 outputs: a partial last work-group
          {"depthwise_g4_3x3x3_pad1_bias",
           {.B = 2, .C = 4, .O = 4, .groups = 4, .size = {4, 5, 6}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true}},
          // 2 input and 3 output channels per group
          {"cpg2_g2_k3x2x3_s1x2x1_d2x1x1",
           {.B = 1,
            .C = 4,
            .O = 6,
            .groups = 2,
            .size = {5, 5, 5},
            .k = {3, 2, 3},
            .stride = {1, 2, 1},
            .pad = {1, 0, 1},
            .dil = {2, 1, 1}}},
          {"k1_g3_batch2", {.B = 2, .C = 6, .O = 3, .groups = 3, .size = {2, 3, 4}, .k = {1, 1, 1}}},
          // one input slice padded on both sides with a 1-deep window: output slices 0 and 2 see padding only (bias)
          {"cpg8_g1_d1_k1x1x1_pad1x0x0",
           {.B = 1, .C = 8, .O = 8, .groups = 1, .size = {1, 4, 8}, .k = {1, 1, 1}, .pad = {1, 0, 0}}},
          {"cpg4_g2_k2x3x2_s2_bias",
           {.B = 1,
            .C = 8,
            .O = 2,
            .groups = 2,
            .size = {5, 6, 7},
            .k = {2, 3, 2},
            .stride = {2, 2, 2},
            .pad = {1, 1, 1},
            .bias = true}},
      },
      {
          // 8 channels per group, vector rows, padding on every axis, partial row tile
          {"cpg8_g2_3x5x16_pad1_bias_oc4_t2x8",
           {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {3, 5, 16}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true},
           {4, 2, 8}},
          // 3 output channels per group with OC = 2, depth stride 2 and dilation, Q = 8 (stride 2)
          {"cpg2_og3_g2_5x6x16_k2x3x3_s2x1x2_d1x2x1_b2_oc2_t2x8",
           {.B = 2,
            .C = 4,
            .O = 6,
            .groups = 2,
            .size = {5, 6, 16},
            .k = {2, 3, 3},
            .stride = {2, 1, 2},
            .pad = {1, 1, 1},
            .dil = {1, 2, 1}},
           {2, 2, 8}},
          // scalar rows (W = 7), partial column tile, depthwise multiplier 2
          {"multiplier2_g2_4x5x7_pad1_oc2_t2x4",
           {.B = 1, .C = 2, .O = 4, .groups = 2, .size = {4, 5, 7}, .k = {3, 3, 3}, .pad = {1, 1, 1}},
           {2, 2, 4}},
      },
      {
          {"N4_C64_16x56x56_3x3x3_g8",
           {.B = 4, .C = 64, .O = 64, .groups = 8, .size = {16, 56, 56}, .k = {3, 3, 3}, .pad = {1, 1, 1}}},
      },
      {{4, 2, 8}, {2, 4, 8}});  // (2x4x8: the tile before docs/performance.md s10)
  // The tensor-core kernel (grouped_conv_mma.hpp, rank 3; f16/bf16, f32 runs the FMA kernel): depth
  // padding on both ends, a depth window of 2 (no depth padding), partial q-tiles and row bands, 16
  // output channels per group, both reduction orders, bias, tail warps.
  for (const auto& [name, c, rows] : std::vector<std::tuple<std::string, ConvCase, std::int64_t>>{
           {"cpg8_og16_g2_4x7x19_pad1_bias_r4",
            {.B = 1, .C = 16, .O = 32, .groups = 2, .size = {4, 7, 19}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true},
            4},
           {"cpg8_g1_3x5x16_k2x3x4_pad0x1x1_b2_r3",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {3, 5, 16}, .k = {2, 3, 4}, .pad = {0, 1, 1}},
            3}}) {
    for (const std::int64_t tx : {0, 1}) {
      s.tests.push_back({name + (tx ? "_tx" : "_ch"), conv_params(f, c, {{"rows", rows}, {"mmatx", tx}})});
    }
  }
  // The staged tensor-core kernel (grouped_conv_mma_smem.hpp, stage = 1): depth padding, a depth
  // window of 2 with no depth padding, odd W (scalar staging), a band past P, 16 output channels per
  // group, bias, an odd tap count (27: a zero tap).
  for (const auto& [name, c, rows] : std::vector<std::tuple<std::string, ConvCase, std::int64_t>>{
           {"cpg8_og16_g2_4x7x19_pad1_bias_stage_r3",
            {.B = 2, .C = 16, .O = 32, .groups = 2, .size = {4, 7, 19}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true},
            3},
           {"cpg8_g1_3x5x16_k2x3x4_pad0x1x1_b2_stage_r2",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {3, 5, 16}, .k = {2, 3, 4}, .pad = {0, 1, 1}},
            2}}) {
    s.tests.push_back({name, conv_params(f, c, {{"rows", rows}, {"stage", 1}})});
    s.tests.push_back({name + "_ds1", conv_params(f, c, {{"rows", rows}, {"stage", 1}, {"ds", 1}})});
  }
  s.tests.push_back(
      {"cpg8_g2_3x6x24_pad1_b2_stage_r1_w64",
       conv_params(f, {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {3, 6, 24}, .k = {3, 3, 3}, .pad = {1, 1, 1}},
                   {{"rows", 1}, {"stage", 1}, {"threads", 64}})});
  // The staged kernel's feeds (the 3-D default: lm 1, hb 1, s13): lm 0 hb 0, B per task alone, pair stores.
  s.tests.push_back(
      {"cpg8_g1_3x5x16_k2x3x4_pad0x1x1_b2_stage_lm0_hb0",
       conv_params(f, {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {3, 5, 16}, .k = {2, 3, 4}, .pad = {0, 1, 1}},
                   {{"rows", 2}, {"stage", 1}, {"lm", 0}, {"hb", 0}})});
  s.tests.push_back(
      {"cpg8_g2_3x6x24_pad1_b2_stage_r1_hb0",
       conv_params(f, {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {3, 6, 24}, .k = {3, 3, 3}, .pad = {1, 1, 1}},
                   {{"rows", 1}, {"stage", 1}, {"hb", 0}})});
  // Several output depth slices per work-group (ds): OD a multiple of ds, and not (a last block past OD), with
  // depth padding and 16 output channels; no depth padding with a depth window of 2.
  for (const auto& [name, c, ds, lm] : std::vector<std::tuple<std::string, ConvCase, std::int64_t, std::int64_t>>{
           {"cpg8_og16_g2_4x7x20_pad1_bias_stage_ds2",
            {.B = 2, .C = 16, .O = 32, .groups = 2, .size = {4, 7, 20}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true},
            2,
            1},
           {"cpg8_g1_5x6x16_pad1_stage_ds3",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {5, 6, 16}, .k = {3, 3, 3}, .pad = {1, 1, 1}},
            3,
            1},
           {"cpg8_g2_6x5x16_k2x3x4_pad0x1x1_stage_ds4_lm0",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {6, 5, 16}, .k = {2, 3, 4}, .pad = {0, 1, 1}},
            4,
            0}}) {
    s.tests.push_back({name, conv_params(f, c, {{"rows", 2}, {"stage", 1}, {"ds", ds}, {"lm", lm}})});
  }
  s.tests.push_back(
      {"cpg8_og16_g2_4x7x20_pad1_bias_stage_r3_sp",
       conv_params(
           f,
           {.B = 2, .C = 16, .O = 32, .groups = 2, .size = {4, 7, 20}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true},
           {{"rows", 3}, {"stage", 1}, {"sp", 1}})});
  // Row units (ru, the 3-D default where Q % 16 == 0, or Q % 8 == 0 with R even): 2-row units (Q = 8) with a last
  // depth block past OD, 16 output channels and bias; 1-row units (Q = 16) with a band past P, without load_matrix.
  s.tests.push_back(
      {"cpg8_og16_g2_3x4x8_pad1_bias_stage_r2_ds2_ru",
       conv_params(
           f,
           {.B = 1, .C = 16, .O = 32, .groups = 2, .size = {3, 4, 8}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true},
           {{"rows", 2}, {"stage", 1}, {"ds", 2}})});
  s.tests.push_back(
      {"cpg8_g1_4x5x16_pad1_b2_stage_r2_ds4_lm0_ru",
       conv_params(f, {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {4, 5, 16}, .k = {3, 3, 3}, .pad = {1, 1, 1}},
                   {{"rows", 2}, {"stage", 1}, {"ds", 4}, {"lm", 0}})});
  // The planar tensor-core kernel (grouped_conv_mma_planar.hpp, stage = 2): 2 output depth slices per work-group,
  // odd P, bias, 16 output channels per group; a 2x3x4 window with no depth padding (6 vertical taps, tap columns
  // shifted by -1 .. 2, Q = 7) and the default ds; 3 slices per work-group with OD = 5 (a last block past OD) and
  // idle warps. (One 8-column tile each: the 2-D cases cover the shifts across tiles; PoCL's compile time.)
  s.tests.push_back(
      {"cpg8_og16_g2_4x7x8_pad1_bias_planar_r2_ds2",
       conv_params(
           f,
           {.B = 1, .C = 16, .O = 32, .groups = 2, .size = {4, 7, 8}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true},
           {{"rows", 2}, {"stage", 2}, {"ds", 2}})});
  s.tests.push_back(
      {"cpg8_g1_3x5x8_k2x3x4_pad0x1x1_b2_planar",
       conv_params(f, {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {3, 5, 8}, .k = {2, 3, 4}, .pad = {0, 1, 1}},
                   {{"stage", 2}})});
  s.tests.push_back(
      {"cpg8_g1_5x4x8_pad1_planar_r4_ds3_w256",
       conv_params(f, {.B = 1, .C = 8, .O = 8, .groups = 1, .size = {5, 4, 8}, .k = {3, 3, 3}, .pad = {1, 1, 1}},
                   {{"rows", 4}, {"stage", 2}, {"ds", 3}, {"threads", 256}})});
  // The weights copied into shared memory with the first band's rows (we = 1): the 2x3x4 window with 2 groups and
  // bias (24 taps), and 3x3x3 with 2 bands per work-group and a last block past the last band (P = 7, 2-row bands).
  s.tests.push_back(
      {"cpg8_g2_3x5x8_k2x3x4_pad0x1x1_bias_planar_we",
       conv_params(
           f,
           {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {3, 5, 8}, .k = {2, 3, 4}, .pad = {0, 1, 1}, .bias = true},
           {{"stage", 2}, {"we", 1}})});
  s.tests.push_back(
      {"cpg8_g1_4x7x8_pad1_b2_planar_r2_ds2_bw2_we",
       conv_params(f, {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {4, 7, 8}, .k = {3, 3, 3}, .pad = {1, 1, 1}},
                   {{"rows", 2}, {"stage", 2}, {"ds", 2}, {"bw", 2}, {"we", 1}})});
  // we = 0 (the default's alternative: each lane loads its weights from global memory).
  s.tests.push_back(
      {"cpg8_g1_4x7x8_pad1_bias_planar_r2_ds2_we0",
       conv_params(
           f, {.B = 1, .C = 8, .O = 8, .groups = 1, .size = {4, 7, 8}, .k = {3, 3, 3}, .pad = {1, 1, 1}, .bias = true},
           {{"rows", 2}, {"stage", 2}, {"ds", 2}, {"we", 0}})});
  // More than 48 KB of shared memory (msm, KB; CUDA's dynamic shared memory): 8 output depth slices with 256 threads,
  // the output stage and the weights' copy, the bench case's geometry at one group and two rows (56832 bytes). Its
  // OpenCL C exceeds the CPU OpenCL source limit (skipped there with the reason).
  s.tests.push_back(
      {"cpg8_g1_8x2x56_pad1_planar_ds8_w256_msm64",
       conv_params(f, {.B = 1, .C = 8, .O = 8, .groups = 1, .size = {8, 2, 56}, .k = {3, 3, 3}, .pad = {1, 1, 1}},
                   {{"stage", 2}, {"ds", 8}, {"threads", 256}, {"msm", 64}})});
  // Bench: the default (16-bit: the planar tensor-core kernel, 2-row bands, 4 output depth slices, 128 threads, outputs
  // through shared memory, the weights copied; docs/performance.md s16, s17, s43), the unstaged tensor-core kernel
  // (2-row bands, s6; and 1 row), the staged one (s7, s13) with 1 row, 128 threads and 16-byte staging loads, and the
  // FMA kernel's default.
  const ConvCase g8{.B = 4, .C = 64, .O = 64, .groups = 8, .size = {16, 56, 56}, .k = {3, 3, 3}, .pad = {1, 1, 1}};
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_mma_r2", conv_params(f, g8, {{"rows", 2}})});
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_mma_r1", conv_params(f, g8, {{"rows", 1}})});
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_stage_r1_w256", conv_params(f, g8, {{"stage", 1}, {"rows", 1}})});
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_stage_r2_w128", conv_params(f, g8, {{"stage", 1}, {"threads", 128}})});
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_stage_r2_sv8", conv_params(f, g8, {{"stage", 1}, {"sv", 8}})});
  for (const auto& [lm, hb] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {1, 0}, {0, 1}}) {
    s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_stage_lm" + std::to_string(lm) + "_hb" + std::to_string(hb),
                       conv_params(f, g8, {{"stage", 1}, {"lm", lm}, {"hb", hb}})});
  }
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_stage_sp", conv_params(f, g8, {{"stage", 1}, {"sp", 1}})});
  // The staged kernel's output depth slices per work-group (its default 8, s13): 1, 2 and 4, and 4 with 1 or 4 rows,
  // 128 threads, without load_matrix.
  for (const std::int64_t ds : {1, 2, 4}) {
    s.bench.push_back(
        {"N4_C64_16x56x56_3x3x3_g8_stage_ds" + std::to_string(ds), conv_params(f, g8, {{"stage", 1}, {"ds", ds}})});
  }
  s.bench.push_back(
      {"N4_C64_16x56x56_3x3x3_g8_stage_r1_ds4", conv_params(f, g8, {{"stage", 1}, {"rows", 1}, {"ds", 4}})});
  s.bench.push_back(
      {"N4_C64_16x56x56_3x3x3_g8_stage_r4_ds4", conv_params(f, g8, {{"stage", 1}, {"rows", 4}, {"ds", 4}})});
  s.bench.push_back(
      {"N4_C64_16x56x56_3x3x3_g8_stage_ds4_w128", conv_params(f, g8, {{"stage", 1}, {"threads", 128}, {"ds", 4}})});
  s.bench.push_back(
      {"N4_C64_16x56x56_3x3x3_g8_stage_ds4_lm0", conv_params(f, g8, {{"stage", 1}, {"lm", 0}, {"ds", 4}})});
  // The staged kernel without its row units (ru 0: the flattened tasks, slower in 3-D, s14).
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_stage_ru0", conv_params(f, g8, {{"stage", 1}, {"ru", 0}})});
  // The planar kernel (the 16-bit default, s16) against the staged kernel's default (8 slices, 256 threads), and planar
  // variants.
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_staged", conv_params(f, g8, {{"stage", 1}})});
  // Outputs stored from the fragments (os = 0; the default goes through shared memory: the fragments' scalar stores
  // write half sectors, s17).
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_planar_os0", conv_params(f, g8, {{"stage", 2}, {"os", 0}})});
  s.bench.push_back(
      {"N4_C64_16x56x56_3x3x3_g8_planar_ds4_w128", conv_params(f, g8, {{"stage", 2}, {"ds", 4}, {"threads", 128}})});
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_planar_ds8_w256_os0",
                     conv_params(f, g8, {{"stage", 2}, {"ds", 8}, {"threads", 256}, {"os", 0}})});
  // 8 slices with 64 threads (4 units per warp; the default before the weights' copy, s17 to s43) and 128 threads; two
  // units interleaved per warp.
  s.bench.push_back(
      {"N4_C64_16x56x56_3x3x3_g8_planar_ds8_w64", conv_params(f, g8, {{"stage", 2}, {"ds", 8}, {"threads", 64}})});
  s.bench.push_back(
      {"N4_C64_16x56x56_3x3x3_g8_planar_ds8_w128", conv_params(f, g8, {{"stage", 2}, {"ds", 8}, {"threads", 128}})});
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_planar_ds8_w64_il2",
                     conv_params(f, g8, {{"stage", 2}, {"ds", 8}, {"threads", 64}, {"il", 2}})});
  s.bench.push_back({"N4_C64_16x56x56_3x3x3_g8_fma", conv_params(f, g8, {{"mma", 0}})});
  route_wide_windows(s, f);  // (a large dilation: the direct kernel)
  r.add(std::move(s));
}

}  // namespace ingot::kernels
