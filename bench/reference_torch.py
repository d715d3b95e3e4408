#!/usr/bin/env python3
"""Reference timings for ingot's bench cases: cuDNN (convolutions), cuBLAS (gemm) and PyTorch's own kernels
(activations, norms, rope) through PyTorch, on the same GPU, in the same run as `ingot bench`.

usage: python3 bench/reference_torch.py CASES.json OUT.json [--back-to-back N]
  CASES.json comes from `ingot bench --emit-cases CASES.json`; OUT.json is read by
  `ingot bench --reference OUT.json` (keys "kernel|dtype|case" -> {"ms": median, "note": ...}).
  --back-to-back N times N calls per pair of events (the pair's time / N), as `ingot bench
  --back-to-back N` does: the rate of a stream of calls, one call's ramp overlapping the queue.

Method (the same as ingot's): inputs rotate over enough sets to exceed twice the 50 MB L2,
warm-up calls first, then each call timed with CUDA events; the median is reported. Each timed
call is queued behind a ~1 ms device sleep (torch.cuda._sleep), so the events hold the call's
device work and not PyTorch's host dispatch (tens of microseconds, longer than many of these
kernels); ingot's timed loop likewise enqueues nothing but the launch between its events.
TF32 is off, so f32 convolutions are true f32. Block-scaled kernels have no cuDNN
counterpart: they are compared with the dense bf16 convolution of the same shape, and the
note says so.
"""
import json
import sys

import torch
import torch.nn.functional as F

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = True  # let cuDNN pick its fastest algorithm, as users do

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
L2_BYTES = 50e6
WARMUP, REPS = 5, 30
# ~1 ms at 2 GHz: longer than PyTorch's host dispatch of one convolution.
SLEEP_CYCLES = 2_000_000
SLEEP = getattr(torch.cuda, "_sleep", None)
if SLEEP is None:
    sys.exit("reference_torch.py: this PyTorch has no torch.cuda._sleep; the timing would include host dispatch")


