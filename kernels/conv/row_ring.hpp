// kernels/conv/row_ring.hpp — the schedule of a shared ring of input rows filled by asynchronous
// copies (the stream kernels: depthwise_conv2d_nhwc_stream.hpp, depthwise_conv2d_nchw_stream.hpp).
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

}  // namespace ingot::kernels
