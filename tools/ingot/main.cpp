// ingot — the command-line tool: list, test, build, inspect, device, run, prove.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "ingot/codegen/printer.hpp"
#include "ingot/harness/backends.hpp"
#include "ingot/harness/bench.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/io/npy.hpp"
#include "ingot/ir_print.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/backend.hpp"
#include "ingot/runtime/cuda_compile.hpp"
#include "ingot/runtime/cuda_occupancy.hpp"
#include "ingot/runtime/spirv.hpp"
#include "ingot/scalar_eval.hpp"
#include "progress.hpp"
#include "prove.hpp"
#include "tools.hpp"

#ifndef INGOT_VERSION
#define INGOT_VERSION "0.0.0"
#endif

using namespace ingot;
using nlohmann::json;

namespace {

// A user-facing error: printed as "ingot: error: <what>", exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void print_ceilings(const harness::Ceilings& c);
std::string device_name(const std::string& backend);

const harness::KernelSpec& find_kernel(const harness::Registry& reg, const std::string& name) {
  if (const auto* k = reg.find(name)) return *k;
  std::string list;
  for (const auto& n : reg.names()) list += (list.empty() ? "" : ", ") + n;
  throw UsageError("unknown kernel '" + name + "' (known: " + list + "; see `ingot list`)");
}

DType parse_dtype_or_throw(const std::string& s, const harness::KernelSpec* k) {
  auto t = parse_dtype(s);
  if (!t) throw UsageError("unknown dtype '" + s + "' (use f32, f16, bf16, i32, u32, i64, bool, u8, i8, u16)");
  if (k) {
    bool ok = false;
    for (auto d : k->dtypes) ok = ok || d == *t;
    if (!ok) {
      throw UsageError("kernel '" + k->name + "' has no " + s + " variant (dtypes: " + tools::dtype_list(k->dtypes) +
                       ")");
    }
  }
  return *t;
}

// "bad --set 'ITEM': WHY" (or --variant).
UsageError bad_assignment(const std::string& option, const std::string& item, const std::string& why) {
  std::string msg = "bad " + option;
  msg += " '" + item + "': " + why;
  return UsageError(msg);
}

// NAME=VALUE items (--set, --variant) as parameters; `option` names the flag in the error.
harness::Params parse_assignments(const std::vector<std::string>& items, const std::string& option) {
  harness::Params p;
  for (const auto& s : items) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw bad_assignment(option, s, "write NAME=VALUE, e.g. " + option + " B=4");
    const std::string val = s.substr(eq + 1);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(val, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != val.size() || val.empty()) throw bad_assignment(option, s, "the value must be an integer");
    p[s.substr(0, eq)] = v;
  }
  return p;
}

