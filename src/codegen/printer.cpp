// The one C-family printer. Everything dialect-specific comes from codegen::Dialect.
#include "ingot/codegen/printer.hpp"

#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "ingot/codegen/dialect.hpp"
#include "ingot/passes/legalise.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::codegen {

namespace {

using ir::ExprId;
using ir::Op;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

const std::set<std::string>& reserved_words() {
  static const std::set<std::string> words = {
      "auto", "bool", "break", "case", "char", "class", "const", "constant", "continue", "default", "delete", "device",
      "do", "double", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "global",
      "goto", "half", "if", "inline", "int", "kernel", "local", "long", "namespace", "new", "operator", "private",
      "protected", "public", "register", "restrict", "return", "sampler", "short", "signed", "sizeof", "static",
      "struct", "switch", "template", "texture", "this", "threadgroup", "true", "typedef", "uchar", "uint", "ulong",
      "union", "unsigned", "ushort", "using", "virtual", "void", "volatile", "while", "size_t", "metal", "threadIdx",
      "blockIdx", "blockDim", "gridDim", "warpSize", "min", "max", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos",
      "tanh", "erf", "pow", "fma", "floor", "ceil", "select", "atomic", "vec", "packed", "read_only", "write_only",
      "image2d_t", "sampler_t", "event_t", "vector", "mem_flags", "as_type", "float2", "float4",
      // built-in functions of OpenCL C / MSL / CUDA that a kernel or parameter name would hide
      "shuffle", "shuffle2", "dot", "cross", "length", "distance", "normalize", "clamp", "mix", "step", "sign",
      "degrees", "radians", "any", "all", "bitselect", "rotate", "popcount", "mad", "hypot", "fmin", "fmax", "fabs",
      "exp2", "log2", "log10", "tan", "atan", "atan2", "round", "trunc", "barrier", "printf", "fract", "modf", "nan",
      "isnan", "isinf", "sincos", "clz"};
  return words;
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '_') out = "v" + out;
  return out;
}

class Printer {
 public:
  Printer(const ir::Kernel& k, Dialect d) : k_(k), d_(std::move(d)) {
    static_assert(std::tuple_size_v<decltype(Dialect{}.f32_fn)> >= 52, "f32_fn must cover every op");
    name_params();
    name_vars();
  }

  KernelSource run() {
    std::ostringstream body;
    block(k_.body, 1, body);
    if (d_.param_style == ParamStyle::VulkanBindings) return run_vulkan(body.str());

    std::ostringstream os;
    os << d_.preamble;
    if (!helpers_used_.empty()) os << "\n" << half_helpers();
    os << "\n" << signature() << " {\n";
    const ir::SharedLayout layout = ir::shared_layout(k_);
    const bool dynamic = d_.static_shared_limit != 0 && layout.bytes > d_.static_shared_limit;
    if (dynamic) os << "  " << d_.dynamic_shared_space << " unsigned char ingot_shared[]" << d_.shared_align << ";\n";
    for (std::size_t i = 0; i < k_.shared.size(); ++i) {
      const std::string t = type(k_.shared[i].type);
      if (dynamic) {
        os << "  " << t << "* const " << shared_names_[i] << " = reinterpret_cast<" << t << "*>(ingot_shared + "
           << layout.offsets[i] << "u);\n";
        continue;
      }
      os << "  " << d_.shared_space << " " << t << " " << shared_names_[i] << "[" << k_.shared[i].count << "]"
         << d_.shared_align << ";\n";
    }
    if (!d_.shared_base.empty()) {
      for (std::size_t i = 0; i < k_.shared.size(); ++i) {
        os << "  const " << type(DType::u32) << " " << shared_names_[i]
           << "_addr = " << replace_all(d_.shared_base, "{array}", shared_names_[i]) << ";\n";
      }
    }
    os << body.str() << "}\n";
    return KernelSource{d_.target, entry_, os.str(), dynamic ? layout.bytes : 0, layout.bytes, {}, 0};
  }

