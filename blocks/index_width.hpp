// blocks/index_width.hpp — element indexes in 32 or 64 bits, chosen per launch.
//
// A kernel written over an index type I (u32 or i64) is traced twice at most: with u32, the fast form, for launches
// whose buffers and thread counts stay below 2^32; with i64 for larger ones (a 16-bit tensor of 2^32 elements is only
// 8 GiB). The kernel reads its global index with k.program_id<I>(0), declares its size scalars as I, and keeps the
// quantities that stay small (a channel, a position inside a row, a lane) in u32: widen<I>() brings such a value to
// I where it joins a large offset, narrow<I>() takes a value known to be small back to u32. For I = u32 both return
// their operand itself, so the 32-bit form traces exactly the IR it would without them.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "ingot/dsl.hpp"

namespace ingot::blocks {

// The index types a kernel may be traced with.
template <class I>
concept IndexType = std::is_same_v<I, u32> || std::is_same_v<I, i64>;

template <class I>
struct IndexTag {
  using type = I;
};

// v (u32) as an I: itself for u32, a cast for i64.
template <IndexType I>
dsl::Val<I> widen(const dsl::Val<u32>& v) {
  if constexpr (std::is_same_v<I, u32>) {
    return v;
  } else {
    return dsl::cast<I>(v);
  }
}

// v (I) as a u32, for a value the kernel knows to be below 2^32 (a remainder by a u32, a channel): itself for u32.
template <IndexType I>
dsl::Val<u32> narrow(const dsl::Val<I>& v) {
  if constexpr (std::is_same_v<I, u32>) {
    return v;
  } else {
    return dsl::cast<u32>(v);
  }
}

// A trace-time constant (a product of sizes, computed in 64 bits) as a literal of the index type: for u32 it must fit
// (the 32-bit form is traced only where every offset does; std::logic_error otherwise, never a silent wrap).
template <IndexType I>
auto index_constant(std::uint64_t v) {
  if constexpr (std::is_same_v<I, u32>) {
    if (v > 0xffffffffull) {
      throw std::logic_error("index constant " + std::to_string(v) + " does not fit the 32-bit form's u32 indexes");
    }
    return static_cast<std::uint32_t>(v);
  } else {
    return static_cast<std::int64_t>(v);
  }
}

// Whether a launch over `elements` (its largest buffer or thread count) needs 64-bit indexes.
[[nodiscard]] constexpr bool needs_i64(std::uint64_t elements) { return elements > 0xffffffffull; }

// Calls f(IndexTag<I>{}) with I = i64 when wide, u32 otherwise.
template <class F>
decltype(auto) with_index_type(bool wide, F&& f) {
  if (wide) return f(IndexTag<i64>{});
  return f(IndexTag<u32>{});
}

}  // namespace ingot::blocks