// The case parameters: a named test case (default: the first), overridden by --set NAME=VALUE.
harness::Params case_params(const harness::KernelSpec& k, const std::string& case_name,
                            const std::vector<std::string>& sets) {
  const harness::Params* found = &k.tests.front().params;
  if (!case_name.empty()) {
    found = nullptr;
    for (const auto& t : k.tests) {
      if (!found && t.name == case_name) found = &t.params;
    }
    for (const auto& t : k.bench) {
      if (!found && t.name == case_name) found = &t.params;
    }
    if (!found) {
      std::string list;
      for (const auto& t : k.tests) list += (list.empty() ? "" : ", ") + t.name;
      for (const auto& t : k.bench) list += ", " + t.name;
      throw UsageError("kernel '" + k.name + "' has no case '" + case_name + "' (cases: " + list + ")");
    }
  }
  try {
    return k.with_overrides(*found, parse_assignments(sets, "--set"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

ir::Kernel build_kernel(const harness::KernelSpec& k, DType t, const harness::Params& p) {
  try {
    return passes::optimize(k.build(t, p));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("cannot build ") + k.name + " with " + harness::format_params(p) + ": " + e.what());
  }
}

// ------------------------------------------------------------------ list
int cmd_list(const harness::Registry& reg, bool as_json, bool options, const std::string& filter) {
  if (as_json) {
    json j = json::array();
    for (const auto& k : reg.kernels()) {
      if (!k.matches(filter)) continue;
      json opts = json::array();
      for (const auto& o : k.options)
        opts.push_back({{"name", o.name}, {"lo", o.lo}, {"hi", o.hi}, {"meaning", o.meaning}});
      json dts = json::array();
      for (auto t : k.dtypes) dts.push_back(std::string(dtype_name(t)));
      j.push_back({{"name", k.name},
                   {"family", k.family},
                   {"description", k.description},
                   {"dtypes", dts},
                   {"spec_params", k.spec_params},
                   {"options", opts},
                   {"runtime_params", k.runtime_params},
                   {"tests", k.tests.size()},
                   {"bench", k.bench.size()},
                   {"variants", tools::variants(k).size()}});
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (options) {
    for (const auto& k : reg.kernels()) {
      if (!k.matches(filter)) continue;
      std::printf("%s: %s\n", k.name.c_str(), k.options.empty() ? "no tuning options" : "tuning options");
      for (const auto& o : k.options) {
        const std::string range = "[" + std::to_string(o.lo) + ", " + std::to_string(o.hi) + "]";
        std::printf("  %-8s %-12s %s\n", o.name.c_str(), range.c_str(), o.meaning.c_str());
      }
    }
    return 0;
  }
  std::printf("%-28s %-7s %-14s %-9s %-6s %s\n", "kernel", "family", "dtypes", "variants", "cases",
              "parameters (shape | run-time | tuning options)");
  for (const auto& k : reg.kernels()) {
    if (!k.matches(filter)) continue;
    std::string spec;
    for (const auto& s : k.spec_params) {
      if (!k.find_option(s)) spec += (spec.empty() ? "" : " ") + s;
    }
    std::string rt;
    for (const auto& s : k.runtime_params) rt += (rt.empty() ? "" : " ") + s;
    std::string opts;
    for (const auto& o : k.options) opts += (opts.empty() ? "" : " ") + o.name;
    std::printf("%-28s %-7s %-14s %-9zu %-6zu %s | %s | %s\n", k.name.c_str(), k.family.c_str(),
                tools::dtype_list(k.dtypes).c_str(), tools::variants(k).size(), k.tests.size(), spec.c_str(),
                rt.c_str(), opts.empty() ? "-" : opts.c_str());
  }
  std::printf("%zu kernels\n", reg.kernels().size());
  return 0;
}

// ------------------------------------------------------------------ test
// A --filter that selects nothing is a usage error (a typo would otherwise run nothing, silently).
void require_filter_matches(const harness::Registry& reg, const std::string& filter) {
  if (filter.empty()) return;
  for (const auto& k : reg.kernels()) {
    if (k.matches(filter)) return;
  }
  throw UsageError("--filter '" + filter + "' matches no kernel (see `ingot list`)");
}

int cmd_test(const harness::Registry& reg, const std::string& backend_spec, const std::string& filter,
             const std::string& dtype, bool fail_fast, bool long_compiles, bool all_variants,
             const std::string& json_path, std::uint64_t seed) {
  if (!json_path.empty()) tools::require_writable_file(json_path, "--json");
  harness::HarnessOptions opt;
  opt.filter = filter;
  opt.fail_fast = fail_fast;
  opt.all_variants = all_variants;
  opt.seed = seed;
  if (!dtype.empty()) opt.dtype = parse_dtype_or_throw(dtype, nullptr);
  std::vector<harness::BackendSlot> slots;
  harness::OpenBackendOptions open;
  // On a CPU OpenCL device (PoCL) programs under 100 kB build without optimisation (~4x faster; the unit tests do the
  // same); --long builds every program optimized, the large ones included. GPUs always build optimized.
  if (long_compiles) {
    open.cpu_opencl_source_limit = 0;
  } else {
    open.cpu_opencl_unoptimized_below = 100'000;
  }
  for (const auto& name : harness::parse_backend_list(backend_spec)) slots.push_back(harness::open_backend(name, open));
  for (const auto& s : slots) {
    std::printf(
        "backend %-7s %s\n", s.name.c_str(),
        s.backend ? "present"
                  : (s.compile_only ? ("compile-only: " + s.why_absent).c_str() : ("absent: " + s.why_absent).c_str()));
  }
  require_filter_matches(reg, filter);
  const bool tty = ::isatty(::fileno(stderr)) != 0;
  opt.on_progress = tools::ProgressDisplay(stderr, [](std::size_t done, std::size_t total, const std::string&) {
    return total > 0 && (done % 50 == 0 || done == total)
               ? "progress: " + std::to_string(done) + "/" + std::to_string(total)
               : std::string();
  });
  const auto rep = harness::run_harness(reg, slots, opt);
  for (const auto& r : rep.results) {
    const char* tag = r.status == harness::Status::Pass ? "PASS" : r.status == harness::Status::Fail ? "FAIL" : "SKIP";
    if (r.status == harness::Status::Fail || !tty) {
      std::printf("%s %s %s %s @%s%s%s\n", tag, r.kernel.c_str(), std::string(dtype_name(r.dtype)).c_str(),
                  r.case_name.c_str(), r.backend.c_str(), r.status == harness::Status::Fail ? ": " : "",
                  r.status == harness::Status::Fail ? (r.message + " [" + r.params + "]").c_str() : "");
    }
  }
  std::printf("\n");
  for (const auto& [b, c] : rep.per_backend)
    std::printf("%-7s %zu passed, %zu failed, %zu skipped\n", b.c_str(), c[0], c[1], c[2]);
  for (const auto& [why, n] : rep.skip_reasons) std::printf("skipped %zu: %s\n", n, why.c_str());
  if (!json_path.empty()) {
    json j;
    j["passed"] = rep.passed;
    j["failed"] = rep.failed;
    j["skipped"] = rep.skipped;
    j["skip_reasons"] = rep.skip_reasons;
    j["results"] = json::array();
    for (const auto& r : rep.results) {
      j["results"].push_back({{"kernel", r.kernel},
                              {"dtype", std::string(dtype_name(r.dtype))},
                              {"case", r.case_name},
                              {"params", r.params},
                              {"backend", r.backend},
                              {"status", r.status == harness::Status::Pass   ? "pass"
                                         : r.status == harness::Status::Fail ? "fail"
                                                                             : "skip"},
                              {"message", r.message},
                              {"seconds", r.seconds}});
    }
    tools::write_file(json_path, j.dump(2) + "\n");
  }
  if (rep.passed == 0) std::printf("nothing ran: no case passed on any backend\n");
  std::printf("%zu passed, %zu failed, %zu skipped\n", rep.passed, rep.failed, rep.skipped);
  return rep.ok() ? 0 : 1;
}

// ------------------------------------------------------------------ build
int cmd_build(const harness::Registry& reg, const std::string& targets_spec, const std::string& out_dir,
              const std::string& filter, bool first_variant_only, bool all_variants, bool sources_only) {
  require_filter_matches(reg, filter);
  std::vector<codegen::Target> targets;
  std::string item;
  auto add = [&](const std::string& t) {
    if (t == "all") {
      targets = {codegen::Target::CUDA, codegen::Target::HIP, codegen::Target::OpenCL, codegen::Target::Metal,
                 codegen::Target::GLSL};
    } else if (t == "cuda") {
      targets.push_back(codegen::Target::CUDA);
    } else if (t == "hip") {
      targets.push_back(codegen::Target::HIP);
    } else if (t == "opencl") {
      targets.push_back(codegen::Target::OpenCL);
    } else if (t == "msl" || t == "metal") {
      targets.push_back(codegen::Target::Metal);
    } else if (t == "glsl") {
      targets.push_back(codegen::Target::GLSL);
    } else if (!t.empty()) {
      throw UsageError("unknown build target '" + t + "' (use cuda, hip, opencl, msl, glsl or all)");
    }
  };
  for (char c : targets_spec + ",") {
    if (c == ',') {
      add(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (targets.empty()) throw UsageError("--backend names no target (use cuda, hip, opencl, msl, glsl or all)");
  tools::require_writable_dir(out_dir, "--out");
  json manifest = json::array();
  std::size_t files = 0;
  tools::CudaArtifacts cuda_tool;
  std::unique_ptr<runtime::SpirvCompiler> spirv;
  std::string spirv_note;
  for (const auto& k : reg.kernels()) {
    if (!k.matches(filter)) continue;
    for (DType t : k.dtypes) {
      auto vs = tools::variants(k, all_variants);
      if (first_variant_only && vs.size() > 1) vs.resize(1);
      for (const auto& p : vs) {
        const std::string variant = k.variant_name(t, p);
        const ir::Kernel kern = build_kernel(k, t, p);
        for (auto target : targets) {
          const auto src = codegen::emit(kern, target);
          const std::string file = variant + std::string(codegen::target_file_extension(target));
          tools::write_file((std::filesystem::path(out_dir) / file).string(), src.source);
          ++files;
          json entry = {{"kernel", k.name},
                        {"dtype", std::string(dtype_name(t))},
                        {"variant", variant},
                        {"params", harness::format_params(p)},
                        {"target", std::string(codegen::target_name(target))},
                        {"entry", src.entry},
                        {"file", file}};
          if (target == codegen::Target::CUDA && !sources_only) {
            entry["binaries"] = cuda_tool.write(kern, std::filesystem::path(out_dir), variant, &files);
          }
          if (target == codegen::Target::GLSL && !sources_only) {
            // SPIR-V beside the GLSL (shaderc; a build without it says so once)
            if (!spirv && spirv_note.empty()) {
              try {
                spirv = std::make_unique<runtime::SpirvCompiler>(runtime::SpirvCompiler::load());
              } catch (const runtime::BackendUnavailable& e) {
                spirv_note = std::string("no .spv written: ") + e.what();
              }
            }
            if (spirv) {
              const auto words = spirv->compile(src.source, variant);
              const std::string spv = variant + ".spv";
              tools::write_file((std::filesystem::path(out_dir) / spv).string(),
                                std::string(reinterpret_cast<const char*>(words.data()), words.size() * 4));
              entry["binaries"] = json::array({spv});
              ++files;
            }
          }
          manifest.push_back(entry);
        }
      }
    }
  }
  tools::write_file((std::filesystem::path(out_dir) / "manifest.json").string(), manifest.dump(2) + "\n");
  std::printf("wrote %zu files for %zu kernel variants to %s (manifest.json lists them)\n", files, manifest.size(),
              out_dir.c_str());
  if (!cuda_tool.note().empty()) std::printf("%s\n", cuda_tool.note().c_str());
  if (!spirv_note.empty()) std::printf("%s\n", spirv_note.c_str());
  return files > 0 ? 0 : 1;
}

// ------------------------------------------------------------------ inspect
// --stage resources: the CUDA print compiled by NVRTC for `arch` as the CUDA backend compiles it (its options, plus
// ptxas's verbose report): registers, spills, shared memory per kernel, without a GPU; then, where the architecture has
// an SM model (cuda_occupancy.hpp), the work-groups of the case's launch `g` one SM holds and the launch's waves.
int print_cuda_resources(const ir::Kernel& k, const std::string& arch,
                         const std::optional<runtime::LaunchGeometry>& g) {
  if (arch.rfind("sm_", 0) != 0) {
    throw UsageError("--stage resources needs a real architecture, sm_XY (e.g. sm_90), not '" + arch +
                     "': NVRTC makes only PTX for compute_XY, and ptxas reports the resources of SASS");
  }
  runtime::CudaCompileOptions o;
  o.arch = arch;
  o.extra_options = {"--ptxas-options=-v"};
  runtime::CudaCompileResult r;
  try {
    r = runtime::CudaCompiler::load().compile(k, o);
  } catch (const runtime::BackendUnavailable& e) {
    throw UsageError(std::string("--stage resources compiles with NVRTC: ") + e.what());
  }
  std::string opts;
  for (const auto& x : r.options) opts += " " + x;
  std::printf("NVRTC %s, kernel %s, options:%s\n%s", r.nvrtc_version.c_str(), r.entry.c_str(), opts.c_str(),
              r.log.c_str());
  if (!r.log.empty() && r.log.back() != '\n') std::printf("\n");
  const auto limits = runtime::cuda_sm_limits(arch);
  const auto usage = runtime::parse_ptxas_usage(r.log);
  if (!g || !limits || !usage) {
    const std::string why = !g        ? "the case's launch geometry is unknown"
                            : !limits ? "no SM model for " + arch
                                      : "no register count in ptxas's report";
    std::printf("occupancy: not modelled (%s)\n", why.c_str());
    return 0;
  }
  const std::uint64_t shared = usage->shared_bytes + codegen::emit(k, codegen::Target::CUDA).dynamic_shared_bytes;
  const std::uint64_t threads = g->threads_per_group();
  const std::uint64_t groups = g->total_groups();
  const runtime::CudaOccupancy occ =
      runtime::cuda_occupancy(*limits, static_cast<int>(threads), usage->registers, shared);
  std::printf(
      "occupancy (%s model, %s): %d work-groups of %llu threads per SM (limited by %s: %d registers, %llu "
      "bytes of shared memory)\n",
      arch.c_str(), limits->part.c_str(), occ.groups, static_cast<unsigned long long>(threads), occ.limiter.c_str(),
      usage->registers, static_cast<unsigned long long>(shared));
  if (occ.groups > 0) {
    std::printf("launch: %llu work-groups = %.3g waves on %d SMs\n", static_cast<unsigned long long>(groups),
                static_cast<double>(groups) / (static_cast<double>(occ.groups) * limits->units), limits->units);
  }
  return 0;
}

int cmd_inspect(const harness::Registry& reg, const std::string& name, const std::string& dtype,
                const std::string& case_name, const std::vector<std::string>& sets, const std::string& stage,
                const std::string& arch) {
  const auto& k = find_kernel(reg, name);
  const DType t = dtype.empty() ? k.dtypes.front() : parse_dtype_or_throw(dtype, &k);
  const auto p = case_params(k, case_name, sets);
  ir::Kernel traced;
  try {
    traced = k.build(t, p);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("cannot build ") + k.name + " with " + harness::format_params(p) + ": " + e.what());
  }
  passes::PipelineOptions opt;
  opt.record_ir = true;
  const auto res = passes::run_pipeline(traced, passes::default_passes(), opt);
  const std::map<std::string, codegen::Target> targets = {{"cuda", codegen::Target::CUDA},
                                                          {"hip", codegen::Target::HIP},
                                                          {"opencl", codegen::Target::OpenCL},
                                                          {"msl", codegen::Target::Metal},
                                                          {"glsl", codegen::Target::GLSL}};
  if (auto it = targets.find(stage); it != targets.end()) {
    std::cout << codegen::emit(res.kernel, it->second).source;
    return 0;
  }
  if (stage == "resources") {
    std::optional<runtime::LaunchGeometry> g;
    try {
      g = k.geometry(t, p);
    } catch (const std::exception&) {  // (a case without its sizes: the resources alone)
    }
    return print_cuda_resources(res.kernel, arch, g);
  }
  bool shown = false;
  for (const auto& rec : res.records) {
    const std::string label = rec.name == "input" ? "ir" : rec.name;
    if (stage == "all" || stage == label) {
      if (stage == "all") std::printf("=== %s (%.0f us)\n", label.c_str(), rec.micros);
      std::cout << rec.ir;
      shown = true;
    }
  }
  if (!shown) {
    throw UsageError("unknown --stage '" + stage +
                     "' (use ir, simplify, dce, all, cuda, hip, opencl, msl, glsl or resources)");
  }
  return 0;
}

// ------------------------------------------------------------------ device
int cmd_device(bool as_json, bool measure) {
  json j = json::array();
  if (measure) {
    for (const auto& name : harness::known_backends()) {
      if (name == "interp") continue;  // a checker, not a device: no ceilings
      auto slot = harness::open_backend(name);
      if (!slot.backend) {
        if (!as_json) std::printf("%s: not measured (%s)\n", name.c_str(), slot.why_absent.c_str());
        j.push_back({{"backend", name}, {"measured", false}, {"why_absent", slot.why_absent}});
        continue;
      }
      const auto c = harness::measure_ceilings(*slot.backend);
      if (!as_json) print_ceilings(c);
      j.push_back({{"backend", name},
                   {"device", device_name(name)},
                   {"copy_bytes_per_s", c.copy_bytes_per_s},
                   {"copy_method", c.copy_method},
                   {"f32_flops_per_s", c.f32_flops_per_s},
                   {"fma_method", c.fma_method}});
    }
    if (as_json) std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const auto& name : harness::known_backends()) {
    const auto r = harness::describe_backend(name);
    if (as_json) {
      json props = json::object();
      for (const auto& [key, v] : r.properties) props[key] = v;
      j.push_back(
          {{"backend", r.name}, {"available", r.available}, {"why_absent", r.why_absent}, {"properties", props}});
      continue;
    }
    std::printf("%s: %s\n", r.name.c_str(), r.available ? "available" : ("absent — " + r.why_absent).c_str());
    for (const auto& [key, v] : r.properties) std::printf("  %-22s %s\n", key.c_str(), v.c_str());
  }
  if (as_json) std::cout << j.dump(2) << "\n";
  return 0;
}

// ------------------------------------------------------------------ bench, snap, diff
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read '" + path + "'");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string current_commit() {
  if (const char* c = std::getenv("INGOT_COMMIT"); c && *c) return c;
  if (std::ifstream f(".commit"); f) {
    std::string line;
    std::getline(f, line);
    if (!line.empty()) return line;
  }
  std::string out;
  if (FILE* p = ::popen("git rev-parse HEAD 2>/dev/null", "r")) {
    char buf[128];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string device_name(const std::string& backend) {
  for (const auto& [k, v] : harness::describe_backend(backend).properties) {
    if (k == "device") return v;
  }
  return backend;
}

void print_ceilings(const harness::Ceilings& c) {
  std::printf("ceilings on %s: copy %.3f TB/s (%s); f32 FMA %.2f TFLOP/s (%s)\n", c.backend.c_str(),
              c.copy_bytes_per_s / 1e12, c.copy_method.c_str(), c.f32_flops_per_s / 1e12, c.fma_method.c_str());
}

struct BenchArgs {
  std::string backend = "cuda", filter, dtype, json_path, reference, emit_cases, out, cases;
  int reps = 30, warmup = 5, back_to_back = 1;
  double max_bytes = 60e9;
  std::vector<std::string> variants;  // --variant KEY=V,KEY=V (repeatable)
  bool check = false;                 // --check: each row also against the CPU oracle at its size
  bool variants_only = false;         // --variants-only: the variant rows alone
  bool all_variants = false;          // --all-variants: the registered tuning sweeps too
  bool long_compiles = false;         // --long: no source-size limit on a CPU OpenCL device
};

// --variant's "KEY=V,KEY=V" lists as parameter overrides.
std::vector<harness::Params> parse_variants(const std::vector<std::string>& lists) {
  std::vector<harness::Params> out;
  for (const auto& list : lists) {
    std::vector<std::string> items;
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = list.find(',', start);
      items.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    out.push_back(parse_assignments(items, "--variant"));
  }
  return out;
}

int cmd_bench(const harness::Registry& reg, const BenchArgs& a, bool snap) {
  require_filter_matches(reg, a.filter);
  harness::BenchOptions opt;
  opt.filter = a.filter;
  opt.cases = a.cases;
  opt.variants = parse_variants(a.variants);
  opt.variants_only = a.variants_only;
  opt.all_variants = a.all_variants;
  opt.check = a.check;
  if (!a.dtype.empty()) opt.dtype = parse_dtype_or_throw(a.dtype, nullptr);
  opt.timing = runtime::TimingOptions{a.warmup, a.reps, a.back_to_back};
  opt.max_bytes = a.max_bytes;
  if (a.reps < 1 || a.warmup < 0) throw UsageError("--reps must be >= 1 and --warmup >= 0");
  if (a.back_to_back < 1 || a.back_to_back > 1000) {
    throw UsageError("--back-to-back must be in [1, 1000] (launches per timed window), not " +
                     std::to_string(a.back_to_back));
  }
  if (!a.emit_cases.empty()) {
    tools::require_writable_file(a.emit_cases, "--emit-cases");
    tools::write_file(a.emit_cases, harness::bench_cases_json(reg, opt) + "\n");
    std::printf("wrote the bench cases to %s\n", a.emit_cases.c_str());
    return 0;
  }
  harness::check_bench_options(reg, opt);  // before a backend opens and the ceilings are measured
  const std::string out_path = snap ? a.out : a.json_path;
  // A regular file is rewritten through a temporary file and a rename (a run cut short keeps a whole document); a
  // device or pipe (/dev/stdout) is written directly, never replaced.
  std::error_code fs_ec;
  const bool via_rename =
      !std::filesystem::exists(out_path, fs_ec) || std::filesystem::is_regular_file(out_path, fs_ec);
  if (!out_path.empty()) {
    tools::require_writable_file(out_path, snap ? "--out" : "--json");
    if (via_rename) tools::require_writable_file(out_path + ".tmp", snap ? "--out" : "--json");
  }
  const auto names = harness::parse_backend_list(a.backend);
  if (names.size() != 1) throw UsageError("--backend must name exactly one backend to bench");
  harness::OpenBackendOptions open;
  if (a.long_compiles) open.cpu_opencl_source_limit = 0;
  const harness::BackendSlot slot = harness::open_backend(names[0], open);
  if (!slot.backend)
    throw UsageError("cannot bench: " + slot.why_absent + " (use --backend opencl or interp to time elsewhere)");
  // A baseline says how its kernels were compiled where that is not ingot's default.
  std::string device = device_name(slot.name);
  opt.on_progress = tools::ProgressDisplay(stderr, [](std::size_t done, std::size_t total, const std::string& label) {
    return done < total ? "bench [" + std::to_string(done + 1) + "/" + std::to_string(total) + "] " + label
                        : std::string();
  });
  std::fprintf(stderr, "measuring ceilings...\n");
  opt.skip_reason = slot.skip_reason;  // the backend's refusals skip a row with their reason (as in ingot test)
  const auto ceilings = harness::measure_ceilings(*slot.backend);
  print_ceilings(ceilings);
  const std::string path = snap ? a.out : a.json_path;
  const std::string reference = a.reference.empty() ? std::string() : read_text(a.reference);
  const auto document = [&](std::vector<harness::BenchRow> rows) {
    if (!reference.empty()) harness::merge_reference(rows, reference);
    return harness::baseline_json(rows, ceilings, device, current_commit(), utc_now());
  };
  // The file is rewritten after every case (write, then rename): a run cut short keeps what it measured.
  const auto save = [&](const std::string& doc) {
    if (!via_rename) return tools::write_file(path, doc + "\n");
    const std::string tmp = path + ".tmp";
    tools::write_file(tmp, doc + "\n");
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw std::runtime_error("cannot move '" + tmp + "' to '" + path + "': " + ec.message());
  };
  if (!path.empty()) opt.on_rows = [&](const std::vector<harness::BenchRow>& done) { save(document(done)); };
  auto rows = harness::run_bench(reg, *slot.backend, slot.name, ceilings, opt);
  if (!reference.empty()) harness::merge_reference(rows, reference);
  std::printf("%-26s %-5s %-26s %10s %9s %6s %6s %8s %6s %10s %9s %6s\n", "kernel", "dtype", "case", "median ms",
              "GB/s", "%copy", "%same", "TFLOP/s", "%fma", "ref ms", "ref/ingot", "waves");
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      std::printf("%-26s %-5s %-26s skipped: %s\n", r.kernel.c_str(), r.dtype.c_str(), r.case_name.c_str(),
                  r.skipped.c_str());
      continue;
    }
    char ref[64] = "-";
    char ratio[64] = "-";
    char same[16] = "-";  // not measured: the interpreter, tiny or oversized rows
    if (r.frac_same_copy > 0) std::snprintf(same, sizeof same, "%.1f%%", 100 * r.frac_same_copy);
    char waves[16] = "-";  // not known: backends without an occupancy query
    if (r.waves > 0) std::snprintf(waves, sizeof waves, "%.2f", r.waves);
    if (r.reference_s) {
      std::snprintf(ref, sizeof ref, "%.4f", *r.reference_s * 1e3);
      std::snprintf(ratio, sizeof ratio, "%.2fx", *r.reference_s / r.median_s);
    }
    std::printf("%-26s %-5s %-26s %10.4f %9.1f %5.1f%% %6s %8.2f %5.1f%% %10s %9s %6s%s%s\n", r.kernel.c_str(),
                r.dtype.c_str(), r.case_name.c_str(), r.median_s * 1e3, r.gbytes_per_s, 100 * r.frac_copy, same,
                r.tflops, 100 * r.frac_fma, ref, ratio, waves, r.check.empty() ? "" : "  check: ", r.check.c_str());
    // (why a row has no %same or no waves, where a query failed: said under the row, not dropped)
    for (const std::string* note : {&r.same_copy_note, &r.waves_note}) {
      if (!note->empty()) std::printf("  note: %s\n", note->c_str());
    }
  }
  std::printf("timer: %s; median of %d windows after %d warm-up launches; inputs rotate over sets > 2x L2\n",
              rows.empty() ? "-" : rows.front().timer.c_str(), a.reps, a.warmup);
  std::printf("%%same: a 16-byte copy kernel of the same bytes, timed the same way, over this kernel's time\n");
  std::printf("waves: work-groups / (work-groups resident per compute unit x units), where the backend can tell\n");
  if (!path.empty()) {
    save(document(rows));
    std::printf("wrote %s\n", path.c_str());
  }
  std::size_t ran = 0, failed = 0;
  for (const auto& r : rows) {
    ran += r.skipped.empty();
    failed += r.check_failed();
  }
  if (a.check) std::printf("check: %zu of %zu rows against the CPU oracle failed\n", failed, ran);
  std::printf("%zu benchmarked, %zu skipped\n", ran, rows.size() - ran);
  return ran > 0 && failed == 0 ? 0 : 1;
}

int cmd_diff(const std::string& a, const std::string& b, double threshold, bool strict) {
  const auto d = harness::diff_baselines(read_text(a), read_text(b), threshold, a, b);
  auto show = [](const char* title, const std::vector<harness::DiffLine>& v) {
    for (const auto& l : v) {
      std::printf("%-12s %-60s %10.4f ms -> %10.4f ms (%+.1f%%)\n", title, l.key.c_str(), l.before_s * 1e3,
                  l.after_s * 1e3, 100 * l.change);
    }
  };
  show("regression", d.regressions);
  show("gain", d.gains);
  for (const auto& k : d.only_before) std::printf("%-12s %s\n", "removed", k.c_str());
  for (const auto& k : d.only_after) std::printf("%-12s %s\n", "new", k.c_str());
  std::printf("%zu regressions, %zu gains, %zu unchanged (threshold %.1f%%)\n", d.regressions.size(), d.gains.size(),
              d.unchanged.size(), 100 * threshold);
  return strict && !d.regressions.empty() ? 1 : 0;
}

// ------------------------------------------------------------------ run
// The parameters of `ingot run`: the library's defaults (no tuning option set; the shape from --set), or a named
// case's parameters, overridden by --set. Every key must be one the kernel knows.
harness::Params run_params(const harness::KernelSpec& k, const std::string& case_name,
                           const std::vector<std::string>& sets) {
  if (!case_name.empty()) return case_params(k, case_name, sets);
  const harness::Params p = parse_assignments(sets, "--set");
  const auto known = k.known_params();
  for (const auto& [key, v] : p) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      throw UsageError("kernel '" + k.name + "' has no parameter '" + key + "' (parameters: " + list + ")");
    }
  }
  return p;
}

std::string shape_text(const std::vector<std::uint64_t>& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

int cmd_run(const harness::Registry& reg, const std::string& name, const std::string& backend, const std::string& dtype,
            const std::string& case_name, const std::vector<std::string>& sets, const std::vector<std::string>& ins,
            const std::vector<std::string>& outs) {
  const auto& k = find_kernel(reg, name);
  if (dtype.empty())
    throw UsageError("--dtype is required (dtypes of " + k.name + ": " + tools::dtype_list(k.dtypes) + ")");
  const DType t = parse_dtype_or_throw(dtype, &k);
  auto names = harness::parse_backend_list(backend);
  if (names.size() != 1) throw UsageError("--backend must name exactly one backend for `ingot run`");
  // Everything the caller gave is checked before the kernel is built, a backend opened or a buffer allocated.
  auto split = [](const std::string& s, const char* flag) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
      throw UsageError(std::string("bad ") + flag + " '" + s + "': write BUFFER=FILE.npy");
    }
    return std::pair{s.substr(0, eq), s.substr(eq + 1)};
  };
  std::map<std::string, std::string> in_files, out_files;
  for (const auto& [items, files, flag] :
       {std::tuple{&ins, &in_files, "--in"}, std::tuple{&outs, &out_files, "--out"}}) {
    for (const auto& s : *items) {
      auto [buf, file] = split(s, flag);
      if (!files->emplace(buf, file).second) {
        throw UsageError(std::string(flag) + " names buffer '" + buf + "' twice ('" + files->at(buf) + "' and '" +
                         file + "'): give each buffer once");
      }
    }
  }
  for (const auto& [buf, file] : out_files) tools::require_writable_file(file, "--out " + buf);
  const auto p = run_params(k, case_name, sets);
  const ir::Kernel kern = build_kernel(k, t, p);
  runtime::LaunchGeometry geometry;
  std::map<std::string, std::vector<std::uint64_t>> shapes;
  try {
    geometry = k.geometry(t, p);
    if (k.shapes) shapes = k.shapes(t, p);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("cannot run ") + k.name + " with " + harness::format_params(p) + ": " + e.what());
  }
  std::string buffers;
  for (const auto& prm : kern.params) {
    if (ir::is_buffer(prm.kind))
      buffers += (buffers.empty() ? "" : ", ") + prm.name + " (" + std::string(ir::param_kind_name(prm.kind)) + ")";
  }
  // Every --in must name an input buffer, every --out an output buffer.
  const auto check_names = [&](const auto& files, const char* flag, const char* what, ir::ParamKind kind) {
    for (const auto& [b, f] : files) {
      bool ok = false;
      for (const auto& prm : kern.params)
        ok = ok || (prm.name == b && (prm.kind == kind || prm.kind == ir::ParamKind::InOut));
      if (!ok) {
        std::string msg = std::string(flag) + " names '" + b + "', which is not an " + what + " buffer of " + k.name;
        msg += " (buffers: " + buffers + ")";
        throw UsageError(msg);
      }
    }
  };
  check_names(in_files, "--in", "input", ir::ParamKind::In);
  check_names(out_files, "--out", "output", ir::ParamKind::Out);
  // Scalars come from the parameters (no input is generated), then each buffer's extent from them.
  std::vector<runtime::Arg> args(kern.params.size());
  for (std::size_t i = 0; i < kern.params.size(); ++i) {
    const auto& prm = kern.params[i];
    if (ir::is_buffer(prm.kind)) {
      args[i] = runtime::BufferPtr{};
    } else {
      args[i] = runtime::ScalarArg{prm.type, ir::bits_of_double(prm.type, k.scalar_value(prm.name, p))};
    }
  }
  std::vector<std::uint64_t> need(kern.params.size(), 0);
  std::uint64_t total_bytes = 0;
  for (std::size_t i = 0; i < kern.params.size(); ++i) {
    const auto& prm = kern.params[i];
    if (!ir::is_buffer(prm.kind)) continue;
    need[i] = runtime::required_extent(kern, i, args);
    total_bytes += need[i] * dtype_size(prm.type);
    if (prm.kind == ir::ParamKind::Out) continue;
    auto f = in_files.find(prm.name);
    if (f == in_files.end()) {
      throw UsageError("input buffer '" + prm.name + "' needs --in " + prm.name + "=FILE.npy (" +
                       std::to_string(need[i]) + " elements of " + std::string(dtype_name(prm.type)) + ")");
    }
    // The header alone first: the count, and the shape where the kernel declares one (a 1-D file is taken as the
    // flat buffer; any other shape must be the declared one, so a transposed array is refused).
    const auto head = io::read_npy_header(f->second);
    std::uint64_t count = 1;
    for (auto d : head.shape) count *= d;
    const auto declared = shapes.find(prm.name);
    if (count != need[i]) {
      throw UsageError("buffer '" + prm.name + "' needs " + std::to_string(need[i]) + " elements (" +
                       (declared != shapes.end() ? "shape " + shape_text(declared->second) + ", " : "") + "extent " +
                       ir::print_expr(kern, prm.extent) + " with " + harness::format_params(p) + ") but " + f->second +
                       " holds " + std::to_string(count) + " (shape " + shape_text(head.shape) + ")");
    }
    if (declared != shapes.end() && head.shape.size() != 1 && head.shape != declared->second) {
      throw UsageError("buffer '" + prm.name + "' has shape " + shape_text(declared->second) + " with " +
                       harness::format_params(p) + " but " + f->second + " holds shape " + shape_text(head.shape) +
                       " (the same count in another order: transposed?)");
    }
  }
  auto slot = harness::open_backend(names[0]);
  if (!slot.backend) throw UsageError("backend " + slot.why_absent);
  runtime::Backend& dev = *slot.backend;
  try {
    for (std::size_t i = 0; i < kern.params.size(); ++i) {
      const auto& prm = kern.params[i];
      if (!ir::is_buffer(prm.kind)) continue;
      if (prm.kind == ir::ParamKind::Out) {
        args[i] = dev.allocate(prm.type, need[i]);
        continue;
      }
      const std::string& file = in_files.at(prm.name);
      const auto bytes = io::npy_to_buffer(io::read_npy(file), prm.type, file);
      auto buf = dev.allocate(prm.type, need[i]);
      dev.upload(*buf, bytes.data(), bytes.size());
      args[i] = buf;
    }
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("out of memory: this run's buffers need " + std::to_string(total_bytes) + " bytes on " +
                             slot.name + " (plus a host copy of each input while it uploads); use a smaller shape");
  }
  dev.launch(kern, geometry, args);
  for (std::size_t i = 0; i < kern.params.size(); ++i) {
    const auto& prm = kern.params[i];
    auto f = out_files.find(prm.name);
    if (f == out_files.end()) continue;
    const auto& buf = std::get<runtime::BufferPtr>(args[i]);
    std::vector<std::uint8_t> bytes(buf->bytes());
    dev.download(*buf, bytes.data(), bytes.size());
    auto arr = io::buffer_to_npy(bytes, prm.type);
    if (const auto declared = shapes.find(prm.name); declared != shapes.end()) {
      std::uint64_t n = 1;
      for (auto d : declared->second) n *= d;
      if (n == arr.count()) arr.shape = declared->second;  // (the file in the kernel's logical shape)
    }
    io::write_npy(f->second, arr);
    std::printf("wrote %s: %zu x %s to %s\n", prm.name.c_str(), buf->count(), std::string(dtype_name(prm.type)).c_str(),
                f->second.c_str());
  }
  std::printf("ran %s on %s (%s)\n", kern.name.c_str(), slot.name.c_str(), harness::format_params(p).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ingot — write-once GPU kernels: test, build and inspect the kernel library"};
  app.set_version_flag("--version", std::string("ingot ") + INGOT_VERSION);
  app.require_subcommand(1);
  app.footer("Examples:\n  ingot list\n  ingot test --backend all\n  ingot inspect depthwise_conv1d --stage cuda");

  bool list_json = false, list_options = false;
  std::string list_filter;
  auto* list = app.add_subcommand("list", "List the library's kernels, dtypes and variants");
  list->add_flag("--json", list_json, "Print JSON");
  list->add_flag("--options", list_options, "Print each kernel's tuning options: range and what each chooses");
  list->add_option("--filter", list_filter, "Only kernels whose name or family contains this (comma list: any part)");
  list->footer("Examples:\n  ingot list\n  ingot list --json\n  ingot list --options --filter depthwise_conv2d$");

  std::string backend = "all", filter, dtype, json_path;
  bool fail_fast = false, long_compiles = false, all_variants = false;
  std::uint64_t seed = 0x1a2b3c4d;
  auto* test = app.add_subcommand("test", "Check every kernel x dtype x case x backend against its CPU oracle");
  test->add_option("--backend", backend, "interp, opencl, cuda, vulkan (comma list) or all")->capture_default_str();
  test->add_option("--filter", filter, "Only kernels whose name or family contains this (comma list: any part)");
  test->add_option("--dtype", dtype, "Only this dtype (f32, f16, bf16, ...)");
  test->add_flag("--fail-fast", fail_fast, "Stop at the first failure");
  test->add_flag(
      "--long", long_compiles,
      "Also run, on a CPU OpenCL device, the kernels whose OpenCL C exceeds 256 kB (minutes each to compile), and "
      "build every program there optimized");
  test->add_flag("--all-variants", all_variants,
                 "Every case, each tuning option set the registry lists (default: the library's default variants)");
  test->add_option("--json", json_path, "Also write every result to this JSON file");
  test->add_option("--seed", seed, "Seed of the random inputs")->capture_default_str();
  test->footer(
      "Examples:\n  ingot test\n  ingot test --backend interp,opencl --filter conv --dtype f16\n  ingot test --backend "
      "cuda --fail-fast --json results.json");

  std::string build_targets = "all", out_dir;
  auto* build = app.add_subcommand(
      "build",
      "Emit every kernel x dtype x default variant as .cu/.hip/.cl/.metal/.comp (+ PTX/cubin where NVRTC exists, "
      "SPIR-V for .comp)");
  build->add_option("--backend", build_targets, "cuda, hip, opencl, msl, glsl (comma list) or all")
      ->capture_default_str();
  build->add_option("--out", out_dir, "Output directory")->required();
  build->add_option("--filter", filter, "Only kernels whose name or family contains this (comma list: any part)");
  bool first_variant = false, build_all_variants = false, sources_only = false;
  build->add_flag("--first-variant", first_variant,
                  "Only each kernel's first default variant per dtype (quick compile checks)");
  build->add_flag("--all-variants", build_all_variants,
                  "Every tuning option set the registry lists (default: the library's default variants)");
  build->add_flag("--sources-only", sources_only, "Only the emitted sources: no PTX or cubin even where NVRTC exists");
  build->footer(
      "Examples:\n  ingot build --backend all --out out/\n  ingot build --backend cuda,opencl --out out/ --filter "
      "conv");

  std::string kernel_name, case_name, stage = "dce", inspect_arch = "sm_90";
  std::vector<std::string> sets;
  auto* inspect = app.add_subcommand("inspect", "Show a kernel's IR after any pass, or its emitted source");
  inspect->add_option("kernel", kernel_name, "Kernel name")->required();
  inspect->add_option("--dtype", dtype, "dtype (default: the kernel's first)");
  inspect->add_option("--case", case_name, "Test or bench case whose parameters to use (default: the first test case)");
  inspect->add_option("--set", sets, "Override a parameter: NAME=VALUE (repeatable)");
  inspect
      ->add_option(
          "--stage", stage,
          "ir | simplify | dce | all | cuda | hip | opencl | msl | glsl | resources (NVRTC + ptxas -v: registers, "
          "spills, shared memory; no GPU needed)")
      ->capture_default_str();
  inspect->add_option("--arch", inspect_arch, "--stage resources: the NVIDIA architecture compiled for")
      ->capture_default_str();
  inspect->footer(
      "Examples:\n  ingot inspect depthwise_conv1d --stage all\n  ingot inspect depthwise_conv1d --dtype f16 --set K=5 "
      "--stage opencl");

  bool device_json = false;
  bool device_measure = false;
  auto* device =
      app.add_subcommand("device", "Backends and devices found, their properties, and why a backend is absent");
  device->add_flag("--json", device_json, "Print JSON");
  device->add_flag("--measure", device_measure, "Measure each device's copy bandwidth and f32 FMA rate");
  device->footer("Examples:\n  ingot device\n  ingot device --json\n  ingot device --measure");

  BenchArgs bargs;
  auto add_bench_options = [&](CLI::App* c) {
    c->add_option("--backend", bargs.backend, "One backend: cuda, opencl, vulkan or interp")->capture_default_str();
    c->add_option("--filter", bargs.filter, "Only kernels whose name or family contains this (comma list: any part)");
    c->add_option("--dtype", bargs.dtype, "Only this dtype");
    c->add_option("--cases", bargs.cases, "Only cases whose name matches this regular expression (ECMAScript)");
    c->add_option("--reps", bargs.reps, "Timed launches per case")->capture_default_str();
    c->add_option("--warmup", bargs.warmup, "Untimed launches first")->capture_default_str();
    c->add_option("--back-to-back", bargs.back_to_back,
                  "Launches per timed window, enqueued back to back (1: each launch timed alone, its launch and "
                  "ramp included; N: the window's time / N, the rate of a stream of launches)")
        ->capture_default_str();
    c->add_option("--reference", bargs.reference,
                  "Reference times (JSON from bench/reference_torch.py) to compare with");
    c->add_option("--max-bytes", bargs.max_bytes, "Skip cases whose rotating buffers need more device memory")
        ->capture_default_str();
    c->add_flag(
        "--long", bargs.long_compiles,
        "Also run, on a CPU OpenCL device, the kernels whose OpenCL C exceeds 256 kB (minutes each to compile)");
    c->add_flag("--check", bargs.check,
                "Also run each row once against the CPU oracle at its own size (outputs poisoned, every element "
                "compared; seconds of CPU per row); a failed check fails the command");
    c->add_option("--variant", bargs.variants,
                  "Also run each selected case with these parameters replaced, KEY=V,KEY=V (repeatable; a row "
                  "named <case>+KEY=V,...: e.g. a tiling swept without changing the registry)");
    c->add_flag("--all-variants", bargs.all_variants,
                "Also the registered tuning sweeps (rows that name tuning options; default: the library's default "
                "variants)");
    c->add_flag("--variants-only", bargs.variants_only,
                "With --variant: only the variant rows, not the cases as registered (e.g. one variant under ncu)");
  };
  auto* bench =
      app.add_subcommand("bench", "Time every bench case: median, GB/s, TFLOP/s, fraction of measured ceilings");
  add_bench_options(bench);
  bench->add_option("--json", bargs.json_path,
                    "Write the results (a baseline document) to this file, rewritten after every case");
  bench->add_option("--emit-cases", bargs.emit_cases,
                    "Only write the bench cases as JSON (for bench/reference_torch.py)");
  bench->footer(
      "Examples:\n  ingot bench --backend cuda\n  ingot bench --filter depthwise --dtype bf16 --json bench.json\n"
      "  ingot bench --emit-cases cases.json && python3 bench/reference_torch.py cases.json ref.json &&\n"
      "    ingot bench --reference ref.json\n"
      "  ingot bench --filter depthwise_conv2d_nhwc --dtype bf16 --cases '_3x3$' --variant stream=1,PB=4 "
      "--variant stream=1,PB=6,ahead=2");
  auto* snap =
      app.add_subcommand("snap", "Run the bench and write a baseline JSON (device, commit, date, ceilings, rows)");
  add_bench_options(snap);
  snap->add_option("--out", bargs.out, "Baseline file to write (rewritten after every case)")->required();
  snap->footer("Examples:\n  ingot snap --out baselines/h200.json --reference ref.json");
  std::string diff_a, diff_b;
  double threshold = 0.05;
  bool strict = false;
  auto* diff = app.add_subcommand("diff", "Compare two baselines: regressions and gains");
  diff->add_option("before", diff_a, "Baseline JSON")->required();
  diff->add_option("after", diff_b, "Baseline JSON")->required();
  diff->add_option("--threshold", threshold, "Relative change below which a case counts as unchanged")
      ->capture_default_str();
  diff->add_flag("--strict", strict, "Exit 1 when there are regressions");
  diff->footer("Examples:\n  ingot diff baselines/old.json new.json --threshold 0.03");

  std::string run_backend = "interp";
  std::vector<std::string> ins, outs;
  auto* run = app.add_subcommand("run", "Run one kernel on .npy inputs and write .npy outputs");
  run->add_option("kernel", kernel_name, "Kernel name")->required();
  run->add_option("--backend", run_backend, "One backend: interp, opencl, cuda or vulkan")->capture_default_str();
  run->add_option("--dtype", dtype, "dtype of the kernel variant")->required();
  run->add_option("--case", case_name,
                  "Test or bench case whose parameters to start from (default: none, the library's defaults: give "
                  "the shape with --set)");
  run->add_option("--set", sets, "Override a parameter: NAME=VALUE (repeatable)");
  run->add_option("--in", ins, "Input buffer: BUFFER=FILE.npy (float32 files for f32/bf16, float16 for f16)");
  run->add_option("--out", outs, "Output buffer: BUFFER=FILE.npy");
  run->footer(
      "Examples:\n  ingot run depthwise_conv1d --dtype f32 --set B=2 --set C=8 --set L=100 --set K=3 --set stride=1 "
      "--set pad=1 --set dilation=1 --set bias=0 --in x=x.npy --in w=w.npy --out y=y.npy\n"
      "  ingot run depthwise_conv1d --dtype f32 --case k1 --set B=2 --in x=x.npy --in w=w.npy --out y=y.npy");

  tools::ProveArgs pargs;
  auto* prove = app.add_subcommand(
      "prove", "Prove every access of the library's kernels in range and their index arithmetic free of wrap-around");
  prove->add_option("kernel", pargs.kernel, "Only this kernel (default: every kernel)");
  prove->add_option("--dtype", pargs.dtype, "Only this dtype");
  prove->add_option("--set", pargs.sets, "Override a parameter of every case: NAME=VALUE (repeatable)");
  prove->add_flag("--all", pargs.all_variants,
                  "Every test case, each tuning option set the registry lists (default: the default variants)");
  prove->add_flag("--replay", pargs.replay,
                  "Run each case not proved on the checked interpreter and show the out-of-range access it reports");
  prove->add_flag("--no-cache", pargs.no_cache,
                  "Prove every case now: neither use nor store the cached results (in $INGOT_CACHE_DIR/prove, or "
                  "~/.cache/ingot/prove)");
  pargs.jobs = std::max(1u, std::thread::hardware_concurrency());
  prove->add_option("--jobs,-j", pargs.jobs, "Proofs run at once, each on its own thread (default: the cores)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  prove->add_option("--json", pargs.json_path,
                    "Also write every (kernel, dtype, case) result to this JSON file: status, counts, seconds, "
                    "cached, each obligation not proven with its witness");
  prove->footer(
      "Examples:\n  ingot prove\n  ingot prove depthwise_conv1d --dtype f16 --set L=100001\n"
      "  ingot prove --no-cache\n  ingot prove silu --json prove.json");

  CLI11_PARSE(app, argc, argv);

  try {
    const harness::Registry reg = harness::builtin_registry();
    if (*list) return cmd_list(reg, list_json, list_options, list_filter);
    if (*test) return cmd_test(reg, backend, filter, dtype, fail_fast, long_compiles, all_variants, json_path, seed);
    if (*build) return cmd_build(reg, build_targets, out_dir, filter, first_variant, build_all_variants, sources_only);
    if (*inspect) {
      if (inspect->count("--arch") > 0 && stage != "resources") {
        throw UsageError("--arch applies to --stage resources (the NVRTC compile); drop it or add --stage resources");
      }
      return cmd_inspect(reg, kernel_name, dtype, case_name, sets, stage, inspect_arch);
    }
    if (*device) return cmd_device(device_json, device_measure);
    if (*bench) return cmd_bench(reg, bargs, false);
    if (*snap) return cmd_bench(reg, bargs, true);
    if (*diff) return cmd_diff(diff_a, diff_b, threshold, strict);
    if (*prove) return tools::cmd_prove(reg, pargs);
    if (*run) return cmd_run(reg, kernel_name, run_backend, dtype, case_name, sets, ins, outs);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ingot: error: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ingot: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "ingot: error: out of memory (host allocation failed; try a smaller shape)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ingot: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
