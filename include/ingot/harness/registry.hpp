// ingot/harness/registry.hpp — the kernel library's registry: what each kernel is, the dtypes
// and variants it comes in, its test and bench cases, input generators, CPU oracle and
// tolerances.
//
// The library's own registry is builtin_registry() (ingot/library.hpp, the ingot_library target); these types are
// what every kernel registers and what the harness and the bench run over.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/dtype.hpp"
#include "ingot/ir.hpp"
#include "ingot/runtime/launch.hpp"

namespace ingot::harness {

// Named integer parameters of one case: shapes, specialisation constants, run-time scalars.
using Params = std::map<std::string, std::int64_t>;
[[nodiscard]] std::string format_params(const Params& p);  // "B=2 C=8 K=3"
// The value of a parameter; throws std::invalid_argument naming the missing key.
[[nodiscard]] std::int64_t param(const Params& p, const std::string& key);

// |got - want| <= abs + rel * |want|; NaN or inf on one side only always fails.
struct Tolerance {
  double abs = 0;
  double rel = 0;
};

struct TestCase {
  std::string name;
  Params params;
};

struct BenchCase {
  std::string name;
  Params params;
};

// Host data of one case, by parameter name: every In/InOut buffer's values (already rounded to
// the buffer's dtype) and every scalar's value.
struct HostData {
  std::map<std::string, std::vector<double>> buffers;
  std::map<std::string, double> scalars;
};
// The value of scalar / the data of buffer `name`; throws std::invalid_argument saying that
// kernel's input generator gives none (a registry bug, reported instead of map::at).
[[nodiscard]] double scalar_value(const HostData& d, const std::string& name, const std::string& kernel);
[[nodiscard]] const std::vector<double>& buffer_values(const HostData& d, const std::string& name,
                                                       const std::string& kernel);

// A tuning option: a specialisation parameter that chooses how the operation runs (tiling, which kernel, launch
// bounds), never what it computes. Each kernel declares its options once, as data (KernelSpec::add_option): the values
// accepted, and one line on what the option chooses and where it applies. A value outside [lo, hi] is refused the same
// way for every kernel, before anything is traced (Registry::add wraps build and geometry with check_options); a value
// in range that the case's kernel cannot take (another dtype's or another kernel's option) is refused by the kernel,
// with the reason.
struct OptionSpec {
  std::string name;
  std::int64_t lo = 0;
  std::int64_t hi = 1;
  std::string meaning;  // what it chooses and where it applies; the default the kernel takes without it
};

// Throws std::invalid_argument naming the kernel, the option, its range and meaning for the first option of p whose
// value is outside its range.
void check_options(const std::string& kernel, const std::vector<OptionSpec>& options, const Params& p);

// The value of tuning option `key` in case p, or dflt where p does not name it: how a kernel reads its options, so that
// each option's range lives in its table alone. std::invalid_argument (the kernel, the option, its range and meaning)
// for a value outside the range; std::logic_error where `options` does not declare key (a kernel reading an option it
// did not declare). Options are non-negative and fit 32 bits.
[[nodiscard]] std::uint32_t option_value(const std::vector<OptionSpec>& options, const Params& p, std::string_view key,
                                         std::uint32_t dflt, const std::string& kernel);

struct KernelSpec {
  std::string name;         // the operation, e.g. "depthwise_conv1d"
  std::string family;       // e.g. "conv"
  std::string description;  // one line
  std::vector<DType> dtypes;
  std::vector<std::string> spec_params;     // case parameters that are specialisation constants
  std::vector<std::string> runtime_params;  // case parameters passed as run-time scalars
  // The tuning options (OptionSpec), each also one of spec_params: each has a default the kernel picks per shape. A
  // case that names none runs the library's default variant (default_case).
  std::vector<OptionSpec> options;
  std::vector<TestCase> tests;   // at least one with a partial last work-group
  std::vector<BenchCase> bench;  // production-sized

