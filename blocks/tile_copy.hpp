// blocks/tile_copy.hpp — a work-group copies a 2-D tile of a row-major global matrix into a shared array, with zeros
// where the tile hangs over the matrix's edges.
//
// The matrix is `rows` x `cols` (run-time), row-major with row length `cols`, starting at element `offset` of `src`
// (a batch's matrix inside a strided batch). The tile is tile_rows x tile_cols (trace-time) at (row0, col0); it lands
// at dst[base + r * stride + c]. Elements outside the matrix land as zeros, so a product over the tile needs no tail
// logic of its own.
//
// Two forms of one copy, chosen per launch with a uniform branch (one compiled kernel serves every shape):
//  - vector: where cols and offset are multiples of 8 (16-bit elements: every 8-element chunk of a row is 16-byte
//    aligned and lies wholly inside or wholly outside the matrix), 16-byte asynchronous copies (copy_async, zero fill
//    outside). The caller commits and waits (ir.hpp, "Asynchronous copies").
//  - scalar: otherwise, one load and one shared store per element, complete when the copy returns.
// Either way the caller's barrier after its wait makes the tile visible to the whole work-group. Consecutive threads
// take consecutive chunks (or elements) of a row, so a warp's global reads are contiguous.
#pragma once

#include <cstdint>
#include <string>

#include "ingot/dsl.hpp"

namespace ingot::blocks {

inline constexpr std::uint32_t kChunkElems = 8;  // 16 bytes of 16-bit elements: one cp.async

// The shape of a tile copy, fixed at trace time. threads: the work-group's threads; each of the tile's chunks (rows x
// cols / 8) and elements must divide evenly among them, and a row's chunks (and elements) must divide the threads.
struct TileShape {
  std::uint32_t tile_rows = 0, tile_cols = 0;  // the tile
  std::uint32_t stride = 0;                    // shared row stride in elements, a multiple of 8, >= tile_cols
  std::uint32_t threads = 0;                   // threads of the work-group taking part
};

// Throws dsl::TraceError (naming `who`) unless the shape satisfies TileShape's rules.
inline void check_tile_shape(const TileShape& s, const std::string& who) {
  const std::uint32_t chunks_per_row = s.tile_cols / kChunkElems;
  const bool ok = s.tile_rows >= 1 && s.tile_cols >= kChunkElems && s.tile_cols % kChunkElems == 0 &&
                  s.stride % kChunkElems == 0 && s.stride >= s.tile_cols && s.threads >= 1 &&
                  s.threads % chunks_per_row == 0 && (s.tile_rows * chunks_per_row) % s.threads == 0 &&
                  s.threads % s.tile_cols == 0 && (s.tile_rows * s.tile_cols) % s.threads == 0;
  if (!ok) {
    throw dsl::TraceError(who + ": a " + std::to_string(s.tile_rows) + " x " + std::to_string(s.tile_cols) +
                          " tile (shared stride " + std::to_string(s.stride) + ") cannot be split evenly over " +
                          std::to_string(s.threads) + " threads in rows of 8-element chunks");
  }
}

// Where the tile comes from (run-time values).
struct TileSource {
  dsl::Val<u32> offset;      // first element of the matrix in src
  dsl::Val<u32> rows, cols;  // the matrix
  dsl::Val<u32> row0, col0;  // the tile's corner in the matrix
};

// Whether the vector form applies: the matrix's rows and start are 8-element aligned.
inline dsl::Val<bool> tile_vector_aligned(const TileSource& s) {
  return (s.cols % kChunkElems == 0u) && (s.offset % kChunkElems == 0u);
}

// The vector form: issues this thread's 16-byte asynchronous copies (zeros outside the matrix). `tid` is the thread's
// index in the work-group.
template <class T, class Src>
void copy_tile_async(const dsl::Shared<T>& dst, const dsl::Val<u32>& base, const Src& src, const TileSource& from,
                     const TileShape& shape, const dsl::Val<u32>& tid) {
  using namespace ingot::dsl;
  static_assert(sizeof(T) == 2, "copy_tile_async moves 16-bit elements in 8-element chunks");
  const std::uint32_t per_row = shape.tile_cols / kChunkElems;
  const std::uint32_t rows_per_pass = shape.threads / per_row;
  const std::uint32_t passes = shape.tile_rows / rows_per_pass;
  const auto r0 = tid / per_row;
  const auto col = from.col0 + kChunkElems * (tid % per_row);
  const auto scol = kChunkElems * (tid % per_row);
  for (std::uint32_t i = 0; i < passes; ++i) {
    const auto r = r0 + i * rows_per_pass;
    const auto row = from.row0 + r;
    const auto ok = (row < from.rows) && (col < from.cols);
    const auto at = select(ok, from.offset + row * from.cols + col, 0u);
    copy_async(dst, base + r * shape.stride + scol, src, at, kChunkElems, ok);
  }
}

// The scalar form: this thread's elements, loaded and stored at once (zeros outside the matrix).
template <class T, class Src>
void copy_tile_scalar(const dsl::Shared<T>& dst, const dsl::Val<u32>& base, const Src& src, const TileSource& from,
                      const TileShape& shape, const dsl::Val<u32>& tid) {
  using namespace ingot::dsl;
  const std::uint32_t rows_per_pass = shape.threads / shape.tile_cols;
  const std::uint32_t passes = shape.tile_rows / rows_per_pass;
  const auto r0 = tid / shape.tile_cols;
  const auto c = tid % shape.tile_cols;
  const auto col = from.col0 + c;
  for (std::uint32_t i = 0; i < passes; ++i) {
    const auto r = r0 + i * rows_per_pass;
    const auto row = from.row0 + r;
    const auto ok = (row < from.rows) && (col < from.cols);
    const auto v = load(src, select(ok, from.offset + row * from.cols + col, 0u));
    store(dst, base + r * shape.stride + c, cast<T>(select(ok, cast<f32>(v), 0.0f)));
  }
}

// The copy in whichever form `vector` (a uniform bool, tile_vector_aligned) selects.
template <class T, class Src>
void copy_tile(const dsl::Val<bool>& vector, const dsl::Shared<T>& dst, const dsl::Val<u32>& base, const Src& src,
               const TileSource& from, const TileShape& shape, const dsl::Val<u32>& tid) {
  using namespace ingot::dsl;
  if_(vector, [&] { copy_tile_async(dst, base, src, from, shape, tid); }).else_([&] {
    copy_tile_scalar(dst, base, src, from, shape, tid);
  });
}

}  // namespace ingot::blocks
