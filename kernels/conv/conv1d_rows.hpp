// kernels/conv/conv1d_rows.hpp — the core of the channel-first 1-D depthwise convolutions
// (depthwise_conv1d, causal_conv1d_prefill): V consecutive outputs of one row per thread, the
// covering input range read with aligned vector loads where the row length allows it.
//
//   x [rows, L] (rows = B*C), w [C, K], optional bias [C] -> y [rows, O],
//   y[r, o] = act(bias[c] + sum_k x[r, o*stride + k*dilation - pad] * w[c, k]),  c = r % C,
//   x = 0 outside [0, L) (or the causal initial state, see Rows1dIO::init).
//
// Mapping. Thread i takes group g = i % G of row r = i / G; consecutive threads take
// consecutive groups of one row, so a warp reads and writes one contiguous stretch.
// - O % V == 0 ("aligned"): G = O / V, group g has outputs [g*V, g*V + V). Every row's output
//   starts at a multiple of V, so each group is stored with V/W aligned vector stores.
// - otherwise: G = ceil(O / V) + 1 and group g has outputs [a_r + (g-1)*V, a_r + g*V) with
//   a_r = (-r*O) mod V: the groups follow the *flat* output index aligned to V, so every group
//   that lies wholly inside its row is stored with aligned vector stores; the row's first and
//   last groups (partly outside) use guarded scalar stores.
// Loads. W = vector width (2, 4 or 8 elements of 4, 8 or 16 bytes; the widest dividing V and
// L; 1 = scalar loads when none does). A thread loads the aligned W-element chunks covering
// its inputs [o0*stride - pad, ...) and reads each input element it needs from them at a
// fixed place: with an aligned mapping the chunk offset s = (o0*stride - pad) mod W is a
// trace-time constant; otherwise it depends on the row and the body is emitted once per s
// (W copies; a warp takes one unless it straddles two rows). Each needed input element is
// converted to f32 once; a chunk wholly outside [0, L) (rows are multiples of W, so a chunk
// is wholly in or out) loads a clamped in-range chunk and its elements are select()ed to 0.
// Chunk exchange (Rows1dGeom::chunk_shuffle): the next group of a row starts V*stride inputs
// later with the same s, so a thread's chunk ch is chunk ch - d*D of lane + d (D = V*stride/W
// chunks per group, d = ch / D). Each thread loads and converts its own D chunks only, and
// takes every later element it can use (for any s) from lane + d by shuffle; where lane + d is
// past the warp, in the next row or a tail thread it loads that chunk itself (a branch after
// the shuffle, which the whole work-group reaches). This removes the overlapping loads of
// neighbouring groups (each chunk is otherwise loaded by up to ceil(span/W) threads).
// Code shape (measured per element size, see the note at `lean`): for 16-bit types the row's K
// weights come from one vector load where K taps make 4, 8 or 16 bytes, the body of the thread's
// chunk offset s is chosen by halving [0, W) (log2 W tests) and the full/partial stores are an
// if/else; f32 keeps K scalar weight loads, one test per offset and two ifs.
// Tail threads clamp their index onto thread 0's operands and skip every store.
// Accumulates in f32 (fma, in tap order after the bias) for every dtype.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "blocks/index_width.hpp"
#include "ingot/dsl.hpp"
#include "vector_width.hpp"

