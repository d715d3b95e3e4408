"""A Mamba-style block's causal depthwise conv1d as a PyTorch module running on ingot's kernel, checked against the
same module computed by PyTorch alone, for a whole sequence (prefill) and then token by token (decode steps with a
rolling state).

    PYTHONPATH=<build>/python python3 examples/python/causal_conv_block.py [interp|opencl]
"""
import sys

import torch
import torch.nn.functional as F

import ingot


class CausalConv1d(torch.nn.Module):
    """y = silu(causal depthwise conv1d(x) + bias) over x[B, C, L]; kernel width K."""

    def __init__(self, channels, width):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(channels, 1, width) / width)
        self.bias = torch.nn.Parameter(torch.randn(channels) / 4)

    def forward(self, x, use_ingot=True):
        if use_ingot:
            return ingot.conv.causal_conv1d(x, self.weight.detach(), self.bias.detach(), activation="silu")
        K = self.weight.shape[-1]
        return F.silu(F.conv1d(F.pad(x, (K - 1, 0)), self.weight, self.bias, groups=x.shape[1]))

    def step(self, x, state):
        """One token x[B, C]; state[B, C, K-1] holds the previous inputs and is updated in place."""
        return ingot.conv.causal_conv1d_update(x, state, self.weight.detach(), self.bias.detach(), activation="silu")


def main():
    ingot.use(sys.argv[1] if len(sys.argv) > 1 else "interp")
    torch.manual_seed(0)
    B, C, L, K = 2, 48, 37, 4
    block = CausalConv1d(C, K)
    x = torch.randn(B, C, L)
    with torch.no_grad():
        want = block(x, use_ingot=False)
        got = block(x)
        prefill_err = (got - want).abs().max().item()
        state = torch.zeros(B, C, K - 1)
        steps = torch.stack([block.step(x[:, :, t].contiguous(), state) for t in range(L)], dim=-1)
        decode_err = (steps - want).abs().max().item()
    print("prefill max error %.2e, decode max error %.2e" % (prefill_err, decode_err))
    return 0 if prefill_err < 1e-4 and decode_err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