 private:
  // GLSL (ParamStyle::VulkanBindings): the bindings, the push constants and the shared arrays at file scope, then
  // main() (printer.hpp states the ABI).
  KernelSource run_vulkan(const std::string& body) {
    const ir::SharedLayout layout = ir::shared_layout(k_);
    KernelSource out{d_.target, entry_, "", 0, layout.bytes, {}, 0};
    out.push_offsets.assign(k_.params.size(), KernelSource::kNoPushOffset);
    std::ostringstream os, push, locals;
    os << d_.preamble;
    os << "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n";
    std::uint32_t offset = 0;
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const ir::Param& p = k_.params[i];
      const std::string& name = param_names_[i];
      if (ir::is_buffer(p.kind)) {
        if (p.type == DType::boolean) {
          throw std::invalid_argument("the " + d_.name + " dialect has no bool buffers (parameter '" + p.name +
                                      "'): pass u8");
        }
        const std::string binding = "layout(std430, set = 0, binding = " + std::to_string(i) + ") ";
        const std::string access = p.kind == ir::ParamKind::In ? "readonly " : "";
        const auto views = word_views_.find(i);
        // restrict only where no word view aliases the block
        os << binding << access << (views == word_views_.end() ? d_.restrict_word + " " : "") << "buffer ingot_b" << i
           << " { " << type(p.type) << " " << name << "[]; };\n";
        if (views == word_views_.end()) continue;
        for (const std::size_t words : views->second) {
          os << binding << access << "buffer ingot_b" << i << "_w" << words << " { " << word_type(words) << " " << name
             << "_w" << words << "[]; };\n";
        }
        continue;
      }
      // Scalars: 32-bit slots (64-bit for i64); narrower types travel widened and are narrowed in main().
      const std::uint32_t size = p.type == DType::i64 ? 8 : 4;
      offset = (offset + size - 1) / size * size;
      out.push_offsets[i] = offset;
      const std::string slot =
          p.type == DType::f32 || p.type == DType::i32 || p.type == DType::u32 || p.type == DType::i64
              ? type(p.type)
              : type(p.type == DType::i8 ? DType::i32 : DType::u32);
      const bool widened = slot != type(p.type);
      push << "  layout(offset = " << offset << ") " << slot << " " << (widened ? "ingot_pc_" : "") << name << ";\n";
      if (widened) {
        locals << "  const " << type(p.type) << " " << name << " = "
               << (p.type == DType::boolean ? "(ingot_pc_" + name + " != 0u)" : cv(type(p.type), "ingot_pc_" + name))
               << ";\n";
      }
      offset += size;
    }
    out.push_bytes = offset;
    if (offset) os << "layout(push_constant, std430) uniform ingot_scalars {\n" << push.str() << "};\n";
    for (std::size_t i = 0; i < k_.shared.size(); ++i) {
      os << d_.shared_space << " " << type(k_.shared[i].type) << " " << shared_names_[i] << "[" << k_.shared[i].count
         << "];\n";
    }
    if (!helpers_used_.empty()) os << "\n" << half_helpers();
    os << "\n" << d_.kernel_prefix << " " << entry_ << "() {\n" << locals.str() << body << "}\n";
    out.source = os.str();
    return out;
  }

  // ---------------------------------------------------------------- names and types
  void name_params() {
    entry_ = sanitize(k_.name);
    // A kernel named like a keyword or built-in function (e.g. `shuffle` in OpenCL C) would not
    // build or not be found: it is printed as <name>_kernel (KernelSource::entry says so).
    if (reserved(entry_)) entry_ += "_kernel";
    std::set<std::string> used;
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      std::string n = unprefixed(sanitize(k_.params[i].name));
      const bool looks_like_var =
          n.find('_') != std::string::npos && std::isdigit(static_cast<unsigned char>(n.back()));
      if (reserved(n) || n.rfind("ingot_", 0) == 0 || used.count(n) || looks_like_var || n == entry_) {
        n += "_p" + std::to_string(i);
      }
      used.insert(n);
      param_names_.push_back(n);
    }
    for (std::size_t i = 0; i < k_.shared.size(); ++i) {
      shared_names_.push_back(
          unprefixed(sanitize(k_.shared[i].hint.empty() ? "shared" : k_.shared[i].hint) + "_s" + std::to_string(i)));
    }
    if (d_.param_style == ParamStyle::VulkanBindings) entry_ = "main";  // a GLSL shader's entry point
  }
  // n, or "v" + n where n starts with a prefix the dialect reserves.
  [[nodiscard]] std::string unprefixed(const std::string& n) const {
    for (const auto& p : d_.reserved_prefixes) {
      if (n.rfind(p, 0) == 0) return "v" + n;
    }
    return n;
  }
  [[nodiscard]] bool reserved(const std::string& n) const {
    return reserved_words().count(n) != 0 || d_.reserved_words.count(n) != 0;
  }
  // An index expression where it subscripts an array: converted to u32 where the dialect's subscripts are 32-bit
  // (Dialect::narrow_indexes) and the index is wider.
  std::string subscript(ExprId e) {
    if (d_.narrow_indexes && dtype_bits(k_.exprs[e].type) > 32) return cv(type(DType::u32), expr(e));
    return expr(e);
  }

  // A conversion of x to type t: C's cast `((t)(x))` (outer: the outer parentheses; inner: those around x), or the
  // constructor `t(x)` where the dialect has no casts (GLSL).
  [[nodiscard]] std::string cv(const std::string& t, const std::string& x, bool outer = true, bool inner = true) const {
    if (d_.cast_style == CastStyle::Constructor) return t + "(" + x + ")";
    std::string c = "(" + t + ")";
    c += inner ? "(" + x + ")" : x;
    return outer ? "(" + c + ")" : c;
  }
  // Variables some expression reads (a vector load's unread lanes are not declared: compilers
  // warn about unused variables).
  // A vector copied as it was loaded (loaded_vector) and mma operand pairs that are words of a
  // vector load (loaded_word) read the printed vector, not the element variables.
  void find_read_vars() {
    var_read_.assign(k_.vars.size(), false);
    std::vector<bool> seen(k_.exprs.size(), false);
    std::vector<ExprId> stack;
    const auto walk = [&](const std::function<void(const ir::Stmt&)>& f) {
      std::vector<const ir::Block*> blocks{&k_.body};
      while (!blocks.empty()) {
        const ir::Block* b = blocks.back();
        blocks.pop_back();
        for (const ir::Stmt& st : *b) {
          f(st);
          blocks.push_back(&st.body);
          blocks.push_back(&st.else_body);
        }
      }
    };
    walk([&](const ir::Stmt& st) {
      if (st.kind == ir::StmtKind::LoadMatrix) {  // four words, two elements each (ir.hpp's order)
        for (std::size_t j = 0; j < st.vars.size(); ++j) {
          loaded_[st.vars[j]] = LoadedElement{"ingot_lm" + std::to_string(st.loc), 4, j, k_.mem_type(st.mem)};
        }
        return;
      }
      if (st.kind != ir::StmtKind::LoadVec) return;
      const DType t = k_.mem_type(st.mem);
      const std::size_t words = st.vars.size() * dtype_size(t) / 4;
      for (std::size_t j = 0; j < st.vars.size(); ++j) {
        loaded_[st.vars[j]] = LoadedElement{"ingot_vec" + std::to_string(st.loc), words, j, t};
      }
    });
    walk([&](const ir::Stmt& st) {
      if (st.kind == ir::StmtKind::StoreVec) {
        if (const std::string v = loaded_vector(st.values, k_.mem_type(st.mem)); !v.empty()) {
          vec_used_.insert(v);
          stack.push_back(st.a);
          return;
        }
      }
      if (st.kind == ir::StmtKind::Mma && d_.mma_m16n8k16.count(st.elem)) {
        for (std::size_t j = 0; j < st.values.size(); ++j) {
          if (j < 12 && j % 2 == 0) {
            if (const std::string w = mma_loaded_word(st, j); !w.empty()) {
              vec_used_.insert(loaded_element(k_.exprs[st.values[j]].a)->vec);
              ++j;
              continue;
            }
          }
          stack.push_back(st.values[j]);
        }
        return;
      }
      ir::for_each_operand(st, [&](ExprId r) { stack.push_back(r); });
    });
    for (const auto& p : k_.params) {
      if (p.extent != ir::kNoExpr) stack.push_back(p.extent);
    }
    while (!stack.empty()) {
      const ExprId e = stack.back();
      stack.pop_back();
      if (seen[e]) continue;
      seen[e] = true;
      const ir::Node& n = k_.exprs[e];
      if (n.op == Op::VarRef) var_read_[n.imm] = true;
      for (ExprId o : {n.a, n.b, n.c}) {
        if (o != ir::kNoExpr) stack.push_back(o);
      }
    }
  }
  void name_vars() {
    find_read_vars();
    for (std::size_t v = 0; v < k_.vars.size(); ++v) {
      var_names_.push_back(
          unprefixed(sanitize(k_.vars[v].hint.empty() ? "v" : k_.vars[v].hint) + "_" + std::to_string(v)));
    }
  }
  [[nodiscard]] const std::string& type(DType t) const { return d_.types[static_cast<std::size_t>(t)]; }
  [[nodiscard]] const std::string& utype(DType t) const { return d_.unsigned_of[static_cast<std::size_t>(t)]; }
  [[nodiscard]] std::string scalar_param_type(DType t) const { return t == DType::boolean ? type(DType::u8) : type(t); }
  [[nodiscard]] std::string mem_name(ir::MemRef m) const {
    return m.space == ir::Space::Global ? param_names_.at(m.id) : shared_names_.at(m.id);
  }
  [[nodiscard]] std::string space_of(ir::MemRef m) const {
    return m.space == ir::Space::Global ? d_.global_space : d_.shared_pointer_space;
  }
  // Shared memory through 32-bit addresses (Dialect::shared_base): the array's address plus the element's byte offset.
  [[nodiscard]] bool shared_by_address(ir::MemRef m) const {
    return m.space == ir::Space::Shared && !d_.shared_base.empty();
  }
  std::string shared_address(ir::MemRef m, ir::ExprId index) {
    if (d_.shared_base.empty()) {
      throw std::logic_error("the " + d_.name + " dialect names a 32-bit shared address without shared_base");
    }
    const std::string u = type(DType::u32);
    return "(" + shared_names_.at(m.id) + "_addr + (" + u + ")(" + expr(index) + ") * " +
           std::to_string(dtype_size(k_.mem_type(m))) + "u)";
  }
  // A call of the helper helpers[key] at the element's address (with `value` as its second argument where given).
  std::string shared_call(const std::map<std::uint32_t, std::string>& helpers, std::size_t key, ir::MemRef m,
                          ir::ExprId index, const std::string& value) {
    const auto h = helpers.find(static_cast<std::uint32_t>(key));
    if (h == helpers.end()) {
      throw std::logic_error(
          "the " + d_.name + " dialect has no shared-memory access of " + std::to_string(key) +
          (&helpers == &d_.shared_load_words || &helpers == &d_.shared_store_words ? " words" : " bytes"));
    }
    helpers_used_.insert(h->second);
    return h->second + "(" + shared_address(m, index) + (value.empty() ? "" : ", " + value) + ")";
  }
  // A value of type t from the unsigned bits a shared load returns, and the bits a shared store takes.
  std::string from_bits(DType t, const std::string& b) const {
    switch (t) {
      case DType::f32: return replace_all(d_.uint_as_float, "{x}", b);
      case DType::boolean: return "((" + b + ") != 0)";
      case DType::i8: return "((" + type(t) + ")(" + type(DType::u8) + ")(" + b + "))";
      default: return "((" + type(t) + ")(" + b + "))";
    }
  }
  std::string to_bits(DType t, const std::string& v) const {
    switch (t) {
      case DType::f32: return replace_all(d_.float_as_uint, "{x}", v);
      case DType::boolean: return "((" + v + ") ? 1u : 0u)";
      case DType::i8: return "((" + type(DType::u8) + ")(" + v + "))";
      default: {
        const std::size_t es = dtype_size(t);
        const std::string u = es == 1   ? type(DType::u8)
                              : es == 2 ? type(DType::u16)
                              : es == 4 ? type(DType::u32)
                                        : "unsigned long long";  // (i64)
        return "((" + u + ")(" + v + "))";
      }
    }
  }

  std::string signature() const {
    std::ostringstream os;
    std::string bounds;
    if (k_.bounds.max_group_threads) {
      bounds = k_.bounds.min_groups_per_core ? d_.launch_bounds_min : d_.launch_bounds;
      bounds = replace_all(bounds, "{max}", std::to_string(k_.bounds.max_group_threads));
      bounds = replace_all(bounds, "{min}", std::to_string(k_.bounds.min_groups_per_core));
    }
    if (bounds.empty()) {
      os << d_.kernel_prefix << " " << entry_ << "(";
    } else if (d_.launch_bounds_place == LaunchBoundsPlace::BeforePrefix) {
      os << bounds << "\n" << d_.kernel_prefix << " " << entry_ << "(";
    } else {
      os << d_.kernel_prefix << " " << bounds << " " << entry_ << "(";
    }
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const ir::Param& p = k_.params[i];
      std::string s;
      if (ir::is_buffer(p.kind)) {
        if (!d_.global_space.empty()) s += d_.global_space + " ";
        if (p.kind == ir::ParamKind::In) s += d_.const_word + " ";
        s += type(p.type) + "* " + (d_.restrict_word.empty() ? "" : d_.restrict_word + " ") + param_names_[i];
      } else if (d_.param_style == ParamStyle::MetalBuffer) {
        s += "constant " + scalar_param_type(p.type) + "& " + param_names_[i];
      } else {
        s += "const " + scalar_param_type(p.type) + " " + param_names_[i];
      }
      if (d_.param_style == ParamStyle::MetalBuffer) s += " [[buffer(" + std::to_string(i) + ")]]";
      parts.push_back(s);
    }
    if (d_.index_style == IndexStyle::MetalArguments) {
      parts.emplace_back("uint3 ingot_local_id [[thread_position_in_threadgroup]]");
      parts.emplace_back("uint3 ingot_group_id [[threadgroup_position_in_grid]]");
      parts.emplace_back("uint3 ingot_group_size [[threads_per_threadgroup]]");
      parts.emplace_back("uint3 ingot_num_groups [[threadgroups_per_grid]]");
    }
    for (std::size_t i = 0; i < parts.size(); ++i) os << (i ? ",\n    " : "\n    ") << parts[i];
    os << ")";
    return os.str();
  }

  // ---------------------------------------------------------------- 16-bit float helpers
  std::string half_helpers() const {
    // The same integer algorithm as src/ir/dtype.cpp, so every backend rounds identically.
    std::string h = R"(// f16/bf16 <-> f32, round to nearest even (identical to ingot's host conversion)
{P} {US} ingot_f32_to_f16(float f) {
  {U} x = {F2U(f)};
  {U} sign = (x >> 16) & 0x8000u;
  {U} a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return ({US})(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (a >= 0x477ff000u) return ({US})(sign | 0x7c00u);
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return ({US})sign;
    {U} sh = 126u - (a >> 23);
    {U} m = (a & 0x7fffffu) | 0x800000u;
    {U} r = m >> sh;
    {U} rem = m & ((1u << sh) - 1u);
    {U} mid = 1u << (sh - 1u);
    if (rem > mid || (rem == mid && (r & 1u) != 0u)) r += 1u;
    return ({US})(sign | r);
  }
  {U} r = (a - 0x38000000u) >> 13;
  {U} rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u) != 0u)) r += 1u;
  return ({US})(sign | r);
}
{P} float ingot_f16_to_f32({US} h) {
  {U} sign = (({U})h & 0x8000u) << 16;
  {U} e = (({U})h >> 10) & 0x1fu;
  {U} m = ({U})h & 0x3ffu;
  {U} out;
  if (e == 0x1fu) {
    out = sign | 0x7f800000u | (m << 13) | (m != 0u ? 0x400000u : 0u);
  } else if (e == 0u) {
    out = sign | {F2U((float)m * 5.9604644775390625e-08f)};  // subnormal: exactly m * 2^-24
  } else {
    out = sign | ((e + 112u) << 23) | (m << 13);
  }
  return {U2F(out)};
}
{P} {US} ingot_f32_to_bf16(float f) {
  {U} x = {F2U(f)};
  if ((x & 0x7fffffffu) > 0x7f800000u) return ({US})((x >> 16) | 0x40u);
  return ({US})((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
{P} float ingot_bf16_to_f32({US} h) { return {U2F((({U})h) << 16)}; }
)";
    h = replace_all(h, "{F2U(f)}", replace_all(d_.float_as_uint, "{x}", "f"));
    h = replace_all(h, "{U2F(out)}", replace_all(d_.uint_as_float, "{x}", "out"));
    h = replace_all(h, "{F2U((float)m * 5.9604644775390625e-08f)}",
                    replace_all(d_.float_as_uint, "{x}", "(float)m * 5.9604644775390625e-08f"));
    h = replace_all(h, "{U2F((({U})h) << 16)}", replace_all(d_.uint_as_float, "{x}", "(({U})h) << 16"));
    h = replace_all(h, "{P}", d_.helper_prefix);
    h = replace_all(h, "{US}", type(DType::u16));
    h = replace_all(h, "{U}", type(DType::u32));
    // The comment line, then one definition per helper this kernel calls: the dialect's own
    // (conversion_helpers), else the portable one above.
    std::map<std::string, std::string> portable;  // helper name -> definition
    const std::string prefix = d_.helper_prefix + " ";
    // (a dialect without a helper prefix, GLSL, defines every helper itself: conversion_helpers)
    for (std::size_t start = d_.helper_prefix.empty() ? std::string::npos : h.find(prefix);
         start != std::string::npos;) {
      const std::size_t next = h.find("\n" + prefix, start);
      std::string fn = h.substr(start, next == std::string::npos ? std::string::npos : next + 1 - start);
      const std::size_t paren = fn.find('(');
      const std::size_t name_at = fn.rfind(' ', paren) + 1;
      portable.emplace(fn.substr(name_at, paren - name_at), std::move(fn));
      start = next == std::string::npos ? next : next + 1;
    }
    std::string out = h.substr(0, h.find('\n') + 1);
    for (const auto& used : helpers_used_) {
      const auto q = portable.find(used);
      if (const auto o = d_.conversion_helpers.find(used); o != d_.conversion_helpers.end()) {
        if (!d_.portable_helpers_macro.empty() && q != portable.end()) {
          out += "#ifdef " + d_.portable_helpers_macro + "\n" + q->second + "#else\n" + o->second + "#endif\n";
        } else {
          out += o->second;
        }
      } else if (q != portable.end()) {
        out += q->second;
      } else {
        throw std::logic_error("printer: helper '" + used + "' has no definition in the " + d_.name + " dialect");
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- expressions
  std::string axis(const std::string& pattern, std::uint64_t a) const {
    return replace_all(pattern, "{a}", d_.axis.at(a));
  }

  std::string literal(DType t, std::uint64_t bits) const {
    switch (t) {
      case DType::f32: {
        const float f = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
        if (std::isnan(f)) return d_.nan;
        if (std::isinf(f)) return f > 0 ? d_.infinity : "(-" + d_.infinity + ")";
        char buf[48];
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
        std::string s = buf;
        if (s.find_first_of(".e") == std::string::npos) s += ".0";
        return s + "f";
      }
      case DType::i32: {
        const auto v = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
        return v == INT32_MIN ? "(-2147483647 - 1)" : (v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v));
      }
      case DType::u32: return std::to_string(static_cast<std::uint32_t>(bits)) + "u";
      case DType::i64: {
        const auto v = static_cast<std::int64_t>(bits);
        if (v == INT64_MIN) return "(-9223372036854775807" + d_.i64_suffix + " - 1" + d_.i64_suffix + ")";
        return v < 0 ? "(" + std::to_string(v) + d_.i64_suffix + ")" : std::to_string(v) + d_.i64_suffix;
      }
      case DType::boolean: return (bits & 1u) ? "true" : "false";
      case DType::f16:
      case DType::bf16:
      case DType::u8:
      case DType::i8:
      case DType::u16: {
        return cv(type(t), std::to_string(ir::int_of_bits(is_16bit_float(t) ? DType::u16 : t, bits)), true, false);
      }
    }
    return "?";
  }

  std::string to_f32(DType from, const std::string& x) {
    if (from == DType::f32) return x;
    if (from == DType::f16) return uses16("ingot_f16_to_f32", x);
    if (from == DType::bf16) return uses16("ingot_bf16_to_f32", x);
    return cv("float", x);
  }
  std::string uses16(const std::string& helper, const std::string& x) {
    helpers_used_.insert(helper);
    return helper + "(" + x + ")";
  }

  std::string cast(DType from, DType to, const std::string& x) {
    if (from == to) return x;
    if (to == DType::boolean) {
      if (is_float(from)) return "(" + to_f32(from, x) + " != 0.0f)";
      return "(" + x + " != 0)";
    }
    if (to == DType::f16) return uses16("ingot_f32_to_f16", to_f32(from, x));
    if (to == DType::bf16) return uses16("ingot_f32_to_bf16", to_f32(from, x));
    if (to == DType::f32) return to_f32(from, x);
    if (is_16bit_float(from)) return cv(type(to), to_f32(from, x), true, false);
    return cv(type(to), x);
  }

  std::string bitcast(DType from, DType to, const std::string& x) const {
    if (from == to) return x;
    if (to == DType::f32) return replace_all(d_.uint_as_float, "{x}", cv(type(DType::u32), x));
    if (from == DType::f32) return cv(type(to), replace_all(d_.float_as_uint, "{x}", x), true, false);
    return cv(type(to), x);  // i32 <-> u32: same bits (two's complement)
  }

  // Signed add/sub/mul/neg/shl go through the unsigned type: the IR defines wrap-around,
  // which C leaves undefined for signed types.
  std::string wrap_signed(DType t, const std::string& a, const std::string& op, const std::string& b) const {
    return cv(type(t), cv(utype(t), a, false, false) + " " + op + " " + cv(utype(t), b, false, false));
  }

  std::string expr(ExprId e) {
    if (auto it = temps_.find(e); it != temps_.end()) return it->second;
    const ir::Node& n = k_.exprs[e];
    const auto& info = ir::op_info(n.op);
    switch (n.op) {
      case Op::Const: return literal(n.type, n.imm);
      case Op::ParamRef: return param_names_.at(n.imm);
      case Op::VarRef: return var_names_.at(n.imm);
      case Op::ProgramId: {
        if (n.type != DType::i64) return axis(d_.program_id, n.imm);
        // The 64-bit global index from the dialect's group id, size and local id, each widened before the multiply.
        const std::string& t = type(DType::i64);
        return "(" + cv(t, axis(d_.group_id, n.imm), false, false) + " * " +
               cv(t, axis(d_.group_size, n.imm), false, false) + " + " + cv(t, axis(d_.local_id, n.imm), false, false) +
               ")";
      }
      case Op::LocalId: return axis(d_.local_id, n.imm);
      case Op::GroupId: return axis(d_.group_id, n.imm);
      case Op::GroupSize: return axis(d_.group_size, n.imm);
      case Op::NumGroups: return axis(d_.num_groups, n.imm);
      case Op::Load: {
        const ir::MemRef m = ir::decode_mem(n.imm);
        if (shared_by_address(m)) return from_bits(n.type, shared_call(d_.shared_load, dtype_size(n.type), m, n.a, ""));
        return mem_name(m) + "[" + subscript(n.a) + "]";
      }
      case Op::Cast: return cast(k_.exprs[n.a].type, n.type, expr(n.a));
      case Op::Bitcast: return bitcast(k_.exprs[n.a].type, n.type, expr(n.a));
      case Op::Select: return "(" + expr(n.a) + " ? " + expr(n.b) + " : " + expr(n.c) + ")";
      default: break;
    }
    const DType at = k_.exprs[n.a].type;
    const bool f = at == DType::f32;
    const bool signed_int = is_signed_integer(at);
    switch (n.op) {
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
        if (signed_int) return wrap_signed(at, expr(n.a), std::string(info.name), expr(n.b));
        break;
      case Op::Shl:
        if (signed_int) return wrap_signed(at, expr(n.a), "<<", expr(n.b));
        break;
      case Op::Neg:
        if (signed_int) return wrap_signed(at, "0", "-", expr(n.a));
        if (is_integer(at)) return "(0u - " + expr(n.a) + ")";
        return "(-" + expr(n.a) + ")";
      case Op::Mod:
        if (f) return fn(n.op) + "(" + expr(n.a) + ", " + expr(n.b) + ")";
        break;
      case Op::Min:
      case Op::Max:
        if (f) return fn(n.op) + "(" + expr(n.a) + ", " + expr(n.b) + ")";
        return (n.op == Op::Min ? d_.int_min : d_.int_max) + "(" + expr(n.a) + ", " + expr(n.b) + ")";
      case Op::Abs:
        if (f) return fn(n.op) + "(" + expr(n.a) + ")";
        if (!signed_int) return expr(n.a);
        if (at == DType::i64 && (d_.target == Target::CUDA || d_.target == Target::HIP))
          return "llabs(" + expr(n.a) + ")";
        return cv(type(at), d_.int_abs + "(" + expr(n.a) + ")", true, false);
      default: break;
    }
    if (info.precedence != 0 && info.arity == 2)
      return "(" + expr(n.a) + " " + std::string(info.name) + " " + expr(n.b) + ")";
    if (info.precedence != 0 && info.arity == 1) return "(" + std::string(info.name) + expr(n.a) + ")";
    // math functions
    std::string out = fn(n.op) + "(";
    const ExprId ops[3] = {n.a, n.b, n.c};
    for (int i = 0; i < info.arity; ++i) out += (i ? ", " : "") + expr(ops[i]);
    return out + ")";
  }

  std::string fn(Op op) {
    const std::string& s = d_.f32_fn.at(static_cast<std::size_t>(op));
    if (s.empty()) {
      throw passes::LegaliseError("the " + d_.name + " dialect has no spelling for op '" +
                                  std::string(ir::op_info(op).name) + "'");
    }
    if (d_.conversion_helpers.count(s)) helpers_used_.insert(s);  // a function the dialect defines itself
    return s;
  }

  // ---------------------------------------------------------------- statements
  void block(const ir::Block& b, int depth, std::ostringstream& os) {
    for (const ir::Stmt& s : b) stmt(s, depth, os);
  }

  // Values used more than once within one statement get a named temporary, declared just
  // before the statement (loop bounds are re-evaluated per iteration, so never for For).
  void declare_temps(const ir::Stmt& s, const std::string& ind, std::ostringstream& os) {
    temps_.clear();
    if (s.kind == ir::StmtKind::For || s.kind == ir::StmtKind::Block || s.kind == ir::StmtKind::Barrier ||
        s.kind == ir::StmtKind::SharedAlloc) {
      return;
    }
    std::map<ExprId, int> uses;
    std::set<ExprId> seen;
    std::vector<ExprId> stack;
    ir::for_each_operand(s, [&](ExprId r) { stack.push_back(r); });
    while (!stack.empty()) {
      const ExprId e = stack.back();
      stack.pop_back();
      if (!seen.insert(e).second) continue;
      const ir::Node& n = k_.exprs[e];
      for (ExprId o : {n.a, n.b, n.c}) {
        if (o == ir::kNoExpr) continue;
        ++uses[o];
        stack.push_back(o);
      }
    }
    for (const auto& [e, count] : uses) {  // ascending ids: operands before users
      const ir::Node& n = k_.exprs[e];
      const bool trivial = n.op == Op::Const || n.op == Op::ParamRef || n.op == Op::VarRef || n.op == Op::LocalId ||
                           n.op == Op::GroupId || n.op == Op::GroupSize || n.op == Op::NumGroups || n.op == Op::Load;
      if (count < 2 || trivial) continue;
      const std::string name = "t" + std::to_string(next_temp_++);
      const std::string value = expr(e);
      os << ind << "const " << type(n.type) << " " << name << " = " << value << ";\n";
      temps_[e] = name;
    }
  }

  void stmt(const ir::Stmt& s, int depth, std::ostringstream& os) {
    const std::string ind(static_cast<std::size_t>(depth) * 2, ' ');
    declare_temps(s, ind, os);
    switch (s.kind) {
      case ir::StmtKind::Block:
        os << ind << "{\n";
        block(s.body, depth + 1, os);
        os << ind << "}\n";
        break;
      case ir::StmtKind::Let: {
        const auto& v = k_.vars.at(s.var);
        os << ind << (v.is_mutable ? "" : "const ") << type(v.type) << " " << var_names_[s.var] << " = " << expr(s.a)
           << ";\n";
        break;
      }
      case ir::StmtKind::Assign: os << ind << var_names_[s.var] << " = " << expr(s.a) << ";\n"; break;
      case ir::StmtKind::Shuffle: {
        std::string call = replace_all(d_.shuffle, "{v}", expr(s.a));
        call = replace_all(call, "{src}", expr(s.b));
        call = replace_all(call, "{lanes}", std::to_string(s.lanes));
        os << ind << "const " << type(k_.vars.at(s.var).type) << " " << var_names_[s.var] << " = " << call << ";\n";
        break;
      }
      case ir::StmtKind::Store:
        if (shared_by_address(s.mem)) {
          const DType t = k_.mem_type(s.mem);
          os << ind << shared_call(d_.shared_store, dtype_size(t), s.mem, s.a, to_bits(t, expr(s.b))) << ";\n";
          break;
        }
        os << ind << mem_name(s.mem) << "[" << subscript(s.a) << "] = " << expr(s.b) << ";\n";
        break;
      case ir::StmtKind::If:
        os << ind << "if (" << expr(s.a) << ") {\n";
        temps_.clear();
        block(s.body, depth + 1, os);
        if (!s.else_body.empty()) {
          os << ind << "} else {\n";
          block(s.else_body, depth + 1, os);
        }
        os << ind << "}\n";
        break;
      case ir::StmtKind::For: {
        temps_.clear();
        const std::string& v = var_names_[s.var];
        os << ind << "for (" << type(k_.vars[s.var].type) << " " << v << " = " << expr(s.a) << "; " << v << " < "
           << expr(s.b) << "; " << v << " += " << expr(s.c) << ") {\n";
        block(s.body, depth + 1, os);
        os << ind << "}\n";
        break;
      }
      case ir::StmtKind::Barrier: os << ind << d_.barrier << "\n"; break;
      case ir::StmtKind::SharedAlloc:
        os << ind << "// shared array " << shared_names_.at(s.shared) << " is declared at the top of the kernel\n";
        break;
      case ir::StmtKind::Atomic: atomic(s, ind, os); break;
      case ir::StmtKind::LoadVec: load_vec(s, ind, os); break;
      case ir::StmtKind::StoreVec: store_vec(s, ind, os); break;
      case ir::StmtKind::Mma: mma(s, ind, os); break;
      case ir::StmtKind::CopyAsync: {
        const auto bytes = static_cast<std::uint32_t>(s.count * dtype_size(k_.mem_type(s.mem)));
        const auto form = d_.copy_async.find(bytes);
        if (form == d_.copy_async.end()) {
          throw std::logic_error("the " + d_.name + " dialect has no asynchronous copy of " + std::to_string(bytes) +
                                 " bytes (legalise should have removed it)");
        }
        const ir::MemRef dst{ir::Space::Shared, s.shared};
        std::string line = replace_all(form->second, "{dst}", "&" + mem_name(dst) + "[" + expr(s.a) + "]");
        if (line.find("{dst_addr}") != std::string::npos)
          line = replace_all(line, "{dst_addr}", shared_address(dst, s.a));
        line = replace_all(line, "{src}", "&" + mem_name(s.mem) + "[" + expr(s.b) + "]");
        os << ind << replace_all(line, "{ok}", expr(s.c)) << "\n";
        break;
      }
      case ir::StmtKind::LoadMatrix: load_matrix(s, ind, os); break;
      case ir::StmtKind::AsyncCommit: os << ind << d_.async_commit << "\n"; break;
      case ir::StmtKind::AsyncWait:
        os << ind << replace_all(d_.async_wait, "{n}", std::to_string(s.count)) << "\n";
        break;
    }
  }

  // Tensor-core mma (Dialect::mma_m16n8k16; legalise removed Mma statements where it is empty):
  // operands packed two to a word, the lower element in the low half (PTX f16x2/bf16x2).
  void mma(const ir::Stmt& s, const std::string& ind, std::ostringstream& os) {
    const auto instr = d_.mma_m16n8k16.find(s.elem);
    const auto pack = d_.pack2_helpers.find(s.elem);
    if (instr == d_.mma_m16n8k16.end() || pack == d_.pack2_helpers.end()) {
      throw std::logic_error("the " + d_.name + " dialect has no mma for " + std::string(dtype_name(s.elem)));
    }
    const std::string u = type(DType::u32);
    // The 16 bits of operand v when they need no rounding at run time: a 16-bit element of s.elem
    // converted to f32 (that element), or a constant (rounded here, as the hardware would); else "".
    const auto bits = [&](ir::ExprId v) -> std::string {
      const ir::Node& n = k_.exprs[v];
      if (n.op == ir::Op::Cast && k_.exprs[n.a].type == s.elem) return "(" + u + ")(" + expr(n.a) + ")";
      if (n.op == ir::Op::Const && n.type == DType::f32) {
        const float f = std::bit_cast<float>(static_cast<std::uint32_t>(n.imm));
        const std::uint16_t h = s.elem == DType::bf16 ? f32_to_bf16_bits(f) : f32_to_f16_bits(f);
        return std::to_string(h) + "u";
      }
      return "";
    };
    std::vector<std::string> words;
    for (std::size_t j = 0; j < 12; j += 2) {
      if (std::string w = mma_loaded_word(s, j); !w.empty()) {  // a word of a vector load, as it is
        words.push_back(std::move(w));
        continue;
      }
      const std::string lo = bits(s.values[j]), hi = bits(s.values[j + 1]);
      if (!lo.empty() && !hi.empty()) {  // already of the type: the bits, no rounding
        std::string w = "(";
        w += lo;
        w += " | (";
        w += hi;
        w += " << 16))";
        words.push_back(std::move(w));
      } else {
        words.push_back(uses16(pack->second, expr(s.values[j]) + ", " + expr(s.values[j + 1])));
      }
    }
    for (const ir::VarId v : s.vars) os << ind << type(DType::f32) << " " << var_names_[v] << ";\n";
    // volatile: kept where it is, outside any branch (.aligned: the whole warp executes it together)
    os << ind << "asm volatile(\"" << instr->second
       << " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\"\n";
    os << ind << "    : \"=f\"(" << var_names_[s.vars[0]] << "), \"=f\"(" << var_names_[s.vars[1]] << "), \"=f\"("
       << var_names_[s.vars[2]] << "), \"=f\"(" << var_names_[s.vars[3]] << ")\n";
    os << ind << "    : ";
    for (std::size_t w = 0; w < words.size(); ++w) os << "\"r\"(" << words[w] << "), ";
    for (std::size_t i = 12; i < 16; ++i) os << "\"f\"(" << expr(s.values[i]) << ")" << (i < 15 ? ", " : ");\n");
  }

  // Vector access as 1, 2 or 4 32-bit words through a pointer cast; elements are packed
  // little-endian within a word (element j of a word at bit 8 * size * j), as on every target.
  [[nodiscard]] std::string word_type(std::size_t words) const {
    return words == 1 ? type(DType::u32) : replace_all(d_.word_vector_type, "{n}", std::to_string(words));
  }
  [[nodiscard]] std::string word_pointer(const ir::Stmt& s, std::size_t words, bool is_const) {
    std::string space = space_of(s.mem);
    if (!space.empty()) space += " ";
    return "((" + space + (is_const ? "const " : "") + word_type(words) + "*)(&" + mem_name(s.mem) + "[" + expr(s.a) +
           "]))";
  }
  // VectorAccess::WordViews. A global buffer: element i of its word view (`<buffer>_w<words>`, declared with the
  // bindings), the vector's index divided by its elements (ir.hpp: a multiple of them). A shared array: the words
  // assembled from its elements, little-endian like the pointer casts, the index held in a variable.
  std::string view_index(const ir::Stmt& s, std::size_t words) {
    word_views_[s.mem.id].insert(words);
    const std::size_t per_vector = words * 4 / dtype_size(k_.mem_type(s.mem));
    return mem_name(s.mem) + "_w" + std::to_string(words) + "[(" + subscript(s.a) + ") / " +
           std::to_string(per_vector) + "u]";
  }
  std::string shared_index(const ir::Stmt& s, const std::string& ind, std::ostringstream& os) {
    const std::string i = "ingot_vi" + std::to_string(s.loc);
    const DType it = d_.narrow_indexes && dtype_bits(k_.exprs[s.a].type) > 32 ? DType::u32 : k_.exprs[s.a].type;
    os << ind << "const " << type(it) << " " << i << " = " << subscript(s.a) << ";\n";
    return i;
  }
  std::string view_words(const ir::Stmt& s, std::size_t words, const std::string& ind, std::ostringstream& os) {
    if (s.mem.space == ir::Space::Global) return view_index(s, words);
    const DType t = k_.mem_type(s.mem);
    const std::size_t es = dtype_size(t), per_word = 4 / es;
    const std::string i = shared_index(s, ind, os), u = type(DType::u32);
    std::string args;
    for (std::size_t w = 0; w < words; ++w) {
      std::string word;
      for (std::size_t j = 0; j < per_word; ++j) {
        const std::string e = mem_name(s.mem) + "[" + i + " + " + std::to_string(w * per_word + j) + "]";
        std::string bits = t == DType::f32 ? replace_all(d_.float_as_uint, "{x}", e)
                           : es == 4       ? cv(u, e)
                                           : cv(u, cv(type(es == 1 ? DType::u8 : DType::u16), e));
        if (j) bits = "(" + bits + " << " + std::to_string(8 * es * j) + "u)";
        word += (j ? " | " : "") + bits;
      }
      args += (w ? ", " : "") + word;
    }
    return words == 1 ? args
                      : replace_all(replace_all(d_.word_vector_make, "{n}", std::to_string(words)), "{args}", args);
  }
  void store_view_words(const ir::Stmt& s, std::size_t words, const std::string& value, const std::string& ind,
                        std::ostringstream& os) {
    if (s.mem.space == ir::Space::Global) {
      os << ind << view_index(s, words) << " = " << value << ";\n";
      return;
    }
    const DType t = k_.mem_type(s.mem);
    const std::size_t es = dtype_size(t), per_word = 4 / es;
    const std::string i = shared_index(s, ind, os), w = "ingot_sw" + std::to_string(s.loc);
    os << ind << "const " << word_type(words) << " " << w << " = " << value << ";\n";
    for (std::size_t e = 0; e < words * per_word; ++e) {
      std::string bits = word_part(w, words, e / per_word);
      if (e % per_word) bits = "(" + bits + " >> " + std::to_string(8 * es * (e % per_word)) + "u)";
      const std::string v = t == DType::f32  ? replace_all(d_.uint_as_float, "{x}", bits)
                            : es == 4        ? cv(type(t), bits)
                            : t == DType::i8 ? cv(type(t), cv(type(DType::u8), bits))
                                             : cv(type(t), bits);
      os << ind << mem_name(s.mem) << "[" << i << " + " << e << "] = " << v << ";\n";
    }
  }
  static std::string word_part(const std::string& v, std::size_t words, std::size_t w) {
    static const char* const comp[4] = {".x", ".y", ".z", ".w"};
    return words == 1 ? v : v + comp[w];
  }

  // Where a vector load's element variables came from: the printed vector and the element's place.
  struct LoadedElement {
    std::string vec;
    std::size_t words = 0, index = 0;
    DType type{};
  };
  [[nodiscard]] const LoadedElement* loaded_element(ir::ExprId e) const {
    const ir::Node& n = k_.exprs[e];
    if (n.op != ir::Op::VarRef) return nullptr;
    const auto it = loaded_.find(static_cast<ir::VarId>(n.imm));
    return it == loaded_.end() ? nullptr : &it->second;
  }
  // The 32-bit word of a vector load that holds exactly the 16-bit elements lo, hi (in that order),
  // or "": such a pair is moved as the word, without unpacking and packing it again.
  [[nodiscard]] std::string loaded_word(ir::ExprId lo, ir::ExprId hi) const {
    const LoadedElement* a = loaded_element(lo);
    const LoadedElement* b = loaded_element(hi);
    if (!a || !b || a->vec != b->vec || dtype_size(a->type) != 2 || a->index % 2 != 0 || b->index != a->index + 1) {
      return "";
    }
    return word_part(a->vec, a->words, a->index / 2);
  }
  // Mma operands j, j + 1 (j even) when they are a word of a vector load of the mma's element type
  // converted to f32 (loaded_word), else "".
  [[nodiscard]] std::string mma_loaded_word(const ir::Stmt& s, std::size_t j) const {
    const ir::Node &lo = k_.exprs[s.values[j]], &hi = k_.exprs[s.values[j + 1]];
    if (lo.op != ir::Op::Cast || hi.op != ir::Op::Cast || k_.exprs[lo.a].type != s.elem ||
        k_.exprs[hi.a].type != s.elem) {
      return "";
    }
    return loaded_word(lo.a, hi.a);
  }
  // The printed vector when values are exactly the elements of one vector load of the same type, in
  // order (a copy): "" otherwise.
  [[nodiscard]] std::string loaded_vector(const std::vector<ir::ExprId>& values, DType t) const {
    const LoadedElement* first = values.empty() ? nullptr : loaded_element(values[0]);
    if (!first || first->type != t || first->words * 4 != values.size() * dtype_size(t)) return "";
    for (std::size_t j = 0; j < values.size(); ++j) {
      const LoadedElement* e = loaded_element(values[j]);
      if (!e || e->vec != first->vec || e->index != j) return "";
    }
    return first->vec;
  }

  void load_vec(const ir::Stmt& s, const std::string& ind, std::ostringstream& os) {
    const DType t = k_.mem_type(s.mem);
    const std::size_t es = dtype_size(t), per_word = 4 / es, words = s.vars.size() * es / 4;
    const std::string v = "ingot_vec" + std::to_string(s.loc);
    bool any_read = false;
    for (const ir::VarId var : s.vars) any_read = any_read || var_read_[var];
    if (!any_read && !vec_used_.count(v)) return;  // an unread load may be removed (ir.hpp)
    if (shared_by_address(s.mem)) {
      os << ind << "const " << word_type(words) << " " << v << " = "
         << shared_call(d_.shared_load_words, static_cast<std::uint32_t>(words), s.mem, s.a, "") << ";\n";
    } else if (d_.vector_access == VectorAccess::WordViews) {
      const std::string value = view_words(s, words, ind, os);
      os << ind << "const " << word_type(words) << " " << v << " = " << value << ";\n";
    } else {
      const std::string p = word_pointer(s, words, true);
      os << ind << "const " << word_type(words) << " " << v << " = *" << p << ";\n";
    }
    for (std::size_t j = 0; j < s.vars.size(); ++j) {
      if (!var_read_[s.vars[j]]) continue;
      const std::string word = word_part(v, words, j / per_word);
      std::string value;
      if (t == DType::f32) {
        value = replace_all(d_.uint_as_float, "{x}", word);
      } else if (es == 4) {
        value = cv(type(t), word, false);
      } else {
        const std::size_t shift = 8 * es * (j % per_word);
        value = cv(type(t), shift ? "(" + word + " >> " + std::to_string(shift) + "u)" : word, false);
      }
      os << ind << "const " << type(t) << " " << var_names_[s.vars[j]] << " = " << value << ";\n";
    }
  }

  // ldmatrix into four words (Dialect::load_matrix; legalise removed LoadMatrix where it is empty); the
  // element variables read as such are unpacked like a vector load's, mma operand pairs take the words.
  void load_matrix(const ir::Stmt& s, const std::string& ind, std::ostringstream& os) {
    const std::string& form = s.transpose ? d_.load_matrix_trans : d_.load_matrix;
    if (form.empty()) {
      throw std::logic_error("the " + d_.name + " dialect has no load_matrix (legalise should have removed it)");
    }
    const DType t = k_.mem_type(s.mem);
    const std::string v = "ingot_lm" + std::to_string(s.loc);
    os << ind << word_type(4) << " " << v << ";\n";
    std::string line = replace_all(form, "{row}", "&" + mem_name(s.mem) + "[" + expr(s.a) + "]");
    if (line.find("{row_addr}") != std::string::npos)
      line = replace_all(line, "{row_addr}", shared_address(s.mem, s.a));
    for (std::size_t w = 0; w < 4; ++w) line = replace_all(line, "{w" + std::to_string(w) + "}", word_part(v, 4, w));
    os << ind << line << "\n";
    for (std::size_t j = 0; j < s.vars.size(); ++j) {
      if (!var_read_[s.vars[j]]) continue;
      const std::string word = word_part(v, 4, j / 2);
      const std::string value = "(" + type(t) + ")(" + (j % 2 ? "(" + word + " >> 16u)" : word) + ")";
      os << ind << "const " << type(t) << " " << var_names_[s.vars[j]] << " = " << value << ";\n";
    }
  }

  void store_vec(const ir::Stmt& s, const std::string& ind, std::ostringstream& os) {
    const DType t = k_.mem_type(s.mem);
    const std::size_t es = dtype_size(t), per_word = 4 / es, words = s.values.size() * es / 4;
    const auto put = [&](const std::string& value) {
      if (shared_by_address(s.mem)) {
        os << ind << shared_call(d_.shared_store_words, static_cast<std::uint32_t>(words), s.mem, s.a, value) << ";\n";
      } else if (d_.vector_access == VectorAccess::WordViews) {
        store_view_words(s, words, value, ind, os);
      } else {
        os << ind << "*" << word_pointer(s, words, false) << " = " << value << ";\n";
      }
    };
    if (const std::string v = loaded_vector(s.values, t); !v.empty()) {  // a copy: the loaded words as they are
      put(v);
      return;
    }
    const std::string u = type(DType::u32);
    std::vector<std::string> word(words);
    const auto pack = d_.pack2_helpers.find(t);
    // An f32 value converted to a 16-bit float: the f32 operand, else kNoExpr.
    const auto from_f32 = [&](ir::ExprId v) {
      const ir::Node& n = k_.exprs[v];
      return n.op == ir::Op::Cast && k_.exprs[n.a].type == DType::f32 ? n.a : ir::kNoExpr;
    };
    for (std::size_t j = 0; j < s.values.size(); ++j) {
      if (pack != d_.pack2_helpers.end() && j % 2 == 0 && from_f32(s.values[j]) != ir::kNoExpr &&
          from_f32(s.values[j + 1]) != ir::kNoExpr) {
        word[j / 2] = uses16(pack->second, expr(from_f32(s.values[j])) + ", " + expr(from_f32(s.values[j + 1])));
        ++j;
        continue;
      }
      std::string bits;
      if (t == DType::f32) {
        bits = replace_all(d_.float_as_uint, "{x}", expr(s.values[j]));
      } else if (es == 4) {
        bits = cv(u, expr(s.values[j]), false);
      } else {
        // through the unsigned element type first, so a negative i8 does not sign-extend
        bits = cv(u, cv(type(es == 1 ? DType::u8 : DType::u16), expr(s.values[j]), false), false, false);
        const std::size_t shift = 8 * es * (j % per_word);
        if (shift) {
          bits.insert(0, "(");
          bits += " << ";
          bits += std::to_string(shift);
          bits += "u)";
        }
      }
      std::string& w = word[j / per_word];
      if (!w.empty()) w += " | ";
      w += bits;
    }
    std::string value;
    if (words == 1) {
      value = word[0];
    } else {
      std::string args;
      for (std::size_t w = 0; w < words; ++w) args += (w ? ", " : "") + word[w];
      value = replace_all(replace_all(d_.word_vector_make, "{n}", std::to_string(words)), "{args}", args);
    }
    put(value);
  }

  void atomic(const ir::Stmt& s, const std::string& ind, std::ostringstream& os) {
    const DType t = k_.mem_type(s.mem);
    const std::string ref = mem_name(s.mem) + "[" + subscript(s.a) + "]";
    const std::string ptr = "&" + ref;
    const std::string value = expr(s.b);
    const std::string result = s.has_var ? "const " + type(t) + " " + var_names_[s.var] + " = " : std::string();
    if (t == DType::f32 && s.atomic == ir::AtomicOp::Add && d_.float_atomic_add == FloatAtomicAdd::CasLoop) {
      const std::string u = type(DType::u32);
      const std::string space = space_of(s.mem);
      if (s.has_var) os << ind << type(t) << " " << var_names_[s.var] << ";\n";
      os << ind << "{  // f32 atomic add as a compare-and-swap loop\n";
      os << ind << "  " << space << " volatile " << u << "* ingot_p = (" << space << " volatile " << u << "*)" << ptr
         << ";\n";
      os << ind << "  " << u << " ingot_old = *ingot_p;\n";
      os << ind << "  " << u << " ingot_seen;\n";
      os << ind << "  do {\n";
      os << ind << "    ingot_seen = ingot_old;\n";
      const std::string sum =
          replace_all(d_.float_as_uint, "{x}", replace_all(d_.uint_as_float, "{x}", "ingot_seen") + " + " + value);
      os << ind << "    ingot_old = "
         << replace_all(replace_all(replace_all(d_.atomic_cas, "{p}", "ingot_p"), "{cmp}", "ingot_seen"), "{v}", sum)
         << ";\n";
      os << ind << "  } while (ingot_old != ingot_seen);\n";
      if (s.has_var)
        os << ind << "  " << var_names_[s.var] << " = " << replace_all(d_.uint_as_float, "{x}", "ingot_old") << ";\n";
      os << ind << "}\n";
      return;
    }
    const std::string& pattern =
        s.atomic == ir::AtomicOp::Add ? d_.atomic_add : (s.atomic == ir::AtomicOp::Min ? d_.atomic_min : d_.atomic_max);
    std::string call = replace_all(replace_all(pattern, "{p}", ptr), "{ref}", ref);
    call = replace_all(call, "{v}", value);
    call = replace_all(call, "{space}", space_of(s.mem));
    call = replace_all(call, "{t}", type(t));
    os << ind << result << call << ";\n";
  }

  const ir::Kernel& k_;
  Dialect d_;
  std::string entry_;
  std::vector<std::string> param_names_;
  std::vector<std::string> shared_names_;
  std::map<ir::VarId, LoadedElement> loaded_;  // element variables of every vector load
  std::set<std::string> vec_used_;             // vector loads read as vectors or words (find_read_vars)
  std::vector<std::string> var_names_;
  std::vector<bool> var_read_;
  std::set<std::string> helpers_used_;
  std::map<std::size_t, std::set<std::size_t>> word_views_;  // GLSL: per buffer parameter, the word views it needs
  std::map<ExprId, std::string> temps_;                      // named temporaries of the statement being printed
  int next_temp_ = 0;
};

}  // namespace

KernelSource emit(const ir::Kernel& k, Target t) {
  Dialect d = dialect(t);
  const ir::Kernel legal = passes::legalise(
      k,
      passes::LegaliseOptions{d.name, d.unsupported, !d.shuffle.empty(), !d.mma_m16n8k16.empty(), !d.copy_async.empty(),
                              !d.load_matrix.empty() && !d.load_matrix_trans.empty(), d.shared_budget});
  return Printer(legal, std::move(d)).run();
}

const KernelSource& SourceCache::get(const ir::Kernel& k) {
  const std::string key = ir::fingerprint(k);
  auto it = sources_.find(key);
  if (it == sources_.end()) it = sources_.emplace(key, emit(k, target_)).first;
  return it->second;
}

}  // namespace ingot::codegen
