"""Matrix products over your tensors (see ingot's package docstring for tensors, contexts and errors)."""
from ._tensors import error, is_contiguous, new_tensor, run

_ACTIVATIONS = {None: 0, "relu": 1, "silu": 2, "gelu": 3}


def gemm(a, b, out=None, bias=None, activation=None, a_transposed=False, b_weight=False, accumulate=False,
         context=None):
    """act(a @ b (+ out) (+ bias)): a [M, K] (or [K, M] with a_transposed), b [K, N] (or [N, K] with b_weight, as
    F.linear's weight), optionally with a leading batch dimension on a, b and out alike; products summed in f32 and
    rounded once to out's dtype (a's, or float32 given a float32 `out`); bias [N]; activation None, "relu", "silu" or
    "gelu" (erf). With accumulate, `out` is read and added to. Returns `out` (allocated when not given)."""
    if activation not in _ACTIVATIONS:
        raise error("BadParameter", "activation",
                    "gemm: activation must be None, 'relu', 'silu' or 'gelu', got %r" % (activation,))
    rank = len(a.shape)
    if rank not in (2, 3):
        raise error("BadShape", "a", "gemm: tensor 'a' has shape %s; it must be [M, K] or [batch, M, K]"
                    % (tuple(a.shape),))
    if len(b.shape) != rank:
        raise error("BadShape", "b", "gemm: tensor 'b' has shape %s; it must have %d dimensions, as 'a'"
                    % (tuple(b.shape), rank))
    if accumulate and out is None:
        raise error("BadParameter", "out", "gemm: accumulate adds to `out`: pass it")
    r = rank - 2
    batch = int(a.shape[0]) if rank == 3 else 1
    M, K = (int(a.shape[r + 1]), int(a.shape[r])) if a_transposed else (int(a.shape[r]), int(a.shape[r + 1]))
    N = int(b.shape[r]) if b_weight else int(b.shape[r + 1])
    c = out if out is not None else new_tensor(a, (batch, M, N) if rank == 3 else (M, N), _dtype(a))
    c_f32 = _dtype(c) == "f32" and _dtype(a) != "f32"
    p = {"M": M, "N": N, "K": K, "batch": batch, "alpha": 1, "beta": 1, "ta": int(a_transposed),
         "tb": int(b_weight), "acc": int(accumulate), "bias": int(bias is not None),
         "act": _ACTIVATIONS[activation], "out": int(c_f32)}
    # The kernel takes every matrix as [batch, rows, cols]: dense rank-2 tensors are viewed so (no copy).
    as3 = (lambda t: t.reshape((1,) + tuple(t.shape)) if t is not None and rank == 2 and is_contiguous(t) else t)
    run(context, "gemm", p, {"a": as3(a), "b": as3(b), "bias": bias}, {"c": as3(c)}, like=a, like_name="a")
    return c


def _dtype(t):
    from . import _ingot
    return _ingot.dtype_of(t)
