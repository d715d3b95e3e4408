// Argument checking and host-side value packing, shared by every backend.
#include <chrono>
#include <cstring>
#include <optional>

#include "ingot/ir_print.hpp"
#include "ingot/runtime/backend.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::runtime {

namespace {

std::string describe_param(const ir::Kernel& k, const ir::Param& p) {
  std::string s = p.name + ": " + std::string(ir::param_kind_name(p.kind)) + " " + std::string(dtype_name(p.type));
  if (ir::is_buffer(p.kind) && p.extent != ir::kNoExpr) s += "[" + ir::print_expr(k, p.extent) + "]";
  return s;
}

std::string signature(const ir::Kernel& k) {
  std::string s = k.name + "(";
  for (std::size_t i = 0; i < k.params.size(); ++i) s += (i ? ", " : "") + describe_param(k, k.params[i]);
  return s + ")";
}

// Evaluates an extent expression exactly (128-bit) and in its own type; they must agree.
struct ExtentEval {
  const ir::Kernel& k;
  const std::vector<Arg>& args;
  const std::string& param;

  __int128 exact(ir::ExprId e) const {
    const ir::Node& n = k.exprs[e];
    switch (n.op) {
      case ir::Op::Const: return ir::int_of_bits(n.type, n.imm);
      case ir::Op::ParamRef: {
        const auto& s = std::get<ScalarArg>(args.at(n.imm));
        return ir::int_of_bits(n.type, s.bits);
      }
      case ir::Op::Cast: return exact(n.a);
      case ir::Op::Add: return exact(n.a) + exact(n.b);
      case ir::Op::Sub: return exact(n.a) - exact(n.b);
      case ir::Op::Mul: return exact(n.a) * exact(n.b);
      case ir::Op::Div: {
        const __int128 d = exact(n.b);
        if (d == 0) throw ArgumentError("extent of '" + param + "' divides by zero with these scalars");
        return exact(n.a) / d;
      }
      case ir::Op::Mod: {
        const __int128 d = exact(n.b);
        if (d == 0) throw ArgumentError("extent of '" + param + "' divides by zero with these scalars");
        return exact(n.a) % d;
      }
      case ir::Op::Min: return std::min(exact(n.a), exact(n.b));
      case ir::Op::Max: return std::max(exact(n.a), exact(n.b));
      case ir::Op::Select: return exact(n.a) ? exact(n.b) : exact(n.c);
      default: break;
    }
    throw ArgumentError("extent of '" + param + "' uses op '" + std::string(ir::op_info(n.op).name) +
                        "', which extents may not use");
  }
};

// Evaluates a precondition (scalars and constants only) with the IR's own semantics.
std::optional<std::uint64_t> eval_scalar_expr(const ir::Kernel& k, const std::vector<Arg>& args, ir::ExprId e,
                                              std::string* error) {
  const ir::Node& n = k.exprs[e];
  if (n.op == ir::Op::Const) return n.imm;
  if (n.op == ir::Op::ParamRef) return std::get<ScalarArg>(args.at(n.imm)).bits;
  std::uint64_t v[3] = {0, 0, 0};
  const ir::ExprId ops[3] = {n.a, n.b, n.c};
  for (int i = 0; i < 3; ++i) {
    if (ops[i] == ir::kNoExpr) continue;
    const auto x = eval_scalar_expr(k, args, ops[i], error);
    if (!x) return std::nullopt;
    v[i] = *x;
  }
  const DType operand = n.a == ir::kNoExpr ? n.type : k.exprs[n.a].type;
  return ir::eval_op(n.op, n.type, operand, v[0], v[1], v[2], error);
}

void check_preconditions(const ir::Kernel& k, const std::vector<Arg>& args) {
  for (ir::ExprId e : k.preconditions) {
    std::string error;
    const auto holds = eval_scalar_expr(k, args, e, &error);
    if (holds && *holds != 0) continue;
    std::string values;
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      if (ir::is_buffer(k.params[i].kind)) continue;
      const auto& s = std::get<ScalarArg>(args[i]);
      values += (values.empty() ? "" : ", ") + k.params[i].name + " = " + ir::format_bits(s.type, s.bits);
    }
    throw PreconditionError("kernel '" + k.name + "': precondition " + ir::print_expr(k, e) +
                            (holds ? " fails" : " cannot be evaluated (" + error + ")") + " with " + values +
                            ": launch with scalars that satisfy it");
  }
}

}  // namespace

std::uint64_t required_extent(const ir::Kernel& k, std::size_t param, const std::vector<Arg>& args) {
  const ir::Param& p = k.params.at(param);
  const ExtentEval ev{k, args, p.name};
  const __int128 v = ev.exact(p.extent);
  const DType t = k.exprs[p.extent].type;
  const int bits = dtype_bits(t);
  const bool is_signed = is_signed_integer(t);
  const __int128 max = is_signed ? ((__int128)1 << (bits - 1)) - 1 : ((__int128)1 << bits) - 1;
  if (v < 0 || v > max) {
    throw ArgumentError("kernel '" + k.name + "': extent of '" + p.name + "' (" + ir::print_expr(k, p.extent) +
                        ") overflows " + std::string(dtype_name(t)) + " with these scalars (" +
                        std::to_string(static_cast<long double>(v)) +
                        "): the kernel's index arithmetic would wrap; use smaller shapes or a 64-bit variant");
  }
  return static_cast<std::uint64_t>(v);
}

