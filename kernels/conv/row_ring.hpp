// kernels/conv/row_ring.hpp — the schedule of a shared ring of input rows filled by asynchronous
// copies (the NHWC stream kernel, depthwise_conv2d_nhwc_stream.hpp).
//
// Rows 0 .. ahead-1 are issued first (each its own commit group); step u issues row u + ahead,
// waits for row u (async_wait of the groups committed after it: min(ahead, rows-1-u)), passes a
// barrier, then reads row u. Row u lives in slot u % kRingSlots(ahead) = ahead + 2: with one barrier
// per step a slot is refilled two steps after its row was read, and no thread can pass two
// barriers while another is still reading, so no copy lands in a slot some thread still reads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

inline constexpr std::uint32_t ring_slots(std::uint32_t ahead) { return ahead + 2; }

// issue(u) starts row u's copies into slot u % ring_slots(ahead) and commits them (async_commit);
// read(u) reads row u. Every thread of the work-group runs the whole schedule (barriers).
inline void for_ring_rows(dsl::KernelBuilder& k, std::uint32_t rows, std::uint32_t ahead,
                          const std::function<void(std::uint32_t)>& issue,
                          const std::function<void(std::uint32_t)>& read) {
  for (std::uint32_t u = 0; u < std::min(ahead, rows); ++u) issue(u);
  for (std::uint32_t u = 0; u < rows; ++u) {
    if (u + ahead < rows) issue(u + ahead);
    dsl::async_wait(k, std::min(ahead, rows - 1 - u));  // the groups committed after row u's
    k.barrier();
    read(u);
  }
}

// One asynchronous copy of each thread per row (a round of the work-group's copies): its source
// offset within the row, its destination within a slot, whether it lies inside the input (a copy
// outside writes zeros), and, in a partial last round, whether this thread has one.
struct RingCopy {
  dsl::Val<u32> src, dst;
  dsl::Val<bool> ok;
  std::optional<dsl::Val<bool>> valid;
};

// Issues ring row u, input row ih = rbase + u - PH, into the slot at element `slot`: every copy of
// `copies` (cw elements) from x[base + clamped ih * row_stride + src] and one commit. A row that lies
// in [0, H) for every work-group (rbase in [0, rb_max + PH], a trace-time bound) needs no test;
// another reads row 0 and writes zeros when outside.
template <class T, dsl::Access A>
void issue_ring_row(dsl::KernelBuilder& k, const dsl::Shared<T>& xs, const dsl::Buffer<T, A>& x,
                    const std::vector<RingCopy>& copies, std::uint32_t cw, std::uint32_t slot,
                    const std::optional<dsl::Val<u32>>& base, const dsl::Val<u32>& rbase, std::uint32_t u,
                    std::uint32_t PH, std::int64_t rb_max, std::uint32_t H, std::uint32_t row_stride) {
  using namespace ingot::dsl;
  const auto ut = std::to_string(u);
  const bool always = static_cast<std::int64_t>(u) >= PH && rb_max + u < H;
  std::optional<Val<bool>> row_ok;
  Val<u32> row;
  if (always) {
    row = (rbase + (u - PH)) * row_stride;
  } else {
    auto ih = k.let("ih" + ut, rbase + u - PH);  // u32: a row above 0 wraps past H
    row_ok = k.let("okr" + ut, ih < H);
    row = select(*row_ok, ih, 0u) * row_stride;
  }
  auto at = k.let("ra" + ut, base ? Val<u32>(*base + row) : row);
  for (const RingCopy& c : copies) {
    auto copy = [&] {
      const Val<bool> ok = row_ok ? Val<bool>(*row_ok && c.ok) : c.ok;
      copy_async(xs, slot == 0 ? c.dst : Val<u32>(c.dst + slot), x, at + c.src, cw, ok);
    };
    if (c.valid) {
      if_(*c.valid, copy);
    } else {
      copy();
    }
  }
  async_commit(k);
}

}  // namespace ingot::kernels
