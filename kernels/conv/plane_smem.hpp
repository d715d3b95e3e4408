// kernels/conv/plane_smem.hpp — one (b, c) input plane staged in a work-group's shared array with
// a zero border, for the work-group-per-plane depthwise kernels (depthwise_conv2d_nchw_smem.hpp,
// depthwise_conv2d_nchw_mma.hpp).
//
// Layout: input element (ih, iw) at (ih + top)*ws + off + iw; the rows [-top, 0) and
// [H, rows - top) and the columns [-left, 0) and [W, W + right) of every row hold zeros (the
// padding the windows read), nothing else outside the plane is written or may be read. off and ws
// are multiples of the copy's vector width and of the reader's alignment, so aligned vectors of
// the plane stay aligned in the array.
// Copy: every element of the plane is read once from global memory with aligned vector loads of
// vc elements (the widest of 16, 8 or 4 bytes dividing W, so no vector crosses a row; scalar
// loads when none does), all loads of a thread first, then the zeros, then the stores, then a
// barrier. Or (copy_plane_async) with asynchronous copies straight into the array, at an offset
// (a second buffer), so that the next plane lands while the current one is read.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/dsl.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

// Largest shared array the kernels use (the portable static limit of CUDA, HIP and OpenCL devices).
inline constexpr std::uint64_t kPlaneSmemBytes = std::uint64_t{48} * 1024;

struct PlaneSmem {
  std::uint32_t H = 0, W = 0;  // the plane
  std::uint32_t vc = 1;        // copy vector width (elements; 1 = scalar copies)
  std::uint32_t off = 0;       // column of input column 0
  std::uint32_t ws = 0;        // row stride (elements)
  std::uint32_t top = 0;       // zero rows above the plane
  std::uint32_t rows = 0;      // rows of the layout
  std::uint32_t left = 0;      // zero columns left of the plane
  std::uint32_t right = 0;     // zero columns right of the plane
  std::uint64_t bytes = 0;     // size of the array
  // Copies in row-aligned rounds (load_plane, store_plane, copy_plane_async): where a work-group has at least a row's
  // chunks of threads, thread lid copies chunk lid % per_row of rows lid / per_row + r * (G / per_row), so its
  // addresses move by a constant from round to round (no division per round; G % per_row threads idle). Else, and by
  // default, chunk lid + r * G of the plane.
  bool row_rounds = false;
  [[nodiscard]] std::uint64_t elements() const { return static_cast<std::uint64_t>(rows) * ws; }
};

// L with row stride ws (a multiple of L.vc, at least L.ws) and its size.
inline PlaneSmem with_row_stride(PlaneSmem L, std::uint32_t ws, std::size_t elem_bytes) {
  L.ws = ws;
  L.bytes = L.elements() * elem_bytes;
  return L;
}

// Elements from one buffer of layout L to the next (for_planes_async's two buffers, planes side by side): L's elements
// rounded up to 16 bytes, so that every buffer holds the vectors of up to 16 bytes that the first holds at the same
// offsets (an output stage's rows of 8 bf16, say, over a plane whose rows are 2-element multiples).
inline std::uint64_t plane_buffer_stride(const PlaneSmem& L, std::size_t elem_bytes) {
  const std::uint64_t per16 = 16 / std::min<std::uint64_t>(16, elem_bytes);
  return (L.elements() + per16 - 1) / per16 * per16;
}

// Elements of `buffers` buffers of layout L, plane_buffer_stride apart.
inline std::uint64_t plane_buffers_elements(const PlaneSmem& L, std::size_t elem_bytes, std::uint32_t buffers) {
  return buffers > 1 ? plane_buffer_stride(L, elem_bytes) * (buffers - 1) + L.elements() : L.elements();
}

// Row-aligned rounds of layout L for G threads: rows per round (0 where they do not apply) and rounds.
struct PlaneRowRounds {
  std::uint32_t per_row = 0, rows = 0, rounds = 0;
};
inline PlaneRowRounds plane_row_rounds(const PlaneSmem& L, std::uint32_t G) {
  const std::uint32_t per_row = L.W / L.vc;
  if (!L.row_rounds || per_row == 0 || G < per_row) return {};
  const std::uint32_t rows = G / per_row;
  return {per_row, rows, (L.H + rows - 1) / rows};
}

