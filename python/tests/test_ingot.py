"""ingot's Python module against torch.nn.functional on CPU: every typed call, odd tails, f32 and bf16/f16, on the
interpreter and on OpenCL where a device exists; NumPy arrays; errors as ingot.Error naming the argument, with
nothing written. Run with pytest (or as a script: every test_* function is called)."""
import os
import sys

import numpy
import torch
import torch.nn.functional as F

import ingot

torch.manual_seed(0)

BACKENDS = ["interp"]
try:
    ingot.use("opencl")
    BACKENDS.append("opencl")
except ingot.Error as e:
    assert e.code == "Unavailable", e.code
    print("opencl skipped:", e)


def close(got, want, dtype=torch.float32):
    tol = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 6e-2}[dtype]
    got, want = got.float(), want.float()
    assert got.shape == want.shape, (got.shape, want.shape)
    err = (got - want).abs().max().item() if got.numel() else 0.0
    assert err <= tol * (1 + want.abs().max().item()), "max error %g" % err


def rand(*shape, dtype=torch.float32):
    return (torch.rand(*shape) * 2 - 1).to(dtype)


def each_backend(f):
    def run():
        for b in BACKENDS:
            f(ingot.use(b))
    run.__name__ = f.__name__
    return run


@each_backend
def test_silu(ctx):
    for dtype in (torch.float32, torch.bfloat16):
        x = rand(3, 5, 67, dtype=dtype) * 8
        close(ingot.activation.silu(x, context=ctx), F.silu(x.float()), dtype)


@each_backend
def test_gemm(ctx):
    # f32 on every backend; a [batch, K, M] read transposed, b as a weight [batch, N, K], bias, ReLU, odd sizes.
    a, b, bias = rand(2, 9, 7), rand(2, 5, 9), rand(5)
    want = F.relu(torch.matmul(a.transpose(1, 2), b.transpose(1, 2)) + bias)
    close(ingot.linalg.gemm(a, b, bias=bias, activation="relu", a_transposed=True, b_weight=True, context=ctx), want)
    # accumulate into out
    a, b, c = rand(7, 9), rand(9, 5), rand(7, 5)
    want = torch.matmul(a, b) + c
    assert ingot.linalg.gemm(a, b, out=c, accumulate=True, context=ctx) is c
    close(c, want)


def test_gemm_bf16_into_f32():
    # bf16 inputs (tensor-core fragments; the interpreter: PoCL takes minutes over the legalised form) into f32
    a, b = rand(17, 24, dtype=torch.bfloat16), rand(24, 9, dtype=torch.bfloat16)
    c = torch.empty(17, 9, dtype=torch.float32)
    ingot.linalg.gemm(a, b, out=c, context=ingot.use("interp"))
    close(c, torch.matmul(a.float(), b.float()))
    try:
        ingot.linalg.gemm(a, rand(23, 9, dtype=torch.bfloat16), context=ingot.use("interp"))
        assert False, "a K mismatch must be refused"
    except ingot.Error as e:
        assert e.argument == "b", e.argument


@each_backend
def test_depthwise_conv1d(ctx):
    for dtype in (torch.float32, torch.float16):
        x, w, b = rand(2, 5, 37, dtype=dtype), rand(5, 1, 4, dtype=dtype), rand(5, dtype=dtype)
        want = F.conv1d(x.float(), w.float(), b.float(), stride=2, padding=3, dilation=2, groups=5)
        close(ingot.conv.depthwise_conv1d(x, w, b, stride=2, padding=3, dilation=2, context=ctx), want, dtype)
    x, w = rand(1, 3, 19), rand(3, 3)
    close(ingot.conv.depthwise_conv1d(x, w, stride=2, padding=1, context=ctx),
          F.conv1d(x, w[:, None, :], stride=2, padding=1, groups=3))


@each_backend
def test_conv2d_dense_grouped_depthwise(ctx):
    x, w, b = rand(2, 4, 9, 11), rand(6, 4, 3, 2), rand(6)
    close(ingot.conv.conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2), context=ctx),
          F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2)))
    wg = rand(6, 2, 3, 3)
    close(ingot.conv.conv2d(x, wg, None, padding=1, groups=2, context=ctx), F.conv2d(x, wg, None, padding=1, groups=2))
    wd = rand(4, 1, 3, 3)
    close(ingot.conv.conv2d(x, wd, b[:4].clone(), padding=1, groups=4, context=ctx),
          F.conv2d(x, wd, b[:4], padding=1, groups=4))
    close(ingot.conv.depthwise_conv2d(x, wd, stride=2, padding=2, dilation=2, context=ctx),
          F.conv2d(x, wd, stride=2, padding=2, dilation=2, groups=4))


@each_backend
def test_depthwise_conv2d_nhwc(ctx):
    x, w, b = rand(2, 7, 9, 5), rand(5, 1, 3, 3), rand(5)
    want = F.conv2d(x.permute(0, 3, 1, 2), w, b, padding=1, groups=5).permute(0, 2, 3, 1)
    close(ingot.conv.depthwise_conv2d_nhwc(x, w, b, padding=1, context=ctx), want)


@each_backend
def test_conv3d_dense_and_grouped(ctx):
    x, w = rand(1, 4, 5, 6, 7), rand(3, 4, 2, 3, 3)
    close(ingot.conv.conv3d(x, w, padding=(0, 1, 1), context=ctx), F.conv3d(x, w, padding=(0, 1, 1)))
    wg, b = rand(4, 2, 3, 1, 3), rand(4)
    close(ingot.conv.conv3d(x, wg, b, stride=(1, 2, 2), groups=2, context=ctx),
          F.conv3d(x, wg, b, stride=(1, 2, 2), groups=2))


