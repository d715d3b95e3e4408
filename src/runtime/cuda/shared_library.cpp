// A dlopen'd library owned by an object.
#include "shared_library.hpp"

#include <dlfcn.h>

#include <utility>

namespace ingot::runtime::cuda_detail {

SharedLibrary SharedLibrary::open_first(const std::vector<std::string>& candidates) {
  SharedLibrary lib;
  for (const auto& c : candidates) {
    dlerror();  // clear any stale error
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      lib.handle_ = h;
      lib.path_ = c;
      lib.why_.clear();
      return lib;
    }
    const char* err = dlerror();
    if (!lib.why_.empty()) lib.why_ += "; ";
    lib.why_ += err ? std::string(err) : c + ": unknown dlopen error";
  }
  if (candidates.empty()) lib.why_ = "no candidate library names";
  return lib;
}

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)), why_(std::move(other.why_)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
    why_ = std::move(other.why_);
  }
  return *this;
}

void* SharedLibrary::symbol(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }

}  // namespace ingot::runtime::cuda_detail
