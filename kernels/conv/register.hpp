// kernels/conv/register.hpp — the convolution family's registration functions, and the helper
// that instantiates a kernel template for a run-time dtype.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "ingot/dsl.hpp"
#include "ingot/harness/registry.hpp"
#include "support/trace.hpp"

namespace ingot::kernels {

// The option of the shared memory a kernel may take, in KB (16-227: an SM's most on sm_90; above 48 KB CUDA's dynamic
// shared memory, other backends refuse a kernel over their device's local memory).
inline harness::OptionSpec shared_memory_option(const std::string& key, const std::string& meaning) {
  return {key, 16, 227, meaning};
}

// The shared memory option `key` of case p (shared_memory_option), or `dflt_bytes` (a multiple of 1024) when the case
// does not carry it. Returns bytes.
inline std::uint64_t shared_memory_allowance(const harness::Params& p, const std::string& key, std::uint64_t dflt_bytes,
                                             const std::string& kernel) {
  return std::uint64_t{1024} * harness::option_value({shared_memory_option(key, "shared memory, KB")}, p, key,
                                                     static_cast<std::uint32_t>(dflt_bytes / 1024), kernel);
}

// Option "minb" (1..32): the kernel declares launch_bounds(group, minb), i.e. at most `group` threads per work-group
// (the registration's geometry must use that group size) and registers chosen so that minb work-groups fit on one
// multiprocessor (CUDA).
inline harness::OptionSpec launch_bounds_option() {
  return {"minb", 1, 32, "launch_bounds(group, minb): registers chosen for minb work-groups per multiprocessor"};
}

// Applies case p's minb (launch_bounds_option). Without minb, `required` still declares launch_bounds(group) (kernels
// with shuffles must declare bounds).
inline void apply_launch_bounds(KernelBuilder& k, const harness::Params& p, std::uint32_t group,
                                bool required = false) {
  if (!p.count("minb")) {
    if (required) k.launch_bounds(group);
    return;
  }
  k.launch_bounds(group, harness::option_value({launch_bounds_option()}, p, "minb", 0, k.kernel().name));
}

void register_depthwise_conv1d(harness::Registry& r);
// The dense convolutions built on direct_conv.hpp (one .cpp each).
void register_conv2d(harness::Registry& r);
void register_conv2d_grouped(harness::Registry& r);
void register_conv3d(harness::Registry& r);
void register_conv3d_grouped(harness::Registry& r);
void register_depthwise_conv2d(harness::Registry& r);
void register_depthwise_conv2d_nhwc(harness::Registry& r);
// winograd_filter_transform and winograd_conv2d.
void register_winograd_conv2d(harness::Registry& r);
// causal_conv1d_prefill, causal_conv1d_prefill_nlc and causal_conv1d_update.
void register_causal_conv1d(harness::Registry& r);
// conv2d_blockscaled, conv3d_blockscaled, depthwise_conv2d_blockscaled (blockscaled_conv.cpp).
void register_blockscaled_conv(harness::Registry& r);

// Registers every kernel of the family.
void register_conv(harness::Registry& r);

}  // namespace ingot::kernels
