// The registry, the manifest check and the harness (on the interpreter).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "ingot/codegen/printer.hpp"
#include "ingot/dsl.hpp"
#include "ingot/harness/backends.hpp"
#include "ingot/harness/harness.hpp"
#include "ingot/library.hpp"
#include "ingot/passes/pipeline.hpp"
#include "ingot/runtime/interp.hpp"

using namespace ingot;
using namespace ingot::harness;

namespace {
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
BackendSlot interp_slot() { return BackendSlot{"interp", std::make_shared<runtime::Interpreter>(), "", {}, {}}; }
}  // namespace

TEST(Registry, MatchesTheCommittedManifest) {
  const Registry r = builtin_registry();
  const auto problems = check_manifest(r, read_file(INGOT_MANIFEST));
  for (const auto& p : problems) ADD_FAILURE() << p;
  EXPECT_FALSE(r.kernels().empty());
}

TEST(Registry, ManifestCheckFindsEveryKindOfDifference) {
  const Registry r = builtin_registry();
  const auto extra = check_manifest(r, read_file(INGOT_MANIFEST) + "\nnot_a_kernel\n");
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_NE(extra[0].find("'not_a_kernel' is in the manifest but not registered"), std::string::npos);
  const auto twice = check_manifest(r, read_file(INGOT_MANIFEST) + "\ndepthwise_conv1d\n");
  ASSERT_EQ(twice.size(), 1u);
  EXPECT_NE(twice[0].find("listed 2 times"), std::string::npos);
  const auto missing = check_manifest(r, "# nothing\n");
  EXPECT_FALSE(missing.empty());
  EXPECT_NE(missing[0].find("registered but not in the manifest"), std::string::npos);
  EXPECT_FALSE(check_manifest(Registry{}, "").empty());  // an empty registry is an error
}

TEST(Registry, FilterMatchesAnyCommaSeparatedPart) {
  harness::KernelSpec k;
  k.name = "depthwise_conv1d";
  k.family = "conv";
  EXPECT_TRUE(k.matches(""));
  EXPECT_TRUE(k.matches("depthwise"));
  EXPECT_TRUE(k.matches("conv"));
  EXPECT_TRUE(k.matches("causal,depthwise_conv1d"));
  EXPECT_TRUE(k.matches(",thwise"));
  EXPECT_FALSE(k.matches("causal"));
  EXPECT_FALSE(k.matches("causal,quant"));
  EXPECT_FALSE(k.matches(","));
  EXPECT_TRUE(k.matches("depthwise_conv1d$"));
  EXPECT_FALSE(k.matches("depthwise_conv$"));
  EXPECT_TRUE(k.matches("causal, depthwise"));  // spaces around a part are ignored
  EXPECT_TRUE(k.matches("quant , depthwise_conv1d$ "));
  EXPECT_FALSE(k.matches(" , "));
}

TEST(Registry, DuplicateRegistrationIsRefused) {
  Registry r = builtin_registry();
  KernelSpec copy = r.kernels().front();
  EXPECT_THROW(r.add(copy), std::invalid_argument);
}

