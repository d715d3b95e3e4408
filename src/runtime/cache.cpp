// The on-disk cache of compiled kernels.
#include "ingot/runtime/cache.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
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

std::uint64_t checksum(const std::uint8_t* p, std::size_t n, std::uint64_t h = 1469598103934665603ull) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

// Entry layout: Header, the key's text (key_length bytes), the binary (length bytes). The checksum covers both.
constexpr char kMagic[8] = {'I', 'N', 'G', 'O', 'T', 'C', '2', '\0'};
struct Header {
  char magic[8];
  std::uint64_t key_length;
  std::uint64_t length;
  std::uint64_t sum;
};
constexpr std::uint64_t kMaxEntry = 1ull << 31;

const char* const kInUse = ".inuse";  // holds the pid of the process loading the entry

// Whether process `pid` is gone (a marker it left is stale).
bool process_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

std::string CacheKey::text() const {
  // Length-prefix each field so ("ab","c") and ("a","bc") differ.
  return std::to_string(source.size()) + ":" + source + "|" + std::to_string(target.size()) + ":" + target + "|" +
         std::to_string(options.size()) + ":" + options;
}

std::string CacheKey::hex() const {
  const std::string all = text();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv1a(all, 0)),
                static_cast<unsigned long long>(fnv1a(all, 0x9e3779b97f4a7c15ull)));
  return buf;
}

CacheUse& CacheUse::operator=(CacheUse&& o) noexcept {
  if (this != &o) {
    release();
    marker_ = std::move(o.marker_);
    o.marker_.clear();
  }
  return *this;
}

CacheUse::~CacheUse() { release(); }

void CacheUse::release() noexcept {
  if (marker_.empty()) return;
  std::error_code ec;
  std::filesystem::remove(marker_, ec);
  marker_.clear();
}

std::filesystem::path DiskCache::default_dir() {
  if (const char* d = std::getenv("INGOT_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "ingot";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "ingot";
  return std::filesystem::temp_directory_path() / "ingot-cache";
}

DiskCache::DiskCache(std::filesystem::path dir) : dir_(dir.empty() ? default_dir() : std::move(dir)) {}

std::optional<std::vector<std::uint8_t>> DiskCache::get(const CacheKey& key) const {
  const std::string name = key.hex();
  const auto path = dir_ / (name + ".bin");
  std::error_code ec;
  // A marker left by a process that is gone: that process died while the driver loaded this entry.
  const auto marker = dir_ / (name + kInUse);
  if (std::ifstream m(marker); m) {
    long pid = 0;
    if (m >> pid && process_gone(pid)) {
      quarantine(key);
      std::filesystem::remove(marker, ec);
      return std::nullopt;
    }
  }
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  const std::uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec || file_size < sizeof(Header)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Header h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return std::nullopt;
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return std::nullopt;
  // The lengths against the file's size before anything is allocated.
  if (h.key_length > kMaxEntry || h.length > kMaxEntry || sizeof(Header) + h.key_length + h.length != file_size) {
    return std::nullopt;
  }
  const std::string want = key.text();
  if (h.key_length != want.size()) return std::nullopt;  // another key's entry
  std::string stored(h.key_length, '\0');
  if (h.key_length && !in.read(stored.data(), static_cast<std::streamsize>(h.key_length))) return std::nullopt;
  if (stored != want) return std::nullopt;
  std::vector<std::uint8_t> data(h.length);
  if (h.length && !in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(h.length)))
    return std::nullopt;
  const auto* kb = reinterpret_cast<const std::uint8_t*>(stored.data());
  if (checksum(data.data(), data.size(), checksum(kb, stored.size())) != h.sum) return std::nullopt;
  return data;
}

bool DiskCache::put(const CacheKey& key, const std::vector<std::uint8_t>& binary) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return false;
  const auto final_path = dir_ / (key.hex() + ".bin");
  std::random_device rd;
  const auto tmp = dir_ / (key.hex() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd()));
  const std::string text = key.text();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.key_length = text.size();
    h.length = binary.size();
    const auto* kb = reinterpret_cast<const std::uint8_t*>(text.data());
    h.sum = checksum(binary.data(), binary.size(), checksum(kb, text.size()));
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.write(reinterpret_cast<const char*>(binary.data()), static_cast<std::streamsize>(binary.size()));
    out.flush();
    out.close();
    if (out.fail()) {
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

CacheUse DiskCache::mark_in_use(const CacheKey& key) const {
  const auto marker = dir_ / (key.hex() + kInUse);
  std::ofstream out(marker, std::ios::trunc);
  if (!out) return {};
  out << ::getpid() << "\n";
  out.close();
  if (out.fail()) return {};
  return CacheUse(marker);
}

void DiskCache::quarantine(const CacheKey& key) const {
  std::error_code ec;
  const auto path = dir_ / (key.hex() + ".bin");
  std::filesystem::rename(path, dir_ / (key.hex() + ".bad"), ec);
  if (ec) std::filesystem::remove(path, ec);
}

}  // namespace ingot::runtime
