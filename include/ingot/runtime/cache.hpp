// ingot/runtime/cache.hpp — the on-disk cache of compiled kernels.
//
// Entries are keyed by a hash of (source text, target, compile options). The location is
// $INGOT_CACHE_DIR when set, else $XDG_CACHE_HOME/ingot, else ~/.cache/ingot. Each entry
// carries a header with its length and checksum: a corrupt or truncated entry is ignored and
// rebuilt, never trusted. Writes go to a unique temporary file renamed into place, so two
// processes filling the cache at once never see a partial entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ingot::runtime {

struct CacheKey {
  std::string source;
  std::string target;                     // e.g. "cuda-sm_90", "opencl-<device name>-<driver version>"
  std::string options;                    // compiler options that change the binary
  [[nodiscard]] std::string hex() const;  // stable digest used as the file name
};

class DiskCache {
 public:
  // An empty dir means default_dir().
  explicit DiskCache(std::filesystem::path dir = {});
  [[nodiscard]] static std::filesystem::path default_dir();
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

  // The stored binary, or nullopt when absent, corrupt or unreadable.
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> get(const CacheKey& key) const;
  // Stores a binary; failures to write (read-only disk, ...) are not errors: the cache is an
  // optimisation. Returns whether the entry was written.
  bool put(const CacheKey& key, const std::vector<std::uint8_t>& binary) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace ingot::runtime
