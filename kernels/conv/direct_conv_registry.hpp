// kernels/conv/direct_conv_registry.hpp — what the registrations of the dense convolutions
// built on direct_conv.hpp share: the mapping from a case's named parameters to a ConvSpec, the
// f64 reference convolution (the oracle), inputs, tolerances, bench arithmetic, and one function
// that assembles a whole registry entry. Each kernel's .cpp then only names its form, its test
// cases and its bench cases.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "direct_conv.hpp"
#include "ingot/harness/registry.hpp"

namespace ingot::kernels {

// How a kernel's case parameters map onto a ConvSpec.
//   Dense:     "C" input channels, "O" output channels, groups = 1
//   Grouped:   "C", "O", "groups"
//   Depthwise: "C" only (O = groups = C)
// Spatial axes (outermost first) are named d, h, w (rank 3) or h, w (rank 2) or l (rank 1):
// sizes "D" "H" "W" / "L", kernel "kd" "kh" "kw" / "k", and "stride_<a>", "pad_<a>", "dil_<a>".
// "bias" (0/1) is a specialisation constant, "B" the run-time batch.
enum class ConvChannels : std::uint8_t { Dense, Grouped, Depthwise };
struct ConvForm {
  std::string name;  // the registered kernel's name
  std::size_t rank = 2;
  ConvLayout layout = ConvLayout::ChannelsFirst;
  ConvChannels channels = ConvChannels::Dense;
};

// One case, written with designated initialisers. Empty stride and dil mean 1 on every axis,
// empty pad means 0; O = 0 means O = C. Per-axis vectors list the axes outermost first.
struct ConvCase {
  std::int64_t B = 1;
  std::int64_t C = 1;
  std::int64_t O = 0;
  std::int64_t groups = 1;
  std::vector<std::int64_t> size{};
  std::vector<std::int64_t> k{};
  std::vector<std::int64_t> stride{};
  std::vector<std::int64_t> pad{};
  std::vector<std::int64_t> dil{};
  bool bias = false;
};

[[nodiscard]] std::vector<std::string> conv_spec_params(const ConvForm& f);
[[nodiscard]] harness::Params conv_params(const ConvForm& f, const ConvCase& c);
// conv_params plus spec parameters (tilings, kernel choices): extra overrides.
[[nodiscard]] harness::Params conv_params(const ConvForm& f, const ConvCase& c,
                                          const std::vector<std::pair<std::string, std::int64_t>>& extra);
// The ConvSpec of a case; validated (std::invalid_argument names the problem).
[[nodiscard]] ConvSpec conv_spec(const ConvForm& f, const harness::Params& p);

// Direct convolution in f64 of `batch` batches: x in s.layout, w [O, C/groups, K...], bias [O]
// or null; returns y in s.layout. Independent of the kernel's index arithmetic.
[[nodiscard]] std::vector<double> conv_reference(const ConvSpec& s, std::int64_t batch, const std::vector<double>& x,
                                                 const std::vector<double>& w, const std::vector<double>* bias);

// A complete registry entry for a direct_conv<T>-based kernel of the given form: dtypes f32,
// f16, bf16; build (refusing specs and batches that overflow u32 indexing), grid_1d(outputs,
// 256), inputs in [-1, 1], the f64 oracle, dot_tolerance(reduction length + 1), bytes (input
// read once + weights + bias + output written once) and flops (2 * MACs).
[[nodiscard]] harness::KernelSpec direct_conv_kernel(const ConvForm& f, std::string description,
                                                     const std::vector<std::pair<std::string, ConvCase>>& tests,
                                                     const std::vector<std::pair<std::string, ConvCase>>& bench);

// The tiled kernels unroll per input row and column of a window's span, so their trace would grow with a dilation's
// value; windows spanning more than kMaxTiledSpan rows or columns run the direct kernel, whose trace grows with the
// taps alone.
inline constexpr std::uint64_t kMaxTiledSpan = 1024;
[[nodiscard]] bool wide_window(const ConvSpec& s);
// Wraps a tiled kernel's build and geometry (one decision for both): a wide window runs direct_conv, and a tuning
// option (s.options: declare them first) named with one is refused with the reason.
void route_wide_windows(harness::KernelSpec& s, const ConvForm& f);

}  // namespace ingot::kernels