namespace ingot::kernels {

// Sizes of one row convolution (all specialisation constants).
struct Rows1dGeom {
  std::uint32_t channels, length, out_len, ksize, stride, dilation, pad;  // pad: left padding
  std::uint32_t outputs_per_thread;                                       // V >= 1
  // Chunk exchange (see Loads): each thread loads only its own V*stride/W chunks; the chunks
  // past them come from the next lanes by sub-group shuffle (needs launch bounds of a multiple
  // of 32 threads, vector chunks, no initial state).
  bool chunk_shuffle = false;
  [[nodiscard]] bool aligned() const { return out_len % outputs_per_thread == 0; }
  // Groups (threads) per row: O/V when aligned, ceil(O/V) + 1 otherwise.
  [[nodiscard]] std::uint32_t groups() const {
    const std::uint32_t V = outputs_per_thread;
    if (aligned()) return out_len / V;
    return (out_len + V - 1) / V + 1;
  }
};

// I: the index type (blocks/index_width.hpp): u32, or i64 for launches past 2^32 elements.
template <class T, blocks::IndexType I = u32>
struct Rows1dIO {
  dsl::Val<I> batch;
  dsl::In<T> x, w, bias;  // bias only when has_bias
  bool has_bias = false;
  // Causal initial state [rows, pad] (only with has_init): input position p in [-pad, 0) of row r
  // reads init[r*pad + pad + p] instead of 0.
  dsl::In<T> init;
  bool has_init = false;
  std::uint32_t init_len = 0;  // positions per row of init; conv1d_rows requires the left padding
  dsl::Out<T> y;
};

// Declares the usual parameters, in this order: batch (run-time, of the index type I), x [batch*C, L], w [C, K],
// bias [C] (when bias), init_state [batch*C, init_len] (when init_len > 0), y [batch*C, O].
template <class T, blocks::IndexType I = u32>
Rows1dIO<T, I> declare_rows1d_io(dsl::KernelBuilder& k, std::uint32_t C, std::uint32_t L, std::uint32_t K,
                                 std::uint32_t O, bool bias, std::uint32_t init_len = 0) {
  Rows1dIO<T, I> io;
  io.batch = k.scalar<I>("batch");
  using blocks::index_constant;  // (sizes multiplied in 64 bits: C * L may pass 2^32 in the 64-bit form)
  io.x = k.in<T>("x", io.batch * index_constant<I>(std::uint64_t{C} * L));
  io.w = k.in<T>("w", C * K);
  io.has_bias = bias;
  if (bias) io.bias = k.in<T>("bias", C);
  io.has_init = init_len > 0;
  io.init_len = init_len;
  if (io.has_init) io.init = k.in<T>("init_state", io.batch * index_constant<I>(std::uint64_t{C} * init_len));
  io.y = k.out<T>("y", io.batch * index_constant<I>(std::uint64_t{C} * O));
  return io;
}

// Lanes of the chunk exchange: the sub-group every work-group of a shuffling kernel is made of.
inline constexpr std::uint32_t kChunkLanes = ir::kShuffleGroupMultiple;

// Why the chunk exchange cannot run geometry g over elements of elem_bytes (with an initial state
// when has_init), or "" when it can; the launch bounds (a multiple of kChunkLanes threads) are the
// caller's to declare. One rule for conv1d_rows' refusal and for the defaults that pick shfl.
inline std::string chunk_exchange_refusal(const Rows1dGeom& g, std::uint32_t elem_bytes, bool has_init) {
  const std::uint32_t V = g.outputs_per_thread, S = g.stride, W = row_vector_width(elem_bytes, V, g.length);
  if (W == 1) return "needs vector chunks (L and V must admit 4-, 8- or 16-byte vectors)";
  if (has_init) return "does not take an initial state";
  // The first element used, past the aligned chunk: fixed where every group starts V-aligned in its
  // row (s = (-pad) mod W), any of 0 .. W-1 for row-shifted groups.
  const std::uint64_t s_max = g.aligned() ? (W - g.pad % W) % W : W - 1;
  const std::uint64_t nel = s_max + std::uint64_t{V - 1} * S + std::uint64_t{g.ksize - 1} * g.dilation + 1;
  if ((nel + W - 1) / W > std::uint64_t{V} * S / W + kChunkLanes - 1) return "needs a window shorter than 31 groups";
  return "";
}

// What the after-hook sees of its thread: the store guard (not a tail thread), the row r
// (b*C + c, of the index type) and the group's first output o0 (i32, may be negative).
template <blocks::IndexType I = u32>
struct Rows1dThread {
  dsl::Val<bool> live;
  dsl::Val<I> row;
  dsl::Val<i32> o0;
};

// Emits the whole kernel body over buffers the caller declared. act maps each f32 sum to the
// stored value; after(thread) runs once per thread after its stores (causal final state). Rows and flat offsets are of
// the index type I; positions inside a row, channels and groups are u32.
template <class T, blocks::IndexType I = u32>
void conv1d_rows(dsl::KernelBuilder& k, const Rows1dGeom& g, const Rows1dIO<T, I>& io,
                 const std::function<dsl::Val<f32>(const dsl::Val<f32>&)>& act,
                 const std::function<void(const Rows1dThread<I>&)>& after) {
  using namespace ingot::dsl;
  using blocks::narrow;
  using blocks::widen;
  const std::uint32_t C = g.channels, L = g.length, O = g.out_len, K = g.ksize, S = g.stride, D = g.dilation;
  const std::uint32_t P = g.pad, V = g.outputs_per_thread, G = g.groups();
  if (io.has_init && io.init_len != P) {
    throw std::logic_error("conv1d_rows: the initial state holds " + std::to_string(io.init_len) +
                           " positions per row, the left padding is " + std::to_string(P) + ": they must be equal");
  }
  const std::uint32_t W = row_vector_width(sizeof(T), V, L);
  const bool aligned = g.aligned();
  const auto i32c = [](std::int64_t v) { return static_cast<std::int32_t>(v); };

  auto gid = k.let("gid", k.program_id<I>(0));
  auto n = k.let("n", io.batch * blocks::index_constant<I>(std::uint64_t{C} * G));
  auto live = k.let("live", gid < n);
  auto i = k.let("i", select(live, gid, 0u));  // tail threads take thread 0's operands
  auto row = k.let("row", i / G);
  auto grp = k.let("grp", narrow<I>(i % G));
  auto c = k.let("c", narrow<I>(row % C));
  auto x_row = k.let("x_row", row * L);
  auto y_row = k.let("y_row", row * O);
  // First output of the group, and its static range (for the bounds analysis below).
  Val<i32> o0;
  std::int64_t o0_min = 0, o0_max = 0;
  if (aligned) {  // o0 = grp * V within the row
    o0 = k.let("o0", cast<i32>(grp * V));
    o0_max = static_cast<std::int64_t>(G - 1) * V;
  } else {
    auto a = k.let("a", narrow<I>((V - y_row % V) % V));  // outputs before the row's first V-aligned one
    o0 = k.let("o0", cast<i32>(a + grp * V) - i32c(V));
    o0_min = -static_cast<std::int64_t>(V);
    o0_max = static_cast<std::int64_t>(V - 1) + static_cast<std::int64_t>(G - 2) * V;
  }
  // q = first input position; base = q - s, the aligned chunk holding it.
  auto q = k.let("q", o0 * i32c(S) - i32c(P));
  const std::int64_t q_min = o0_min * S - P, q_max = o0_max * S - P;
  const bool static_shift = aligned || W == 1;
  std::uint32_t s_static = 0;
  Val<u32> shift;
  Val<i32> base;
  std::int64_t base_min = 0, base_max = 0;
  if (static_shift) {
    // row-mapped: o0*S is a multiple of V, hence of W, so s = (-P) mod W.
    s_static = (W - P % W) % W;
    base = k.let("base", q - i32c(s_static));
    base_min = q_min - s_static;
    base_max = q_max - s_static;
  } else {
    // Shifted by M (a multiple of W) into u32 so that the mod is of a non-negative value.
    const std::int64_t M = (-q_min + W - 1) / W * W;
    auto qq = k.let("qq", cast<u32>(q + i32c(M)));
    shift = k.let("shift", qq % W);
    base = k.let("base", cast<i32>(qq - shift) - i32c(M));
    base_min = q_min - (W - 1);
    base_max = q_max;
  }

  // Two code shapes, per element size (docs/performance.md s8): for 16-bit types the weights in one vector load, the
  // chunk-offset body chosen by halving and the full/partial stores as if/else, fewer instructions where the 16-bit
  // kernel is issue-bound; for f32 the linear shape — K scalar weight loads, one test per chunk offset, two ifs —,
  // which measured faster there.
  const bool lean = sizeof(T) == 2;
  // The row's weights: one vector load where the K taps make a 4-, 8- or 16-byte vector (c*K is a
  // multiple of K), else K scalar loads.
  std::vector<Val<f32>> ws;
  const std::uint32_t w_bytes = K * static_cast<std::uint32_t>(sizeof(T));
  if (lean && K > 1 && (w_bytes == 4 || w_bytes == 8 || w_bytes == 16)) {
    const auto raw = load_vec(io.w, c * K, K);
    for (std::uint32_t t = 0; t < K; ++t) ws.push_back(k.let("w" + std::to_string(t), cast<f32>(raw[t])));
  } else {
    for (std::uint32_t t = 0; t < K; ++t)
      ws.push_back(k.let("w" + std::to_string(t), cast<f32>(load(io.w, c * K + t))));
  }
  std::optional<Val<f32>> bias_c;
  if (io.has_bias) bias_c = k.let("bias_c", cast<f32>(load(io.bias, c)));

  // Chunk ch (W elements from base + ch*W): its loaded elements, and where it can lie outside
  // the row, the flag that it lies inside (the elements are then select()ed).
  struct Chunk {
    std::vector<Val<T>> raw;
    std::optional<Val<bool>> ok;
  };
  const auto load_chunk = [&](std::uint32_t ch, const std::string& tag) {
    Chunk r;
    const std::int64_t lo = base_min + static_cast<std::int64_t>(ch) * W;
    const std::int64_t hi = base_max + static_cast<std::int64_t>(ch) * W + W;  // one past the end
    auto pos = k.let("p" + tag, base + i32c(ch * W));
    Val<u32> idx;
    if (lo >= 0 && hi <= L) {
      idx = cast<u32>(pos);
    } else {
      r.ok = k.let("ok" + tag, cast<u32>(pos) < L);  // negative wraps past L
      idx = select(*r.ok, cast<u32>(pos), 0u);
    }
    if (W == 1) {
      r.raw = {load(io.x, x_row + widen<I>(idx))};
    } else {
      r.raw = load_vec(io.x, x_row + widen<I>(idx), W);
    }
    return r;
  };
  const auto in_row = [](const Chunk& ch, std::uint32_t el) {
    Val<f32> v = cast<f32>(ch.raw[el]);
    return ch.ok ? select(*ch.ok, v, 0.0f) : v;
  };

  // Chunk exchange: every element from base this thread can use (for any s), in f32.
  std::vector<Val<f32>> shared_x;
  if (g.chunk_shuffle) {
    const auto refuse = [&](const std::string& why) {
      throw std::invalid_argument("conv1d_rows: the chunk exchange (shfl) " + why + "; use shfl = 0");
    };
    if (const std::string why = chunk_exchange_refusal(g, sizeof(T), io.has_init); !why.empty()) refuse(why);
    const std::uint32_t groups_lanes = k.kernel().bounds.max_group_threads;
    if (groups_lanes == 0 || groups_lanes % ir::kShuffleGroupMultiple != 0) {
      refuse("needs launch bounds of a multiple of 32 threads");
    }
    const std::uint32_t Dg = V * S / W;  // own chunks (W divides V: row_vector_width)
    const std::uint32_t nel = (static_shift ? s_static : W - 1) + (V - 1) * S + (K - 1) * D + 1;  // elements used
    const std::uint32_t nch = (nel + W - 1) / W;  // at most Dg + kChunkLanes - 1 (chunk_exchange_refusal)
    auto lane = k.let("lane", k.local_id(0) % kChunkLanes);
    for (std::uint32_t ch = 0; ch < std::min(Dg, nch); ++ch) {
      const Chunk own = load_chunk(ch, std::to_string(ch));
      for (std::uint32_t el = 0; el < W; ++el) {
        shared_x.push_back(k.let("x" + std::to_string(ch * W + el), in_row(own, el)));
      }
    }
    for (std::uint32_t d = 1; d * Dg < nch; ++d) {
      // Lane + d holds chunks d*Dg .. d*Dg + Dg - 1 of this thread as its own chunks 0 .. Dg-1.
      auto from = k.let("src" + std::to_string(d), lane + d);
      std::vector<Var<f32>> got;
      got.reserve(static_cast<std::size_t>(Dg) * W);  // a reallocation would copy (re-declare) the variables
      for (std::uint32_t e = d * Dg * W; e < std::min(nel, (d + 1) * Dg * W); ++e) {
        got.emplace_back(k, shuffle(shared_x[e - d * Dg * W], from % kChunkLanes, kChunkLanes),
                         "xs" + std::to_string(e));
      }
      // The source must be group grp + d of this row: within the warp and the row (then it is
      // not a tail thread either; a tail thread's own values are never stored).
      auto valid = from < kChunkLanes && grp + d < G;
      if_(!valid, [&] {
        for (std::uint32_t ch = d * Dg; ch < std::min(nch, (d + 1) * Dg); ++ch) {
          const Chunk mine = load_chunk(ch, std::to_string(ch) + "_self");
          for (std::uint32_t el = 0; el < W && ch * W + el < nel; ++el) {
            got[ch * W + el - d * Dg * W] = in_row(mine, el);
          }
        }
      });
      for (const auto& v : got) shared_x.push_back(Val<f32>(v));
    }
  }

  // One body per chunk offset s: load, convert, accumulate, store.
  const auto body = [&](std::uint32_t s) {
    const std::string sfx = static_shift ? "" : "_s" + std::to_string(s);
    // The chunks the V windows use, by index: a map, not a vector over the whole span, so that the trace's memory
    // grows with the taps (V x K), never with the dilation's or padding's value.
    std::set<std::uint32_t> used;  // (in ascending order: strided windows can skip a whole chunk)
    for (std::uint32_t j = 0; j < V && !g.chunk_shuffle; ++j) {
      for (std::uint32_t t = 0; t < K; ++t) used.insert((s + j * S + t * D) / W);
    }
    std::map<std::uint32_t, Chunk> chunks;
    for (const std::uint32_t ch : used) chunks.emplace(ch, load_chunk(ch, std::to_string(ch) + sfx));
    // Every distinct input element the V windows use, converted once.
    std::map<std::uint32_t, Val<f32>> xs;
    for (std::uint32_t j = 0; j < V; ++j) {
      for (std::uint32_t t = 0; t < K; ++t) {
        const std::uint32_t e = s + j * S + t * D;
        if (xs.count(e)) continue;
        if (g.chunk_shuffle) {
          xs.emplace(e, shared_x.at(e));
          continue;
        }
        const Chunk& c = chunks.at(e / W);
        Val<f32> v = cast<f32>(c.raw[e % W]);
        if (c.ok) {
          Val<f32> outside = 0.0f;
          if (io.has_init) {
            // Position base + e; the initial state covers [-P, 0).
            auto pe = k.let("pe" + std::to_string(e) + sfx, base + i32c(e));
            auto in_init = pe >= -i32c(P) && pe < 0;
            auto sv = load(io.init, row * P + widen<I>(select(in_init, cast<u32>(pe + i32c(P)), 0u)));
            outside = select(in_init, cast<f32>(sv), 0.0f);
          }
          v = select(*c.ok, v, outside);
        }
        xs.emplace(e, k.let("x" + std::to_string(e) + sfx, v));
      }
    }
    std::vector<Val<f32>> out;
    for (std::uint32_t j = 0; j < V; ++j) {
      Val<f32> acc = bias_c ? *bias_c : Val<f32>(0.0f);
      for (std::uint32_t t = 0; t < K; ++t) {
        const auto& xv = xs.at(s + j * S + t * D);
        acc = (t == 0 && !bias_c) ? Val<f32>(xv * ws[t]) : fma(xv, ws[t], acc);
      }
      out.push_back(k.let("y" + std::to_string(j) + sfx, act(acc)));
    }
    const auto store_group = [&](const Val<I>& at) {
      if (W == 1) {
        for (std::uint32_t j = 0; j < V; ++j) store(io.y, at + j, out[j]);
        return;
      }
      for (std::uint32_t m = 0; m < V / W; ++m) {
        store_vec(io.y, at + m * W, std::vector<Val<f32>>(out.begin() + m * W, out.begin() + (m + 1) * W));
      }
    };
    if (aligned) {
      if_(live, [&] { store_group(y_row + widen<I>(cast<u32>(o0))); });
      return;
    }
    auto full = k.let("full" + sfx, o0 >= 0 && o0 <= i32c(O) - i32c(V));
    const auto partial = [&] {
      for (std::uint32_t j = 0; j < V; ++j) {
        auto oj = o0 + i32c(j);
        if_(oj >= 0 && oj < i32c(O), [&] { store(io.y, y_row + widen<I>(cast<u32>(oj)), out[j]); });
      }
    };
    if (lean) {
      if_(live && full, [&] { store_group(y_row + widen<I>(cast<u32>(o0))); }).else_([&] { if_(live, partial); });
    } else {
      if_(live && full, [&] { store_group(y_row + widen<I>(cast<u32>(o0))); });
      if_(live && !full, partial);
    }
  };
  // The body of the thread's chunk offset, chosen by halving [lo, hi): log2(W) tests per thread.
  const std::function<void(std::uint32_t, std::uint32_t)> dispatch = [&](std::uint32_t lo, std::uint32_t hi) {
    if (hi - lo == 1) {
      body(lo);
      return;
    }
    const std::uint32_t mid = (lo + hi) / 2;
    if_(shift < mid, [&] { dispatch(lo, mid); }).else_([&] { dispatch(mid, hi); });
  };
  if (static_shift) {
    body(s_static);
  } else {
    if (lean) {
      dispatch(0, W);
    } else {
      for (std::uint32_t s = 0; s < W; ++s) if_(shift == s, [&] { body(s); });
    }
  }
  if (after) after(Rows1dThread<I>{live, row, o0});
}

}  // namespace ingot::kernels
