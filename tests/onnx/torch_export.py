"""Export small PyTorch models to ONNX (run by the import tests with a Python
that has torch: this one, or ``$AIOND_TORCH_PYTHON``).

    python torch_export.py OUT_DIR

writes NAME.onnx, NAME.in.npy and NAME.out.npy (torch's output) per model.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                               nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=2, groups=2),
                               nn.BatchNorm2d(8), nn.ReLU6(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        return torch.softmax(self.fc(torch.flatten(self.f(x), 1)), dim=-1)


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.pos = nn.Parameter(torch.randn(1, 12, 16) * 0.1)
        self.enc = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True,
                                              activation="gelu")
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 3)

    def forward(self, ids):
        h = self.emb(ids) + self.pos[:, :ids.shape[1]]
        h = self.norm(self.enc(h))
        return self.head(h.mean(dim=1))


class Positions(nn.Module):
    """Position embeddings over a dynamic sequence axis, two ways: a parameter
    cut to the sequence length and an arange over it."""
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8)
        self.pos = nn.Parameter(torch.randn(1, 16, 8))
        self.head = nn.Linear(8, 3)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.emb(ids) + self.pos[:, :ids.shape[1]] + self.emb(pos)[None]
        h = h * torch.sigmoid(h.sum(-1, keepdim=True))
        return self.head(h.max(dim=1).values)


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(16, 5)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        y, _ = self.lstm(x)
        z, h = self.gru(y.transpose(0, 1))
        return z.transpose(0, 1), h


class Decoder(nn.Module):
    """ConvTranspose, bilinear resize, concat skip, sigmoid."""
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(2, 4, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(4, 4, 4, stride=2, padding=1)
        self.out = nn.Conv2d(6, 1, 1)

    def forward(self, x):
        d = torch.relu(self.down(x))
        u = self.up(d)
        r = nn.functional.interpolate(d, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.out(torch.cat([u + r, x], 1)))


def models():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.Tanh(), nn.Dropout(0.1),
                        nn.Linear(16, 4), nn.LeakyReLU(0.1), nn.LogSoftmax(-1))
    yield "mlp", mlp, torch.randn(3, 3, 4, generator=g), {0: "batch"}
    cnn = CNN()
    for m in cnn.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    yield "cnn", cnn, torch.randn(2, 3, 16, 16, generator=g), {0: "batch"}
    # (PyTorch's MultiheadAttention writes the key length as a constant: only
    # the batch axis of this export is dynamic)
    yield "transformer", Transformer(), torch.randint(0, 50, (2, 12), generator=g), \
        {0: "batch"}
    yield "positions", Positions(), torch.randint(0, 50, (2, 9), generator=g), \
        {0: "batch", 1: "seq"}
    yield "recurrent", Recurrent(), torch.randn(2, 7, 6, generator=g), {0: "batch"}
    yield "decoder", Decoder(), torch.randn(2, 2, 8, 8, generator=g), {0: "batch"}


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.backends.mha.set_fastpath_enabled(False)   # the fused layer has no ONNX export
    for name, model, x, axes in models():
        model.eval()
        with torch.no_grad():
            y = model(x)
            y = y[0] if isinstance(y, tuple) else y
            torch.onnx.export(model, (x,), os.path.join(out, name + ".onnx"),
                              input_names=["input"], dynamic_axes={"input": axes},
                              opset_version=17, dynamo=False)
        np.save(os.path.join(out, name + ".in.npy"), x.numpy())
        np.save(os.path.join(out, name + ".out.npy"), y.numpy())


if __name__ == "__main__":
    main(sys.argv[1])