// The layout for windows that read input rows [row_lo, row_hi] and columns [col_lo, col_hi]
// (zero outside the plane) with reads aligned to `align` elements (a power of two), whatever its
// size; plane_smem_layout also checks that it fits. col_lo_aligned: column col_lo itself (not
// input column 0) lands at a multiple of `align` (off = -col_lo; the copies narrow to the widest
// vector that divides off, scalar where none does).
inline PlaneSmem plane_smem_geometry(std::uint32_t H, std::uint32_t W, std::size_t elem_bytes, std::int64_t row_lo,
                                     std::int64_t row_hi, std::int64_t col_lo, std::int64_t col_hi, std::uint32_t align,
                                     bool col_lo_aligned = false) {
  PlaneSmem L;
  L.H = H;
  L.W = W;
  L.vc = row_vector_width(static_cast<std::uint32_t>(elem_bytes), W, W);
  const std::int64_t left = std::max<std::int64_t>(0, -col_lo), top = std::max<std::int64_t>(0, -row_lo);
  if (col_lo_aligned) {
    while (L.vc > 1 && left % L.vc != 0) L.vc /= 2;
    if (L.vc * elem_bytes < 4) L.vc = 1;  // no vector copy narrower than 4 bytes
  }
  const std::int64_t a = std::max<std::int64_t>(L.vc, align);
  const auto round_up = [a](std::int64_t v) { return (v + a - 1) / a * a; };
  const std::int64_t off = col_lo_aligned ? left : round_up(left);
  const std::int64_t ws = round_up(off + std::max<std::int64_t>(W, col_hi + 1));
  const std::int64_t rows = top + std::max<std::int64_t>(H, row_hi + 1);
  L.off = static_cast<std::uint32_t>(off);
  L.ws = static_cast<std::uint32_t>(ws);
  L.top = static_cast<std::uint32_t>(top);
  L.rows = static_cast<std::uint32_t>(rows);
  L.left = static_cast<std::uint32_t>(left);
  L.right = static_cast<std::uint32_t>(std::max<std::int64_t>(0, col_hi + 1 - W));
  L.bytes = static_cast<std::uint64_t>(rows * ws) * elem_bytes;
  return L;
}

// plane_smem_geometry, or std::invalid_argument naming `who` when the array would exceed kPlaneSmemBytes.
inline PlaneSmem plane_smem_layout(const std::string& who, std::uint32_t H, std::uint32_t W, std::size_t elem_bytes,
                                   std::int64_t row_lo, std::int64_t row_hi, std::int64_t col_lo, std::int64_t col_hi,
                                   std::uint32_t align) {
  const PlaneSmem L = plane_smem_geometry(H, W, elem_bytes, row_lo, row_hi, col_lo, col_hi, align);
  if (L.bytes > kPlaneSmemBytes) {
    throw std::invalid_argument(who + " stages a whole " + std::to_string(H) + "x" + std::to_string(W) +
                                " plane with its border in shared memory: " + std::to_string(L.bytes) +
                                " bytes, more than " + std::to_string(kPlaneSmemBytes) + "; use smem = 0 and mma = 0");
  }
  return L;
}

// Runs body(index, round) for index = lid + round*G < n, the rounds unrolled at trace time. Only a
// partial last round tests the bound: under an if when `guarded`, else by clamping the index to
// n - 1 (every thread runs the body: what a barrier or sub-group operation inside needs).
inline void for_group_rounds(dsl::KernelBuilder& k, const dsl::Val<u32>& lid, std::uint32_t G, std::uint32_t n,
                             const std::string& tag, bool guarded,
                             const std::function<void(const dsl::Val<u32>&, std::uint32_t)>& body) {
  using namespace ingot::dsl;
  for (std::uint32_t r = 0; r * G < n; ++r) {
    auto idx = k.let(tag + std::to_string(r), lid + r * G);
    if ((r + 1) * G <= n) {
      body(idx, r);
    } else if (guarded) {
      if_(idx < n, [&] { body(idx, r); });
    } else {
      body(k.let(tag + "c" + std::to_string(r), min(idx, n - 1)), r);
    }
  }
}

