// The semantics of every op on concrete values (see the header of ir.hpp).
#include "ingot/scalar_eval.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ingot::ir {

namespace {

std::uint64_t mask_of(DType t) {
  const int bits = dtype_bits(t);
  return bits >= 64 ? ~0ull : ((1ull << bits) - 1ull);
}

float as_f32(std::uint64_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b)); }
std::uint64_t from_f32(float f) { return std::bit_cast<std::uint32_t>(f); }

// Sign- or zero-extends canonical bits of an integer type to int64.
std::int64_t sext(DType t, std::uint64_t b) {
  switch (t) {
    case DType::i32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(b));
    case DType::i8: return static_cast<std::int8_t>(static_cast<std::uint8_t>(b));
    case DType::i64: return static_cast<std::int64_t>(b);
    default: return static_cast<std::int64_t>(b & mask_of(t));
  }
}

std::uint64_t trunc_to(DType t, std::uint64_t v) { return v & mask_of(t); }

template <class S, class U>
std::optional<std::uint64_t> int_arith(Op op, DType t, std::uint64_t ab, std::uint64_t bb, std::string* error) {
  const auto ua = static_cast<U>(ab);
  const auto ub = static_cast<U>(bb);
  const auto sa = static_cast<S>(ua);
  const auto sb = static_cast<S>(ub);
  constexpr bool is_signed = std::numeric_limits<S>::is_signed && !std::is_same_v<S, U>;
  switch (op) {
    case Op::Add: return trunc_to(t, static_cast<U>(ua + ub));
    case Op::Sub: return trunc_to(t, static_cast<U>(ua - ub));
    case Op::Mul: return trunc_to(t, static_cast<U>(ua * ub));
    case Op::Div:
    case Op::Mod: {
      if (ub == 0) {
        *error = "integer division by zero";
        return std::nullopt;
      }
      if constexpr (is_signed) {
        if (sa == std::numeric_limits<S>::min() && sb == -1) {
          *error = "signed division overflow (minimum value / -1)";
          return std::nullopt;
        }
        return trunc_to(t, static_cast<U>(op == Op::Div ? sa / sb : sa % sb));
      } else {
        return trunc_to(t, op == Op::Div ? ua / ub : ua % ub);
      }
    }
    case Op::Min:
      if constexpr (is_signed)
        return trunc_to(t, static_cast<U>(sa < sb ? sa : sb));
      else
        return trunc_to(t, ua < ub ? ua : ub);
    case Op::Max:
      if constexpr (is_signed)
        return trunc_to(t, static_cast<U>(sa > sb ? sa : sb));
      else
        return trunc_to(t, ua > ub ? ua : ub);
    case Op::BitAnd: return trunc_to(t, ua & ub);
    case Op::BitOr: return trunc_to(t, ua | ub);
    case Op::BitXor: return trunc_to(t, ua ^ ub);
    case Op::Shl:
    case Op::Shr: {
      const std::int64_t amount = sext(t, bb);
      const int bits = static_cast<int>(sizeof(U) * 8);
      if (amount < 0 || amount >= bits) {
        *error = "shift amount " + std::to_string(amount) + " outside [0, " + std::to_string(bits) + ")";
        return std::nullopt;
      }
      if (op == Op::Shl) return trunc_to(t, static_cast<U>(ua << amount));
      if constexpr (is_signed)
        return trunc_to(t, static_cast<U>(sa >> amount));
      else
        return trunc_to(t, ua >> amount);
    }
    case Op::Lt: return is_signed ? sa < sb : ua < ub;
    case Op::Le: return is_signed ? sa <= sb : ua <= ub;
    case Op::Gt: return is_signed ? sa > sb : ua > ub;
    case Op::Ge: return is_signed ? sa >= sb : ua >= ub;
    case Op::Eq: return ua == ub;
    case Op::Ne: return ua != ub;
    case Op::Neg: return trunc_to(t, static_cast<U>(U{0} - ua));
    case Op::Abs:
      if constexpr (is_signed)
        return trunc_to(t, sa < 0 ? static_cast<U>(U{0} - ua) : ua);
      else
        return trunc_to(t, ua);
    case Op::BitNot: return trunc_to(t, static_cast<U>(~ua));
    default: break;
  }
  *error = std::string("op ") + std::string(op_info(op).name) + " not defined on " + std::string(dtype_name(t));
  return std::nullopt;
}

