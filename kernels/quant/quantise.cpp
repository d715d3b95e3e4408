// The host quantiser and dequantiser (rules in quantise.hpp).
#include "quantise.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "element_codecs.hpp"

namespace ingot::kernels::quant {

namespace {

double rne(double v) { return std::nearbyint(v); }  // the default rounding mode: ties to even

// Stores code c (already in [0, 2^bits)) for element (row, col).
void put_code(QuantisedMatrix& q, std::uint64_t row, std::uint64_t col, std::uint32_t c) {
  const std::uint64_t pos = row * q.layout.padded_cols() + col;
  if (q.layout.info().code_bits() == 8) {
    q.codes[pos] = q.layout.info().codes_type == DType::i8 ? static_cast<double>(static_cast<std::int8_t>(c)) : c;
  } else {
    auto word = static_cast<std::uint32_t>(q.codes[pos / 8]);
    word |= (c & 15u) << (4 * (pos % 8));
    q.codes[pos / 8] = word;
  }
}

// Magnitudes per ElementKind.
double elem_max(ElementKind k) { return k == ElementKind::e4m3 ? kE4M3Max : kE2M1Max; }
int elem_emax(ElementKind k) { return k == ElementKind::e4m3 ? kE4M3Emax : kE2M1Emax; }
std::uint32_t encode_float(ElementKind k, double v) {
  return k == ElementKind::e4m3 ? float_to_e4m3(v) : float_to_e2m1(v);
}

}  // namespace

float element_value(BlockFormat f, std::uint32_t code) {
  switch (format_info(f).element) {
    case ElementKind::int8: return static_cast<float>(static_cast<std::int8_t>(code & 0xffu));
    case ElementKind::int4: return static_cast<float>(int4_value(code));
    case ElementKind::e4m3: return e4m3_to_float(code);
    case ElementKind::e2m1: return e2m1_to_float(code);
  }
  return 0;
}

float scale_value(BlockFormat f, double stored) {
  switch (format_info(f).scale) {
    case ScaleKind::f32: return static_cast<float>(stored);
    case ScaleKind::f16: return f16_bits_to_f32(f32_to_f16_bits(static_cast<float>(stored)));
    case ScaleKind::e8m0: return e8m0_to_float(static_cast<std::uint32_t>(stored));
    case ScaleKind::e4m3: return e4m3_to_float(static_cast<std::uint32_t>(stored));
  }
  return 0;
}

std::uint32_t code_at(const QuantisedMatrix& q, std::uint64_t row, std::uint64_t col) {
  const std::uint64_t pos = row * q.layout.padded_cols() + col;
  if (q.layout.info().code_bits() == 8) {
    return static_cast<std::uint32_t>(static_cast<std::int64_t>(q.codes.at(pos))) & 0xffu;
  }
  return (static_cast<std::uint32_t>(q.codes.at(pos / 8)) >> (4 * (pos % 8))) & 15u;
}

QuantisedMatrix quantise(BlockFormat f, std::uint64_t rows, std::uint64_t cols, const std::vector<double>& w) {
  QuantisedMatrix q;
  q.layout = BlockLayout{f, rows, cols};
  const FormatInfo& fi = q.layout.info();
  if (rows == 0 || cols == 0) throw std::invalid_argument("quantise: the matrix is empty");
  if (w.size() != rows * cols) {
    throw std::invalid_argument("quantise: " + std::to_string(w.size()) + " weights given for a " +
                                std::to_string(rows) + "x" + std::to_string(cols) + " matrix");
  }
  for (double v : w) {
    if (!std::isfinite(v)) throw std::invalid_argument("quantise: the weights hold a NaN or an infinity");
  }
  q.codes.assign(q.layout.code_elements(), 0.0);
  q.scales.assign(q.layout.scale_elements(), 0.0);

  if (fi.global_scale) {
    double amax = 0;
    for (double v : w) amax = std::max(amax, std::fabs(v));
    const auto g = static_cast<float>(amax / (kE4M3Max * kE2M1Max));
    q.global_scale = (g > 0 && std::isnormal(g)) ? g : 1.0f;
  }

  const std::uint64_t bpr = q.layout.blocks_per_row();
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t blk = 0; blk < bpr; ++blk) {
      const std::uint64_t c0 = blk * fi.block, c1 = std::min<std::uint64_t>(c0 + fi.block, cols);
      double amax = 0;
      for (std::uint64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(w[r * cols + c]));
      double& stored_scale = q.scales[r * bpr + blk];
      switch (fi.element) {
        case ElementKind::int8:
        case ElementKind::int4: {
          const double qmax = fi.element == ElementKind::int8 ? 127 : 7;
          float s = static_cast<float>(amax / qmax);
          if (fi.scale == ScaleKind::f16) s = std::min(f16_bits_to_f32(f32_to_f16_bits(s)), 65504.0f);
          stored_scale = s;
          if (s == 0) break;
          for (std::uint64_t c = c0; c < c1; ++c) {
            const double v = std::clamp(rne(w[r * cols + c] / static_cast<double>(s)), -qmax, qmax);
            put_code(q, r, c,
                     static_cast<std::uint32_t>(static_cast<std::int32_t>(v)) &
                         (fi.element == ElementKind::int8 ? 0xffu : 15u));
          }
          break;
        }
        case ElementKind::e4m3:
        case ElementKind::e2m1: {
          double x = 0;  // the dequantisation multiplier of this block's codes
          if (fi.scale == ScaleKind::e8m0) {
            int e = 0;
            if (amax > 0) {
              int exp2 = 0;
              (void)std::frexp(amax, &exp2);  // amax = m * 2^exp2, m in [0.5, 1): floor(log2 amax) = exp2 - 1
              e = std::clamp(exp2 - 1 - elem_emax(fi.element), -127, 127);
            }
            stored_scale = e + 127;
            x = std::ldexp(1.0, e);
            if (amax == 0) break;
          } else {  // nvfp4: E4M3 block scale times the global scale
            const std::uint8_t sc = float_to_e4m3(amax / (kE2M1Max * static_cast<double>(q.global_scale)));
            stored_scale = sc;
            x = static_cast<double>(e4m3_to_float(sc)) * static_cast<double>(q.global_scale);
            if (x == 0) break;
          }
          for (std::uint64_t c = c0; c < c1; ++c) {
            const double v = std::clamp(w[r * cols + c] / x, -elem_max(fi.element), elem_max(fi.element));
            put_code(q, r, c, encode_float(fi.element, v));
          }
          break;
        }
      }
    }
  }
  return q;
}

std::vector<float> dequantise(const QuantisedMatrix& q) {
  const BlockLayout& l = q.layout;
  const FormatInfo& fi = l.info();
  if (q.codes.size() != l.code_elements() || q.scales.size() != l.scale_elements()) {
    throw std::invalid_argument("dequantise: " + std::string(fi.name) + " " + std::to_string(l.rows) + "x" +
                                std::to_string(l.cols) + " needs " + std::to_string(l.code_elements()) + " code and " +
                                std::to_string(l.scale_elements()) + " scale elements, got " +
                                std::to_string(q.codes.size()) + " and " + std::to_string(q.scales.size()));
  }
  std::vector<float> out(l.rows * l.cols);
  const std::uint64_t bpr = l.blocks_per_row();
  for (std::uint64_t r = 0; r < l.rows; ++r) {
    for (std::uint64_t c = 0; c < l.cols; ++c) {
      float v = element_value(l.format, code_at(q, r, c)) * scale_value(l.format, q.scales[r * bpr + c / fi.block]);
      if (fi.global_scale) v = v * q.global_scale;
      out[r * l.cols + c] = v;
    }
  }
  return out;
}

}  // namespace ingot::kernels::quant
