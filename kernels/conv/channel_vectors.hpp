// kernels/conv/channel_vectors.hpp — how the channels-last kernels (depthwise_conv2d_nhwc.hpp,
// causal_conv1d_nlc.hpp) move a thread's VC consecutive channels: in accesses of VW elements
// (channel_access_width), one vector access each, or scalars when VW == 1.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

// Elements per access for VC channels of elem_bytes-byte elements: VC up to 16 bytes, 1 (scalar
// accesses) when VC < 2.
inline std::uint32_t channel_access_width(std::uint32_t vc, std::uint32_t elem_bytes) {
  return vc < 2 ? 1 : std::min(vc, 16 / elem_bytes);
}

// The VC elements buf[index .. index+VC) (index a multiple of VW), in VC / VW accesses (a global
// buffer or a shared array).
template <class T, dsl::Access A>
std::vector<dsl::Val<T>> load_channels(const dsl::Buffer<T, A>& buf, const dsl::Val<u32>& index, std::uint32_t VC,
                                       std::uint32_t VW) {
  using namespace ingot::dsl;
  std::vector<Val<T>> out;
  for (std::uint32_t h = 0; h < VC; h += VW) {
    const Val<u32> at = h == 0 ? index : Val<u32>(index + h);
    if (VW == 1) {
      out.push_back(load(buf, at));
    } else {
      for (const auto& v : load_vec(buf, at, VW)) out.push_back(v);
    }
  }
  return out;
}

// Stores values (VC of them, converted to T) at y[index .. index+VC) (index a multiple of VW), in
// VC / VW accesses.
template <class T>
void store_channels(const dsl::Out<T>& y, const dsl::Val<u32>& index, const std::vector<dsl::Val<f32>>& values,
                    std::uint32_t VW) {
  using namespace ingot::dsl;
  for (std::uint32_t h = 0; h < values.size(); h += VW) {
    const Val<u32> at = h == 0 ? index : Val<u32>(index + h);
    if (VW == 1) {
      store(y, at, values[h]);
    } else {
      store_vec(y, at, std::vector<Val<f32>>(values.begin() + h, values.begin() + h + VW));
    }
  }
}

}  // namespace ingot::kernels