std::optional<std::uint64_t> float_op(Op op, std::uint64_t ab, std::uint64_t bb, std::uint64_t cb, std::string* error) {
  const float x = as_f32(ab);
  const float y = as_f32(bb);
  switch (op) {
    case Op::Add: return from_f32(x + y);
    case Op::Sub: return from_f32(x - y);
    case Op::Mul: return from_f32(x * y);
    case Op::Div: return from_f32(x / y);
    case Op::Mod: return from_f32(std::fmod(x, y));
    case Op::Min: return from_f32(std::fmin(x, y));
    case Op::Max: return from_f32(std::fmax(x, y));
    case Op::Lt: return x < y;
    case Op::Le: return x <= y;
    case Op::Gt: return x > y;
    case Op::Ge: return x >= y;
    case Op::Eq: return x == y;
    case Op::Ne: return x != y;
    case Op::Neg: return from_f32(-x);
    case Op::Abs: return from_f32(std::fabs(x));
    case Op::Exp: return from_f32(std::exp(x));
    case Op::Log: return from_f32(std::log(x));
    case Op::Sqrt: return from_f32(std::sqrt(x));
    case Op::Rsqrt: return from_f32(1.0f / std::sqrt(x));
    case Op::Tanh: return from_f32(std::tanh(x));
    case Op::Erf: return from_f32(std::erf(x));
    case Op::Sin: return from_f32(std::sin(x));
    case Op::Cos: return from_f32(std::cos(x));
    case Op::Floor: return from_f32(std::floor(x));
    case Op::Ceil: return from_f32(std::ceil(x));
    case Op::Pow: return from_f32(std::pow(x, y));
    case Op::Fma: return from_f32(std::fma(x, y, as_f32(cb)));
    default: break;
  }
  *error = std::string("op ") + std::string(op_info(op).name) + " not defined on f32";
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> convert_bits(DType from, DType to, std::uint64_t bits, std::string* error) {
  if (from == to) return bits;
  if (to == DType::boolean) {
    if (is_float(from)) return double_of_bits(from, bits) != 0.0;
    return (bits & mask_of(from)) != 0;
  }
  if (from == DType::boolean) return bits_of_double(to, bits ? 1.0 : 0.0);
  if (is_float(from)) {
    // Exact bit conversions (no detour through double, which would quiet signalling NaNs).
    const float f = from == DType::f16    ? f16_bits_to_f32(static_cast<std::uint16_t>(bits))
                    : from == DType::bf16 ? bf16_bits_to_f32(static_cast<std::uint16_t>(bits))
                                          : as_f32(bits);
    if (to == DType::f32) return from_f32(f);
    if (to == DType::f16) return f32_to_f16_bits(f);
    if (to == DType::bf16) return f32_to_bf16_bits(f);
    // float -> integer: truncate; NaN/inf/out of range is an error
    const double t = std::trunc(static_cast<double>(f));
    double lo = 0;
    double hi = 0;
    switch (to) {
      case DType::i32:
        lo = -2147483648.0;
        hi = 2147483647.0;
        break;
      case DType::u32:
        lo = 0;
        hi = 4294967295.0;
        break;
      case DType::i64:
        lo = -9223372036854775808.0;
        hi = 9223372036854774784.0;
        break;
      case DType::u8:
        lo = 0;
        hi = 255;
        break;
      case DType::i8:
        lo = -128;
        hi = 127;
        break;
      case DType::u16:
        lo = 0;
        hi = 65535;
        break;
      default: break;
    }
    if (!(t >= lo && t <= hi)) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "cast of %g to %s is out of range", static_cast<double>(f),
                    std::string(dtype_name(to)).c_str());
      *error = buf;
      return std::nullopt;
    }
    return trunc_to(to, static_cast<std::uint64_t>(static_cast<std::int64_t>(t)));
  }
  // from integer
  const std::int64_t v = sext(from, bits);
  if (to == DType::f32) {
    if (from == DType::u32 || from == DType::u16 || from == DType::u8) {
      return from_f32(static_cast<float>(static_cast<std::uint64_t>(v)));
    }
    return from_f32(static_cast<float>(v));
  }
  if (is_16bit_float(to)) {
    const float f = static_cast<float>(v);
    return to == DType::f16 ? f32_to_f16_bits(f) : f32_to_bf16_bits(f);
  }
  return trunc_to(to, static_cast<std::uint64_t>(v));
}

std::optional<std::uint64_t> eval_op(Op op, DType result_type, DType operand_type, std::uint64_t a, std::uint64_t b,
                                     std::uint64_t c, std::string* error) {
  switch (op) {
    case Op::Cast: return convert_bits(operand_type, result_type, a, error);
    case Op::Bitcast: return a;  // canonical bits are the value's bits
    case Op::Select: return (a & 1u) ? b : c;
    case Op::And: return (a & 1u) && (b & 1u);
    case Op::Or: return (a & 1u) || (b & 1u);
    case Op::Not: return !(a & 1u);
    default: break;
  }
  if (operand_type == DType::boolean && (op == Op::Eq || op == Op::Ne)) {
    return op == Op::Eq ? (a & 1u) == (b & 1u) : (a & 1u) != (b & 1u);
  }
  switch (operand_type) {
    case DType::f32: return float_op(op, a, b, c, error);
    case DType::i32: return int_arith<std::int32_t, std::uint32_t>(op, operand_type, a, b, error);
    case DType::u32: return int_arith<std::uint32_t, std::uint32_t>(op, operand_type, a, b, error);
    case DType::i64: return int_arith<std::int64_t, std::uint64_t>(op, operand_type, a, b, error);
    default: break;
  }
  *error =
      std::string("op ") + std::string(op_info(op).name) + " not defined on " + std::string(dtype_name(operand_type));
  return std::nullopt;
}

std::uint64_t bits_of_double(DType t, double v) {
  switch (t) {
    case DType::f32: return from_f32(static_cast<float>(v));
    case DType::f16: return f32_to_f16_bits(static_cast<float>(v));
    case DType::bf16: return f32_to_bf16_bits(static_cast<float>(v));
    case DType::boolean: return v != 0.0;
    default: return trunc_to(t, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  }
}

double double_of_bits(DType t, std::uint64_t bits) {
  switch (t) {
    case DType::f32: return as_f32(bits);
    case DType::f16: return f16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case DType::bf16: return bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case DType::boolean: return (bits & 1u) ? 1.0 : 0.0;
    default: return static_cast<double>(sext(t, bits));
  }
}

std::int64_t int_of_bits(DType t, std::uint64_t bits) {
  if (t == DType::boolean) return static_cast<std::int64_t>(bits & 1u);
  return sext(t, bits);
}

std::string format_bits(DType t, std::uint64_t bits) {
  if (is_float(t)) {
    const double d = double_of_bits(t, bits);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.9g", d);
    return buf;
  }
  if (t == DType::boolean) return (bits & 1u) ? "true" : "false";
  if (t == DType::u32 || t == DType::u16 || t == DType::u8) return std::to_string(bits & mask_of(t));
  return std::to_string(sext(t, bits));
}

}  // namespace ingot::ir
