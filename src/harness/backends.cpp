// Opening backends by name.
#include "ingot/harness/backends.hpp"

#include <stdexcept>
#include <thread>

#include "ingot/runtime/interp.hpp"

namespace ingot::harness {

std::vector<std::string> known_backends() { return {"interp", "opencl", "cuda"}; }

std::vector<std::string> parse_backend_list(const std::string& spec) {
  std::vector<std::string> out;
  std::string item;
  auto flush = [&] {
    if (item.empty()) return;
    if (item == "all") {
      for (const auto& b : known_backends()) out.push_back(b);
    } else {
      bool known = false;
      for (const auto& b : known_backends()) known = known || b == item;
      if (!known) {
        std::string list;
        for (const auto& b : known_backends()) list += (list.empty() ? "" : ", ") + b;
        throw std::invalid_argument("unknown backend '" + item + "' (known: " + list + ", or all)");
      }
      out.push_back(item);
    }
    item.clear();
  };
  for (char c : spec) {
    if (c == ',') flush();
    else if (c != ' ') item += c;
  }
  flush();
  if (out.empty()) throw std::invalid_argument("no backend named (use interp, opencl, cuda or all)");
  std::vector<std::string> unique;
  for (const auto& b : out) {
    bool seen = false;
    for (const auto& u : unique) seen = seen || u == b;
    if (!seen) unique.push_back(b);
  }
  return unique;
}

BackendSlot open_backend(const std::string& name) {
  if (name == "interp") return BackendSlot{name, std::make_shared<runtime::Interpreter>(), "", {}};
  if (name == "opencl" || name == "cuda") {
    return BackendSlot{name, nullptr, name + " not available: this build of ingot has no " + name + " runtime", {}};
  }
  throw std::invalid_argument("unknown backend '" + name + "'");
}

BackendReport describe_backend(const std::string& name) {
  BackendReport r;
  r.name = name;
  if (name == "interp") {
    r.available = true;
    r.properties = {{"kind", "checked reference interpreter (CPU)"},
                    {"host threads", std::to_string(std::thread::hardware_concurrency())},
                    {"max work-group size", "1024"}};
    return r;
  }
  const BackendSlot s = open_backend(name);
  r.available = s.backend != nullptr;
  r.why_absent = s.why_absent;
  return r;
}

}  // namespace ingot::harness
