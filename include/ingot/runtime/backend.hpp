// ingot/runtime/backend.hpp — what every runtime (interpreter, OpenCL, CUDA, ...) provides:
// typed device buffers, upload/download, and launching a lowered IR kernel.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ingot/dtype.hpp"
#include "ingot/ir.hpp"
#include "ingot/runtime/launch.hpp"

namespace ingot::runtime {

// A buffer on some backend. Its dtype and element count are fixed at allocation.
class DeviceBuffer {
 public:
  DeviceBuffer(DType t, std::size_t count) : type_(t), count_(count) {}
  virtual ~DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] DType dtype() const { return type_; }
  [[nodiscard]] std::size_t count() const { return count_; }
  [[nodiscard]] std::size_t bytes() const { return count_ * dtype_size(type_); }
  [[nodiscard]] virtual std::string backend_name() const = 0;
  // The address of the first element in the device's address space, where the backend exposes
  // one (CUDA); 0 when it does not. check_args uses it to refuse overlapping buffers passed for a
  // written parameter and buffers too little aligned for a kernel's vector accesses: buffers a
  // backend allocates are separate and 16-byte aligned, wrapped caller memory need not be.
  [[nodiscard]] virtual std::uint64_t address() const { return 0; }

 private:
  DType type_;
  std::size_t count_;
};
using BufferPtr = std::shared_ptr<DeviceBuffer>;

// A scalar argument: its type and canonical bits (see scalar_eval.hpp).
struct ScalarArg {
  DType type = DType::u32;
  std::uint64_t bits = 0;
};

// One kernel argument: a buffer or a scalar, in the kernel's parameter order.
using Arg = std::variant<BufferPtr, ScalarArg>;

template <class T>
[[nodiscard]] Arg scalar_arg(T v);

// Bad arguments: wrong count, kind, dtype, a buffer smaller than its declared extent, an
// extent that overflows its type. Nothing has been launched when this is thrown.
struct ArgumentError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
// Scalars that break one of the kernel's preconditions (ir::Kernel::preconditions): what()
// names the kernel, the precondition and the scalars' values. Nothing has been launched.
struct PreconditionError : ArgumentError {
  using ArgumentError::ArgumentError;
};
// A backend that cannot be used here ("not available: <why>").
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Emitted source that the backend's compiler rejected. what() names the kernel and target and
// ends with the compiler's log; `log` holds the log alone. Nothing has been launched.
struct CompileError : std::runtime_error {
  std::string log;
  CompileError(const std::string& message, std::string compiler_log)
      : std::runtime_error(message), log(std::move(compiler_log)) {}
};

// Checks args against k's parameter list; throws ArgumentError naming the parameter and what
// to change, PreconditionError when the scalars break a precondition. Also used by every backend
// before launching.
void check_args(const ir::Kernel& k, const std::vector<Arg>& args);
// Refuses (ArgumentError) a work-group larger than the kernel's launch bounds, work-groups that split a shuffling
// kernel's sub-groups, and 2^32 threads or more on an axis where the kernel reads a 32-bit program_id.
void check_launch_bounds(const ir::Kernel& k, const LaunchGeometry& g);
// The element count parameter `param` requires, given the scalar arguments. Throws
// ArgumentError if the extent overflows its integer type.
[[nodiscard]] std::uint64_t required_extent(const ir::Kernel& k, std::size_t param, const std::vector<Arg>& args);

struct TimingOptions {
  int warmup = 3;  // untimed launches first (compilation, caches, clocks)
  int reps = 20;   // timed windows
  // Launches per timed window, enqueued back to back (nothing between them): 1 times each launch
  // alone, its launch and ramp included; N > 1 gives a window's time / N, the rate of a stream of
  // launches (as a CUDA graph or a loop of layers runs them: one launch's ramp overlaps the queue).
  int back_to_back = 1;
};
// Throws ArgumentError for options out of range (reps < 1, warmup < 0, back_to_back outside [1, 1000]).
void check_timing_options(const TimingOptions& options);
// The timer's description: `clock` ("cuda events", "host clock"), with the launches per window where more than one.
[[nodiscard]] std::string timer_name(const std::string& clock, const TimingOptions& options);
struct Timing {
  std::vector<double> seconds;  // one per timed window: its time / back_to_back
  std::string timer;            // "cuda events", "host clock"
};

// How many work-groups of one kernel and group size a device holds at once (the bench's waves: work-groups /
// (groups_per_unit * units)).
struct Residency {
  // Work-groups resident on one compute unit (an SM) at once, as its registers, shared memory and threads allow.
  int groups_per_unit = 0;
  int units = 0;      // compute units of the device
  int registers = 0;  // per thread, as compiled (0: not known)
};

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // A new buffer, filled with a poison pattern (floats: all-ones NaN; integers: 0xA5 bytes).
  [[nodiscard]] virtual BufferPtr allocate(DType t, std::size_t count) = 0;
  // Copies exactly buffer.bytes() bytes (throws ArgumentError on a size mismatch).
  virtual void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) = 0;
  virtual void download(const DeviceBuffer& src, void* dst, std::size_t bytes) = 0;
  // Checks the arguments, then runs k over the grid; returns when the results are visible to
  // download.
  virtual void launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) = 0;
  // Times launches of k: options.warmup untimed launches, then options.reps timed ones; launch
  // i uses arg_sets[i % arg_sets.size()] (rotating over input sets larger than the caches).
  // The default times each synchronous launch with the host clock; device backends override it
  // with device timers.
  [[nodiscard]] virtual Timing time_launches(const ir::Kernel& k, const LaunchGeometry& g,
                                             const std::vector<std::vector<Arg>>& arg_sets,
                                             const TimingOptions& options);
  // Seconds of one device-to-device copy of `bytes` through the driver's copy (median of
  // options.reps), where the backend has one; nullopt otherwise.
  [[nodiscard]] virtual std::optional<double> time_copy(std::size_t bytes, const TimingOptions& options) {
    (void)bytes;
    (void)options;
    return std::nullopt;
  }
  // How many work-groups of k of g's group size are resident at once, where the backend can tell (CUDA: the driver's
  // occupancy calculator for the compiled kernel); nullopt otherwise. Compiles k if it is not yet.
  [[nodiscard]] virtual std::optional<Residency> residency(const ir::Kernel& k, const LaunchGeometry& g) {
    (void)k;
    (void)g;
    return std::nullopt;
  }
};

// Host-side packing of values into a buffer's byte layout (RNE for 16-bit floats).
[[nodiscard]] std::vector<std::uint8_t> pack(DType t, const std::vector<double>& values);
[[nodiscard]] std::vector<double> unpack(DType t, const std::vector<std::uint8_t>& bytes);
// Convenience: allocate + upload values; download as doubles.
[[nodiscard]] BufferPtr make_buffer(Backend& b, DType t, const std::vector<double>& values);
[[nodiscard]] std::vector<double> read_buffer(Backend& b, const DeviceBuffer& buf);
// The poison pattern a fresh buffer holds, as bytes.
[[nodiscard]] std::vector<std::uint8_t> poison_bytes(DType t, std::size_t count);

template <class T>
Arg scalar_arg(T v) {
  ScalarArg s;
  s.type = dtype_of<T>;
  if constexpr (std::is_same_v<T, float>) {
    s.bits = std::bit_cast<std::uint32_t>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    s.bits = v ? 1 : 0;
  } else {
    s.bits = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
  }
  return s;
}

}  // namespace ingot::runtime