void check_args(const ir::Kernel& k, const std::vector<Arg>& args) {
  if (args.size() != k.params.size()) {
    throw ArgumentError("kernel " + signature(k) + " takes " + std::to_string(k.params.size()) + " arguments, got " +
                        std::to_string(args.size()));
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ir::Param& p = k.params[i];
    const std::string where =
        "kernel '" + k.name + "' argument " + std::to_string(i) + " (" + describe_param(k, p) + ")";
    if (ir::is_buffer(p.kind)) {
      const auto* b = std::get_if<BufferPtr>(&args[i]);
      if (!b) throw ArgumentError(where + ": expected a buffer, got a scalar");
      if (!*b) throw ArgumentError(where + ": the buffer is null");
      if ((*b)->dtype() != p.type) {
        throw ArgumentError(where + ": expected a buffer of " + std::string(dtype_name(p.type)) + ", got a buffer of " +
                            std::string(dtype_name((*b)->dtype())));
      }
    } else {
      const auto* s = std::get_if<ScalarArg>(&args[i]);
      if (!s) throw ArgumentError(where + ": expected a scalar, got a buffer");
      if (s->type != p.type) {
        throw ArgumentError(where + ": expected a scalar of " + std::string(dtype_name(p.type)) + ", got " +
                            std::string(dtype_name(s->type)));
      }
    }
  }
  // A written buffer must not also be passed for another parameter, nor overlap one (printers
  // declare buffer pointers restrict, and no backend orders one thread's reads of x after
  // another's writes of y). Buffers with a known address are compared by their byte ranges.
  const auto overlap = [](const DeviceBuffer& a, const DeviceBuffer& b) {
    if (&a == &b) return true;
    if (a.address() == 0 || b.address() == 0 || a.bytes() == 0 || b.bytes() == 0) return false;
    return a.address() < b.address() + b.bytes() && b.address() < a.address() + a.bytes();
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!ir::is_buffer(k.params[i].kind)) continue;
    for (std::size_t j = i + 1; j < args.size(); ++j) {
      if (!ir::is_buffer(k.params[j].kind)) continue;
      const bool written = k.params[i].kind != ir::ParamKind::In || k.params[j].kind != ir::ParamKind::In;
      if (written && overlap(*std::get<BufferPtr>(args[i]), *std::get<BufferPtr>(args[j]))) {
        throw ArgumentError("kernel '" + k.name + "': the buffers passed as '" + k.params[i].name + "' and '" +
                            k.params[j].name +
                            "' are the same memory or overlap, and the kernel writes at least one of them: pass "
                            "separate buffers");
      }
    }
  }
  // Vector accesses need their buffer aligned to the access (the IR assumes 16-byte aligned buffers).
  // Only buffers off a 16-byte boundary (wrapped caller memory) need the kernel walked.
  const auto off16 = [&](std::size_t i) {
    return ir::is_buffer(k.params[i].kind) && std::get<BufferPtr>(args[i])->address() % 16 != 0;
  };
  std::vector<std::uint32_t> align;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!off16(i)) continue;
    if (align.empty()) align = ir::vector_access_alignment(k);
    const std::uint64_t a = std::get<BufferPtr>(args[i])->address();
    if (a % align[i] != 0) {
      throw ArgumentError("kernel '" + k.name + "': buffer '" + k.params[i].name + "' starts at address " +
                          std::to_string(a) + ", not a multiple of " + std::to_string(align[i]) +
                          " bytes, which the kernel's vector accesses need: pass memory aligned to 16 bytes (e.g. a "
                          "tensor that is not an offset slice)");
    }
  }
  // Preconditions and extents need every scalar checked first; preconditions come before extents,
  // which may rely on them (a divisor that must not be zero).
  check_preconditions(k, args);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ir::Param& p = k.params[i];
    if (!ir::is_buffer(p.kind)) continue;
    const std::uint64_t need = required_extent(k, i, args);
    const auto& b = std::get<BufferPtr>(args[i]);
    if (b->count() < need) {
      throw ArgumentError("kernel '" + k.name + "': buffer '" + p.name + "' has " + std::to_string(b->count()) +
                          " elements but its declared extent " + ir::print_expr(k, p.extent) + " needs " +
                          std::to_string(need) + " with these scalars: pass a larger buffer or smaller sizes");
    }
  }
}

