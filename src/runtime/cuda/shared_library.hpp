// shared_library.hpp — a dlopen'd library owned by an object (internal to the CUDA runtime).
//
// The handle is closed when the last owner goes: the CUDA objects that call into a library
// hold a shared_ptr to it, so nothing outlives the code it calls.
#pragma once

#include <string>
#include <vector>

namespace ingot::runtime::cuda_detail {

class SharedLibrary {
 public:
  // Tries each candidate in order (a bare soname goes through the dynamic loader's search,
  // a path is opened as is). On failure returns an unloaded library; why() lists every
  // candidate with the loader's reason.
  static SharedLibrary open_first(const std::vector<std::string>& candidates);

  SharedLibrary() = default;
  ~SharedLibrary();
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  [[nodiscard]] bool loaded() const { return handle_ != nullptr; }
  [[nodiscard]] const std::string& path() const { return path_; }  // the candidate that loaded
  [[nodiscard]] const std::string& why() const { return why_; }    // why nothing loaded

  // The address of `name`, or nullptr when the library does not export it.
  [[nodiscard]] void* symbol(const char* name) const;

 private:
  void* handle_ = nullptr;
  std::string path_;
  std::string why_;
};

}  // namespace ingot::runtime::cuda_detail
