// The compiled-code cache: round trip, key sensitivity, corrupt/truncated entries, env
// override, concurrent writers.
#include <gtest/gtest.h>

#include <sys/wait.h>
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

// An entry copied over another key's file (or a hash collision) is another kernel's binary: a miss, never used.
TEST(Cache, AnEntryIsUsedOnlyUnderItsOwnKey) {
  const auto dir = fresh_dir("key");
  DiskCache c(dir);
  const CacheKey a{"__kernel void a(){}", "opencl-pocl", "-O2"}, b{"__kernel void b(){}", "opencl-pocl", "-O2"};
  ASSERT_TRUE(c.put(a, {1, 2, 3}));
  ASSERT_TRUE(c.put(b, {4, 5, 6}));
  std::filesystem::copy_file(dir / (a.hex() + ".bin"), dir / (b.hex() + ".bin"),
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_FALSE(c.get(b).has_value());
  EXPECT_EQ(c.get(a), (std::vector<std::uint8_t>{1, 2, 3}));
}

// A header promising more than the file holds is refused before anything is allocated (a huge length included).
TEST(Cache, LengthsAreCheckedAgainstTheFileSize) {
  const auto dir = fresh_dir("len");
  DiskCache c(dir);
  const CacheKey k{"src", "t", ""};
  ASSERT_TRUE(c.put(k, std::vector<std::uint8_t>(64, 7)));
  const auto path = dir / (k.hex() + ".bin");
  for (std::uint64_t bad : {std::uint64_t{1} << 60, std::uint64_t{65}, std::uint64_t{1} << 30}) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(16);  // magic (8), key length (8), then the binary's length
    f.write(reinterpret_cast<const char*>(&bad), sizeof bad);
    f.close();
    EXPECT_FALSE(c.get(k).has_value()) << bad;
  }
}

// A process that dies while the driver loads an entry leaves its marker: the next get() quarantines the entry (a
// miss, the file moved aside), so the binary is rebuilt instead of crashing every later run.
TEST(Cache, AnEntryWhoseLoaderDiedIsQuarantined) {
  const auto dir = fresh_dir("quarantine");
  DiskCache c(dir);
  const CacheKey k{"src", "t", ""};
  ASSERT_TRUE(c.put(k, {1, 2, 3}));
  {
    const CacheUse live = c.mark_in_use(k);  // this process, alive: the entry stays usable
    EXPECT_TRUE(std::filesystem::exists(dir / (k.hex() + ".inuse")));
    EXPECT_TRUE(c.get(k).has_value());
  }
  EXPECT_FALSE(std::filesystem::exists(dir / (k.hex() + ".inuse")));  // the guard removed its marker
  const pid_t child = ::fork();
  if (child == 0) {
    const CacheUse dying = c.mark_in_use(k);
    std::_Exit(134);  // as an abort inside the driver would: no destructor runs
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(std::filesystem::exists(dir / (k.hex() + ".inuse")));
  EXPECT_FALSE(c.get(k).has_value());
  EXPECT_TRUE(std::filesystem::exists(dir / (k.hex() + ".bad")));
  EXPECT_FALSE(std::filesystem::exists(dir / (k.hex() + ".bin")));
  ASSERT_TRUE(c.put(k, {1, 2, 3}));  // rebuilt and stored again
  EXPECT_TRUE(c.get(k).has_value());
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
