// kernels/conv/smem_banks.hpp — a model of shared-memory bank conflicts, for choosing layouts at trace time.
//
// The model (NVIDIA's, since Maxwell; AMD LDS is close enough for a choice between layouts): 32 banks of 4-byte
// words; a warp's access of `bytes` per lane is served in phases of 32 / (bytes / 4) lanes (whole warps for 4 bytes
// or less, half warps for 8, quarter warps for 16); within a phase, lanes reading the same word share it, and a bank
// asked for k different words takes k wavefronts. shared_wavefronts sums the phases' wavefronts: the ideal is
// bytes / 4 for 32 lanes of aligned vectors (one per phase).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace ingot::kernels {

inline constexpr std::uint32_t kSmemBanks = 32;
inline constexpr std::uint32_t kSmemBankBytes = 4;

// Wavefronts of one warp's access: lane l reads bytes [offsets[l], offsets[l] + bytes) (lanes not listed do not
// access; offsets[l] is a multiple of bytes, as aligned vector accesses are).
inline std::uint32_t shared_wavefronts(const std::vector<std::uint64_t>& offsets, std::uint32_t bytes) {
  const std::uint32_t words = std::max<std::uint32_t>(1, bytes / kSmemBankBytes);
  const std::size_t phase = std::max<std::size_t>(8, kSmemBanks / words);
  std::uint32_t total = 0;
  for (std::size_t p0 = 0; p0 < offsets.size(); p0 += phase) {
    std::map<std::uint64_t, std::set<std::uint64_t>> bank_words;
    for (std::size_t l = p0; l < std::min(offsets.size(), p0 + phase); ++l) {
      const std::uint64_t first = offsets[l] / kSmemBankBytes;
      for (std::uint64_t w = first; w < first + words; ++w) bank_words[w % kSmemBanks].insert(w);
    }
    std::uint32_t most = 0;
    for (const auto& [bank, ws] : bank_words) most = std::max(most, static_cast<std::uint32_t>(ws.size()));
    total += most;
  }
  return total;
}

// The row stride (elements, a multiple of `step`, from ws_min up to one bank cycle above it and at most ws_max) whose
// tile reads take the fewest wavefronts, the smallest such. Work-item t of a warp-aligned round reads the element at
// (t / TW) * row_step * ws + (t % TW) * col_step (tiles of TW per row); every warp of the `tiles` counts (the tile
// grid's row breaks fall differently in each), each access `bytes` wide.
inline std::uint32_t bank_friendly_row_stride(std::uint32_t ws_min, std::uint32_t ws_max, std::uint32_t step,
                                              std::uint32_t elem_bytes, std::uint32_t bytes, std::uint64_t tiles,
                                              std::uint32_t TW, std::uint64_t row_step, std::uint64_t col_step) {
  const std::uint32_t cycle = kSmemBanks * kSmemBankBytes / elem_bytes;  // elements of one pass over the banks
  const std::uint64_t warps = std::min<std::uint64_t>((tiles + 31) / 32, TW);
  std::uint32_t best = ws_min, best_cost = ~0u;
  for (std::uint32_t ws = ws_min; ws <= ws_max && ws < ws_min + cycle; ws += std::max<std::uint32_t>(step, 1)) {
    std::uint32_t cost = 0;
    for (std::uint64_t w = 0; w < warps; ++w) {
      std::vector<std::uint64_t> offsets;
      for (std::uint64_t t = 32 * w; t < std::min<std::uint64_t>(tiles, 32 * w + 32); ++t) {
        offsets.push_back(((t / TW) * row_step * ws + (t % TW) * col_step) * elem_bytes);
      }
      cost += shared_wavefronts(offsets, bytes);
    }
    if (cost < best_cost) best = ws, best_cost = cost;
  }
  return best;
}

}  // namespace ingot::kernels