// A case parameter the kernel does not declare (a typo the build would ignore, running the default) is refused at
// registration, naming the kernel, the case and the key.
TEST(Registry, UndeclaredCaseParametersAreRefused) {
  const Registry reg = builtin_registry();
  KernelSpec k = *reg.find("depthwise_conv1d");
  k.name = "depthwise_conv1d_copy";
  Registry r;
  EXPECT_NO_THROW(r.add(k));
  for (const bool bench : {false, true}) {
    KernelSpec bad = k;
    bad.name = bench ? "bad_bench" : "bad_test";
    auto p = k.tests.front().params;
    p["VQ"] = 2;  // V (outputs per thread) mistyped
    if (bench) {
      bad.bench.push_back({"typo", p});
    } else {
      bad.tests.push_back({"typo", p});
    }
    try {
      r.add(bad);
      FAIL() << "a case with an undeclared key was registered";
    } catch (const std::invalid_argument& e) {
      const std::string want = std::string("kernel '") + bad.name + "' " + (bench ? "bench" : "test") +
                               " case 'typo' sets 'VQ', which the kernel does not declare";
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

// Tuning options are data: every option of every kernel says what it chooses, and a value outside its range is refused
// by build and geometry alike, before the kernel's own code runs (one rule for every kernel).
TEST(Registry, OptionsOutOfRangeAreRefusedBeforeTheKernelRuns) {
  const Registry reg = builtin_registry();
  std::size_t checked = 0;
  for (const auto& k : reg.kernels()) {
    for (const auto& o : k.options) {
      SCOPED_TRACE(k.name + " " + o.name);
      EXPECT_FALSE(o.meaning.empty());
      EXPECT_LE(o.lo, o.hi);
      EXPECT_NE(std::find(k.spec_params.begin(), k.spec_params.end(), o.name), k.spec_params.end());
      Params p = k.default_test().params;
      p[o.name] = o.hi + 1;
      EXPECT_THROW((void)k.build(k.dtypes.front(), p), std::invalid_argument);
      EXPECT_THROW((void)k.geometry(k.dtypes.front(), p), std::invalid_argument);
      p[o.name] = o.lo - 1;
      EXPECT_THROW((void)k.build(k.dtypes.front(), p), std::invalid_argument);
      ++checked;
    }
  }
  EXPECT_GE(checked, 60u);

  // The kernel's own build is not reached: a counting build behind an option of range [2, 4].
  KernelSpec k = *reg.find("silu");
  k.name = "silu_counted";
  k.options.clear();
  k.add_option({"opt", 2, 4, "a test option"});
  auto calls = std::make_shared<int>(0);
  k.build = [calls, build = k.build](DType t, const Params& p) {
    ++*calls;
    Params q = p;
    q.erase("opt");
    return build(t, q);
  };
  Registry r;
  r.add(k);
  const KernelSpec& added = *r.find("silu_counted");
  EXPECT_THROW((void)added.build(DType::f32, {{"n", 5}, {"opt", 5}}), std::invalid_argument);
  EXPECT_EQ(*calls, 0);
  EXPECT_NO_THROW((void)added.build(DType::f32, {{"n", 5}, {"opt", 3}}));
  EXPECT_EQ(*calls, 1);
}

// option_value: how kernels read their options; the range comes from the table, and reading an undeclared option is a
// defect of the kernel (logic_error), not of the caller's case.
TEST(Registry, OptionValueReadsThroughTheTable) {
  const std::vector<OptionSpec> table{{"a", 2, 9, "a test option"}};
  EXPECT_EQ(option_value(table, {}, "a", 4, "k"), 4u);
  EXPECT_EQ(option_value(table, {{"a", 9}}, "a", 4, "k"), 9u);
  EXPECT_THROW((void)option_value(table, {{"a", 10}}, "a", 4, "k"), std::invalid_argument);
  EXPECT_THROW((void)option_value(table, {{"a", 1}}, "a", 4, "k"), std::invalid_argument);
  bool defect = false;  // (std::invalid_argument is a std::logic_error too: tell them apart)
  try {
    (void)option_value(table, {{"b", 1}}, "b", 4, "k");
  } catch (const std::invalid_argument&) {
  } catch (const std::logic_error&) {
    defect = true;
  }
  EXPECT_TRUE(defect);
}

// Bad option declarations are refused at registration: an empty range, no meaning, a name declared twice, a case
// naming a value outside the range.
TEST(Registry, BadOptionDeclarationsAreRefused) {
  const Registry reg = builtin_registry();
  const KernelSpec base = *reg.find("silu");
  const auto refused = [&](const std::function<void(KernelSpec&)>& change) {
    KernelSpec k = base;
    k.name = "silu_changed";
    change(k);
    Registry r;
    try {
      r.add(k);
    } catch (const std::invalid_argument&) {
      return true;
    }
    return false;
  };
  EXPECT_FALSE(refused([](KernelSpec&) {}));
  EXPECT_TRUE(refused([](KernelSpec& k) { k.add_option({"empty", 3, 2, "an empty range"}); }));
  EXPECT_TRUE(refused([](KernelSpec& k) { k.add_option({"silent", 0, 1, ""}); }));
  EXPECT_TRUE(refused([](KernelSpec& k) { k.add_option({"i64", 0, 1, "again"}); }));
  EXPECT_TRUE(refused([](KernelSpec& k) { k.tests.push_back({"bad", {{"n", 5}, {"i64", 7}}}); }));
  EXPECT_TRUE(refused([](KernelSpec& k) { k.options.push_back({"undeclared", 0, 1, "not a spec parameter"}); }));
}

TEST(Registry, EveryKernelHasATailCaseAndCompleteFunctions) {
  const Registry reg = builtin_registry();
  for (const auto& k : reg.kernels()) {
    bool tail = false;
    for (const auto& c : k.tests) {
      const auto g = k.geometry(k.dtypes[0], c.params);
      // a partial last group: the oracle's output count is not a multiple of the group size
      const auto want = k.oracle(k.dtypes[0], c.params, k.inputs(k.dtypes[0], c.params, 1));
      for (const auto& [name, v] : want) tail = tail || v.size() % g.threads_per_group() != 0;
    }
    EXPECT_TRUE(tail) << k.name << " has no test case with a partial last work-group";
    EXPECT_FALSE(k.bench.empty()) << k.name;
    EXPECT_TRUE(k.bytes && k.flops) << k.name;
  }
}

TEST(Registry, VariantNamesShowNamedParameterValues) {
  KernelSpec k;
  k.name = "op";
  k.spec_params = {"fmt", "C"};
  const Params p{{"fmt", 1}, {"C", 8}, {"B", 2}};
  EXPECT_EQ(k.variant_name(DType::f16, p), "op_f16_fmt1_C8");
  k.value_names["fmt"] = {"int8", "mxfp4"};
  EXPECT_EQ(k.variant_name(DType::f16, p), "op_f16_mxfp4_C8");
  EXPECT_EQ(k.variant_name(DType::f32, {{"fmt", 2}, {"C", 8}}), "op_f32_fmt2_C8");  // unnamed value: key and number
}

// A real-valued scalar (eps) is carried by an integer case parameter counting its unit; others are the value itself.
TEST(Registry, ScalarUnitsScaleTheCarryingParameter) {
  KernelSpec k;
  k.name = "op";
  k.scalar_params = {{"R", "R"}, {"eps", "eps_nano"}};
  k.scalar_units = {{"eps", 1e-9}};
  const Params p{{"R", 3}, {"eps_nano", 10000}};
  EXPECT_EQ(k.scalar_value("R", p), 3.0);
  EXPECT_DOUBLE_EQ(k.scalar_value("eps", p), 1e-5);
}

// Every case, each tuning option set included (the interpreter is quick enough for all of them).
TEST(Harness, LibraryPassesOnTheInterpreter) {
  HarnessOptions all;
  all.all_variants = true;
  const auto rep = run_harness(builtin_registry(), {interp_slot()}, all);
  for (const auto& r : rep.results) {
    EXPECT_EQ(r.status, Status::Pass) << r.kernel << " " << dtype_name(r.dtype) << " " << r.case_name << ": "
                                      << r.message;
  }
  EXPECT_GT(rep.passed, 0u);
  EXPECT_EQ(rep.failed, 0u);
}

TEST(Harness, AbsentBackendIsACountedSkipWithItsReason) {
  BackendSlot absent{"opencl", nullptr, "opencl not available: no platform", {}, {}};
  HarnessOptions opt;
  opt.filter = "depthwise_conv1d";
  opt.dtype = DType::f32;
  const auto rep = run_harness(builtin_registry(), {interp_slot(), absent}, opt);
  EXPECT_EQ(rep.skipped, rep.passed);
  ASSERT_EQ(rep.skip_reasons.size(), 1u);
  EXPECT_EQ(rep.skip_reasons.begin()->first, "opencl: opencl not available: no platform");
  EXPECT_EQ(rep.per_backend.at("opencl")[2], rep.skipped);
}

// The skip_reason of a device with less shared memory than a kernel's arrays: the printed kernel's bytes decide (the
// OpenCL print may add exchange arrays), the slot's other reason follows, and the harness counts such cases as skips.
TEST(Harness, SharedMemoryLimitSkipsOnlyKernelsOverIt) {
  const ir::Kernel k = passes::optimize(dsl::trace("shared_64k", [](dsl::KernelBuilder& b) {
    using namespace ingot::dsl;
    auto y = b.out<f32>("y", 64);
    auto s = b.shared<f32>("s", 16384);  // 64 KiB
    auto l = b.local_id(0);
    store(s, l, cast<f32>(l));
    b.barrier();
    store(y, l, load(s, (l + 1u) % 64u));
  }));
  const std::uint64_t bytes = codegen::emit(k, codegen::Target::OpenCL).shared_bytes;
  EXPECT_EQ(bytes, 65536u);
  EXPECT_EQ(shared_memory_limit(codegen::Target::OpenCL, bytes, "CL_DEVICE_LOCAL_MEM_SIZE")(k), "");
  const std::string why = shared_memory_limit(codegen::Target::OpenCL, 48 * 1024, "CL_DEVICE_LOCAL_MEM_SIZE")(k);
  EXPECT_EQ(why, "needs 64 KiB of shared memory per work-group; the device gives 48 KiB (CL_DEVICE_LOCAL_MEM_SIZE)");
  const auto then = [](const ir::Kernel&) { return std::string("the other reason"); };
  EXPECT_EQ(shared_memory_limit(codegen::Target::CUDA, bytes, "opt-in", then)(k), "the other reason");

  BackendSlot small = interp_slot();
  small.name = "small";
  small.skip_reason = shared_memory_limit(codegen::Target::OpenCL, 48 * 1024, "CL_DEVICE_LOCAL_MEM_SIZE");
  const Registry reg = builtin_registry();
  HarnessOptions opt;
  opt.filter = "depthwise_conv2d_nhwc";
  opt.dtype = DType::bf16;
  opt.all_variants = true;  // (the largest cases are tuning variants)
  const auto rep = run_harness(reg, {small}, opt);
  // the cases whose OpenCL print needs more than 48 KB (the 82 KB case; mma exchange arrays add to others) are
  // skipped, the others run
  EXPECT_GE(rep.skipped, 1u);
  EXPECT_EQ(rep.failed, 0u);
  EXPECT_GT(rep.passed, 10u);
  ASSERT_FALSE(rep.skip_reasons.empty());
  for (const auto& [reason, n] : rep.skip_reasons) {
    EXPECT_NE(reason.find("KiB of shared memory per work-group; the device gives 48 KiB"), std::string::npos) << reason;
  }
}

// A slot's skip_reason (the CPU OpenCL source limit): kernels over the limit are counted skips with the reason, the
// others run; a limit of 0 skips nothing.
TEST(Harness, SourceSizeLimitSkipsOnlyKernelsOverIt) {
  const Registry reg = builtin_registry();
  const KernelSpec* spec = nullptr;
  for (const auto& s : reg.kernels()) {
    if (s.name == "depthwise_conv1d") spec = &s;
  }
  ASSERT_NE(spec, nullptr);
  const ir::Kernel k = passes::optimize(spec->build(DType::f32, spec->tests.front().params));
  const std::size_t bytes = codegen::emit(k, codegen::Target::OpenCL).source.size();
  EXPECT_EQ(source_size_limit(bytes)(k), "");
  EXPECT_EQ(source_size_limit(0)(k), "");
  const std::string why = source_size_limit(bytes - 1)(k);
  EXPECT_NE(why.find("minutes to compile on a CPU device: --long runs it"), std::string::npos) << why;

  BackendSlot limited = interp_slot();
  limited.name = "limited";
  limited.skip_reason = source_size_limit(1);  // every kernel is over 1 byte
  HarnessOptions opt;
  opt.filter = "depthwise_conv1d";
  opt.dtype = DType::f32;
  const auto rep = run_harness(reg, {interp_slot(), limited}, opt);
  EXPECT_GT(rep.passed, 0u);
  EXPECT_EQ(rep.skipped, rep.passed);
  ASSERT_EQ(rep.skip_reasons.size(), 1u);
  EXPECT_EQ(rep.skip_reasons.begin()->first, "limited: " + source_size_limit(1)(k));
}

TEST(Harness, AWrongKernelFailsWithKernelDtypeCaseAndIndex) {
  Registry r;
  KernelSpec s = builtin_registry().kernels().front();
  auto oracle = s.oracle;
  s.oracle = [oracle](DType t, const Params& p, const HostData& d) {
    auto want = oracle(t, p, d);
    want["y"][5] += 1.0;  // the oracle now disagrees at index 5
    return want;
  };
  r.add(s);
  HarnessOptions opt;
  opt.dtype = DType::f32;
  opt.fail_fast = true;
  const auto rep = run_harness(r, {interp_slot()}, opt);
  ASSERT_EQ(rep.failed, 1u);
  ASSERT_EQ(rep.results.size(), 1u);  // fail-fast stopped after the first failure
  EXPECT_NE(rep.results[0].message.find("output 'y': first bad index 5"), std::string::npos) << rep.results[0].message;
  EXPECT_FALSE(rep.ok());
}

TEST(Harness, UnwrittenElementFails) {
  // A kernel that forgets its last element: poison (NaN) stays and the comparison fails.
  Registry r;
  KernelSpec s = builtin_registry().kernels().front();
  s.build = [](DType t, const Params& p) {
    (void)p;
    return trace("skip_last", [t](KernelBuilder& k) {
      using namespace ingot::dsl;
      (void)t;
      auto batch = k.scalar<u32>("batch");
      auto x = k.in<f32>("x", batch * 136u);
      auto w = k.in<f32>("w", 24u);
      auto y = k.out<f32>("y", batch * 120u);
      auto i = k.program_id(0);
      auto v = load(x, select(i < 119u, i, 0u)) + load(w, 0u) * 0.0f;
      if_(i < 119u, [&] { store(y, i, v); });
    });
  };
  s.oracle = [](DType, const Params&, const HostData& d) {
    const auto& x = d.buffers.at("x");
    return std::map<std::string, std::vector<double>>{{"y", std::vector<double>(x.begin(), x.begin() + 120)}};
  };
  s.options.clear();  // (this spec's build ignores the options: its first case is its default)
  s.tests = {s.tests.front()};
  s.dtypes = {DType::f32};
  r.add(s);
  const auto rep = run_harness(r, {interp_slot()}, HarnessOptions{});
  ASSERT_EQ(rep.failed, 1u);
  EXPECT_NE(rep.results[0].message.find("first bad index 119 of 120"), std::string::npos) << rep.results[0].message;
  EXPECT_NE(rep.results[0].message.find("got nan (unwritten or NaN) (1 elements differ"), std::string::npos)
      << rep.results[0].message;
}

TEST(Harness, CompareRule) {
  std::string why;
  const double nan = std::nan("");
  EXPECT_EQ(compare({1.0, nan}, {1.0, nan}, {0, 0}, &why), -1);  // both NaN agree
  EXPECT_EQ(compare({1.0, 2.0}, {1.0, nan}, {1, 1}, &why), 1);   // NaN on one side fails
  EXPECT_EQ(compare({1.0}, {INFINITY}, {1e9, 1e9}, &why), 0);    // inf on one side fails
  EXPECT_EQ(compare({100.0}, {100.5}, {0, 0.01}, &why), -1);     // relative tolerance
  EXPECT_EQ(compare({0.0}, {0.002}, {0.001, 0.5}, &why), 0);     // absolute tolerance
}
