// python/src/module.cpp — the extension module ingot._ingot: contexts, the generic library call over any object with
// `__dlpack__` (PyTorch tensors, NumPy arrays), and buffer descriptions for allocating outputs. The typed functions
// (ingot.conv, ingot.activation) are Python over these (python/ingot/).
//
// Tensors are read through DLPack without copies; the capsule each `__dlpack__` returns is held for the call and then
// dropped unconsumed, so its producer frees it. Errors are ingot.Error (a ValueError) carrying `code` (the
// api::ErrorCode's name) and `argument` (the tensor or parameter at fault).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <vector>

#include "dlpack_view.hpp"
#include "ingot/api/call.hpp"

namespace py = pybind11;

namespace ingot::python {
namespace {

using api::Error;
using api::ErrorCode;

DType dtype_of_dl(const DLDataTypeView& t, const std::string& name) {
  if (t.lanes == 1) {
    if (t.code == 2 && t.bits == 32) return DType::f32;
    if (t.code == 2 && t.bits == 16) return DType::f16;
    if (t.code == 4 && t.bits == 16) return DType::bf16;
    if (t.code == 0 && t.bits == 32) return DType::i32;
    if (t.code == 1 && t.bits == 32) return DType::u32;
    if (t.code == 0 && t.bits == 64) return DType::i64;
    if (t.code == 1 && t.bits == 8) return DType::u8;
    if (t.code == 0 && t.bits == 8) return DType::i8;
    if (t.code == 1 && t.bits == 16) return DType::u16;
  }
  throw Error(ErrorCode::BadDtype, name,
              "tensor '" + name + "' has a DLPack dtype (code " + std::to_string(t.code) + ", " +
                  std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) +
                  " lanes) ingot has no kernels for: convert it to float32, float16 or bfloat16");
}

// One tensor read through DLPack; `capsule` keeps the producer's memory alive while the view is used.
struct Borrowed {
  py::object capsule;
  api::TensorView view;
};

Borrowed borrow(const py::handle& obj, const std::string& name) {
  if (!py::hasattr(obj, "__dlpack__")) {
    throw Error(ErrorCode::InvalidTensor, name,
                "argument '" + name + "' is a " + std::string(py::str(py::type::of(obj).attr("__name__"))) +
                    ", not a tensor: pass a torch.Tensor or numpy.ndarray (anything with __dlpack__)");
  }
  Borrowed b;
  b.capsule = obj.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensorView*>(PyCapsule_GetPointer(b.capsule.ptr(), "dltensor"));
  if (!managed) {
    PyErr_Clear();
    throw Error(ErrorCode::InvalidTensor, name, "tensor '" + name + "': __dlpack__ returned no \"dltensor\" capsule");
  }
  const DLTensorView& t = managed->dl_tensor;
  api::TensorView& v = b.view;
  if (t.device.device_type == kDLCPU) {
    v.device = api::DeviceKind::Host;
  } else if (t.device.device_type == kDLCUDA) {
    v.device = api::DeviceKind::Cuda;
    v.device_index = t.device.device_id;
  } else {
    throw Error(ErrorCode::WrongDevice, name,
                "tensor '" + name + "' is on a DLPack device of type " + std::to_string(t.device.device_type) +
                    ": ingot takes CPU and CUDA tensors");
  }
  v.dtype = dtype_of_dl(t.dtype, name);
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  v.shape.assign(t.shape, t.shape + t.ndim);
  if (t.strides) v.strides.assign(t.strides, t.strides + t.ndim);
  return b;
}

harness::Params params_of(const py::dict& d) {
  harness::Params p;
  for (const auto& [k, v] : d) p[py::cast<std::string>(k)] = py::cast<std::int64_t>(v);
  return p;
}

void call(api::Context& ctx, const std::string& kernel, const py::dict& params, const py::dict& tensors) {
  std::vector<Borrowed> held;
  api::Tensors ts;
  for (const auto& [k, v] : tensors) {
    const auto name = py::cast<std::string>(k);
    held.push_back(borrow(v, name));
    ts.emplace(name, held.back().view);
  }
  const harness::Params p = params_of(params);
  py::gil_scoped_release unlocked;  // the kernel runs on memory the call holds; other Python threads may go on
  api::call(ctx, kernel, p, ts);
}

}  // namespace
}  // namespace ingot::python

PYBIND11_MODULE(_ingot, m) {
  using namespace ingot;
  m.doc() = "ingot's library kernels over DLPack tensors (see the ingot package)";

  static py::exception<api::Error> error_type(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const api::Error& e) {
      py::object inst = py::reinterpret_borrow<py::object>(error_type.ptr())(e.what());
      inst.attr("code") = api::error_code_name(e.code);
      inst.attr("argument") = e.argument;
      PyErr_SetObject(error_type.ptr(), inst.ptr());
    }
  });

  py::class_<api::Context>(m, "Context")
      .def_static("interpreter", [] { return api::Context::interpreter(); })
      .def_static(
          "opencl",
          [](const std::string& device_filter) {
            runtime::OpenCLOptions o;
            o.device_filter = device_filter;
            return api::Context::opencl(o);
          },
          py::arg("device_filter") = "")
      .def_property_readonly("device", [](const api::Context& c) { return api::device_kind_name(c.device()); })
      .def_property_readonly("traces", &api::Context::traces);

  m.def("call", &python::call, py::arg("context"), py::arg("kernel"), py::arg("params"), py::arg("tensors"),
        "Runs a library kernel by name with its parameters over tensors given by buffer name.");
  m.def(
      "describe",
      [](api::Context& ctx, const std::string& kernel, const std::string& dtype, const py::dict& params) {
        const auto t = parse_dtype(dtype);
        if (!t) throw api::Error(api::ErrorCode::BadDtype, "dtype", "'" + dtype + "' is not an ingot dtype");
        py::list out;
        for (const auto& b : api::describe(ctx, kernel, *t, python::params_of(params))) {
          py::dict d;
          d["name"] = b.name;
          d["input"] = b.input;
          d["output"] = b.output;
          d["dtype"] = std::string(dtype_name(b.dtype));
          d["shape"] = py::tuple(py::cast(b.shape));
          out.append(d);
        }
        return out;
      },
      py::arg("context"), py::arg("kernel"), py::arg("dtype"), py::arg("params"),
      "Each buffer of the kernel for (dtype, params): name, input, output, dtype, shape.");
  m.def(
      "dtype_of", [](const py::handle& t) { return std::string(dtype_name(python::borrow(t, "tensor").view.dtype)); },
      "The ingot dtype name of a DLPack tensor ('f32', 'f16', 'bf16', ...).");
  m.def(
      "kernels", [](api::Context& ctx) { return ctx.registry().names(); }, py::arg("context"));
}