// Starts copying src[from .. from + n) of a global buffer into the shared array dst[0 .. n) in asynchronous copies of
// `width` elements (n and from multiples of width) spread over the work-group's G threads; the caller commits them with
// its next async_commit (e.g. a kernel's weights with its first rows, so that one wait brings both).
template <class T, class B>
void copy_range_async(dsl::KernelBuilder& k, const dsl::Shared<T>& dst, const B& src, const dsl::Val<u32>& from,
                      std::uint32_t n, std::uint32_t width, const dsl::Val<u32>& lid, std::uint32_t G) {
  using namespace ingot::dsl;
  auto at = k.let("ws_src", from);
  for_group_rounds(k, lid, G, n / width, "wsc", true, [&](const Val<u32>& i, std::uint32_t) {
    copy_async(dst, i * width, src, at + i * width, width, Val<bool>(true));
  });
}

// Row-aligned rounds over `rows` rows of per_row chunks (G >= per_row): body(row0, chunk, r) for round r, where
// thread lid takes chunk lid % per_row of row row0 + r * (G / per_row), row0 = lid / per_row — its addresses move by a
// constant from round to round. A round holding rows past `rows`, or a work-group with G % per_row idle threads
// (row0 = G / per_row), runs body under an if that keeps those threads out.
inline void for_row_rounds(dsl::KernelBuilder& k, const dsl::Val<u32>& lid, std::uint32_t G, std::uint32_t rows,
                           std::uint32_t per_row, const std::string& tag,
                           const std::function<void(const dsl::Val<u32>&, const dsl::Val<u32>&, std::uint32_t)>& body) {
  using namespace ingot::dsl;
  if (per_row == 0 || G < per_row)
    throw std::invalid_argument("for_row_rounds: needs at least a row's chunks of threads");
  const std::uint32_t per_round = G / per_row;
  auto row0 = k.let(tag + "_row", lid / per_row);
  auto chunk = k.let(tag + "_ch", lid % per_row);
  for (std::uint32_t r = 0; r * per_round < rows; ++r) {
    if ((r + 1) * per_round <= rows && G % per_row == 0) {
      body(row0, chunk, r);
    } else {
      if_(row0 < per_round && row0 + r * per_round < rows, [&] { body(row0, chunk, r); });
    }
  }
}

// The plane's chunks at x[x_plane ..), loaded by the G threads of the work-group (lid: local
// id): round r of this thread in element r (a partial last round loads a clamped chunk).
template <class T, dsl::Access A>
std::vector<std::vector<dsl::Val<T>>> load_plane(dsl::KernelBuilder& k, const dsl::Buffer<T, A>& x, const PlaneSmem& L,
                                                 const dsl::Val<u32>& x_plane, const dsl::Val<u32>& lid,
                                                 std::uint32_t G) {
  using namespace ingot::dsl;
  std::vector<std::vector<Val<T>>> got;
  const auto load_at = [&](const Val<u32>& at) {
    got.push_back(L.vc == 1 ? std::vector<Val<T>>{load(x, at)} : load_vec(x, at, L.vc));
  };
  if (const PlaneRowRounds rr = plane_row_rounds(L, G); rr.rows) {
    // row lid / per_row + r * rows (clamped in a partial last round), chunk lid % per_row
    auto row0 = k.let("ld_row", lid / rr.per_row);
    auto at0 = k.let("ld_at", x_plane + row0 * L.W + (lid % rr.per_row) * L.vc);
    for (std::uint32_t r = 0; r < rr.rounds; ++r) {
      if ((r + 1) * rr.rows <= L.H && (G % rr.per_row == 0 || (r + 2) * rr.rows <= L.H)) {
        load_at(k.let("ld" + std::to_string(r), at0 + r * rr.rows * L.W));
      } else {  // rows past H here, or idle threads (row0 = rows) reading the next round's row
        auto row = k.let("ldrow" + std::to_string(r), min(row0 + r * rr.rows, L.H - 1));
        load_at(k.let("ld" + std::to_string(r), x_plane + row * L.W + (lid % rr.per_row) * L.vc));
      }
    }
    return got;
  }
  for_group_rounds(k, lid, G, L.H * (L.W / L.vc), "ld", false,
                   [&](const Val<u32>& ch, std::uint32_t) { load_at(x_plane + ch * L.vc); });
  return got;
}

