// The kernel registry and the manifest check.
#include "ingot/harness/registry.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ingot::harness {

std::string format_params(const Params& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s;
}

std::int64_t param(const Params& p, const std::string& key) {
  auto it = p.find(key);
  if (it == p.end())
    throw std::invalid_argument("case parameter '" + key + "' is missing (have: " + format_params(p) + ")");
  return it->second;
}

double scalar_value(const HostData& d, const std::string& name, const std::string& kernel) {
  auto it = d.scalars.find(name);
  if (it == d.scalars.end()) {
    throw std::invalid_argument("kernel '" + kernel + "': its input generator gives no value for scalar '" + name +
                                "'");
  }
  return it->second;
}

const std::vector<double>& buffer_values(const HostData& d, const std::string& name, const std::string& kernel) {
  auto it = d.buffers.find(name);
  if (it == d.buffers.end()) {
    throw std::invalid_argument("kernel '" + kernel + "': its input generator gives no data for buffer '" + name + "'");
  }
  return it->second;
}

std::string KernelSpec::variant_name(DType t, const Params& p) const {
  std::string s = name + "_" + std::string(dtype_name(t));
  for (const auto& key : spec_params) {
    auto it = p.find(key);
    if (it == p.end()) continue;
    auto names = value_names.find(key);
    if (names != value_names.end() && it->second >= 0 &&
        static_cast<std::uint64_t>(it->second) < names->second.size()) {
      s += "_" + names->second[static_cast<std::size_t>(it->second)];
    } else {
      s += "_" + key + std::to_string(it->second);
    }
  }
  return s;
}

namespace {
// "kernel 'K' has no parameter 'KEY' (parameters: the case's; optional: the spec parameters it leaves out)".
std::invalid_argument no_such_parameter(const KernelSpec& k, const Params& p, const std::string& key) {
  std::string msg = "kernel '" + k.name + "' has no parameter '" + key + "' (parameters: " + format_params(p);
  bool first = true;
  for (const auto& sp : k.spec_params) {
    if (p.count(sp)) continue;
    msg += first ? "; optional: " : ", ";
    msg += sp;
    first = false;
  }
  msg += ")";
  return std::invalid_argument(msg);
}

// A registered case sets a key its kernel declares in neither spec_params nor runtime_params.
std::invalid_argument undeclared_case_key(const KernelSpec& k, const char* kind, const std::string& case_name,
                                          const std::string& key) {
  std::string msg = "kernel '" + k.name + "' " + kind + " case '" + case_name + "' sets '" + key +
                    "', which the kernel does not declare (parameters:";
  for (const auto& d : k.spec_params) msg += " " + d;
  msg += " |";
  for (const auto& d : k.runtime_params) msg += " " + d;
  msg += "): declare it in spec_params or runtime_params, or fix the case";
  return std::invalid_argument(msg);
}
}  // namespace

Params KernelSpec::with_overrides(const Params& p, const Params& overrides) const {
  Params out = p;
  for (const auto& [key, v] : overrides) {
    const bool optional = std::find(spec_params.begin(), spec_params.end(), key) != spec_params.end();
    if (!p.count(key) && !optional) throw no_such_parameter(*this, p, key);
    out[key] = v;
  }
  return out;
}

bool KernelSpec::default_case(const Params& p) const {
  for (const auto& o : options) {
    if (p.count(o.name)) return false;
  }
  return true;
}

void KernelSpec::add_option(OptionSpec option) {
  if (std::find(spec_params.begin(), spec_params.end(), option.name) == spec_params.end()) {
    spec_params.push_back(option.name);
  }
  options.push_back(std::move(option));
}

std::vector<std::string> KernelSpec::option_names() const {
  std::vector<std::string> out;
  for (const auto& o : options) out.push_back(o.name);
  return out;
}

const OptionSpec* KernelSpec::find_option(std::string_view key) const {
  for (const auto& o : options) {
    if (o.name == key) return &o;
  }
  return nullptr;
}

void check_options(const std::string& kernel, const std::vector<OptionSpec>& options, const Params& p) {
  for (const auto& o : options) {
    const auto it = p.find(o.name);
    if (it == p.end() || (it->second >= o.lo && it->second <= o.hi)) continue;
    throw std::invalid_argument(kernel + ": option " + o.name + " = " + std::to_string(it->second) + " must be in [" +
                                std::to_string(o.lo) + ", " + std::to_string(o.hi) + "] (" + o.name + ": " + o.meaning +
                                ")");
  }
}

void KernelSpec::check_options(const Params& p) const { harness::check_options(name, options, p); }

std::uint32_t option_value(const std::vector<OptionSpec>& options, const Params& p, std::string_view key,
                           std::uint32_t dflt, const std::string& kernel) {
  const auto o = std::find_if(options.begin(), options.end(), [&](const OptionSpec& s) { return s.name == key; });
  if (o == options.end()) {
    throw std::logic_error(kernel + " reads option '" + std::string(key) +
                           "', which its option table does not declare");
  }
  if (o->lo < 0 || o->hi > 0xffffffffll) {
    throw std::logic_error(kernel + ": option '" + o->name + "' has a range past 32 bits");
  }
  const auto it = p.find(o->name);
  if (it == p.end()) return dflt;
  check_options(kernel, {*o}, p);
  return static_cast<std::uint32_t>(it->second);
}

const TestCase& KernelSpec::default_test() const {
  for (const auto& t : tests) {
    if (default_case(t.params)) return t;
  }
  throw std::logic_error("kernel '" + name + "' has no test case of its default variant");
}

