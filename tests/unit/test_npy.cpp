// .npy parsing against hand-built bytes (independent of the writer), and round trips.
#include <gtest/gtest.h>

#include <cstring>

#include "ingot/io/npy.hpp"

using namespace ingot;
using namespace ingot::io;

namespace {
std::vector<std::uint8_t> hand_made(const std::string& descr, const std::string& shape,
                                    const std::vector<std::uint8_t>& data, const std::string& order = "False") {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(h.size());
  bytes += '\x00';
  bytes += h;
  bytes.append(data.begin(), data.end());
  return std::vector<std::uint8_t>(bytes.begin(), bytes.end());
}
}  // namespace

TEST(Npy, ParsesHandMadeFloat32Matrix) {
  std::vector<std::uint8_t> data(6 * 4);
  const float v[6] = {1, 2, 3, 4, 5, 6.5f};
  std::memcpy(data.data(), v, sizeof v);
  const auto a = parse_npy(hand_made("<f4", "(2, 3)", data), "m.npy");
  EXPECT_EQ(a.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(a.count(), 6u);
  EXPECT_EQ(a.data, data);
}

TEST(Npy, RoundTrip) {
  NpyArray a;
  a.descr = "<i4";
  a.shape = {5};
  a.data.resize(20, 7);
  const auto b = parse_npy(serialize_npy(a), "rt");
  EXPECT_EQ(b.descr, a.descr);
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.data, a.data);
  EXPECT_EQ(serialize_npy(a).size() % 64, 20u % 64);  // header padded to 64 bytes
}

TEST(Npy, ClearErrors) {
  auto msg = [](const std::vector<std::uint8_t>& b) {
    try {
      (void)parse_npy(b, "f.npy");
    } catch (const NpyError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg({1, 2, 3}).find("not a NumPy .npy file"), std::string::npos);
  EXPECT_NE(msg(hand_made("<f8", "(1,)", std::vector<std::uint8_t>(8))).find("unsupported .npy dtype '<f8'"),
            std::string::npos);
  EXPECT_NE(msg(hand_made("<f4", "(2,)", std::vector<std::uint8_t>(4))).find("truncated or corrupt"),
            std::string::npos);
  EXPECT_NE(msg(hand_made("<f4", "(1,)", std::vector<std::uint8_t>(4), "True")).find("Fortran"), std::string::npos);
}

TEST(Npy, Bf16BuffersUseFloat32Files) {
  NpyArray a;
  a.descr = "<f4";
  a.shape = {2};
  const float v[2] = {1.0f, -2.5f};
  a.data.resize(8);
  std::memcpy(a.data.data(), v, 8);
  const auto bytes = npy_to_buffer(a, DType::bf16, "x");
  ASSERT_EQ(bytes.size(), 4u);
  EXPECT_EQ(bytes[0] | (bytes[1] << 8), 0x3f80);
  const auto back = buffer_to_npy(bytes, DType::bf16);
  EXPECT_EQ(back.descr, "<f4");
  EXPECT_EQ(back.data, a.data);
  EXPECT_THROW((void)npy_to_buffer(a, DType::f16, "x"), NpyError);  // f16 buffers need '<f2'
}

// A shape is a tuple of non-negative integers: "-1" is not read as 1, nor 20 digits wrapped, nor a product that
// overflows; "()" is a scalar and "(n,)" one axis.
TEST(Npy, ShapesAreStrictTuples) {
  const auto refused = [](const std::string& shape, std::size_t bytes) {
    try {
      (void)parse_npy(hand_made("<f4", shape, std::vector<std::uint8_t>(bytes)), "s.npy");
    } catch (const NpyError&) {
      return true;
    }
    return false;
  };
  EXPECT_TRUE(refused("(-1,)", 4));
  EXPECT_TRUE(refused("(18446744073709551617,)", 4));
  EXPECT_TRUE(refused("(4294967296, 4294967296)", 4));
  EXPECT_TRUE(refused("(2,,3)", 24));
  EXPECT_TRUE(refused("(1.5,)", 4));
  EXPECT_TRUE(refused("1", 4));
  EXPECT_FALSE(refused("()", 4));
  EXPECT_FALSE(refused("(3,)", 12));
  EXPECT_FALSE(refused("(2, 3)", 24));
  EXPECT_EQ(parse_npy(hand_made("<f4", "()", std::vector<std::uint8_t>(4)), "s").count(), 1u);
}

// Files: a directory or a device (which could be read forever) is refused by name before anything is read; the
// header's size against the file's before the data is read.
TEST(Npy, OnlyRegularFilesAreRead) {
  for (const char* path : {"/dev/zero", "/tmp"}) {
    try {
      (void)read_npy(path);
      FAIL() << path;
    } catch (const NpyError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}