// Writes the border zeros of layout L at xs[base ..) (the copies never overwrite them; base a trace-time offset or a
// run-time one).
template <class T, class Base = std::uint32_t>
void zero_plane_border(dsl::KernelBuilder& k, const dsl::Shared<T>& xs, const PlaneSmem& L, const dsl::Val<u32>& lid,
                       std::uint32_t G, const Base& base = Base{0}) {
  using namespace ingot::dsl;
  const std::uint32_t H = L.H, Wd = L.W;
  // zero rows: `top` above, the rest below (whole rows, in vectors of vc where that is >= 4 bytes)
  const std::uint32_t zrows = L.rows - H, zv = L.vc >= 2 && L.vc * sizeof(T) >= 4 ? L.vc : 1;
  for_group_rounds(k, lid, G, zrows * L.ws / zv, "zr", true, [&](const Val<u32>& i, std::uint32_t) {
    auto at = k.let("zr_at", i * zv);
    at = select(at < L.top * L.ws, at, at + H * L.ws) + base;
    if (zv == 1) {
      store(xs, at, 0.0f);
    } else {
      store_vec(xs, at, std::vector<Val<f32>>(zv, Val<f32>(0.0f)));
    }
  });
  if (const std::uint32_t side = L.left + L.right) {
    for_group_rounds(k, lid, G, H * side, "zc", true, [&](const Val<u32>& i, std::uint32_t) {
      auto row = k.let("zc_row", i / side);
      auto kk = k.let("zc_k", i % side);
      auto col = select(kk < L.left, kk + (L.off - L.left), kk + (L.off + Wd - L.left));
      store(xs, (row + L.top) * L.ws + col + base, 0.0f);
    });
  }
}

// Stores the chunks load_plane gave into the plane's place in layout L at xs[base ..).
template <class T>
void store_plane(dsl::KernelBuilder& k, const dsl::Shared<T>& xs, const PlaneSmem& L,
                 const std::vector<std::vector<dsl::Val<T>>>& got, const dsl::Val<u32>& lid, std::uint32_t G,
                 const dsl::Val<u32>& base = dsl::Val<u32>(0u)) {
  using namespace ingot::dsl;
  const std::uint32_t per_row = L.W / L.vc;
  const auto store_at = [&](const Val<u32>& at, std::uint32_t r) {
    if (L.vc == 1) {
      store(xs, at, got[r][0]);
    } else {
      store_vec(xs, at, got[r]);
    }
  };
  if (const PlaneRowRounds rr = plane_row_rounds(L, G); rr.rows) {
    for_row_rounds(k, lid, G, L.H, per_row, "st", [&](const Val<u32>& row0, const Val<u32>& ch, std::uint32_t r) {
      store_at(k.let("st" + std::to_string(r), (row0 + r * rr.rows + L.top) * L.ws + ch * L.vc + L.off + base), r);
    });
    return;
  }
  for_group_rounds(k, lid, G, L.H * per_row, "st", true, [&](const Val<u32>& ch, std::uint32_t r) {
    store_at(k.let("st_at", (ch / per_row + L.top) * L.ws + (ch % per_row) * L.vc + L.off + base), r);
  });
}

// Whether copy_plane_async applies to layout L with elements of T (vector copies of 4-16 bytes).
template <class T>
bool plane_copies_async(const PlaneSmem& L) {
  return ir::vector_width_ok(dtype_of<T>, L.vc);
}

