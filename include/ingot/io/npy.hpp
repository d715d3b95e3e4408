// ingot/io/npy.hpp — reading and writing NumPy .npy files (format versions 1.0-3.0, C order,
// little-endian), so kernels can be checked against any outside tool.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingot/dtype.hpp"

namespace ingot::io {

struct NpyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  std::string descr;  // NumPy dtype string: "<f4", "<f2", "<i4", "<u4", "<i8", "|u1", "|i1", "<u2", "|b1"
  std::vector<std::uint64_t> shape;
  std::vector<std::uint8_t> data;  // raw little-endian elements, C order
  [[nodiscard]] std::uint64_t count() const;
};

// An .npy file's header: dtype, shape, where the data starts.
struct NpyHeader {
  std::string descr;
  std::vector<std::uint64_t> shape;
  std::size_t data_offset = 0;
};

// Throws NpyError with the file name and what is wrong (not a regular file, not an .npy file, unsupported dtype,
// Fortran order, a shape that is not a tuple of non-negative integers, data shorter or longer than the shape, ...).
// read_npy_header reads the header alone and checks the file's size against it, so a caller can check the shape
// before anything large is read.
[[nodiscard]] NpyHeader read_npy_header(const std::string& path);
[[nodiscard]] NpyArray read_npy(const std::string& path);
[[nodiscard]] NpyHeader parse_npy_header(const std::vector<std::uint8_t>& bytes, const std::string& name);
// Throws NpyError when the file cannot be opened or written in full (a full disk included).
void write_npy(const std::string& path, const NpyArray& a);
[[nodiscard]] NpyArray parse_npy(const std::vector<std::uint8_t>& bytes, const std::string& name);
[[nodiscard]] std::vector<std::uint8_t> serialize_npy(const NpyArray& a);

// The .npy dtype used for a buffer of ingot dtype t: f32 and bf16 buffers use float32 files
// ("<f4"), f16 uses "<f2", integers their own type, bool "|b1".
[[nodiscard]] std::string npy_descr_for(DType t);
// Converts file data to the buffer's byte layout (bf16 from f32 with RNE); throws NpyError if
// the file's dtype is not the one npy_descr_for(t) names.
[[nodiscard]] std::vector<std::uint8_t> npy_to_buffer(const NpyArray& a, DType t, const std::string& name);
[[nodiscard]] NpyArray buffer_to_npy(const std::vector<std::uint8_t>& bytes, DType t);

}  // namespace ingot::io