namespace {

// Whether k reads a 32-bit program_id (a u32 ProgramId node) on axis a: a launch past 2^32 threads there would wrap.
bool reads_u32_program_id(const ir::Kernel& k, int a) {
  for (std::size_t e = 0; e < k.exprs.size(); ++e) {
    const ir::Node& n = k.exprs[static_cast<ir::ExprId>(e)];
    if (n.op == ir::Op::ProgramId && n.type == DType::u32 && n.imm == static_cast<std::uint64_t>(a)) return true;
  }
  return false;
}

}  // namespace

void check_launch_bounds(const ir::Kernel& k, const LaunchGeometry& g) {
  for (int a = 0; a < 3; ++a) {
    // The grid first: the kernel's expressions are scanned only for the rare launch of 2^32 threads on an axis, so a
    // cached launch pays nothing for the check.
    if (static_cast<std::uint64_t>(g.groups[a]) * g.group_size[a] > 0xffffffffull && reads_u32_program_id(k, a)) {
      throw ArgumentError("kernel '" + k.name + "': " + g.describe() + ": axis " + std::to_string(a) +
                          " has 2^32 threads or more, which the kernel's 32-bit program_id cannot index: launch its "
                          "64-bit form (traced with program_id<i64>) or split the problem");
    }
  }
  if (k.bounds.max_group_threads && g.threads_per_group() > k.bounds.max_group_threads) {
    throw ArgumentError("kernel '" + k.name + "': " + g.describe() + " has work-groups of " +
                        std::to_string(g.threads_per_group()) + " threads, but the kernel declares launch_bounds(" +
                        std::to_string(k.bounds.max_group_threads) +
                        "): launch with smaller work-groups or trace it with a larger bound");
  }
  if (g.threads_per_group() % ir::kShuffleGroupMultiple != 0 && ir::max_shuffle_lanes(k) > 0) {
    throw ArgumentError("kernel '" + k.name + "': " + g.describe() + " has work-groups of " +
                        std::to_string(g.threads_per_group()) +
                        " threads, but the kernel shuffles between threads: " + "launch work-groups of a multiple of " +
                        std::to_string(ir::kShuffleGroupMultiple) + " threads");
  }
}

Timing Backend::time_launches(const ir::Kernel& k, const LaunchGeometry& g,
                              const std::vector<std::vector<Arg>>& arg_sets, const TimingOptions& options) {
  check_timing_options(options);
  if (arg_sets.empty()) throw ArgumentError("time_launches needs at least one argument set");
  Timing t;
  t.timer = timer_name("host clock", options);
  for (int i = 0; i < options.warmup; ++i) launch(k, g, arg_sets[static_cast<std::size_t>(i) % arg_sets.size()]);
  const auto n = static_cast<std::size_t>(options.back_to_back);
  for (std::size_t i = 0; i < static_cast<std::size_t>(options.reps); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t j = 0; j < n; ++j) launch(k, g, arg_sets[(i * n + j) % arg_sets.size()]);
    t.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                        static_cast<double>(n));
  }
  return t;
}

void check_timing_options(const TimingOptions& options) {
  if (options.warmup < 0 || options.reps < 1 || options.back_to_back < 1 || options.back_to_back > 1000) {
    throw ArgumentError("timing options: warmup = " + std::to_string(options.warmup) +
                        " (>= 0), reps = " + std::to_string(options.reps) +
                        " (>= 1) and back_to_back = " + std::to_string(options.back_to_back) +
                        " (launches per timed window, 1 .. 1000) are out of range");
  }
}

std::string timer_name(const std::string& clock, const TimingOptions& options) {
  if (options.back_to_back == 1) return clock;
  return clock + ", " + std::to_string(options.back_to_back) + " launches back to back per window";
}

std::vector<std::uint8_t> poison_bytes(DType t, std::size_t count) {
  return std::vector<std::uint8_t>(count * dtype_size(t), is_float(t) ? 0xff : 0xa5);
}

std::vector<std::uint8_t> pack(DType t, const std::vector<double>& values) {
  const std::size_t es = dtype_size(t);
  std::vector<std::uint8_t> out(values.size() * es);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint64_t bits = ir::bits_of_double(t, values[i]);
    std::memcpy(out.data() + i * es, &bits, es);  // little-endian host
  }
  return out;
}

std::vector<double> unpack(DType t, const std::vector<std::uint8_t>& bytes) {
  const std::size_t es = dtype_size(t);
  std::vector<double> out(bytes.size() / es);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * es, es);
    out[i] = ir::double_of_bits(t, bits);
  }
  return out;
}

BufferPtr make_buffer(Backend& b, DType t, const std::vector<double>& values) {
  auto buf = b.allocate(t, values.size());
  const auto bytes = pack(t, values);
  b.upload(*buf, bytes.data(), bytes.size());
  return buf;
}

std::vector<double> read_buffer(Backend& b, const DeviceBuffer& buf) {
  std::vector<std::uint8_t> bytes(buf.bytes());
  b.download(buf, bytes.data(), bytes.size());
  return unpack(buf.dtype(), bytes);
}

}  // namespace ingot::runtime