@each_backend
def test_winograd(ctx):
    x, w, b = rand(2, 3, 9, 7), rand(4, 3, 3, 3), rand(4)
    close(ingot.conv.winograd_conv2d(x, w, b, padding=1, context=ctx), F.conv2d(x, w, b, padding=1))
    g = torch.tensor([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=torch.float64)
    want = torch.einsum("ij,ocjk,lk->ocil", g, w.double(), g).reshape(4, 3, 16)
    close(ingot.conv.winograd_filter_transform(w, context=ctx), want.float())


def causal_reference(x, w, b, silu, init):
    B, C, L = x.shape
    K = w.shape[-1]
    xs = torch.cat([init if init is not None else torch.zeros(B, C, K - 1), x], dim=-1)
    y = F.conv1d(xs, w.reshape(C, 1, K), b, groups=C)
    return (F.silu(y) if silu else y), xs[..., xs.shape[-1] - (K - 1):]


@each_backend
def test_causal_conv1d(ctx):
    x, w, b, init = rand(2, 5, 13), rand(5, 4), rand(5), rand(2, 5, 3)
    y, final = ingot.conv.causal_conv1d(x, w, b, activation="silu", initial_state=init, return_final_state=True,
                                        context=ctx)
    want, want_final = causal_reference(x, w, b, True, init)
    close(y, want)
    close(final, want_final)
    yl = ingot.conv.causal_conv1d(x.transpose(1, 2).contiguous(), w, None, channels_last=True, context=ctx)
    close(yl, causal_reference(x, w, None, False, None)[0].transpose(1, 2))


@each_backend
def test_causal_conv1d_update(ctx):
    x, w, b, state = rand(3, 7), rand(7, 4), rand(7), rand(3, 7, 3)
    xs = torch.cat([state, x[..., None]], dim=-1)
    want = F.silu((xs * w).sum(-1) + b)
    y = ingot.conv.causal_conv1d_update(x, state, w, b, activation="silu", context=ctx)
    close(y, want)
    close(state, xs[..., 1:])


def test_numpy_arrays():
    x = numpy.linspace(-3, 3, 2 * 3 * 21, dtype=numpy.float32).reshape(2, 3, 21)
    w = numpy.linspace(-1, 1, 9, dtype=numpy.float32).reshape(3, 3)
    y = ingot.conv.depthwise_conv1d(x, w, stride=2, padding=1, context=ingot.Context.interpreter())
    assert isinstance(y, numpy.ndarray)
    want = F.conv1d(torch.from_numpy(x), torch.from_numpy(w)[:, None, :], stride=2, padding=1, groups=3)
    close(torch.from_numpy(y), want)


def expect_error(code, argument, f):
    try:
        f()
    except ingot.Error as e:
        assert e.code == code, (e.code, str(e))
        assert e.argument == argument, (e.argument, str(e))
        assert isinstance(e, ValueError) and str(e)
        return
    raise AssertionError("no ingot.Error; expected " + code)


def test_bad_input_raises_and_writes_nothing():
    ctx = ingot.Context.interpreter()
    x, w = rand(2, 5, 37), rand(5, 4)
    y = torch.full((2, 5, 36), 7.0)
    dw = ingot.conv.depthwise_conv1d
    expect_error("BadDtype", "w", lambda: dw(x, w.half(), padding=1, out=y, context=ctx))
    expect_error("NotContiguous", "x", lambda: dw(x.transpose(0, 1), w, padding=1, context=ctx))
    expect_error("BadShape", "y", lambda: dw(x, w, padding=1, out=torch.empty(2, 5, 35), context=ctx))
    z = rand(2 * 5 * 37)
    z_before = z.clone()
    expect_error("Aliasing", "y", lambda: dw(z.view(2, 5, 37), w, padding=1, out=z[:360].view(2, 5, 36), context=ctx))
    assert bool((z == z_before).all())
    expect_error("BadParameter", "params", lambda: dw(x, w, stride=0, out=y, context=ctx))
    expect_error("BadShape", "x", lambda: dw(x[0], w, context=ctx))
    expect_error("BadDtype", "x", lambda: dw(x.int(), w.int(), context=ctx))
    expect_error("UnknownKernel", "kernel", lambda: ingot.call(ctx, "no_such_kernel", {}, {"x": x}))
    expect_error("InvalidTensor", "x", lambda: ingot.call(ctx, "silu", {"n": 3}, {"x": [1.0, 2.0, 3.0], "y": y}))
    assert bool((y == 7.0).all())


def test_a_second_call_traces_nothing():
    ctx = ingot.Context.interpreter()
    x, w = rand(2, 5, 37), rand(5, 4)
    ingot.conv.depthwise_conv1d(x, w, padding=1, context=ctx)
    n = ctx.traces
    ingot.conv.depthwise_conv1d(x, w, padding=1, context=ctx)
    assert ctx.traces == n


if __name__ == "__main__":
    failed = 0
    for name, f in sorted(globals().items()):
        if name.startswith("test_") and callable(f):
            try:
                f()
                print("PASS", name)
            except Exception as e:  # noqa: BLE001 - report every failure, then fail
                failed += 1
                print("FAIL", name, type(e).__name__, e)
    print("%d failed" % failed)
    sys.exit(1 if failed else 0)