  // Traces the kernel for a dtype and the case's specialisation values.
  std::function<ir::Kernel(DType, const Params&)> build;
  // The launch of a case: may depend on the dtype (tilings chosen per element size).
  std::function<runtime::LaunchGeometry(DType, const Params&)> geometry;
  // Seeded random inputs in a stated range (never all zeros).
  std::function<HostData(DType, const Params&, std::uint64_t seed)> inputs;
  // Expected values of every Out/InOut buffer, computed in f64 from the (rounded) inputs.
  std::function<std::map<std::string, std::vector<double>>(DType, const Params&, const HostData&)> oracle;
  std::function<Tolerance(DType, const Params&)> tolerance;
  // Bench: the fewest bytes the kernel must move (inputs read once, outputs written once) and
  // its floating-point operations.
  std::function<double(DType, const Params&)> bytes;
  std::function<double(const Params&)> flops;
  // The case parameter each run-time scalar of the traced kernel carries (e.g. "batch" -> "B"): a caller launching
  // with its own buffers (ingot run) takes the scalars from the parameters without generating any input.
  std::map<std::string, std::string> scalar_params;
  // The unit of a real-valued run-time scalar whose case parameter (an integer) counts it: eps carried by eps_nano
  // with unit 1e-9. A scalar not listed has unit 1 (the parameter's value itself).
  std::map<std::string, double> scalar_units;
  // Optional: the logical shape of buffers (e.g. x -> {B, C, L}) for a case, so that a caller's arrays can be checked
  // against it (a transposed array holds the right count of elements but the wrong shape).
  std::function<std::map<std::string, std::vector<std::uint64_t>>(DType, const Params&)> shapes;

  // Names of the values of enumerated specialisation parameters (e.g. "fmt" -> {"int8_g32_f32",
  // "mxfp4", ...}): variant names show a listed value's name instead of the key and number.
  std::map<std::string, std::vector<std::string>> value_names;

  // The name of the compiled variant for (dtype, case): "<name>_<dtype>_<spec values>", each
  // spec value as "<key><number>" or, where value_names lists it, as its name.
  [[nodiscard]] std::string variant_name(DType t, const Params& p) const;
  // Whether a --filter selects this kernel: empty, or any comma-separated part is contained in
  // the name or the family ("depthwise,causal"; spaces around a part are ignored); a part ending in '$' matches one
  // name exactly ("depthwise_conv2d$").
  [[nodiscard]] bool matches(const std::string& filter) const;
  // A case's parameters with some replaced or added: each key must be one of the case's or an optional
  // specialisation parameter (spec_params) the case leaves at its default; std::invalid_argument naming the kernel's
  // parameters otherwise.
  [[nodiscard]] Params with_overrides(const Params& p, const Params& overrides) const;
  // Declares a tuning option: appends it to options, and its name to spec_params where it is not there yet.
  void add_option(OptionSpec option);
  // The options' names, in declaration order.
  [[nodiscard]] std::vector<std::string> option_names() const;
  // The option named `key`, or nullptr.
  [[nodiscard]] const OptionSpec* find_option(std::string_view key) const;
  // harness::check_options over this kernel's options.
  void check_options(const Params& p) const;
  // Whether a case names no tuning option (options): the library's default for its shape.
  [[nodiscard]] bool default_case(const Params& p) const;
  // The first test case of the default variant (Registry::add requires one); std::logic_error if there is none.
  [[nodiscard]] const TestCase& default_test() const;
  // Every parameter name the kernel knows: its specialisation and run-time parameters and every key of its cases.
  [[nodiscard]] std::vector<std::string> known_params() const;
  // The value of run-time scalar `name` for a case, from scalar_params (times its scalar_units); std::invalid_argument
  // when the registry does not say which parameter carries it (a registry defect) or the case lacks that parameter.
  [[nodiscard]] double scalar_value(const std::string& name, const Params& p) const;
};

class Registry {
 public:
  // Throws std::invalid_argument if the name is already registered or the spec is incomplete.
  void add(KernelSpec spec);
  [[nodiscard]] const std::vector<KernelSpec>& kernels() const { return kernels_; }
  [[nodiscard]] const KernelSpec* find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::vector<KernelSpec> kernels_;
};

// Reads a manifest (one kernel name per line, '#' comments) and compares it with a registry;
// returns the differences as human-readable lines (empty = consistent).
[[nodiscard]] std::vector<std::string> check_manifest(const Registry& r, const std::string& manifest_text);

}  // namespace ingot::harness
