"""ingot: the library's GPU kernels over your own tensors.

    import ingot
    y = ingot.conv.depthwise_conv1d(x, w, stride=2, padding=1)   # x: [B, C, L], w: [C, K] or [C, 1, K]

Tensors are anything with ``__dlpack__`` (torch.Tensor, numpy.ndarray), read without copies. CPU tensors run on the
checked interpreter (the default) or on OpenCL: ``ingot.use("opencl")``, or ``$INGOT_BACKEND=opencl``, or pass
``context=ingot.Context.opencl()`` to a call. Outputs are allocated by the input's framework (torch.empty or
numpy.empty) unless ``out=`` is given. Bad input raises ingot.Error (a ValueError) whose ``code`` and ``argument``
say what is wrong and with which tensor; nothing is written then.
"""
import os as _os

from ._ingot import Context, Error, call, describe, dtype_of, kernels  # noqa: F401

__all__ = ["Context", "Error", "call", "describe", "dtype_of", "kernels", "use", "default_context", "conv",
           "activation", "linalg"]

_contexts = {}
_chosen = []


def _make(backend):
    if backend == "interp":
        return Context.interpreter()
    if backend == "opencl":
        return Context.opencl()
    raise ValueError("unknown ingot backend %r: use 'interp' or 'opencl'" % (backend,))


def use(backend):
    """Makes 'interp' or 'opencl' the backend of calls that pass no context (created once, then reused)."""
    if backend not in _contexts:
        _contexts[backend] = _make(backend)
    _chosen[:] = [backend]
    return _contexts[backend]


def default_context():
    """The context of calls that pass none: ingot.use()'s, else $INGOT_BACKEND's, else the interpreter."""
    if not _chosen:
        use(_os.environ.get("INGOT_BACKEND", "interp"))
    return _contexts[_chosen[0]]


from . import activation, conv, linalg  # noqa: E402,F401
