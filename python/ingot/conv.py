"""Convolutions over your tensors, in PyTorch's layouts and argument names (see ingot's package docstring for
tensors, contexts and errors). Weights are [out, in/groups, *kernel] as torch.nn.functional takes them; a
depthwise 1-D weight may also be [C, K]."""
from ._tensors import error, flat, is_contiguous, run, shape_of


def _depthwise_weight(w):
    """[C, 1, K] as the [C, K] the kernels take (a view; a strided weight stays as it is, to be refused by name)."""
    if len(w.shape) == 3 and int(w.shape[1]) == 1 and is_contiguous(w):
        return w.reshape(int(w.shape[0]), int(w.shape[2]))
    return w


def _pair(v, n, name):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(a) for a in v)
    if len(v) != n:
        raise error("BadParameter", name, "%s must be an int or %d ints, got %s" % (name, n, v))
    return v


def depthwise_conv1d(x, w, bias=None, stride=1, padding=0, dilation=1, out=None, context=None):
    """y[B,C,O] = depthwise 1-D convolution of x[B,C,L] with w[C,K] or [C,1,K] (+ bias[C]):
    torch.nn.functional.conv1d(x, w, bias, stride, padding, dilation, groups=C)."""
    B, C, L = shape_of(x, "x", 3, "[B, C, L]", "depthwise_conv1d")
    w = _depthwise_weight(w)
    K = shape_of(w, "w", 2, "[C, K] or [C, 1, K]", "depthwise_conv1d")[1]
    p = {"B": B, "C": C, "L": L, "K": K, "stride": int(stride), "pad": int(padding), "dilation": int(dilation),
         "bias": int(bias is not None)}
    return run(context, "depthwise_conv1d", p, {"x": x, "w": w, "bias": bias}, {"y": out}, like=x)["y"]


def _direct(kernel, rank, x, w, bias, stride, padding, dilation, groups, out, context, channels_last=False):
    axes = "dhw"[3 - rank:]
    layout = "[B, %s, C]" % ", ".join(a.upper() for a in axes) if channels_last else \
        "[B, C, %s]" % ", ".join(a.upper() for a in axes)
    xs = shape_of(x, "x", rank + 2, layout, kernel)
    ws = shape_of(w, "w", rank + 2, "[O, C/groups, %s]" % ", ".join("k" + a for a in axes), kernel)
    B = xs[0]
    C = xs[-1] if channels_last else xs[1]
    size = xs[1:-1] if channels_last else xs[2:]
    p = {"B": B, "C": C, "bias": int(bias is not None)}
    if not kernel.startswith("depthwise"):
        p["O"] = ws[0]
    if groups != 1:
        p["groups"] = int(groups)
    for a, n, k, s, pad, d in zip(axes, size, ws[2:], _pair(stride, rank, "stride"), _pair(padding, rank, "padding"),
                                  _pair(dilation, rank, "dilation")):
        p[a.upper()] = n
        p["k" + a] = k
        p["stride_" + a] = s
        p["pad_" + a] = pad
        p["dil_" + a] = d
    return run(context, kernel, p, {"x": x, "w": w, "bias": bias}, {"y": out}, like=x)["y"]


def conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, out=None, context=None):
    """torch.nn.functional.conv2d over x[B,C,H,W] and w[O,C/groups,kh,kw]; groups == C == O runs the depthwise
    kernel."""
    C, O = int(x.shape[1]), int(w.shape[0])
    if groups == 1:
        kernel = "conv2d"
    elif groups == C == O and int(w.shape[1]) == 1:
        return _direct("depthwise_conv2d", 2, x, w, bias, stride, padding, dilation, 1, out, context)
    else:
        kernel = "conv2d_grouped"
    return _direct(kernel, 2, x, w, bias, stride, padding, dilation, groups, out, context)


def conv3d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, out=None, context=None):
    """torch.nn.functional.conv3d over x[B,C,D,H,W] and w[O,C/groups,kd,kh,kw]."""
    kernel = "conv3d" if groups == 1 else "conv3d_grouped"
    return _direct(kernel, 3, x, w, bias, stride, padding, dilation, groups, out, context)


def depthwise_conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, out=None, context=None):
    """Depthwise 2-D convolution of x[B,C,H,W] with w[C,1,kh,kw]: conv2d with groups=C."""
    return _direct("depthwise_conv2d", 2, x, w, bias, stride, padding, dilation, 1, out, context)


