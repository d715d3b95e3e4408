// ingot/runtime/cache.hpp — the on-disk cache of compiled kernels.
//
// Entries are named by a hash of (source text, target, compile options) and carry that whole key: an entry is used
// only when its stored key equals the key asked for, so a file copied over another's name or a hash collision is a
// miss, never a wrong kernel. The location is $INGOT_CACHE_DIR when set, else $XDG_CACHE_HOME/ingot, else
// ~/.cache/ingot. Each entry carries a header with its lengths and a checksum; the lengths are checked against the
// file's size before anything is allocated, and a corrupt or truncated entry is ignored and rebuilt, never trusted.
// Writes go to a unique temporary file renamed into place, so two processes filling the cache at once never see a
// partial entry.
//
// A binary that passes every check can still be one the driver cannot load (a driver's own cache left half-written by
// an interrupted build once gave such a binary, and loading it aborted the process inside the driver). Backends
// therefore store only binaries the driver has just accepted, and mark an entry in use while the driver loads it
// (mark_in_use): an entry whose marker outlives its process (the process died while loading it) is quarantined by
// the next get() and rebuilt, so a bad binary costs at most one failed run, not every later one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ingot::runtime {

struct CacheKey {
  std::string source;
  std::string target;                      // e.g. "cuda-sm_90", "opencl-<device name>-<driver version>"
  std::string options;                     // compiler options that change the binary
  [[nodiscard]] std::string hex() const;   // stable digest used as the file name
  [[nodiscard]] std::string text() const;  // the whole key as stored in the entry (length-prefixed fields)
};

// While alive, marks a cache entry as being loaded by this process (see the header comment).
class CacheUse {
 public:
  CacheUse() = default;
  explicit CacheUse(std::filesystem::path marker) : marker_(std::move(marker)) {}
  CacheUse(const CacheUse&) = delete;
  CacheUse& operator=(const CacheUse&) = delete;
  CacheUse(CacheUse&& o) noexcept : marker_(std::move(o.marker_)) { o.marker_.clear(); }
  CacheUse& operator=(CacheUse&& o) noexcept;
  ~CacheUse();

 private:
  void release() noexcept;  // removes the marker (nothing when empty)
  std::filesystem::path marker_;
};

class DiskCache {
 public:
  // An empty dir means default_dir().
  explicit DiskCache(std::filesystem::path dir = {});
  [[nodiscard]] static std::filesystem::path default_dir();
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

  // The stored binary, or nullopt when absent, corrupt, unreadable, stored under another key, or quarantined because
  // a process died while loading it.
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> get(const CacheKey& key) const;
  // Stores a binary; failures to write (read-only disk, ...) are not errors: the cache is an
  // optimisation. Returns whether the entry was written.
  bool put(const CacheKey& key, const std::vector<std::uint8_t>& binary) const;
  // Marks the entry in use by this process until the returned guard is destroyed (an empty guard when the marker
  // cannot be written: the cache is an optimisation).
  [[nodiscard]] CacheUse mark_in_use(const CacheKey& key) const;
  // Moves the entry aside (to "<name>.bad"): the driver refused it or a process died loading it.
  void quarantine(const CacheKey& key) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace ingot::runtime
