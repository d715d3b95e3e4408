// The on-disk cache of compiled kernels.
#include "ingot/runtime/cache.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>

namespace ingot::runtime {

namespace {

// FNV-1a 64 over a byte string; two independent seeds give a 128-bit name.
std::uint64_t fnv1a(const std::string& s, std::uint64_t seed) {
  std::uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t checksum(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

constexpr char kMagic[8] = {'I', 'N', 'G', 'O', 'T', 'C', '1', '\0'};
struct Header {
  char magic[8];
  std::uint64_t length;
  std::uint64_t sum;
};

}  // namespace

std::string CacheKey::hex() const {
  // Length-prefix each field so ("ab","c") and ("a","bc") differ.
  const std::string all = std::to_string(source.size()) + ":" + source + "|" + std::to_string(target.size()) + ":" +
                          target + "|" + std::to_string(options.size()) + ":" + options;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv1a(all, 0)),
                static_cast<unsigned long long>(fnv1a(all, 0x9e3779b97f4a7c15ull)));
  return buf;
}

std::filesystem::path DiskCache::default_dir() {
  if (const char* d = std::getenv("INGOT_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "ingot";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "ingot";
  return std::filesystem::temp_directory_path() / "ingot-cache";
}

DiskCache::DiskCache(std::filesystem::path dir) : dir_(dir.empty() ? default_dir() : std::move(dir)) {}

std::optional<std::vector<std::uint8_t>> DiskCache::get(const CacheKey& key) const {
  const auto path = dir_ / (key.hex() + ".bin");
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Header h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return std::nullopt;
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.length > (1ull << 31)) return std::nullopt;
  std::vector<std::uint8_t> data(h.length);
  if (h.length && !in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(h.length)))
    return std::nullopt;
  if (in.peek() != std::char_traits<char>::eof()) return std::nullopt;  // trailing junk
  if (checksum(data.data(), data.size()) != h.sum) return std::nullopt;
  return data;
}

bool DiskCache::put(const CacheKey& key, const std::vector<std::uint8_t>& binary) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return false;
  const auto final_path = dir_ / (key.hex() + ".bin");
  std::random_device rd;
  const auto tmp = dir_ / (key.hex() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.length = binary.size();
    h.sum = checksum(binary.data(), binary.size());
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(reinterpret_cast<const char*>(binary.data()), static_cast<std::streamsize>(binary.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, final_path, ec);  // atomic on POSIX: readers see old or new
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace ingot::runtime