def depthwise_conv2d_nhwc(x, w, bias=None, stride=1, padding=0, dilation=1, out=None, context=None):
    """Depthwise 2-D convolution of channel-last x[B,H,W,C] with w[C,1,kh,kw] -> y[B,OH,OW,C]."""
    return _direct("depthwise_conv2d_nhwc", 2, x, w, bias, stride, padding, dilation, 1, out, context,
                   channels_last=True)


def winograd_filter_transform(w, out=None, context=None):
    """Winograd F(2x2,3x3) transform of 3x3 filters w[O,C,3,3] -> u[O,C,16] (float32), G g G^T."""
    O, C, kh, kw = shape_of(w, "w", 4, "[O, C, 3, 3]", "winograd_filter_transform")
    u = run(context, "winograd_filter_transform", {"O": O, "C": C}, {"w": flat(w)},
            {"u": flat(out)}, like=w, like_name="w")["u"]
    return out if out is not None else u.reshape(O, C, 16)


def winograd_conv2d(x, w, bias=None, padding=0, u=None, out=None, context=None):
    """conv2d of x[B,C,H,W] with 3x3 filters w[O,C,3,3], stride 1, by Winograd F(2x2,3x3); `u` may hold the
    transformed filters (winograd_filter_transform) to skip the transform."""
    B, C, H, W = shape_of(x, "x", 4, "[B, C, H, W]", "winograd_conv2d")
    O = int(w.shape[0])
    ph, pw = _pair(padding, 2, "padding")
    if u is None:
        u = winograd_filter_transform(w, context=context)
    p = {"B": B, "C": C, "O": O, "H": H, "W": W, "pad_h": ph, "pad_w": pw, "bias": int(bias is not None)}
    OH, OW = H + 2 * ph - 2, W + 2 * pw - 2
    y = run(context, "winograd_conv2d", p, {"x": flat(x), "u": flat(u), "bias": bias}, {"y": flat(out)}, like=x)["y"]
    return out if out is not None else y.reshape(B, O, OH, OW)


def causal_conv1d(x, w, bias=None, activation=None, initial_state=None, return_final_state=False,
                  channels_last=False, out=None, context=None):
    """Causal depthwise conv1d (a Mamba block's): y[b,c,t] = sum_k w[c,k] * xs[b,c,t+k] over xs = initial_state (or
    zeros) followed by x; x is [B,C,L] ([B,L,C] with channels_last), w [C,K] or [C,1,K], activation None or "silu";
    initial_state [B,C,K-1]. Returns y, or (y, final_state[B,C,K-1]) with return_final_state."""
    kernel = "causal_conv1d_prefill_nlc" if channels_last else "causal_conv1d_prefill"
    xs = shape_of(x, "x", 3, "[B, L, C]" if channels_last else "[B, C, L]", kernel)
    B, L, C = xs if channels_last else (xs[0], xs[2], xs[1])
    w = _depthwise_weight(w)
    K = shape_of(w, "w", 2, "[C, K]", kernel)[1]
    if activation not in (None, "silu"):
        raise error("BadParameter", "activation", "activation must be None or 'silu', got %r" % (activation,))
    p = {"B": B, "C": C, "L": L, "K": K, "bias": int(bias is not None), "silu": int(activation == "silu"),
         "init": int(initial_state is not None), "final": int(bool(return_final_state))}
    outs = run(context, kernel, p, {"x": flat(x), "w": flat(w), "bias": bias, "init_state": flat(initial_state)},
               {"y": flat(out)}, like=x)
    y = out if out is not None else outs["y"].reshape(*xs)
    if return_final_state:
        return y, outs["final_state"].reshape(B, C, K - 1)
    return y


def causal_conv1d_update(x, state, w, bias=None, activation=None, out=None, context=None):
    """One decode step of causal_conv1d: x[B,C], state[B,C,K-1] (updated in place: shifted left, x appended), w[C,K]
    or [C,1,K]. Returns y[B,C]."""
    B, C = shape_of(x, "x", 2, "[B, C]", "causal_conv1d_update")
    w = _depthwise_weight(w)
    K = shape_of(w, "w", 2, "[C, K]", "causal_conv1d_update")[1]
    if activation not in (None, "silu"):
        raise error("BadParameter", "activation", "activation must be None or 'silu', got %r" % (activation,))
    p = {"B": B, "C": C, "K": K, "bias": int(bias is not None), "silu": int(activation == "silu")}
    y = run(context, "causal_conv1d_update", p, {"x": flat(x), "w": flat(w), "bias": bias},
            {"y": flat(out), "state": flat(state)}, like=x)["y"]
    return out if out is not None else y.reshape(B, C)
