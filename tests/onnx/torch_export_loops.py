"""Export small scripted PyTorch loops to ONNX ``Loop`` nodes (TorchScript's
exporter keeps ``for``/``while`` loops of scripted modules as loops; tracing
unrolls them). Run by test_import_control_flow.py with a Python that has
torch: this one, or ``$AIOND_TORCH_PYTHON``.

    python torch_export_loops.py OUT_DIR

writes NAME.onnx, NAME.in.npy and NAME.out.npy (torch's output) per model.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


class RangeOfAxis(nn.Module):
    """``for i in range(x.shape[0])`` over a dynamic axis: M = Shape -> Gather."""
    def forward(self, x):
        acc = torch.zeros_like(x[0])
        for i in range(x.shape[0]):
            acc = acc * 0.5 + x[i] * float(i + 1)
        return acc


class FixedRecurrence(nn.Module):
    """A recurrence over a fixed number of steps: a Loop with a constant M."""
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        h = torch.zeros(x.shape[1], x.shape[2])
        for i in range(x.shape[0]):
            h = torch.tanh(self.lin(x[i]) + h)
        return h


class WhileSum(nn.Module):
    """A data-dependent while loop: its condition (an If for the short-circuit
    ``and``) is computed in the body."""
    def forward(self, x):
        s = x
        n = 0
        while bool(s.sum() < 100.0) and n < 20:
            s = s * 1.5 + 1.0
            n += 1
        return s


def models():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    yield "range_of_axis", RangeOfAxis(), torch.randn(5, 3, 2, generator=g), {0: "T"}
    yield "fixed_recurrence", FixedRecurrence(), torch.randn(4, 3, 2, generator=g), None
    yield "while_sum", WhileSum(), torch.rand(4, 3, generator=g), None


def main(out):
    os.makedirs(out, exist_ok=True)
    import warnings
    warnings.simplefilter("ignore")     # the TorchScript exporter is deprecated
    for name, model, x, axes in models():
        model.eval()
        with torch.no_grad():
            y = model(x)
            torch.onnx.export(torch.jit.script(model), (x,), os.path.join(out, name + ".onnx"),
                              input_names=["input"],
                              dynamic_axes={"input": axes} if axes else None,
                              opset_version=17, dynamo=False)
        np.save(os.path.join(out, name + ".in.npy"), x.numpy())
        np.save(os.path.join(out, name + ".out.npy"), y.numpy())


if __name__ == "__main__":
    main(sys.argv[1])
