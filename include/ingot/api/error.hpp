// ingot/api/error.hpp — the error every library call over caller memory throws: a code a program can act on, the
// argument it concerns and a message that says what to change. Nothing has been written to any caller buffer when
// one is thrown, except for ErrorCode::LaunchFailed on a device whose kernel failed while running.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace ingot::api {

// Stable values: the C ABI (ingot.h) returns them as they are.
enum class ErrorCode : int {
  Ok = 0,
  UnknownKernel = 1,     // no kernel of that name in the library
  BadParameter = 2,      // a parameter unknown, missing or out of the kernel's range (its preconditions)
  MissingTensor = 3,     // a buffer of the kernel was given no tensor
  UnexpectedTensor = 4,  // a tensor named for no buffer of the kernel
  BadDtype = 5,          // a dtype the kernel does not take for that buffer
  BadShape = 6,          // a shape other than the kernel's declared shape for the parameters
  NotContiguous = 7,     // strides other than the dense row-major ones (no kernel takes strided tensors yet)
  Misaligned = 8,        // an address not a multiple of the element size or of the kernel's vector accesses
  WrongDevice = 9,       // a tensor on a device the context does not run on, or tensors on two devices
  Aliasing = 10,         // an output sharing memory with another tensor of the call
  InvalidTensor = 11,    // a null address for a non-empty tensor, a negative extent or stride
  Unavailable = 12,      // the backend cannot be used here (no OpenCL device, no GPU, ...)
  LaunchFailed = 13,     // compiling or running the kernel failed
};
[[nodiscard]] const char* error_code_name(ErrorCode c);  // "BadDtype", ...

struct Error : std::runtime_error {
  ErrorCode code;
  std::string argument;  // the tensor or parameter at fault ("x", "params", "kernel"); empty when none is
  Error(ErrorCode c, std::string arg, const std::string& message)
      : std::runtime_error(message), code(c), argument(std::move(arg)) {}
};

}  // namespace ingot::api
