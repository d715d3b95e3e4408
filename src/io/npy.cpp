// NumPy .npy reading and writing.
#include "ingot/io/npy.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace ingot::io {

namespace {

constexpr std::size_t kMaxHeader = 1u << 16;        // NumPy writes a few hundred bytes; v2 would allow 4 GiB
constexpr std::uint64_t kMaxElements = 1ull << 48;  // far past any buffer a device holds

std::size_t descr_size(const std::string& d) {
  if (d == "<f4" || d == "<i4" || d == "<u4") return 4;
  if (d == "<f2" || d == "<u2" || d == "<i2") return 2;
  if (d == "<i8" || d == "<u8" || d == "<f8") return 8;
  if (d == "|u1" || d == "|i1" || d == "|b1") return 1;
  return 0;
}

// Finds the value text following 'key': in a Python dict literal.
std::string dict_value(const std::string& h, const std::string& key, const std::string& name) {
  const auto k = h.find("'" + key + "'");
  if (k == std::string::npos) throw NpyError(name + ": .npy header has no '" + key + "' field");
  auto p = h.find(':', k);
  if (p == std::string::npos) throw NpyError(name + ": malformed .npy header");
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  if (p < h.size() && h[p] == '\'') {
    const auto e = h.find('\'', p + 1);
    if (e == std::string::npos) throw NpyError(name + ": malformed .npy header");
    return h.substr(p + 1, e - p - 1);
  }
  if (p < h.size() && h[p] == '(') {
    const auto e = h.find(')', p);
    if (e == std::string::npos) throw NpyError(name + ": malformed .npy header");
    return h.substr(p, e - p + 1);
  }
  auto e = h.find_first_of(",}", p);
  return h.substr(p, e - p);
}

}  // namespace

std::uint64_t NpyArray::count() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

NpyHeader parse_npy_header(const std::vector<std::uint8_t>& b, const std::string& name) {
  static const std::uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 10 || std::memcmp(b.data(), magic, 6) != 0)
    throw NpyError(name + ": not a NumPy .npy file (bad magic)");
  const int major = b[6];
  std::size_t header_len = 0;
  std::size_t offset = 0;
  if (major == 1) {
    header_len = b[8] | (static_cast<std::size_t>(b[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) throw NpyError(name + ": truncated .npy header");
    header_len = b[8] | (static_cast<std::size_t>(b[9]) << 8) | (static_cast<std::size_t>(b[10]) << 16) |
                 (static_cast<std::size_t>(b[11]) << 24);
    offset = 12;
  } else {
    throw NpyError(name + ": unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > kMaxHeader) {
    throw NpyError(name + ": .npy header of " + std::to_string(header_len) + " bytes (at most " +
                   std::to_string(kMaxHeader) + ")");
  }
  if (b.size() < offset + header_len) throw NpyError(name + ": truncated .npy header");
  const std::string h(b.begin() + static_cast<std::ptrdiff_t>(offset),
                      b.begin() + static_cast<std::ptrdiff_t>(offset + header_len));
  NpyHeader a;
  a.descr = dict_value(h, "descr", name);
  if (a.descr == "<f4" || a.descr == "=f4") a.descr = "<f4";
  if (descr_size(a.descr) == 0 || a.descr == "<f8" || a.descr == "<u8" || a.descr == "<i2") {
    throw NpyError(name + ": unsupported .npy dtype '" + a.descr +
                   "' (use float32, float16, int32, uint32, int64, uint8, int8, uint16 or bool)");
  }
  const std::string fortran = dict_value(h, "fortran_order", name);
  if (fortran.find("True") != std::string::npos)
    throw NpyError(name + ": Fortran-ordered arrays are not supported (save with C order)");
  // The shape: a Python tuple of non-negative decimal integers, "()" for a scalar, "(n,)" for one axis.
  const std::string shape = dict_value(h, "shape", name);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    throw NpyError(name + ": malformed .npy shape '" + shape + "'");
  const std::string inner = shape.substr(1, shape.size() - 2);
  std::size_t at = 0;
  std::uint64_t count = 1;
  while (at <= inner.size()) {
    const std::size_t comma = std::min(inner.find(',', at), inner.size());
    std::string item = inner.substr(at, comma - at);
    item.erase(0, item.find_first_not_of(' '));
    const auto last_char = item.find_last_not_of(' ');
    item.erase(last_char == std::string::npos ? 0 : last_char + 1);
    if (item.empty()) {
      // "(n,)": a trailing comma; "()": a scalar. Any other empty item is malformed.
      const bool trailing = comma == inner.size() && !a.shape.empty();
      const bool scalar = a.shape.empty() && inner.find_first_not_of(' ') == std::string::npos;
      if (!trailing && !scalar) throw NpyError(name + ": malformed .npy shape '" + shape + "'");
      break;
    }
    if (item.size() > 18 || item.find_first_not_of("0123456789") != std::string::npos) {
      throw NpyError(name + ": .npy shape '" + shape + "' has a dimension '" + item +
                     "' that is not a non-negative integer below 10^18");
    }
    const std::uint64_t d = std::stoull(item);
    if (d != 0 && count > kMaxElements / d)
      throw NpyError(name + ": .npy shape '" + shape + "' holds more than 2^48 elements");
    count *= d;
    a.shape.push_back(d);
    at = comma + 1;
  }
  a.data_offset = offset + header_len;
  return a;
}

NpyArray parse_npy(const std::vector<std::uint8_t>& b, const std::string& name) {
  const NpyHeader h = parse_npy_header(b, name);
  NpyArray a;
  a.descr = h.descr;
  a.shape = h.shape;
  const std::uint64_t bytes = a.count() * descr_size(a.descr);
  if (b.size() - h.data_offset != bytes) {
    throw NpyError(name + ": .npy data has " + std::to_string(b.size() - h.data_offset) +
                   " bytes but its header promises " + std::to_string(bytes) + " (truncated or corrupt file)");
  }
  a.data.assign(b.begin() + static_cast<std::ptrdiff_t>(h.data_offset), b.end());
  return a;
}

namespace {

// Opens `path` for reading only if it is a regular file (not a directory, nor a device such as /dev/zero or a pipe,
// which could be read forever), and gives its size.
std::ifstream open_regular(const std::string& path, std::uint64_t& size) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) throw NpyError(path + ": cannot open file (it does not exist)");
  if (!std::filesystem::is_regular_file(st))
    throw NpyError(path + ": not a regular file (a directory, device or pipe cannot hold an .npy array)");
  size = std::filesystem::file_size(path, ec);
  if (ec) throw NpyError(path + ": cannot open file (" + ec.message() + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path + ": cannot open file");
  return in;
}

}  // namespace

