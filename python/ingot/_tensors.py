"""Helpers of the typed calls: output allocation in the input's framework, shapes, flat views, the call itself."""
from . import _ingot

_TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i32": "int32", "i64": "int64",
                 "u8": "uint8", "i8": "int8"}
_NUMPY_DTYPES = {"f32": "float32", "f16": "float16", "i32": "int32", "u32": "uint32", "i64": "int64", "u8": "uint8",
                 "i8": "int8", "u16": "uint16"}


def _is_torch(t):
    return type(t).__module__.startswith("torch")


def new_tensor(like, shape, dtype_name):
    """A new tensor of `shape` and ingot dtype `dtype_name` in `like`'s framework and device."""
    if _is_torch(like):
        import torch
        return torch.empty(tuple(shape), dtype=getattr(torch, _TORCH_DTYPES[dtype_name]), device=like.device)
    import numpy
    if dtype_name not in _NUMPY_DTYPES:
        raise error("BadDtype", "out", "numpy has no %s arrays: use torch tensors for it" % dtype_name)
    return numpy.empty(tuple(shape), dtype=_NUMPY_DTYPES[dtype_name])


def error(code, argument, message):
    e = _ingot.Error(message)
    e.code = code
    e.argument = argument
    return e


def shape_of(t, name, rank, layout, kernel):
    s = tuple(int(d) for d in t.shape)
    if len(s) != rank:
        raise error("BadShape", name, "%s: tensor '%s' has shape %s; it must be %s (%d dimensions)" %
                    (kernel, name, s, layout, rank))
    return s


def is_contiguous(t):
    if _is_torch(t):
        return t.is_contiguous()
    return bool(t.flags["C_CONTIGUOUS"])


def flat(t):
    """A 1-D view of a dense tensor; any other tensor as it is, for the call to refuse by name (a reshape would copy
    it, and an output copied would never reach the caller)."""
    if t is None or not is_contiguous(t):
        return t
    return t.reshape(-1)


def run(context, kernel, params, inputs, out=None, like=None, like_name="x"):
    """Calls `kernel`: inputs (and outputs given in `out`) by buffer name; the kernel's other outputs are allocated in
    `like`'s framework with the shapes the kernel declares. Returns every output by name."""
    from . import default_context
    ctx = context if context is not None else default_context()
    dtype = _ingot.dtype_of(like)
    try:
        buffers = _ingot.describe(ctx, kernel, dtype, params)
    except _ingot.Error as e:
        if e.code == "BadDtype":  # the dtype came from `like`: name it
            raise error(e.code, like_name, "tensor '%s' is %s: %s" % (like_name, dtype, e)) from None
        raise
    outs = {k: v for k, v in (out or {}).items() if v is not None}
    for b in buffers:
        if b["output"] and not b["input"] and b["name"] not in outs:
            outs[b["name"]] = new_tensor(like, b["shape"], b["dtype"])
    tensors = {k: v for k, v in inputs.items() if v is not None}
    tensors.update(outs)
    _ingot.call(ctx, kernel, params, tensors)
    return outs