// Starts asynchronous copies (copy_async) of the plane at x[x_plane ..) into its place in layout L
// at xs[base ..), by the G threads of the work-group (lid: local id); the border is not written.
// The caller commits, waits and puts a barrier before the plane is read (ir.hpp).
template <class T, dsl::Access A>
void copy_plane_async(dsl::KernelBuilder& k, const dsl::Buffer<T, A>& x, const dsl::Shared<T>& xs, const PlaneSmem& L,
                      const dsl::Val<u32>& x_plane, const dsl::Val<u32>& lid, std::uint32_t G,
                      const dsl::Val<u32>& base) {
  using namespace ingot::dsl;
  if (!plane_copies_async<T>(L)) {
    throw std::invalid_argument("copy_plane_async: rows of " + std::to_string(L.W) +
                                " elements admit no vector copy of 4, 8 or 16 bytes");
  }
  const std::uint32_t per_row = L.W / L.vc;
  if (const PlaneRowRounds rr = plane_row_rounds(L, G); rr.rows) {
    for_row_rounds(k, lid, G, L.H, per_row, "cp", [&](const Val<u32>& row0, const Val<u32>& ch, std::uint32_t r) {
      const std::string rt = std::to_string(r);
      copy_async(xs, k.let("cp_dst" + rt, (row0 + r * rr.rows + L.top) * L.ws + ch * L.vc + L.off + base), x,
                 k.let("cp_src" + rt, x_plane + (row0 + r * rr.rows) * L.W + ch * L.vc), L.vc, Val<bool>(true));
    });
    return;
  }
  for_group_rounds(k, lid, G, L.H * per_row, "cp", true, [&](const Val<u32>& ch, std::uint32_t) {
    auto at = k.let("cp_at", (ch / per_row + L.top) * L.ws + (ch % per_row) * L.vc + L.off + base);
    copy_async(xs, at, x, x_plane + ch * L.vc, L.vc, Val<bool>(true));
  });
}

// The planes of `images` images through two buffers of layout L in xs (plane_buffers_elements(L, sizeof(T), 2), the
// second at plane_buffer_stride; one buffer when images == 1), in a run-time loop: both borders are zeroed once, plane
// 0 is copied first, and each round starts the copy of the next plane into the other buffer (copy_plane_async) before
// it waits for its own plane, puts a barrier, runs body(image, buffer offset) and puts a barrier (the buffer is free
// for the copy after next). plane_at(image) gives the image's first input element x[..]. Every thread of the
// work-group must run it.
template <class T, dsl::Access A>
void for_planes_async(dsl::KernelBuilder& k, const dsl::Buffer<T, A>& x, const dsl::Shared<T>& xs, const PlaneSmem& L,
                      const dsl::Val<u32>& lid, std::uint32_t G, std::uint32_t images,
                      const std::function<dsl::Val<u32>(const dsl::Val<u32>&)>& plane_at,
                      const std::function<void(const dsl::Val<u32>&, const dsl::Val<u32>&)>& body) {
  using namespace ingot::dsl;
  const std::uint32_t buffers = images > 1 ? 2 : 1;
  const auto elems = static_cast<std::uint32_t>(plane_buffer_stride(L, sizeof(T)));
  for (std::uint32_t b = 0; b < buffers; ++b) zero_plane_border(k, xs, L, lid, G, b * elems);
  copy_plane_async(k, x, xs, L, k.let("x_plane0", plane_at(Val<u32>(0u))), lid, G, Val<u32>(0u));
  async_commit(k);
  for_(k.constant<u32>(0), images, [&](const Val<u32>& img) {
    if (buffers == 2) {
      auto nxt = k.let("nxt", img + 1u);
      if_(nxt < images, [&] {
        copy_plane_async(k, x, xs, L, k.let("x_next", plane_at(nxt)), lid, G, k.let("next_buf", (nxt % 2u) * elems));
      });
      async_commit(k);  // (an empty group past the last image)
      async_wait(k, 1);
    } else {
      async_wait(k, 0);
    }
    k.barrier();  // the plane has landed for every thread
    body(img, buffers == 2 ? k.let("buf", (img % 2u) * elems) : Val<u32>(0u));
    k.barrier();  // every thread is done with the buffer before the next copy into it starts
  });
}

// Copies the plane at x[x_plane ..) into xs[base ..) (layout L) with G threads (lid: the thread's index among them),
// writes the border zeros, and ends with a barrier (every thread of the work-group must reach it).
template <class T, dsl::Access A>
void stage_plane(dsl::KernelBuilder& k, const dsl::Buffer<T, A>& x, const dsl::Shared<T>& xs, const PlaneSmem& L,
                 const dsl::Val<u32>& x_plane, const dsl::Val<u32>& lid, std::uint32_t G,
                 const dsl::Val<u32>& base = dsl::Val<u32>(0u)) {
  const auto got = load_plane(k, x, L, x_plane, lid, G);  // every load in flight first
  zero_plane_border(k, xs, L, lid, G, base);
  store_plane(k, xs, L, got, lid, G, base);
  k.barrier();
}

}  // namespace ingot::kernels
