"""ONNX LSTM / GRU / RNN on MXNet's fused ``RNN`` operator.

ONNX keeps one W, R, B per direction with its own gate order (LSTM i,o,f,c;
GRU z,r,h); MXNet's RNN takes one flat parameter vector (every weight, then
every bias) with gates i,f,g,o (LSTM) and r,z,n (GRU). The weights must be
constants: they are repacked at import time.
"""
from __future__ import annotations

import numpy as np

from ... import symbol as sym
from ._graph import Const
from ._ops import op

# ONNX gate blocks in MXNet's order
_ORDER = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}
_DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"]}


def _gates(w, order, hidden):
    return np.concatenate([w[g * hidden:(g + 1) * hidden] for g in order], axis=0)


@op("LSTM", "GRU", "RNN")
def _rnn(imp, node, ins, at):
    kind = node.op_type
    ins = list(ins) + [None] * (8 - len(ins))
    x, w, r, b, seq_lens, h0, c0, peep = ins[:8]
    hidden = int(at["hidden_size"])
    direction = at.get("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    if seq_lens is not None:
        imp.unsupported("%s with sequence_lens (aiond runs every sequence to full length)"
                        % kind)
    if peep is not None:
        imp.unsupported("LSTM with peephole weights P")
    if at.get("input_forget", 0) or at.get("clip") is not None:
        imp.unsupported("%s with input_forget or clip" % kind)
    acts = at.get("activations")
    if kind == "RNN":
        act = (acts or ["Tanh"])[0]
        if acts and any(a != act for a in acts) or act not in ("Tanh", "Relu"):
            imp.unsupported("RNN with activations %s (aiond: Tanh or Relu)" % acts)
        mode = "rnn_tanh" if act == "Tanh" else "rnn_relu"
    else:
        if acts and list(acts) != _DEFAULT_ACTS[kind] * dirs:
            imp.unsupported("%s with activations %s" % (kind, acts))
        mode = kind.lower()
    if kind == "GRU" and not at.get("linear_before_reset", 0):
        imp.unsupported("GRU with linear_before_reset=0 (MXNet's GRU applies the reset "
                        "gate after the recurrent matmul, as linear_before_reset=1)")
    W = imp.const(w, "%s's W" % kind)
    R = imp.const(r, "%s's R" % kind)
    ng = W.shape[1] // hidden
    B = imp.const(b, "%s's B" % kind) if b is not None else \
        np.zeros((dirs, 2 * ng * hidden), W.dtype)
    order = _ORDER[kind]
    weights, biases = [], []
    for d in range(dirs):
        weights += [_gates(W[d], order, hidden).ravel(), _gates(R[d], order, hidden).ravel()]
        biases += [_gates(B[d][:ng * hidden], order, hidden),
                   _gates(B[d][ng * hidden:], order, hidden)]
    params = Const(np.concatenate(weights + biases).astype(W.dtype))
    params._name = (node.name or node.output[0]) + "_parameters"

    layout = at.get("layout", 0)
    X = imp.sym(x)
    if layout:
        X = sym.transpose(X, axes=(1, 0, 2))
    if direction == "reverse":
        X = sym.flip(X, axis=0)

    def state(v):
        if isinstance(v, Const) and not v.static and not v.a.any() and not v.b.any():
            v = None    # zeros sized from the batch (PyTorch's ConstantOfShape)
        if v is not None:
            s = imp.sym(v)
            return sym.transpose(s, axes=(1, 0, 2)) if layout else s
        z = sym.sum(sym.zeros_like(sym.slice_axis(X, axis=0, begin=0, end=1)), axis=2,
                    keepdims=True)
        z = sym.broadcast_to(z, shape=(0, 0, hidden))
        return sym.concat(z, z, dim=0) if dirs == 2 else z

    kw = {"state_cell": state(c0)} if kind == "LSTM" else {}
    out = sym.RNN(X, imp.sym(params), state(h0), state_size=hidden, num_layers=1,
                  bidirectional=dirs == 2, mode=mode, state_outputs=True, **kw)
    y = out[0]
    if direction == "reverse":
        y = sym.flip(y, axis=0)
    y = sym.reshape(y, shape=(0, 0, -4, dirs, hidden))     # (T, N, D, H)
    y = sym.transpose(y, axes=(1, 0, 2, 3) if layout else (0, 2, 1, 3))
    hy = out[1]
    cy = out[2] if kind == "LSTM" else None
    if layout:
        hy = sym.transpose(hy, axes=(1, 0, 2))
        cy = None if cy is None else sym.transpose(cy, axes=(1, 0, 2))
    return [y, hy] + ([cy] if kind == "LSTM" else [])