std::vector<std::string> KernelSpec::known_params() const {
  std::vector<std::string> out = spec_params;
  for (const auto& r : runtime_params) {
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

double KernelSpec::scalar_value(const std::string& scalar, const Params& p) const {
  const auto it = scalar_params.find(scalar);
  if (it == scalar_params.end()) {
    throw std::invalid_argument("kernel '" + name + "' does not say which parameter carries its run-time scalar '" +
                                scalar + "' (a registry defect: set KernelSpec::scalar_params)");
  }
  const auto unit = scalar_units.find(scalar);
  return static_cast<double>(param(p, it->second)) * (unit == scalar_units.end() ? 1.0 : unit->second);
}

bool KernelSpec::matches(const std::string& filter) const {
  if (filter.empty()) return true;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = filter.find(',', start);
    std::string part = filter.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    part.erase(0, part.find_first_not_of(' '));  // "conv, depthwise": spaces around a part do not count
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.size() > 1 && part.back() == '$') {
      if (name == part.substr(0, part.size() - 1)) return true;  // "name$": exactly this kernel
    } else if (!part.empty() && (name.find(part) != std::string::npos || family.find(part) != std::string::npos)) {
      return true;
    }
    if (comma == std::string::npos) return false;
    start = comma + 1;
  }
}

void Registry::add(KernelSpec spec) {
  if (spec.name.empty()) throw std::invalid_argument("a kernel spec needs a name");
  if (find(spec.name)) throw std::invalid_argument("kernel '" + spec.name + "' is registered twice");
  const char* missing = !spec.build       ? "build"
                        : !spec.geometry  ? "geometry"
                        : !spec.inputs    ? "inputs"
                        : !spec.oracle    ? "oracle"
                        : !spec.tolerance ? "tolerance"
                                          : nullptr;
  if (missing) throw std::invalid_argument("kernel '" + spec.name + "' has no " + missing + " function");
  if (spec.dtypes.empty()) throw std::invalid_argument("kernel '" + spec.name + "' lists no dtypes");
  if (spec.tests.empty()) throw std::invalid_argument("kernel '" + spec.name + "' has no test cases");
  // Every case parameter is declared (a specialisation constant or a run-time scalar): an undeclared key would be
  // ignored by the build (a typo running the default silently) and left out of the variant's name.
  const auto declared = [&](const std::string& key) {
    return std::find(spec.spec_params.begin(), spec.spec_params.end(), key) != spec.spec_params.end() ||
           std::find(spec.runtime_params.begin(), spec.runtime_params.end(), key) != spec.runtime_params.end();
  };
  const auto check_case = [&](const char* kind, const std::string& case_name, const Params& p) {
    for (const auto& [key, v] : p) {
      if (!declared(key)) throw undeclared_case_key(spec, kind, case_name, key);
    }
  };
  std::set<std::string> option_seen;
  for (const auto& o : spec.options) {
    const std::string what = "kernel '" + spec.name + "': tuning option '" + o.name + "' ";
    if (std::find(spec.spec_params.begin(), spec.spec_params.end(), o.name) == spec.spec_params.end()) {
      throw std::invalid_argument(what + "is not one of its specialisation parameters");
    }
    if (!option_seen.insert(o.name).second) throw std::invalid_argument(what + "is declared twice");
    if (o.lo > o.hi) throw std::invalid_argument(what + "has an empty range");
    if (o.meaning.empty()) throw std::invalid_argument(what + "does not say what it chooses");
  }
  // The library's default must be tested: at least one case names no tuning option.
  if (std::none_of(spec.tests.begin(), spec.tests.end(),
                   [&](const TestCase& t) { return spec.default_case(t.params); }))
    throw std::invalid_argument("kernel '" + spec.name +
                                "' has no test case of its default variant (one naming no "
                                "tuning option)");
  for (const auto& t : spec.tests) check_case("test", t.name, t.params);
  for (const auto& b : spec.bench) check_case("bench", b.name, b.params);
  for (const auto& t : spec.tests) spec.check_options(t.params);
  for (const auto& b : spec.bench) spec.check_options(b.params);
  // Every build and launch geometry refuses out-of-range options first, the same way for every kernel.
  if (!spec.options.empty()) {
    spec.build = [name = spec.name, options = spec.options, build = std::move(spec.build)](DType t, const Params& p) {
      check_options(name, options, p);
      return build(t, p);
    };
    spec.geometry = [name = spec.name, options = spec.options, geometry = std::move(spec.geometry)](DType t,
                                                                                                    const Params& p) {
      check_options(name, options, p);
      return geometry(t, p);
    };
  }
  kernels_.push_back(std::move(spec));
}

const KernelSpec* Registry::find(std::string_view name) const {
  for (const auto& k : kernels_) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& k : kernels_) out.push_back(k.name);
  return out;
}

std::vector<std::string> check_manifest(const Registry& r, const std::string& manifest_text) {
  std::vector<std::string> problems;
  std::multiset<std::string> listed;
  std::istringstream in(manifest_text);
  for (std::string line; std::getline(in, line);) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) listed.insert(line);
  }
  std::multiset<std::string> registered;
  for (const auto& n : r.names()) registered.insert(n);
  for (const auto& n : std::set<std::string>(registered.begin(), registered.end())) {
    if (registered.count(n) > 1)
      problems.push_back("'" + n + "' is registered " + std::to_string(registered.count(n)) + " times");
    if (!listed.count(n)) problems.push_back("'" + n + "' is registered but not in the manifest");
  }
  for (const auto& n : std::set<std::string>(listed.begin(), listed.end())) {
    if (listed.count(n) > 1)
      problems.push_back("'" + n + "' is listed " + std::to_string(listed.count(n)) + " times in the manifest");
    if (!registered.count(n))
      problems.push_back("'" + n + "' is in the manifest but not registered (dropped by the build?)");
  }
  if (registered.empty()) problems.emplace_back("the registry is empty");
  return problems;
}

}  // namespace ingot::harness