NpyHeader read_npy_header(const std::string& path) {
  std::uint64_t size = 0;
  std::ifstream in = open_regular(path, size);
  std::vector<std::uint8_t> head(static_cast<std::size_t>(std::min<std::uint64_t>(size, 12 + kMaxHeader)));
  if (!in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size())))
    throw NpyError(path + ": read failed");
  NpyHeader h = parse_npy_header(head, path);
  std::uint64_t count = 1;
  for (auto d : h.shape) count *= d;
  const std::uint64_t bytes = count * descr_size(h.descr);
  if (size - h.data_offset != bytes) {
    throw NpyError(path + ": .npy data has " + std::to_string(size - h.data_offset) +
                   " bytes but its header promises " + std::to_string(bytes) + " (truncated or corrupt file)");
  }
  return h;
}

NpyArray read_npy(const std::string& path) {
  (void)read_npy_header(path);  // (the sizes first: nothing large is read from a file that cannot be right)
  std::uint64_t size = 0;
  std::ifstream in = open_regular(path, size);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    throw NpyError(path + ": read failed");
  return parse_npy(bytes, path);
}

std::vector<std::uint8_t> serialize_npy(const NpyArray& a) {
  std::string shape = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i)
    shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : (i + 1 < a.shape.size() ? ", " : ""));
  shape += ")";
  std::string header = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  const std::uint8_t preamble[10] = {0x93,
                                     'N',
                                     'U',
                                     'M',
                                     'P',
                                     'Y',
                                     1,
                                     0,
                                     static_cast<std::uint8_t>(header.size() & 0xff),
                                     static_cast<std::uint8_t>(header.size() >> 8)};
  std::vector<std::uint8_t> out(sizeof preamble + header.size() + a.data.size());
  std::memcpy(out.data(), preamble, sizeof preamble);
  std::copy(header.begin(), header.end(), out.begin() + sizeof preamble);
  if (!a.data.empty()) std::memcpy(out.data() + sizeof preamble + header.size(), a.data.data(), a.data.size());
  return out;
}

void write_npy(const std::string& path, const NpyArray& a) {
  const auto bytes = serialize_npy(a);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw NpyError(path + ": cannot open for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  out.close();  // (a full device reports its error at the flush or the close, not at the buffered write)
  if (out.fail()) throw NpyError(path + ": write failed (disk full or device error)");
}

std::string npy_descr_for(DType t) {
  switch (t) {
    case DType::f32:
    case DType::bf16: return "<f4";
    case DType::f16: return "<f2";
    case DType::i32: return "<i4";
    case DType::u32: return "<u4";
    case DType::i64: return "<i8";
    case DType::u8: return "|u1";
    case DType::i8: return "|i1";
    case DType::u16: return "<u2";
    case DType::boolean: return "|b1";
  }
  return "?";
}

std::vector<std::uint8_t> npy_to_buffer(const NpyArray& a, DType t, const std::string& name) {
  const std::string want = npy_descr_for(t);
  if (a.descr != want) {
    throw NpyError(name + ": file holds '" + a.descr + "' but a " + std::string(dtype_name(t)) + " buffer needs '" +
                   want + "' (" +
                   (t == DType::bf16 ? "bf16 buffers read float32 files" : "save the array with that dtype") + ")");
  }
  if (t != DType::bf16) return a.data;
  std::vector<std::uint8_t> out(a.count() * 2);
  for (std::uint64_t i = 0; i < a.count(); ++i) {
    float f = 0;
    std::memcpy(&f, a.data.data() + i * 4, 4);
    const std::uint16_t h = f32_to_bf16_bits(f);
    std::memcpy(out.data() + i * 2, &h, 2);
  }
  return out;
}

NpyArray buffer_to_npy(const std::vector<std::uint8_t>& bytes, DType t) {
  NpyArray a;
  a.descr = npy_descr_for(t);
  const std::uint64_t n = bytes.size() / dtype_size(t);
  a.shape = {n};
  if (t != DType::bf16) {
    a.data = bytes;
    return a;
  }
  a.data.resize(n * 4);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint16_t h = 0;
    std::memcpy(&h, bytes.data() + i * 2, 2);
    const float f = bf16_bits_to_f32(h);
    std::memcpy(a.data.data() + i * 4, &f, 4);
  }
  return a;
}

}  // namespace ingot::io
