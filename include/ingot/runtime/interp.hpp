// ingot/runtime/interp.hpp — the checked reference interpreter: the embedded default backend
// and the executable definition of the IR's semantics (ir.hpp).
//
// Threads of a work-group run in lockstep, statement by statement, under an active-lane mask
// (so shared memory and barriers behave as on a GPU). Every load, store and atomic is checked
// against the real size of its buffer; a read of an element nothing wrote (fresh buffers are
// poisoned) is reported too. Any violation stops the launch with a LaunchError naming the
// kernel, buffer, index, extent, thread and IR statement.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "ingot/runtime/backend.hpp"

namespace ingot::runtime {

struct InterpOptions {
  bool check_uninitialized_reads = true;  // report loads of never-written elements
  bool check_global_races = true;         // report two threads storing one global element in one launch
  std::uint64_t max_group_threads = 1024;
  // Runs only the work-groups [first_group, first_group + group_count) of a launch, in linear order (x fastest;
  // group_count 0: to the last one). For the tail of a launch too large to interpret whole, e.g. the 64-bit index
  // arithmetic of groups past 2^32 threads; the groups left out do nothing.
  std::uint64_t first_group = 0;
  std::uint64_t group_count = 0;
};

// A launch stopped by a semantic error. what() is the full human-readable message.
struct LaunchError : std::runtime_error {
  std::string kernel;
  std::string problem;  // "out-of-range load", "integer division by zero", ...
  std::string buffer;   // empty when no buffer is involved
  std::int64_t index = 0;
  std::uint64_t extent = 0;
  std::array<std::uint32_t, 3> group{};
  std::array<std::uint32_t, 3> local{};
  std::uint32_t stmt_loc = 0;
  std::string stmt;  // the IR statement, printed
  explicit LaunchError(const std::string& message) : std::runtime_error(message) {}
};

class Interpreter final : public Backend {
 public:
  explicit Interpreter(InterpOptions options = {}) : options_(options) {}
  [[nodiscard]] std::string name() const override { return "interp"; }
  [[nodiscard]] BufferPtr allocate(DType t, std::size_t count) override;
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override;
  void download(const DeviceBuffer& src, void* dst, std::size_t bytes) override;
  void launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) override;

 private:
  InterpOptions options_;
};

}  // namespace ingot::runtime
