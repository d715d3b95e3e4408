// The compiled-code cache: round trip, key sensitivity, corrupt/truncated entries, env
// override, concurrent writers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "ingot/runtime/cache.hpp"

using namespace ingot::runtime;

namespace {
std::filesystem::path fresh_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("ingot-cache-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  return d;
}
}  // namespace

TEST(Cache, RoundTripAndKeySensitivity) {
  DiskCache c(fresh_dir("rt"));
  const CacheKey k{"__kernel void f(){}", "opencl-pocl", "-O2"};
  EXPECT_FALSE(c.get(k).has_value());
  ASSERT_TRUE(c.put(k, {1, 2, 3, 4}));
  EXPECT_EQ(c.get(k), (std::vector<std::uint8_t>{1, 2, 3, 4}));
  EXPECT_FALSE(c.get(CacheKey{k.source, "cuda-sm_90", k.options}).has_value());
  EXPECT_FALSE(c.get(CacheKey{k.source, k.target, "-O0"}).has_value());
  EXPECT_FALSE(c.get(CacheKey{k.source + " ", k.target, k.options}).has_value());
  EXPECT_NE((CacheKey{"ab", "c", ""}.hex()), (CacheKey{"a", "bc", ""}.hex()));
}

TEST(Cache, CorruptOrTruncatedEntriesAreNotTrusted) {
  const auto dir = fresh_dir("corrupt");
  DiskCache c(dir);
  const CacheKey k{"src", "t", ""};
  std::vector<std::uint8_t> bin(1000);
  for (std::size_t i = 0; i < bin.size(); ++i) bin[i] = static_cast<std::uint8_t>(i * 7);
  ASSERT_TRUE(c.put(k, bin));
  const auto path = dir / (k.hex() + ".bin");
  const auto full = std::filesystem::file_size(path);
  // flip one byte in the payload
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(full - 10));
    f.put('\x55');
  }
  EXPECT_FALSE(c.get(k).has_value());
  // rebuilt entry is used again
  ASSERT_TRUE(c.put(k, bin));
  EXPECT_EQ(c.get(k), bin);
  // truncate
  std::filesystem::resize_file(path, full - 100);
  EXPECT_FALSE(c.get(k).has_value());
  std::filesystem::resize_file(path, 3);
  EXPECT_FALSE(c.get(k).has_value());
}

TEST(Cache, EnvironmentOverridesLocation) {
  const auto dir = fresh_dir("env");
  ::setenv("INGOT_CACHE_DIR", dir.c_str(), 1);
  EXPECT_EQ(DiskCache::default_dir(), dir);
  EXPECT_EQ(DiskCache().dir(), dir);
  ::unsetenv("INGOT_CACHE_DIR");
  EXPECT_NE(DiskCache::default_dir(), dir);
}

TEST(Cache, ConcurrentWritersNeverExposePartialEntries) {
  DiskCache c(fresh_dir("concurrent"));
  const CacheKey k{"same source", "t", ""};
  std::vector<std::uint8_t> bin(1 << 16, 0xab);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        c.put(k, bin);
        auto got = c.get(k);
        if (got && *got != bin) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(c.get(k), bin);
  // no temporary files left behind
  for (const auto& e : std::filesystem::directory_iterator(c.dir())) {
    EXPECT_EQ(e.path().extension(), ".bin") << e.path();
  }
}