def timed(make_inputs, fn, set_bytes, per=1):
    sets = max(1, min(8, int(2 * L2_BYTES / max(set_bytes, 1)) + 1))
    inputs = [make_inputs() for _ in range(sets)]
    for i in range(WARMUP):
        fn(*inputs[i % sets])
    torch.cuda.synchronize()
    times = []
    for i in range(REPS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        SLEEP(SLEEP_CYCLES * per)  # the device waits while the host dispatches the calls (see Method)
        a.record()
        for j in range(per):
            fn(*inputs[(i * per + j) % sets])
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / per)
    times.sort()
    return times[len(times) // 2]


def rnd(shape, dt, channels_last=False):
    t = torch.empty(shape, device="cuda", dtype=dt).uniform_(-1, 1)
    if channels_last:
        t = t.to(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    return t


def g(p, *names, default=None):
    for n in names:
        if n in p:
            return p[n]
    if default is not None:
        return default
    raise KeyError(f"none of {names} in {p}")


def pair(p, base, default=None):
    """Per-axis parameter: base_h/base_w (or kh/kw style), else a shared value."""
    return (g(p, base + "_h", base + "h", default=g(p, base, default=default)),
            g(p, base + "_w", base + "w", default=g(p, base, default=default)))


def triple(p, base, default=None):
    return tuple(g(p, base + "_" + a, base + a, default=g(p, base, default=default)) for a in "dhw")


def conv_nd(p, dt, nd, groups_of, layout_last=False):
    n = g(p, "N", "B")
    c = g(p, "C")
    o = g(p, "O", "K_out", "Cout", default=c)
    groups = groups_of(p, c)
    if nd == 1:
        k = (g(p, "K"),)
        spatial = (g(p, "L"),)
        stride, pad, dil = (g(p, "stride"),), (g(p, "pad"),), (g(p, "dilation", default=1),)
    elif nd == 2:
        k = (g(p, "kh", "KH"), g(p, "kw", "KW"))
        spatial = (g(p, "H"), g(p, "W"))
        stride, pad, dil = pair(p, "stride", 1), pair(p, "pad", 0), pair(p, "dil", 1)
    else:
        k = (g(p, "kd", "KD"), g(p, "kh", "KH"), g(p, "kw", "KW"))
        spatial = (g(p, "D"), g(p, "H"), g(p, "W"))
        stride, pad, dil = triple(p, "stride", 1), triple(p, "pad", 0), triple(p, "dil", 1)
    bias = bool(g(p, "bias", default=0))
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    x_shape = (n, c) + tuple(spatial)
    w_shape = (o, c // groups) + k
    size = torch.finfo(dt).bits // 8
    set_bytes = size * (torch.Size(x_shape).numel() + torch.Size(w_shape).numel())

    def make():
        return (rnd(x_shape, dt, layout_last), rnd(w_shape, dt, layout_last), rnd((o,), dt) if bias else None)

    def fn(x, w, b):
        return conv(x, w, b, stride=stride, padding=pad, dilation=dil, groups=groups)

    return make, fn, set_bytes


def causal(p, dt, channels_last):
    n, c, l, k = g(p, "B", "N"), g(p, "C"), g(p, "L"), g(p, "K")
    silu = bool(g(p, "silu", default=0))
    size = torch.finfo(dt).bits // 8

    def make():
        x = rnd((n, l, c), dt).transpose(1, 2) if channels_last else rnd((n, c, l), dt)
        return (x, rnd((c, 1, k), dt))

    def fn(x, w):
        y = F.conv1d(x, w, padding=k - 1, groups=c)[..., :l]
        return F.silu(y) if silu else y

    return make, fn, size * n * c * l


def gemm(p, dt):
    """torch.matmul (cuBLAS) on the case's layouts: a [batch, M, K] or, with ta, [batch, K, M] read transposed; b
    [batch, K, N] or, with tb, [batch, N, K] read transposed (F.linear's weight layout); the epilogue as PyTorch eager
    ops after the product (alpha, beta * c, bias, activation)."""
    m, n, k, batch = g(p, "M"), g(p, "N"), g(p, "K"), g(p, "batch", default=1)
    ta, tb, acc = bool(g(p, "ta", default=0)), bool(g(p, "tb", default=0)), bool(g(p, "acc", default=0))
    bias, act = bool(g(p, "bias", default=0)), g(p, "act", default=0)
    alpha, beta = g(p, "alpha", default=1), g(p, "beta", default=0)
    size = torch.finfo(dt).bits // 8
    acts = {0: None, 1: F.relu, 2: F.silu, 3: F.gelu}

    def make():
        a = rnd((batch, k, m), dt) if ta else rnd((batch, m, k), dt)
        b = rnd((batch, n, k), dt) if tb else rnd((batch, k, n), dt)
        return (a, b, rnd((batch, m, n), dt) if acc else None, rnd((n,), dt) if bias else None)

    def fn(a, b, c, bv):
        y = torch.matmul(a.transpose(1, 2) if ta else a, b.transpose(1, 2) if tb else b)
        if alpha != 1:
            y = y * alpha
        if c is not None:
            y = y + beta * c
        if bv is not None:
            y = y + bv
        return acts[act](y) if acts[act] else y

    return make, fn, size * batch * (m * k + k * n)


def glu(p, dt):
    rows, d, act = g(p, "rows"), g(p, "D"), g(p, "act", default=0)
    acts = {0: F.silu, 1: F.gelu, 2: lambda x: F.gelu(x, approximate="tanh")}
    size = torch.finfo(dt).bits // 8

    def fn(gu):
        gate, up = gu.chunk(2, dim=-1)
        return acts[act](gate) * up

    return (lambda: (rnd((rows, 2 * d), dt),)), fn, size * rows * 2 * d


def elementwise(p, dt, fn):
    n = g(p, "n")
    size = torch.finfo(dt).bits // 8
    return (lambda: (rnd((n,), dt),)), fn, size * n


def norm_rows(p, dt, kind):
    """RMSNorm / LayerNorm of R rows of D in PyTorch eager: the fused forms as the ops a model would call (the residual
    add then the norm; the norm then the SiLU gate's product)."""
    r, d = g(p, "R"), g(p, "D")
    eps = g(p, "eps_nano", default=10000) * 1e-9
    residual = bool(g(p, "residual", default=0))
    gated = bool(g(p, "gated", default=0))
    bias = bool(g(p, "bias", default=0))
    size = torch.finfo(dt).bits // 8
    rms_norm = getattr(F, "rms_norm", None)  # PyTorch >= 2.4

    def norm(x, w, b):
        if kind == "layernorm":
            return F.layer_norm(x, (d,), w, b, eps)
        if rms_norm is not None:
            return rms_norm(x, (d,), w, eps)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def make():
        w = torch.empty((d,), device="cuda", dtype=dt).uniform_(0.5, 1.5)
        return (rnd((r, d), dt), rnd((r, d), dt) if residual or gated else None, w, rnd((d,), dt) if bias else None)

    def fn(x, other, w, b):
        if residual:
            h = x + other
            return norm(h, w, b), h
        if gated:
            return norm(x, w, b) * F.silu(other)
        return norm(x, w, b)

    streams = 2 + (2 if residual else 0) + (1 if gated else 0)
    return make, fn, size * (streams * r * d + d * (2 if bias else 1))


def rope(p, dt):
    """Rotary embedding in PyTorch eager, as a model's Python does it, timed as a whole: the inverse frequencies and the
    cos / sin tables from the positions (f32), then the rotation of the first rot features in f32 (NeoX: halves; GPT-J:
    even / odd features), cast back and joined with the pass-through features (or written into x in place)."""
    t, h, d, rot = g(p, "tokens"), g(p, "heads"), g(p, "head_dim"), g(p, "rot")
    neox, theta, inplace = bool(g(p, "neox", default=1)), g(p, "theta", default=10000), bool(g(p, "inplace", default=0))
    size = torch.finfo(dt).bits // 8

    def make():
        return rnd((t, h, d), dt), torch.randint(0, 32768, (t,), device="cuda", dtype=torch.int32)

    def fn(x, pos):
        inv = 1.0 / (theta ** (torch.arange(0, rot, 2, device="cuda", dtype=torch.float32) / rot))
        angle = pos.float()[:, None] * inv[None, :]
        cos, sin = angle.cos()[:, None, :], angle.sin()[:, None, :]
        xr = x[..., :rot].float()
        x1, x2 = (xr[..., : rot // 2], xr[..., rot // 2 :]) if neox else (xr[..., 0::2], xr[..., 1::2])
        y1, y2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
        yr = (torch.cat((y1, y2), -1) if neox else torch.stack((y1, y2), -1).flatten(-2)).to(dt)
        if inplace:
            x[..., :rot] = yr
            return x
        return torch.cat((yr, x[..., rot:]), -1) if rot < d else yr

    return make, fn, size * t * h * d + 4 * t


def reference_for(kernel, p, dt):
    """(make, fn, set_bytes, note) for one case, or None with a note."""
    depthwise = lambda q, c: c
    grouped = lambda q, c: g(q, "groups", "G")
    dense = lambda q, c: 1
    via = ("cuBLAS (torch.matmul) via PyTorch " if kernel == "gemm" else "cuDNN via PyTorch ") + torch.__version__
    if kernel.endswith("_bs") or "blockscaled" in kernel or "block_scaled" in kernel or "quant" in kernel:
        dt = torch.bfloat16
        via = "dense bf16 cuDNN conv of the same shape (no block-scaled cuDNN kernel exists)"
        base = kernel.replace("_bs", "").replace("blockscaled_", "").replace("_blockscaled", "")
        kernel = base
    table = {
        "depthwise_conv1d": lambda: conv_nd(p, dt, 1, depthwise),
        "conv2d": lambda: conv_nd(p, dt, 2, dense),
        "conv2d_grouped": lambda: conv_nd(p, dt, 2, grouped),
        "conv3d": lambda: conv_nd(p, dt, 3, dense),
        "conv3d_grouped": lambda: conv_nd(p, dt, 3, grouped),
        "depthwise_conv2d": lambda: conv_nd(p, dt, 2, depthwise),
        "depthwise_conv2d_nhwc": lambda: conv_nd(p, dt, 2, depthwise, layout_last=True),
        "winograd_conv2d": lambda: conv_nd(dict(p, kh=3, kw=3), dt, 2, dense),
        "causal_conv1d_prefill": lambda: causal(p, dt, False),
        "causal_conv1d_prefill_nlc": lambda: causal(p, dt, True),
        "silu": lambda: elementwise(p, dt, F.silu),
        "gelu": lambda: elementwise(p, dt, lambda x: F.gelu(x, approximate="tanh" if g(p, "approx") else "none")),
        "glu": lambda: glu(p, dt),
        "gemm": lambda: gemm(p, dt),
    }
    if kernel in ("rmsnorm", "layernorm"):
        eager = "PyTorch eager " + torch.__version__
        if kernel == "rmsnorm":
            eager += " (F.rms_norm)" if hasattr(F, "rms_norm") else " (x * rsqrt(mean(x^2) + eps) * w)"
        return norm_rows(p, dt, kernel), eager
    if kernel == "rope":
        return rope(p, dt), "PyTorch eager " + torch.__version__ + " (f32 cos / sin tables, then the rotation)"
    if kernel == "winograd_filter_transform":
        return None, "no counterpart: cuDNN transforms filters inside its own kernels"
    if kernel == "causal_conv1d_update":
        return None, "no counterpart: cuDNN has no single-token convolution step"
    if kernel not in table:
        return None, "no cuDNN counterpart mapped for this kernel"
    make, fn, set_bytes = table[kernel]()
    return (make, fn, set_bytes), via


def main():
    args = sys.argv[1:]
    per = 1
    if "--back-to-back" in args:
        i = args.index("--back-to-back")
        if i + 1 >= len(args) or not args[i + 1].isdigit() or not 1 <= int(args[i + 1]) <= 1000:
            sys.exit("reference_torch.py: --back-to-back takes a number of calls per window in [1, 1000]")
        per = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    cases = json.load(open(args[0]))
    out = {}
    for c in cases:
        key, kernel, p = c["key"], c["kernel"], c["params"]
        dt = DTYPES[c["dtype"]]
        try:
            ref, note = reference_for(kernel, p, dt)
            if ref is None:
                out[key] = {"note": note}
                continue
            make, fn, set_bytes = ref
            ms = timed(make, fn, set_bytes, per)
            if per > 1:
                note += f" ({per} calls back to back per pair of events)"
            out[key] = {"ms": ms, "note": note}
            print(f"{key:70s} {ms:9.4f} ms  ({note})", flush=True)
        except Exception as e:  # a case the reference cannot run is reported, not fatal
            out[key] = {"note": f"reference failed: {type(e).__name__}: {e}"}
            print(f"{key:70s} reference failed: {e}", flush=True)
        torch.cuda.empty_cache()
    json.dump(out, open(args[1], "w"), indent=2)


if __name__ == "__main__":
    main()
