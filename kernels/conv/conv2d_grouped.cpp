// conv2d_grouped: grouped 2-D convolution, NCHW input, weight [O, C/groups, kh, kw], optional
// bias; kernel size, stride, padding and dilation per axis. The cases, oracle and bench
// arithmetic are direct_conv_registry's; the kernels are grouped_conv_mma_pixel.hpp (the f16/bf16 default where it
// applies: "stage" = 3, "rows", "threads", "bw", "os"), grouped_conv_mma_smem.hpp and grouped_conv_mma_planar.hpp
// (stage = 1 and 2), grouped_conv_mma.hpp (tensor cores without a stage: spec parameters "mma", "rows", "mmatx") and
// grouped_conv_nchw.hpp (FMA: OC output channels x a VH x VW tile per thread, spec parameters
// "OC", "VH", "VW", default 8, 1, 8).
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "grouped_conv_registry.hpp"
#include "register.hpp"

namespace ingot::kernels {

void register_conv2d_grouped(harness::Registry& r) {
  const ConvForm f{"conv2d_grouped", 2, ConvLayout::ChannelsFirst, ConvChannels::Grouped};
  auto s = grouped_conv_kernel(
      f,
      "grouped 2-D convolution: x[B,C,H,W] * w[O,C/groups,kh,kw] (+bias[O]) -> y[B,O,P,Q]; stride, pad, dilation "
      "per axis",
      {
          // groups = C = O (depthwise); 1188 outputs: a partial last work-group
          {"depthwise_g6_3x3_pad1_bias",
           {.B = 2, .C = 6, .O = 6, .groups = 6, .size = {9, 11}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
          // 2 input and 3 output channels per group
          {"cpg2_g3_k2x3_s1x2_p1_d2x1",
           {.B = 2,
            .C = 6,
            .O = 9,
            .groups = 3,
            .size = {7, 8},
            .k = {2, 3},
            .stride = {1, 2},
            .pad = {1, 1},
            .dil = {2, 1}}},
          {"cpg4_g2_s2",
           {.B = 1, .C = 8, .O = 4, .groups = 2, .size = {9, 9}, .k = {3, 3}, .stride = {2, 2}, .pad = {1, 1}}},
          // depthwise with a channel multiplier of 2
          {"multiplier2_g3_d1x2_bias",
           {.B = 1,
            .C = 3,
            .O = 6,
            .groups = 3,
            .size = {6, 7},
            .k = {3, 3},
            .pad = {1, 1},
            .dil = {1, 2},
            .bias = true}},
      },
      {
          // 8 channels per group; Q = 13 and P = 7 leave partial tiles (scalar rows)
          {"cpg8_g2_7x13_pad1_bias_b2_oc4_t2x8",
           {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {7, 13}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
           {4, 2, 8}},
          // vector rows (W = 16), partial last row tile, OC = 8
          {"cpg8_g2_5x16_pad1_oc8_t2x8",
           {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {5, 16}, .k = {3, 3}, .pad = {1, 1}},
           {8, 2, 8}},
          // 3 output channels per group with OC = 2: a channel block past the group's end
          {"cpg2_og3_g2_5x16_pad1_bias_oc2_t2x8",
           {.B = 2, .C = 4, .O = 6, .groups = 2, .size = {5, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
           {2, 2, 8}},
          {"cpg4_g2_9x32_s2_pad1_oc4_t2x8",
           {.B = 1, .C = 8, .O = 8, .groups = 2, .size = {9, 32}, .k = {3, 3}, .stride = {2, 2}, .pad = {1, 1}},
           {4, 2, 8}},
          // kh != kw, dilation, asymmetric padding, a 3-row tile, OC tail
          {"cpg2_og3_g3_10x24_k3x2_d2x3_p2x1_b3_oc2_t3x4",
           {.B = 3, .C = 6, .O = 9, .groups = 3, .size = {10, 24}, .k = {3, 2}, .pad = {2, 1}, .dil = {2, 3}},
           {2, 3, 4}},
          {"cpg4_g2_6x32_pad1_bias_oc4_t1x16",
           {.B = 1, .C = 8, .O = 8, .groups = 2, .size = {6, 32}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
           {4, 1, 16}},
          // depthwise with a channel multiplier of 2, vector rows, no padding, stride 1x2
          {"multiplier2_g2_6x16_s1x2_oc2_t4x4",
           {.B = 2, .C = 2, .O = 4, .groups = 2, .size = {6, 16}, .k = {3, 3}, .stride = {1, 2}},
           {2, 4, 4}},
      },
      {
          {"N32_C256_56x56_3x3_g32",
           {.B = 32, .C = 256, .O = 256, .groups = 32, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}}},
      },
      {{4, 2, 8}, {2, 4, 8}});  // (2x4x8: the tile before docs/performance.md s10)
  // The tensor-core kernel (grouped_conv_mma.hpp; f16/bf16, f32 runs the FMA kernel): 16 output
  // channels per group (two n-tiles), partial q-tiles and row bands, an odd tap count (a zero
  // tap) and a 3-column window (a zero tap column), asymmetric padding, no padding, tail warps;
  // and the FMA kernel on an 8-channel group.
  // Both reduction orders ("_ch": channels across lanes, "_tx": tap columns across lanes, kw <= 4).
  for (const auto& [name, c, rows] : std::vector<std::tuple<std::string, ConvCase, std::int64_t>>{
           {"cpg8_og16_g3_9x21_pad1_bias_r4",
            {.B = 2, .C = 24, .O = 48, .groups = 3, .size = {9, 21}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            4},
           {"cpg8_g2_6x16_k5x4_pad2x1_r3",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {6, 16}, .k = {5, 4}, .pad = {2, 1}},
            3},
           {"cpg8_g1_5x40_nopad_b3_r2", {.B = 3, .C = 8, .O = 8, .groups = 1, .size = {5, 40}, .k = {3, 3}}, 2}}) {
    for (const std::int64_t tx : {0, 1}) {
      s.tests.push_back({name + (tx ? "_tx" : "_ch"), conv_params(f, c, {{"rows", rows}, {"mmatx", tx}})});
    }
  }
  // a 5-column window: channels across lanes by default (the columns-across-lanes order needs kw <= 4)
  s.tests.push_back(
      {"cpg8_g2_7x12_k3x5_pad1x2_default",
       conv_params(f, {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {7, 12}, .k = {3, 5}, .pad = {1, 2}}, {})});
  s.tests.push_back(
      {"cpg8_g2_7x13_pad1_bias_b2_fma",
       conv_params(f,
                   {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {7, 13}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
                   {{"mma", 0}, {"OC", 4}, {"VH", 2}, {"VW", 8}})});
  // The staged tensor-core kernel (grouped_conv_mma_smem.hpp, stage = 1): bands past P, pixels of a
  // tile wrapping rows, odd W (scalar staging), 16 output channels per group, bias, a 5x4 window,
  // no padding, several images.
  for (const auto& [name, c, rows] : std::vector<std::tuple<std::string, ConvCase, std::int64_t>>{
           {"cpg8_og16_g3_9x21_pad1_bias_stage_r4",
            {.B = 2, .C = 24, .O = 48, .groups = 3, .size = {9, 21}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            4},
           {"cpg8_g2_6x16_k5x4_pad2x1_stage_r5",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {6, 16}, .k = {5, 4}, .pad = {2, 1}},
            5},
           {"cpg8_g1_5x40_nopad_b3_stage_r8", {.B = 3, .C = 8, .O = 8, .groups = 1, .size = {5, 40}, .k = {3, 3}}, 8},
           {"cpg8_g2_11x13_pad1_stage_r3",
            {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {11, 13}, .k = {3, 3}, .pad = {1, 1}},
            3}}) {
    s.tests.push_back({name, conv_params(f, c, {{"rows", rows}, {"stage", 1}})});
  }
  // Work-groups of 32, 64 and 256 threads (fewer tasks than warps, several rounds of staging). (A
  // single warp with many tasks makes PoCL's compile of the legalised mma barriers take minutes:
  // the 32-thread case has one task per band.)
  for (const auto& [name, c, rows, threads] :
       std::vector<std::tuple<std::string, ConvCase, std::int64_t, std::int64_t>>{
           {"cpg8_g2_5x12_pad1_bias_stage_r1_w32",
            {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {5, 12}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            1,
            32},
           {"cpg8_g2_7x40_pad1_stage_r1_w64",
            {.B = 3, .C = 16, .O = 16, .groups = 2, .size = {7, 40}, .k = {3, 3}, .pad = {1, 1}},
            1,
            64},
           {"cpg8_g1_6x56_pad1_stage_r2_w256",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {6, 56}, .k = {3, 3}, .pad = {1, 1}},
            2,
            256}}) {
    s.tests.push_back({name, conv_params(f, c, {{"rows", rows}, {"stage", 1}, {"threads", threads}})});
  }
  // Staging vectors of 8 elements (sv).
  s.tests.push_back(
      {"cpg8_g2_6x16_pad1_stage_r2_sv8",
       conv_params(f, {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {6, 16}, .k = {3, 3}, .pad = {1, 1}},
                   {{"rows", 2}, {"stage", 1}, {"sv", 8}})});
  // The staged kernel's feeds (2-D default: lm 0, hb 1): load_matrix, B loaded per task, both or neither.
  for (const auto& [name, c, lm, hb] : std::vector<std::tuple<std::string, ConvCase, std::int64_t, std::int64_t>>{
           {"cpg8_og16_g3_9x21_pad1_bias_stage_lm0",
            {.B = 2, .C = 24, .O = 48, .groups = 3, .size = {9, 21}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            0,
            1},
           {"cpg8_g2_11x13_pad1_stage_lm0_hb0",
            {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {11, 13}, .k = {3, 3}, .pad = {1, 1}},
            0,
            0},
           {"cpg8_g1_5x40_nopad_b3_stage_hb0",
            {.B = 3, .C = 8, .O = 8, .groups = 1, .size = {5, 40}, .k = {3, 3}},
            1,
            0},
           {"cpg8_g2_6x16_k5x4_pad2x1_stage_lm1",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {6, 16}, .k = {5, 4}, .pad = {2, 1}},
            1,
            1}}) {
    s.tests.push_back({name, conv_params(f, c, {{"rows", 3}, {"stage", 1}, {"lm", lm}, {"hb", hb}})});
  }
  // Pair stores (sp): Q even with a band past P and bias, 16 output channels; Q odd (scalar stores instead).
  for (const auto& [name, c] : std::vector<std::pair<std::string, ConvCase>>{
           {"cpg8_og16_g2_7x40_pad1_bias_stage_sp",
            {.B = 2, .C = 16, .O = 32, .groups = 2, .size = {7, 40}, .k = {3, 3}, .pad = {1, 1}, .bias = true}},
           {"cpg8_g2_11x13_pad1_stage_sp",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {11, 13}, .k = {3, 3}, .pad = {1, 1}}}}) {
    s.tests.push_back({name, conv_params(f, c, {{"rows", 3}, {"stage", 1}, {"sp", 1}})});
  }
  // Row units (ru = 1, where Q % 16 == 0, or Q % 8 == 0 with R even; the 3-D default, not 2-D's): 2-row units of 3
  // tiles (Q = 24: tile 1's halves in two rows) with a band past P, 16 output channels and bias, and with
  // load_matrix, pair stores and 64 threads; 2-row units of one tile (Q = 8) with load_matrix and B per unit; 1-row
  // units (Q = 16). (Small planes: PoCL's compile time of the legalised mma grows with the tiles per unit.)
  using Extra = std::vector<std::pair<std::string, std::int64_t>>;
  for (const auto& [name, c, prm] : std::vector<std::tuple<std::string, ConvCase, Extra>>{
           {"cpg8_og16_g2_7x24_pad1_bias_stage_r4_ru",
            {.B = 2, .C = 16, .O = 32, .groups = 2, .size = {7, 24}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 4}, {"ru", 1}}},
           {"cpg8_g1_5x24_pad1_stage_r2_w64_lm1_sp_ru",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {5, 24}, .k = {3, 3}, .pad = {1, 1}},
            {{"rows", 2}, {"threads", 64}, {"lm", 1}, {"sp", 1}, {"ru", 1}}},
           {"cpg8_g2_6x8_pad1_stage_r4_lm1_hb0_ru",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {6, 8}, .k = {3, 3}, .pad = {1, 1}},
            {{"rows", 4}, {"lm", 1}, {"hb", 0}, {"ru", 1}}},
           {"cpg8_g2_6x16_pad1_stage_r2_ru1",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {6, 16}, .k = {3, 3}, .pad = {1, 1}},
            {{"rows", 2}, {"ru", 1}}}}) {
    Extra q = prm;
    q.emplace_back("stage", 1);
    s.tests.push_back({name, conv_params(f, c, q)});
  }
  // The planar tensor-core kernel (grouped_conv_mma_planar.hpp, stage = 2): a last band past P with odd P, 16 output
  // channels per group and bias; a 3x4 window (tap columns shifted by -1 .. 2, an odd vertical tap count: a zero tap,
  // Q = 15: a partial output tile); no padding (shifts 0 .. 2, odd P); pad 2 (output tiles past the input's, shifts
  // -2 .. 0); two and three bands per work-group (bw), a last block past the last band; a 1x1 window (no shift);
  // two units interleaved per warp (il) with a repeated unit; more warps than units (256 threads), one warp; several
  // images; where Q % 8 == 0 the outputs go through shared memory (os, default), elsewhere (Q = 15, 22, 18) they are
  // stored from the fragments, the path of os = 0. (Small planes:
  // PoCL's compile time grows with the legalised mma statements, kw per input tile and step.)
  for (const auto& [name, c, prm] : std::vector<std::tuple<std::string, ConvCase, Extra>>{
           {"cpg8_og16_g3_9x24_pad1_bias_planar_r4",
            {.B = 2, .C = 24, .O = 48, .groups = 3, .size = {9, 24}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 4}}},
           {"cpg8_g2_6x16_k3x4_pad1x1_planar_r2",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {6, 16}, .k = {3, 4}, .pad = {1, 1}},
            {{"rows", 2}}},
           {"cpg8_g1_5x24_nopad_b3_planar_r8_w256",
            {.B = 3, .C = 8, .O = 8, .groups = 1, .size = {5, 24}, .k = {3, 3}},
            {{"rows", 8}, {"threads", 256}}},
           {"cpg8_g2_5x16_pad2_bias_planar_w32",
            {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {5, 16}, .k = {3, 3}, .pad = {2, 2}, .bias = true},
            {{"rows", 2}, {"threads", 32}}},
           {"cpg8_g1_9x16_pad1_bias_planar_r2_bw2_w32",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 2}, {"bw", 2}, {"threads", 32}}},
           {"cpg8_g1_7x8_pad1_planar_r2_bw3_w32",
            {.B = 1, .C = 8, .O = 8, .groups = 1, .size = {7, 8}, .k = {3, 3}, .pad = {1, 1}},
            {{"rows", 2}, {"bw", 3}, {"threads", 32}}},
           {"cpg8_g2_7x16_pad1_bias_planar_r6_il2_w64",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {7, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 6}, {"il", 2}, {"threads", 64}}},
           {"cpg8_og8_g2_4x8_k1x1_planar",
            {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {4, 8}, .k = {1, 1}},
            {{"rows", 2}, {"threads", 64}}}}) {
    Extra q = prm;
    q.emplace_back("stage", 2);
    s.tests.push_back({name, conv_params(f, c, q)});
  }
  // The pixel-stage tensor-core kernel (grouped_conv_mma_pixel.hpp, stage = 3): a last band past P (odd P) with 16
  // output channels per group and bias (two channel blocks: units over blocks and segments); a 3x4 window with
  // asymmetric reach (pad 1: tap columns 0 .. 3 of 16-column segments past Q = 15); no padding with several images and
  // 256 threads (more warps than units); pad 2 with a 5x5 window (an odd kh + R - 1: a staged row past the band); a
  // 1x1 window; bands per work-group (bw 2 and 3, two alternating buffers, a last block past the last band) with 32
  // and 64 threads; 24 columns (a segment half past Q). Where Q % 8 == 0 the outputs go through the output stage
  // (os, default): the last case stores from registers instead (os = 0) with 16 output channels, bias and 2 bands.
  // (PoCL skips the larger cases, whose legalised mma print over 1 MB of OpenCL C; the 3x1 window with 2 bands per
  // work-group keeps bw and the output stage on the CPU OpenCL device.)
  for (const auto& [name, c, prm] : std::vector<std::tuple<std::string, ConvCase, Extra>>{
           {"cpg8_og16_g3_9x24_pad1_bias_pixel_r4",
            {.B = 2, .C = 24, .O = 48, .groups = 3, .size = {9, 24}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 4}}},
           {"cpg8_g2_6x16_k3x4_pad1x1_pixel_r2",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {6, 16}, .k = {3, 4}, .pad = {1, 1}},
            {{"rows", 2}}},
           {"cpg8_g1_5x24_nopad_b3_pixel_r8_w256",
            {.B = 3, .C = 8, .O = 8, .groups = 1, .size = {5, 24}, .k = {3, 3}},
            {{"rows", 8}, {"threads", 256}}},
           {"cpg8_g2_7x16_k5x5_pad2_bias_pixel_r4_w64",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {7, 16}, .k = {5, 5}, .pad = {2, 2}, .bias = true},
            {{"rows", 4}, {"threads", 64}}},
           {"cpg8_og8_g2_4x8_k1x1_pixel",
            {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {4, 8}, .k = {1, 1}},
            {{"rows", 2}, {"threads", 32}}},
           {"cpg8_g1_9x16_pad1_bias_pixel_r2_bw2_w32",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 2}, {"bw", 2}, {"threads", 32}}},
           {"cpg8_g1_11x24_pad1_pixel_r2_bw3_w64",
            {.B = 1, .C = 8, .O = 8, .groups = 1, .size = {11, 24}, .k = {3, 3}, .pad = {1, 1}},
            {{"rows", 2}, {"bw", 3}, {"threads", 64}}},
           {"cpg8_g1_9x8_k3x1_pad1x0_bias_pixel_r2_bw2_w32",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {9, 8}, .k = {3, 1}, .pad = {1, 0}, .bias = true},
            {{"rows", 2}, {"bw", 2}, {"threads", 32}}},
           {"cpg8_og16_g2_11x24_pad1_bias_pixel_r4_bw2_os0",
            {.B = 1, .C = 16, .O = 32, .groups = 2, .size = {11, 24}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 4}, {"bw", 2}, {"os", 0}}},
           // The weights copied to shared memory with the first band's rows (we = 1): a 5x5 window with bias (200
           // weights: 25 copies over 64 threads), a 3x4 window (12 words per lane), bands per work-group with a last
           // block of one band and 10-row bands past P (23 rows: 10, 10, 3), and without the output stage.
           {"cpg8_g2_7x16_k5x5_pad2_bias_pixel_r4_w64_we",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {7, 16}, .k = {5, 5}, .pad = {2, 2}, .bias = true},
            {{"rows", 4}, {"threads", 64}, {"we", 1}}},
           {"cpg8_g2_6x16_k3x4_pad1x1_pixel_r2_we",
            {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {6, 16}, .k = {3, 4}, .pad = {1, 1}},
            {{"rows", 2}, {"we", 1}}},
           {"cpg8_g1_23x16_pad1_bias_pixel_r10_bw2_we",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {23, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 10}, {"bw", 2}, {"we", 1}}},
           {"cpg8_g2_9x24_pad1_pixel_r4_bw2_os0_we",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {9, 24}, .k = {3, 3}, .pad = {1, 1}},
            {{"rows", 4}, {"bw", 2}, {"os", 0}, {"we", 1}}},
           // we = 0 (the default's alternative: each lane loads its weights from global memory), 2 bands, bias.
           {"cpg8_g2_9x24_pad1_bias_pixel_r4_bw2_we0",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {9, 24}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 4}, {"bw", 2}, {"we", 0}}},
           // Bands past P (skip, the default, computes nothing for them): the last block's second and third bands (7
           // rows in 2-row bands, 3 per work-group: bands 4 and 5 past P, band 5's copies issued during band 3); and
           // skip = 0 (the band past P computed, its stores dropped) with 10-row bands.
           {"cpg8_g1_7x16_pad1_bias_pixel_r2_bw3_w32",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {7, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 2}, {"bw", 3}, {"threads", 32}}},
           {"cpg8_g1_23x16_pad1_bias_pixel_r10_bw2_skip0",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {23, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 10}, {"bw", 2}, {"skip", 0}}},
           // The output stage in the band's planar buffer (ya): two alternating buffers with a band past P (9 rows in
           // 2-row bands, two per work-group), one buffer (bw 1) with bias, and with the weights in shared memory.
           {"cpg8_g1_9x16_pad1_bias_pixel_r2_bw2_ya",
            {.B = 2, .C = 8, .O = 8, .groups = 1, .size = {9, 16}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 2}, {"bw", 2}, {"ya", 1}}},
           {"cpg8_g2_9x24_pad1_bias_pixel_r4_bw1_ya",
            {.B = 1, .C = 16, .O = 16, .groups = 2, .size = {9, 24}, .k = {3, 3}, .pad = {1, 1}, .bias = true},
            {{"rows", 4}, {"bw", 1}, {"ya", 1}}},
           {"cpg8_g2_11x24_pad1_pixel_r4_bw2_ya_we",
            {.B = 2, .C = 16, .O = 16, .groups = 2, .size = {11, 24}, .k = {3, 3}, .pad = {1, 1}},
            {{"rows", 4}, {"bw", 2}, {"ya", 1}, {"we", 1}}}}) {
    Extra q = prm;
    q.emplace_back("stage", 3);
    s.tests.push_back({name, conv_params(f, c, q)});
  }
  // Bench: the default (16-bit: the pixel-stage tensor-core kernel, below, docs/performance.md s17), the unstaged
  // tensor-core kernel (columns across lanes, 4-row bands; and channels across lanes; s5), the staged one (s7, s10,
  // s13) with 1, 2, 4 and 16 rows, 8 rows with 256 threads, 2 rows with 256 threads and with 16-byte staging loads, and
  // the FMA kernel's default.
  const ConvCase g32{.B = 32, .C = 256, .O = 256, .groups = 32, .size = {56, 56}, .k = {3, 3}, .pad = {1, 1}};
  s.bench.push_back({"N32_C256_56x56_3x3_g32_mma_tx_r4", conv_params(f, g32, {{"rows", 4}, {"mmatx", 1}})});
  s.bench.push_back({"N32_C256_56x56_3x3_g32_mma_ch_r4", conv_params(f, g32, {{"rows", 4}, {"mmatx", 0}})});
  for (const std::int64_t rows : {1, 2, 4, 16}) {
    s.bench.push_back(
        {"N32_C256_56x56_3x3_g32_stage_r" + std::to_string(rows), conv_params(f, g32, {{"stage", 1}, {"rows", rows}})});
  }
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_stage_r8_w256", conv_params(f, g32, {{"stage", 1}, {"rows", 8}, {"threads", 256}})});
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_stage_r2_w256", conv_params(f, g32, {{"stage", 1}, {"rows", 2}, {"threads", 256}})});
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_stage_r2_sv8", conv_params(f, g32, {{"stage", 1}, {"rows", 2}, {"sv", 8}})});
  // 16-byte staging loads with the staged kernel's 8-row bands (70 units for 128 threads).
  s.bench.push_back({"N32_C256_56x56_3x3_g32_stage_sv8", conv_params(f, g32, {{"stage", 1}, {"sv", 8}})});
  // The staged kernel's feeds (its 2-D default lm 0 hb 1, s13): lm 0 hb 0, load_matrix with and without B held, pair
  // stores.
  for (const auto& [lm, hb] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {1, 0}, {1, 1}}) {
    s.bench.push_back({"N32_C256_56x56_3x3_g32_stage_lm" + std::to_string(lm) + "_hb" + std::to_string(hb),
                       conv_params(f, g32, {{"stage", 1}, {"lm", lm}, {"hb", hb}})});
  }
  s.bench.push_back({"N32_C256_56x56_3x3_g32_stage_sp", conv_params(f, g32, {{"stage", 1}, {"sp", 1}})});
  // Row units (refuted in 2-D, s14: slower than the flattened tasks), alone and with load_matrix.
  s.bench.push_back({"N32_C256_56x56_3x3_g32_stage_ru1", conv_params(f, g32, {{"stage", 1}, {"ru", 1}})});
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_stage_ru1_lm1", conv_params(f, g32, {{"stage", 1}, {"ru", 1}, {"lm", 1}})});
  // The planar kernel (refuted in 2-D, s16: latency-bound on the queue its shuffles and matrix loads share): 8-row
  // bands, 128 threads; 4 rows with 64 threads; 16 rows with 256 threads; 8 rows with 256 threads (4 idle warps after
  // staging); bands per work-group.
  s.bench.push_back({"N32_C256_56x56_3x3_g32_planar", conv_params(f, g32, {{"stage", 2}})});
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_planar_r4_w64", conv_params(f, g32, {{"stage", 2}, {"rows", 4}, {"threads", 64}})});
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_planar_r16_w256", conv_params(f, g32, {{"stage", 2}, {"rows", 16}, {"threads", 256}})});
  s.bench.push_back({"N32_C256_56x56_3x3_g32_planar_r8_w256", conv_params(f, g32, {{"stage", 2}, {"threads", 256}})});
  // Units interleaved per warp (il): two independent chains of products side by side.
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_planar_il2_w64", conv_params(f, g32, {{"stage", 2}, {"il", 2}, {"threads", 64}})});
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_planar_r16_il2", conv_params(f, g32, {{"stage", 2}, {"rows", 16}, {"il", 2}})});
  // Bands per work-group (bw): the later bands' loads in flight during the first's products.
  for (const auto& [rows, threads, bw] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {4, 64, 2}, {4, 64, 7}, {2, 32, 7}, {8, 128, 2}}) {
    s.bench.push_back({"N32_C256_56x56_3x3_g32_planar_r" + std::to_string(rows) + "_w" + std::to_string(threads) +
                           "_bw" + std::to_string(bw),
                       conv_params(f, g32, {{"stage", 2}, {"rows", rows}, {"threads", threads}, {"bw", bw}})});
  }
  // The pixel-stage kernel (the 16-bit default, s17: 8-row bands, 128 threads, 2 bands per work-group, outputs through
  // shared memory): the staged kernel (the default before) for comparison; bands per
  // work-group (bw: the next band's copies in flight during this band's products) 1, 3, 4, 7; outputs stored from the
  // fragments (os = 0); 4 rows with 4 bands, and with 64 threads.
  s.bench.push_back({"N32_C256_56x56_3x3_g32_staged", conv_params(f, g32, {{"stage", 1}})});
  for (const std::int64_t bw : {1, 3, 4, 7}) {
    s.bench.push_back(
        {"N32_C256_56x56_3x3_g32_pixel_bw" + std::to_string(bw), conv_params(f, g32, {{"stage", 3}, {"bw", bw}})});
  }
  s.bench.push_back({"N32_C256_56x56_3x3_g32_pixel_os0", conv_params(f, g32, {{"stage", 3}, {"os", 0}})});
  // Registers capped for 6 work-groups per SM (the default's 95 registers allow 5, its 36 KB of shared memory 6):
  // refuted, s18.
  s.bench.push_back({"N32_C256_56x56_3x3_g32_pixel_minb6", conv_params(f, g32, {{"stage", 3}, {"minb", 6}})});
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_pixel_r4_bw4", conv_params(f, g32, {{"stage", 3}, {"rows", 4}, {"bw", 4}})});
  s.bench.push_back(
      {"N32_C256_56x56_3x3_g32_pixel_r4_w64", conv_params(f, g32, {{"stage", 3}, {"rows", 4}, {"threads", 64}})});
  s.bench.push_back({"N32_C256_56x56_3x3_g32_fma", conv_params(f, g32, {{"mma", 0}})});
  route_wide_windows(s, f);  // (a large dilation: the direct kernel)
  r.add(std::move(s));
}

}  // namespace ingot::kernels
