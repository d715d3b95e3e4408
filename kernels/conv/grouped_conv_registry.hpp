// kernels/conv/grouped_conv_registry.hpp — the registry entry of a channels-first grouped
// convolution run by grouped_conv_nchw.hpp: direct_conv_registry's parameters, cases, oracle,
// inputs, tolerances and bench arithmetic, with build and geometry replaced and the tile spec
// parameters "OC", "VH" and "VW" added (default 8, 1, 8 when a case leaves them out). Work-groups
// of 128 threads: at 129-168 registers per thread (ptxas's choice without launch bounds) that
// keeps 12 warps per SM resident where 256-thread groups would keep 8.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "direct_conv_registry.hpp"
#include "grouped_conv_mma.hpp"
#include "grouped_conv_mma_pixel.hpp"
#include "grouped_conv_mma_planar.hpp"
#include "grouped_conv_mma_smem.hpp"
#include "grouped_conv_nchw.hpp"
#include "register.hpp"

namespace ingot::kernels {

// The tuning options of the grouped convolutions' kernels (the FMA kernel; the unstaged, staged (stage 1), planar (2)
// and pixel-stage (3) tensor-core kernels), declared once (ingot list --options); which kernel a case runs and each
// default: the functions below.
inline const std::vector<harness::OptionSpec>& grouped_conv_options() {
  static const std::vector<harness::OptionSpec> options{
      {"OC", 1, 1024, "FMA kernel: output channels per thread (default 8)"},
      {"VH", 1, 1024, "FMA kernel: output rows per thread (default 1)"},
      {"VW", 1, 1024, "FMA kernel: output columns per thread (default 8)"},
      {"mma", 0, 1, "tensor cores (16-bit, 8 input channels per group); default 1 where they apply"},
      {"rows", 1, 1024, "tensor cores: output rows per band (per kernel: even for stages 2 and 3)"},
      {"mmatx", 0, 1, "unstaged tensor cores: 1 = tap columns over lanes (default where kw <= 4)"},
      {"stage", 0, 3, "tensor-core kernel: 1 staged, 2 planar (3-D default), 3 pixel-stage (2-D default)"},
      {"threads", 32, 256, "planar and pixel-stage kernels: threads per work-group (default 128)"},
      {"sv", 0, 8, "staged kernel: staging vector in elements, 1, 2, 4 or 8 (0: the default, 2)"},
      {"lm", 0, 1, "staged kernel: 1 = A by load_matrix (default in 3-D)"},
      {"hb", 0, 1, "staged kernel: 1 = B held in registers (8 output channels per group; default 1)"},
      {"sp", 0, 1, "staged kernel: 1 = pair stores where Q is even (default 0)"},
      {"ds", 1, 16, "staged and planar kernels (3-D): output depth slices per work-group"},
      {"ru", 0, 1, "staged kernel: 1 = tasks of whole band rows (default in 3-D)"},
      launch_bounds_option(),
      {"bw", 1, 64, "planar (1-8) and pixel-stage kernels: bands per work-group (default 1)"},
      {"il", 1, 4, "planar kernel: units interleaved per warp (default 1)"},
      {"os", 0, 1, "planar and pixel-stage kernels: outputs staged, 16-byte stores (default 1, Q % 8 == 0)"},
      {"we", 0, 1, "planar and pixel-stage kernels: weights copied with the first band (default where fits)"},
      {"skip", 0, 1, "pixel-stage kernel: 1 = bands past the last output row skipped (default 1)"},
      {"ya", 0, 1, "pixel-stage kernel: output stage in the band's planar buffer (default where it fits)"},
      shared_memory_option("msm", "planar kernel: shared memory allowed, KB (default 48; CUDA: dynamic above)")};
  return options;
}

inline GroupedConvTile grouped_conv_tile_of(const harness::Params& p) {
  // check_grouped_conv_nchw gives the precise limits; this only keeps the values exact in 32 bits.
  const auto get = [&](const char* key, std::uint32_t dflt) {
    return harness::option_value(grouped_conv_options(), p, key, dflt, "grouped convolution tile");
  };
  const GroupedConvTile measured{};  // (the one default: a case without the keys runs what the registry measured)
  return {get("OC", measured.oc), get("VH", measured.vh), get("VW", measured.vw)};
}

// Whether case p runs the tensor-core kernel (grouped_conv_mma.hpp): spec parameter "mma" (0 or 1;
// 1 refused with the reason where it does not apply), by default wherever it applies (16-bit
// elements, 2-D, 8 input channels per group, ...).
inline bool grouped_conv_uses_mma(const ConvSpec& sp, DType t, const harness::Params& p) {
  if (p.count("mma")) return harness::option_value(grouped_conv_options(), p, "mma", 0, "grouped convolution") == 1;
  return grouped_conv_mma_refusal(sp, dtype_size(t)).empty();
}

// "rows" (default 4 in 2-D, 2 in 3-D: a 3-D band's depth taps multiply its staged rows, docs/performance.md s6) and
// "mmatx" (default 1 where kw <= 4: tap columns over lanes beat channels across lanes, s5).
inline GroupedConvMmaTile grouped_conv_mma_tile_of(const ConvSpec& sp, const harness::Params& p) {
  const std::int64_t tx_default = sp.rank() >= 2 && sp.ksize[sp.rank() - 1] <= 4 ? 1 : 0;
  const std::uint32_t rows_default = sp.rank() == 3 ? 2u : GroupedConvMmaTile{}.rows;
  return {harness::option_value(grouped_conv_options(), p, "rows", rows_default, "grouped convolution tile"),
          harness::option_value(grouped_conv_options(), p, "mmatx", tx_default, "grouped convolution tile") == 1};
}

// Output rows per band of the staged kernel by default: in 2-D the largest of 8, 4, 2 and 1 whose stage fits
// (dtype t, staging vector vec): taller bands share more staged rows between output rows; 2 in 3-D, where the output
// depth slices (grouped_conv_stage_depth_of) share them instead (docs/performance.md s10, s13).
inline std::uint32_t grouped_conv_stage_rows_default(const ConvSpec& sp, DType t, std::uint32_t vec) {
  if (sp.rank() == 3) return 2u;
  for (const std::uint32_t r : {8u, 4u, 2u, 1u}) {
    if (grouped_conv_mma_smem_refusal(sp, dtype_size(t), r, vec).empty()) return r;
  }
  return 8u;
}

// Staging vector of the staged kernel (elements): "sv", 1, 2, 4 or 8; default 0 = 2 (staged_mma_vector).
inline std::uint32_t grouped_conv_stage_vector_of(const harness::Params& p) {
  return harness::option_value(grouped_conv_options(), p, "sv", 0, "grouped convolution tile");
}

// How the staged kernel feeds its products and stores: "lm" (A by load_matrix), "hb" (B held in registers
// where a group has 8 output channels), "sp" (pair stores where Q is even), each 0 or 1. Defaults: lm in 3-D
// only, hb 1, sp 0 (docs/performance.md s13: load_matrix pays in 3-D only; B held within noise; pair stores slower).
// "ru": tasks of whole band rows where the geometry allows (0 = flattened 16-pixel tiles); default in 3-D only (s14:
// in 2-D the row units' registers cost more than they save).
inline StagedMmaFeed grouped_conv_stage_feed_of(const ConvSpec& sp, const harness::Params& p) {
  return {
      harness::option_value(grouped_conv_options(), p, "lm", sp.rank() == 3 ? 1 : 0, "grouped convolution tile") == 1,
      harness::option_value(grouped_conv_options(), p, "hb", 1, "grouped convolution tile") == 1,
      harness::option_value(grouped_conv_options(), p, "sp", 0, "grouped convolution tile") == 1,
      harness::option_value(grouped_conv_options(), p, "ru", sp.rank() == 3 ? 1 : 0, "grouped convolution tile") == 1};
}

// Output depth slices per work-group of the staged kernel (3-D): "ds", 1-16. Default in 3-D: the largest of 8,
// 4 and 2 whose stage fits with `rows` and staging vector `vec`, else 1 (each slice more shares the staged input
// slices, docs/performance.md s13); 1 in 2-D.
inline std::uint32_t grouped_conv_stage_depth_of(const ConvSpec& sp, DType t, const harness::Params& p,
                                                 std::uint32_t rows, std::uint32_t vec) {
  std::uint32_t dflt = 1;
  if (sp.rank() == 3) {
    for (const std::uint32_t d : {8u, 4u, 2u}) {
      if (grouped_conv_mma_smem_refusal(sp, dtype_size(t), rows, vec, d).empty()) {
        dflt = d;
        break;
      }
    }
  }
  return harness::option_value(grouped_conv_options(), p, "ds", dflt, "grouped convolution tile");
}

// Whether case p runs the staged tensor-core kernel (grouped_conv_mma_smem.hpp): spec parameter
// "stage" = 1 (2 is the planar kernel, 3 the pixel-stage kernel, grouped_conv_uses_planar / _pixel, which the registry
// asks first; 0 neither). It applies to 16-bit dtypes only (f32 runs the FMA kernel); with "mma = 0" it is refused.
// Absent "stage" (and where neither the planar kernel (3-D) nor the pixel-stage kernel (2-D) is the default), the
// staged kernel is the 16-bit default wherever it applies with 2-row bands — but for cases that name the unstaged
// tensor-core kernel's parameters (rows, mmatx) or mma = 0: the band staged once beats every warp reading its rows
// through L1 (docs/performance.md s7).
inline bool grouped_conv_uses_stage(const ConvSpec& sp, DType t, const harness::Params& p) {
  const bool mma_off =
      p.count("mma") && harness::option_value(grouped_conv_options(), p, "mma", 0, "grouped convolution") == 0;
  if (p.count("stage")) {
    const std::int64_t stage = harness::option_value(grouped_conv_options(), p, "stage", 0, "grouped convolution");
    if (stage > 0 && mma_off) {
      throw std::invalid_argument(sp.name + ": stage = " + std::to_string(stage) +
                                  " is a staged tensor-core kernel; it cannot run with mma = 0");
    }
    return stage == 1 && dtype_size(t) == 2;
  }
  if (dtype_size(t) != 2 || mma_off || p.count("rows") || p.count("mmatx")) return false;
  const std::uint32_t vec = grouped_conv_stage_vector_of(p), rows = grouped_conv_stage_rows_default(sp, t, vec);
  return grouped_conv_mma_smem_refusal(sp, dtype_size(t), rows, vec, grouped_conv_stage_depth_of(sp, t, p, rows, vec))
      .empty();
}

// The planar kernel's band height ("rows", even, default 8 in 2-D and 2 in 3-D) and output depth slices per
// work-group ("ds", default in 3-D 4 where its stage fits, else 2, else 1: with the weight copy and 128 threads, 4
// slices leave room for 6 work-groups per SM, docs/performance.md s43); bands per
// work-group ("bw", 1-8, default 1: each band in its own buffer, all copies issued before the first band's products);
// units interleaved per warp ("il", 1-4, default 1).
inline std::uint32_t grouped_conv_planar_rows_of(const ConvSpec& sp, const harness::Params& p) {
  return harness::option_value(grouped_conv_options(), p, "rows", sp.rank() == 3 ? 2 : 8, "grouped convolution tile");
}
inline std::uint32_t grouped_conv_planar_bands_of(const harness::Params& p) {
  const std::uint32_t bw = harness::option_value(grouped_conv_options(), p, "bw", 1, "grouped convolution tile");
  if (bw > 8) {
    throw std::invalid_argument("grouped convolution tile: bw = " + std::to_string(bw) +
                                " must be in [1, 8] (the planar kernel's bands per work-group)");
  }
  return bw;
}
// Whether the pixel-stage and planar kernels stage their outputs in shared memory and store 16-byte vectors ("os",
// default 1; applies where Q % 8 == 0, else scalar stores: the fragments' scalar stores write half sectors,
// docs/performance.md s17).
inline bool grouped_conv_output_stage_of(const harness::Params& p) {
  return harness::option_value(grouped_conv_options(), p, "os", 1, "grouped convolution tile") == 1;
}
// Threads per work-group of the planar and pixel-stage kernels: "threads", default 128 (in 3-D with 4 output depth
// slices: 6 work-groups of 4 warps per SM against 5 of 2 with 64 threads and 8 slices, docs/performance.md s43).
inline std::uint32_t grouped_conv_planar_threads_of(const harness::Params& p) {
  return harness::option_value(grouped_conv_options(), p, "threads", kStagedMmaGroup, "grouped convolution tile");
}
// The shared memory the planar kernel may take: "msm", KB, 16-227, default 48 (the portable static limit). Above 48 KB
// CUDA carves the arrays from dynamic shared memory (the printer) and raises the function's limit at load (the
// runtime); other backends refuse a kernel over their device's local memory. E.g. 8 output depth slices with 256
// threads and their output stage: 53.4 KB for 3x3x3 g8 56x56.
inline std::uint64_t grouped_conv_planar_smem_of(const harness::Params& p) {
  return shared_memory_allowance(p, "msm", kPlaneSmemBytes, "grouped convolution tile");
}
// Whether the planar kernel copies its group's weights into shared memory with the first band's rows ("we", 0 or 1),
// as the pixel-stage kernel does (grouped_conv_pixel_early_weights_of); 8 output channels per group. Default 1 where it
// fits with the case's rows, ds, bw and output stage: loaded from global memory, ptxas moves the weights' loads past
// the first barrier, where every work-group then waits for them (docs/performance.md s40).
inline bool grouped_conv_planar_early_weights_of(const ConvSpec& sp, DType t, const harness::Params& p,
                                                 std::uint32_t rows, std::uint32_t ds, std::uint32_t bw,
                                                 std::uint32_t slots) {
  const bool fits = sp.out_per_group() == 8 && grouped_conv_mma_planar_refusal(sp, dtype_size(t), rows, ds, bw, slots,
                                                                               true, grouped_conv_planar_smem_of(p))
                                                   .empty();
  return harness::option_value(grouped_conv_options(), p, "we", fits ? 1 : 0, "grouped convolution tile") == 1;
}
// Units interleaved per warp of the planar kernel: "il", 1-4, default 1.
inline std::uint32_t grouped_conv_planar_interleave_of(const harness::Params& p) {
  return harness::option_value(grouped_conv_options(), p, "il", 1, "grouped convolution tile");
}
// The planar kernel's output slots (units per round: warps x il) where os, else 0.
inline std::uint32_t grouped_conv_planar_slots_of(const harness::Params& p) {
  return grouped_conv_output_stage_of(p) ? grouped_conv_planar_threads_of(p) / 32 * grouped_conv_planar_interleave_of(p)
                                         : 0;
}
inline std::uint32_t grouped_conv_planar_depth_of(const ConvSpec& sp, DType t, const harness::Params& p,
                                                  std::uint32_t rows) {
  std::uint32_t dflt = 1;
  if (sp.rank() == 3) {
    for (const std::uint32_t d : {4u, 2u}) {
      if (grouped_conv_mma_planar_refusal(sp, dtype_size(t), rows, d, grouped_conv_planar_bands_of(p),
                                          grouped_conv_planar_slots_of(p), false, grouped_conv_planar_smem_of(p))
              .empty()) {
        dflt = d;
        break;
      }
    }
  }
  return harness::option_value(grouped_conv_options(), p, "ds", dflt, "grouped convolution tile");
}

// The selection rule the planar (stage = 2) and pixel-stage (stage = 3) kernels share: a case naming "stage" runs
// kernel n where it names n, for 16-bit dtypes (f32 runs the FMA kernel; mma = 0 is refused); absent "stage", kernel n
// may be the default only for 16-bit `rank`-D convolutions without mma = 0 and without any of `others` (another
// kernel's parameters). Returns the decision, or nothing where the caller must still ask whether the kernel applies.
inline std::optional<bool> grouped_conv_named_stage(const ConvSpec& sp, DType t, const harness::Params& p,
                                                    std::int64_t n, std::size_t rank,
                                                    std::initializer_list<const char*> others) {
  const bool mma_off =
      p.count("mma") && harness::option_value(grouped_conv_options(), p, "mma", 0, "grouped convolution") == 0;
  if (p.count("stage")) {
    if (harness::option_value(grouped_conv_options(), p, "stage", 0, "grouped convolution") != n) return false;
    if (mma_off) {
      throw std::invalid_argument(sp.name + ": stage = " + std::to_string(n) +
                                  " is a staged tensor-core kernel; it cannot run with mma = 0");
    }
    return dtype_size(t) == 2;
  }
  if (sp.rank() != rank || dtype_size(t) != 2 || mma_off) return false;
  for (const char* other : others) {
    if (p.count(other)) return false;
  }
  return std::nullopt;
}

// Whether case p runs the planar tensor-core kernel (grouped_conv_mma_planar.hpp): spec parameter "stage" = 2, for
// 16-bit dtypes (f32 runs the FMA kernel). Absent "stage", it is the 16-bit default in 3-D wherever it applies — but
// for cases that name another kernel's parameters (mma = 0; rows or mmatx: the unstaged tensor-core kernel; sv, lm,
// hb, sp, ru: the staged one): a plain copy of the band and one A fragment for every tap column beat the staged
// kernel in 3-D (docs/performance.md s16, s17, s43). In 2-D the pixel-stage kernel is the default
// (grouped_conv_uses_pixel; the planar kernel is latency-bound there, s16).
inline bool grouped_conv_uses_planar(const ConvSpec& sp, DType t, const harness::Params& p) {
  if (const auto named = grouped_conv_named_stage(sp, t, p, 2, 3, {"rows", "mmatx", "sv", "lm", "hb", "sp", "ru"})) {
    return *named;
  }
  const std::uint32_t rows = 2;  // grouped_conv_planar_rows_of's 3-D default
  return grouped_conv_mma_planar_refusal(sp, dtype_size(t), rows, grouped_conv_planar_depth_of(sp, t, p, rows),
                                         grouped_conv_planar_bands_of(p), grouped_conv_planar_slots_of(p), false,
                                         grouped_conv_planar_smem_of(p))
      .empty();
}

// The pixel-stage kernel's bands per work-group ("bw", 1-64, default 1: with the output stage in the band's buffer
// (ya) one band per work-group leaves room for 10 work-groups per SM against 6 with two, docs/performance.md s40) and
// whether it stages a band's outputs in shared memory and stores 16-byte vectors ("os", default 1; applies where Q % 8
// == 0, else scalar stores, which write half sectors: s17).
inline std::uint32_t grouped_conv_pixel_bands_of(const harness::Params& p) {
  return harness::option_value(grouped_conv_options(), p, "bw", 1, "grouped convolution tile");
}
// Whether the pixel-stage kernel copies its group's weights into shared memory with the first band's rows ("we", 0 or
// 1), so that no global load waits after the first barrier (grouped_conv_mma_pixel.hpp; 8 output channels per group).
// Default 1 where it applies with the case's rows, bw and os (docs/performance.md s40).
inline bool grouped_conv_pixel_early_weights_of(const ConvSpec& sp, DType t, const harness::Params& p,
                                                std::uint32_t rows, std::uint32_t bw, bool os, bool ya) {
  const bool fits =
      sp.out_per_group() == 8 && grouped_conv_mma_pixel_refusal(sp, dtype_size(t), rows, bw, os, true, ya).empty();
  return harness::option_value(grouped_conv_options(), p, "we", fits ? 1 : 0, "grouped convolution tile") == 1;
}

// Whether the pixel-stage kernel skips the transposition, products and stores of a band past the last output row
// ("skip", 0 or 1, default 1; such a band exists where the bands are not a multiple of bw: 56 rows in 8-row bands, two
// per work-group, leave one band slot in 8 past P). skip = 0 computes it and drops its stores (docs/performance.md
// s40).
inline bool grouped_conv_pixel_skip_past_of(const harness::Params& p) {
  return harness::option_value(grouped_conv_options(), p, "skip", 1, "grouped convolution tile") == 1;
}

// Whether the pixel-stage kernel's output stage lies in the planar buffer its band was copied into ("ya", 0 or 1): 7.3
// KB less shared memory per work-group for 8-row bands of 56 columns (one band per work-group: 28.1 KB to 20.8 KB and
// ptxas's 58 registers to 48, 10 work-groups per SM against 8; two: 37.2 KB to 29.9 KB, 7 against 6). Needs the output
// stage, at most 2 bands per work-group and a stage no larger than a buffer; default 1 where it applies (the shared
// memory it saves lets one band per work-group fit more work-groups per SM, bw above; docs/performance.md s40).
inline bool grouped_conv_pixel_output_alias_of(const ConvSpec& sp, DType t, const harness::Params& p,
                                               std::uint32_t rows, std::uint32_t bw, bool os) {
  const bool fits = grouped_conv_mma_pixel_refusal(sp, dtype_size(t), rows, bw, os, false, true).empty();
  return harness::option_value(grouped_conv_options(), p, "ya", fits ? 1 : 0, "grouped convolution tile") == 1;
}

// Whether case p runs the pixel-stage tensor-core kernel (grouped_conv_mma_pixel.hpp): spec parameter "stage" = 3, for
// 16-bit dtypes (f32 runs the FMA kernel). Parameters: "rows" (even, default 8), "threads" (default 128), "bw", "os".
// Absent "stage", it is the 16-bit default in 2-D wherever it applies with those defaults — but for cases that name
// another kernel's parameters (mma = 0; rows or mmatx: the unstaged tensor-core kernel; sv, lm, hb, sp, ru, il, ds:
// the staged and planar ones): the band transposed once into pixels feeds every output row's products with one
// load_matrix per pair of rows, and its output stage writes whole sectors (docs/performance.md s17).
inline bool grouped_conv_uses_pixel(const ConvSpec& sp, DType t, const harness::Params& p) {
  if (const auto named =
          grouped_conv_named_stage(sp, t, p, 3, 2, {"rows", "mmatx", "sv", "lm", "hb", "sp", "ru", "il", "ds"})) {
    return *named;
  }
  return grouped_conv_mma_pixel_refusal(sp, dtype_size(t), 8, grouped_conv_pixel_bands_of(p),
                                        grouped_conv_output_stage_of(p))
      .empty();
}

// Threads per work-group of the staged kernel: "threads" (32, 64, 128 or 256), default 128 in 2-D
// and 256 in 3-D (the fastest measured for each, docs/performance.md s7).
inline std::uint32_t grouped_conv_stage_threads_of(const ConvSpec& sp, const harness::Params& p) {
  const std::uint32_t dflt = sp.rank() == 3 ? 256u : kStagedMmaGroup;
  return harness::option_value(grouped_conv_options(), p, "threads", dflt, "grouped convolution tile");
}

// Output rows per band of the staged kernel: "rows", default grouped_conv_stage_rows_default.
inline std::uint32_t grouped_conv_stage_rows_of(const ConvSpec& sp, DType t, const harness::Params& p) {
  return harness::option_value(grouped_conv_options(), p, "rows",
                               grouped_conv_stage_rows_default(sp, t, grouped_conv_stage_vector_of(p)),
                               "grouped convolution tile");
}

inline harness::Params with_grouped_conv_tile(harness::Params p, const GroupedConvTile& t) {
  p["OC"] = t.oc;
  p["VH"] = t.vh;
  p["VW"] = t.vw;
  return p;
}

// A tiled case: a ConvCase and the tile it runs with.
struct GroupedConvTiledCase {
  std::string name;
  ConvCase c;
  GroupedConvTile tile;
};

// The registry entry: `tests` and `bench` run with the default tile (the tensor-core kernel where
// it applies, grouped_conv_uses_mma); `tiled_tests` with theirs;
// each bench shape is repeated with every tile of `bench_tiles` (the first case per shape is the
// default tile, so one GPU run can pick the best).
inline harness::KernelSpec grouped_conv_kernel(const ConvForm& f, std::string description,
                                               const std::vector<std::pair<std::string, ConvCase>>& tests,
                                               const std::vector<GroupedConvTiledCase>& tiled_tests,
                                               const std::vector<std::pair<std::string, ConvCase>>& bench,
                                               const std::vector<GroupedConvTile>& bench_tiles) {
  using harness::param;
  using harness::Params;
  auto s = direct_conv_kernel(f, std::move(description), tests, bench);
  for (const auto& o : grouped_conv_options()) s.add_option(o);
  for (const auto& tc : tiled_tests)
    s.tests.push_back({tc.name, with_grouped_conv_tile(conv_params(f, tc.c), tc.tile)});
  for (const auto& t : bench_tiles) {
    const std::string tag = "_oc" + std::to_string(t.oc) + "_t" + std::to_string(t.vh) + "x" + std::to_string(t.vw);
    for (const auto& [name, c] : bench) {
      auto p = with_grouped_conv_tile(conv_params(f, c), t);
      p["mma"] = 0;  // the tile is the FMA kernel's
      s.bench.push_back({name + tag, p});
    }
  }
  s.build = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    sp.check_batch(static_cast<std::uint64_t>(std::max<std::int64_t>(param(p, "B"), 0)));
    // (f32 runs the FMA kernel whatever the case names, like the tensor-core kernels' other parameters.)
    for (const char* key : {"skip", "ya"}) {
      if (p.count(key) && dtype_size(t) == 2 &&
          (grouped_conv_uses_planar(sp, t, p) || !grouped_conv_uses_pixel(sp, t, p))) {
        throw std::invalid_argument(sp.name + ": " + key +
                                    " applies to the pixel-stage tensor-core kernel only (stage = 3), not to this "
                                    "case's kernel; remove " +
                                    key);
      }
    }
    // The planar kernel's own key, named for another kernel.
    if (p.count("msm") && dtype_size(t) == 2 && !grouped_conv_uses_planar(sp, t, p)) {
      throw std::invalid_argument(sp.name +
                                  ": msm (shared memory allowed, KB) applies to the planar tensor-core kernel only "
                                  "(stage = 2), not to this case's kernel; remove msm or name stage = 2");
    }
    if (grouped_conv_uses_planar(sp, t, p)) {
      const std::uint32_t rows = grouped_conv_planar_rows_of(sp, p);
      const std::uint32_t ds = grouped_conv_planar_depth_of(sp, t, p, rows), bw = grouped_conv_planar_bands_of(p);
      const std::uint32_t slots = grouped_conv_planar_slots_of(p);
      const bool we = grouped_conv_planar_early_weights_of(sp, t, p, rows, ds, bw, slots);
      grouped_conv_mma_planar_plan(sp, dtype_size(t), rows, ds, bw, slots, we, grouped_conv_planar_smem_of(p));
      const std::uint32_t threads = grouped_conv_planar_threads_of(p);
      check_grouped_conv_mma_planar_batch(sp, rows, static_cast<std::uint64_t>(param(p, "B")), threads, ds, bw);
      return trace_typed(t, f.name, p, [&](auto tag, KernelBuilder& k) {
        using E = typename decltype(tag)::type;
        if constexpr (sizeof(E) == 2) {
          grouped_conv_mma_planar<E>(k, sp,
                                     {.rows = rows,
                                      .threads = threads,
                                      .ds = ds,
                                      .bw = bw,
                                      .il = grouped_conv_planar_interleave_of(p),
                                      .os = grouped_conv_output_stage_of(p),
                                      .early_weights = we,
                                      .smem_limit = grouped_conv_planar_smem_of(p)});
        }
        apply_launch_bounds(k, p, threads, true);
      });
    }
    if (grouped_conv_uses_pixel(sp, t, p)) {
      const std::uint32_t rows = grouped_conv_planar_rows_of(sp, p), bw = grouped_conv_pixel_bands_of(p);
      const bool os = grouped_conv_output_stage_of(p), ya = grouped_conv_pixel_output_alias_of(sp, t, p, rows, bw, os);
      const bool we = grouped_conv_pixel_early_weights_of(sp, t, p, rows, bw, os, ya);
      grouped_conv_mma_pixel_plan(sp, dtype_size(t), rows, bw, os, we, ya);
      const std::uint32_t threads = grouped_conv_planar_threads_of(p);
      check_grouped_conv_mma_pixel_batch(sp, rows, static_cast<std::uint64_t>(param(p, "B")), threads, bw);
      return trace_typed(t, f.name, p, [&](auto tag, KernelBuilder& k) {
        using E = typename decltype(tag)::type;
        if constexpr (sizeof(E) == 2) {
          grouped_conv_mma_pixel<E>(k, sp,
                                    {.rows = rows,
                                     .threads = threads,
                                     .bw = bw,
                                     .os = os,
                                     .early_weights = we,
                                     .skip_past = grouped_conv_pixel_skip_past_of(p),
                                     .ya = ya});
        }
        apply_launch_bounds(k, p, threads, true);
      });
    }
    // os (the output stage) belongs to the planar and pixel-stage kernels, which took the case above if they run it;
    // f32 runs the FMA kernel whatever the case names (like the tensor-core kernels' other parameters).
    if (p.count("os") && dtype_size(t) == 2) {
      throw std::invalid_argument(sp.name +
                                  ": os (outputs through shared memory) applies to the planar and pixel-stage "
                                  "tensor-core kernels only (stage = 2 or 3), not to this case's kernel; remove os");
    }
    if (p.count("we") && dtype_size(t) == 2) {
      throw std::invalid_argument(
          sp.name +
          ": we (weights copied with the first band) applies to the planar and pixel-stage tensor-core kernels "
          "only (stage = 2 or 3), not to this case's kernel; remove we");
    }
    if (grouped_conv_uses_stage(sp, t, p)) {
      const std::uint32_t rows = grouped_conv_stage_rows_of(sp, t, p);
      const std::uint32_t vec = grouped_conv_stage_vector_of(p);
      const std::uint32_t ds = grouped_conv_stage_depth_of(sp, t, p, rows, vec);
      grouped_conv_mma_smem_plan(sp, dtype_size(t), rows, vec, ds);
      const std::uint32_t threads = grouped_conv_stage_threads_of(sp, p);
      const StagedMmaFeed feed = grouped_conv_stage_feed_of(sp, p);
      check_grouped_conv_mma_smem_batch(sp, rows, static_cast<std::uint64_t>(param(p, "B")), threads, ds);
      return trace_typed(t, f.name, p, [&](auto tag, KernelBuilder& k) {
        using E = typename decltype(tag)::type;
        if constexpr (sizeof(E) == 2) grouped_conv_mma_smem<E>(k, sp, rows, threads, vec, feed, ds);
        apply_launch_bounds(k, p, threads, true);  // "minb": work-groups per multiprocessor the registers allow
      });
    }
    // Like the staged kernel's other parameters, minb is ignored where a case's stage = 1 meets f32 (the FMA kernel).
    if (p.count("minb") && harness::option_value(grouped_conv_options(), p, "stage", 0, "grouped convolution") == 0) {
      throw std::invalid_argument(
          sp.name +
          ": minb applies to the staged tensor-core kernels only (f16/bf16, stage = 1, 2 or 3), "
          "not to this case's kernel; remove minb");
    }
    if (grouped_conv_uses_mma(sp, t, p)) {
      const auto tile = grouped_conv_mma_tile_of(sp, p);
      check_grouped_conv_mma(sp, dtype_size(t), tile);
      check_grouped_conv_mma_batch(sp, tile, static_cast<std::uint64_t>(param(p, "B")));
      return trace_typed(t, f.name, p, [&](auto tag, KernelBuilder& k) {
        using E = typename decltype(tag)::type;
        if constexpr (sizeof(E) == 2) grouped_conv_mma<E>(k, sp, tile);
      });
    }
    const auto tile = grouped_conv_tile_of(p);
    return trace_typed(t, f.name, p, [&](auto tag, KernelBuilder& k) {
      grouped_conv_nchw<typename decltype(tag)::type>(k, sp, tile);
    });
  };
  s.geometry = [f](DType t, const Params& p) {
    const ConvSpec sp = conv_spec(f, p);
    if (grouped_conv_uses_planar(sp, t, p)) {
      const std::uint32_t rows = grouped_conv_planar_rows_of(sp, p);
      const std::uint32_t ds = grouped_conv_planar_depth_of(sp, t, p, rows), bw = grouped_conv_planar_bands_of(p);
      const std::uint32_t slots = grouped_conv_planar_slots_of(p);
      grouped_conv_mma_planar_plan(sp, dtype_size(t), rows, ds, bw, slots,
                                   grouped_conv_planar_early_weights_of(sp, t, p, rows, ds, bw, slots),
                                   grouped_conv_planar_smem_of(p));
      const std::uint32_t threads = grouped_conv_planar_threads_of(p);
      return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) *
                                  grouped_conv_mma_planar_groups_per_batch(sp, rows, ds, bw) * threads,
                              threads);
    }
    if (grouped_conv_uses_pixel(sp, t, p)) {
      const std::uint32_t rows = grouped_conv_planar_rows_of(sp, p), bw = grouped_conv_pixel_bands_of(p);
      const bool os = grouped_conv_output_stage_of(p), ya = grouped_conv_pixel_output_alias_of(sp, t, p, rows, bw, os);
      grouped_conv_mma_pixel_plan(sp, dtype_size(t), rows, bw, os,
                                  grouped_conv_pixel_early_weights_of(sp, t, p, rows, bw, os, ya), ya);
      const std::uint32_t threads = grouped_conv_planar_threads_of(p);
      return runtime::grid_1d(
          static_cast<std::uint64_t>(param(p, "B")) * grouped_conv_mma_pixel_groups_per_batch(sp, rows, bw) * threads,
          threads);
    }
    if (grouped_conv_uses_stage(sp, t, p)) {
      const std::uint32_t rows = grouped_conv_stage_rows_of(sp, t, p);
      const std::uint32_t vec = grouped_conv_stage_vector_of(p);
      const std::uint32_t ds = grouped_conv_stage_depth_of(sp, t, p, rows, vec);
      grouped_conv_mma_smem_plan(sp, dtype_size(t), rows, vec, ds);
      const std::uint32_t threads = grouped_conv_stage_threads_of(sp, p);
      return runtime::grid_1d(
          static_cast<std::uint64_t>(param(p, "B")) * grouped_conv_mma_smem_groups_per_batch(sp, rows, ds) * threads,
          threads);
    }
    if (grouped_conv_uses_mma(sp, t, p)) {
      const auto tile = grouped_conv_mma_tile_of(sp, p);
      check_grouped_conv_mma(sp, dtype_size(t), tile);
      return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * grouped_conv_mma_threads_per_batch(sp, tile),
                              kGroupedMmaGroup);
    }
    const auto tile = grouped_conv_tile_of(p);
    check_grouped_conv_nchw(sp, tile);
    return runtime::grid_1d(static_cast<std::uint64_t>(param(p, "B")) * grouped_conv_nchw_threads_per_batch(sp, tile),
                            128);
  };
  return s;
}

}  // namespace ingot::kernels
