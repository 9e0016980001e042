"""MXNet 1.9.1's ``_contrib_quantized_rnn``: the int8 LSTM of MXNet's oneDNN
build (src/operator/quantization/quantized_rnn.cc and its oneDNN kernel).

Inputs are ``RNN``'s (data, parameters, state, state_cell) plus the data's
asymmetric quantization ``min_data`` = scale and ``max_data`` = shift (what
``quantize_asym`` gives): data is uint8 with ``x ~ (q - shift) / scale``;
the parameters stay float32. As oneDNN's int8 LSTM computes it:

- the weights are quantized to int8 per gate row, with one scale per row
  shared by every layer and direction (``127 / max|w|`` over the rows MXNet's
  GetMKLDNNRnnWeightsQParams reads);
- every matmul input (the data, each step's hidden state, a lower layer's
  output) is uint8 over the data's scale and shift;
- the int32 sums are dequantized, the float32 biases added and the gates
  and cell state computed in float32; the hidden state is uint8 over the
  data's scale and shift (the outputs and ``hy`` are its float32 values,
  ``(q - shift) / scale``, so a state outside the data's range saturates).

Only ``mode='lstm'`` exists (as in MXNet); projection, state clipping and
sequence lengths are not supported by MXNet's int8 kernel and raise here too.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import _REGISTRY, Op, Param, host_kernels, p_bool, register
from .rnn import _PARAMS as _RNN_PARAMS
from .rnn import _Dims, param_shapes

_F32, _U8 = np.dtype(np.float32), np.dtype(np.uint8)
_INPUTS = ("data", "parameters", "state", "state_cell", "min_data", "max_data")


def _n_out(attrs):
    return 3 if attrs.get("state_outputs") else 1


def _check(attrs):
    if attrs["mode"] != "lstm":
        raise OpError("Quantized recurrent neural network only supports LSTM operator on "
                      "CPU (mode='lstm'), got mode=%r" % attrs["mode"])
    for k in ("projection_size", "lstm_state_clip_min", "lstm_state_clip_max"):
        if attrs.get(k) is not None:
            raise OpError("quantized_rnn does not support %s (MXNet's int8 LSTM has none)" % k)
    if attrs.get("use_sequence_length"):
        raise OpError("quantized_rnn does not support use_sequence_length")


def _rule(attrs, shapes, dtypes):
    _check(attrs)
    if len(shapes) != 6:
        raise OpError("quantized_rnn takes 6 inputs (%s), got %d" % (", ".join(_INPUTS),
                                                                    len(shapes)))
    d = tuple(shapes[0])
    if len(d) != 3:
        raise ShapeError("Input data of RNN operator should be 3-rank tensor of dim "
                         "[steps, batch, input size], got %s" % fmt(d))
    want = param_shapes(attrs, d)
    for i, n in enumerate(("parameters", "state", "state_cell"), 1):
        if tuple(shapes[i]) != want[n]:
            raise ShapeError("%s has shape %s but expected %s" % (n, fmt(shapes[i]),
                                                                 fmt(want[n])))
    for i, n in ((4, "min_data"), (5, "max_data")):
        if tuple(shapes[i]) != (1,):
            raise ShapeError("%s must have shape (1,), got %s" % (n, fmt(shapes[i])))
    if dtypes[0] != _U8:
        raise OpError("Quantized RNN operator only supports uint8 input, while %s is given "
                      "(quantize it with quantize_asym)" % dtypes[0].name)
    dims = _Dims(attrs, d)
    LD = dims.L * dims.D
    shapes_out = [(dims.T, dims.N, dims.D * dims.H), (LD, dims.N, dims.H), (LD, dims.N, dims.H)]
    n = _n_out(attrs)
    return tuple(shapes_out[:n]), (_F32,) * n


class _QRnnOp(Op):
    """Outputs as MXNet lists them (``statecell_ouput`` is MXNet's spelling);
    graph inference fills the parameter, state and range shapes."""
    __slots__ = ()

    def output_names_for(self, params):
        if params.get("state_outputs"):
            return ["output", "state_output", "statecell_ouput"]
        return ["output"]

    def fill_inputs(self, params, in_shapes):
        d = in_shapes[0]
        if d is None or len(d) != 3 or any(x < 0 for x in d):
            return [None] * 4 + [(1,), (1,)]
        want = param_shapes(params, d)
        return [None, want["parameters"], want["state"], want["state_cell"], (1,), (1,)]


def _weight_scales(flat, dims):
    """127 / max|w| per gate row (4H), over the weights MXNet's
    GetMKLDNNRnnWeightsQParams reads: layer 0 (both directions), then for a
    second fused group (layers 1.. when their input size differs) the first
    4H*H values at that group's W_x and at W_x + 4H*C."""
    H, C, D, L = dims.H, dims.C, dims.D, dims.L
    G4 = 4 * H
    wx_size0, wh_size0 = G4 * C, G4 * H
    w_size0 = G4 * (C + H)
    wx = np.abs(flat[:wx_size0])
    wh = np.abs(flat[wx_size0:wx_size0 + wh_size0])
    if D == 2:
        wx = np.maximum(wx, np.abs(flat[w_size0:w_size0 + wx_size0]))
        wh = np.maximum(wh, np.abs(flat[w_size0 + wx_size0:w_size0 + wx_size0 + wh_size0]))
    w_max = np.maximum(wx.reshape(G4, C).max(axis=1), wh.reshape(G4, H).max(axis=1))
    w_max = np.maximum(w_max, 0)
    # layers with the input size of layer 1 and up run as one fused group
    # unless layer 0 has the same input size (then all layers are one group)
    if L > 1 and C != D * H:
        x_off = w_size0 * D
        h_off = x_off + wx_size0
        goi = np.maximum(np.abs(flat[x_off:x_off + wh_size0]),
                         np.abs(flat[h_off:h_off + wh_size0]))
        w_max = np.maximum(w_max, goi.reshape(G4, H).max(axis=1))
    with np.errstate(divide="ignore"):
        return (np.float32(127) / w_max.astype(np.float32)).astype(np.float32)


def _quant_u8(v, scale, shift):
    return np.clip(np.rint(v * scale + shift), 0, 255)


@register("_contrib_quantized_rnn", inputs=_INPUTS,
          params=_RNN_PARAMS + [Param("quantized", p_bool, False,
                                      "whether the op is the int8 one (set by the op)")],
          infer=_rule, num_outputs=_n_out, num_visible=_n_out,
          output_names=("output", "state_output",
                                                         "statecell_ouput"), inline=False)
def _contrib_quantized_rnn(xp, data, parameters, state, state_cell, min_data, max_data, out,
                           **attrs):
    """quantized_rnn(data, parameters, state, state_cell, min_data, max_data,
    state_size, num_layers, mode='lstm', bidirectional=False,
    state_outputs=False, ...): an int8 LSTM over uint8 (T, N, C) data
    quantized with scale ``min_data`` and shift ``max_data``."""
    _check(attrs)
    outs = out if isinstance(out, (list, tuple)) else [out]
    dims = _Dims(attrs, data.shape)
    T, N, H, D = dims.T, dims.N, dims.H, dims.D
    s = np.float32(min_data[0])
    z = np.float32(max_data[0])
    flat = parameters.astype(np.float32)
    ws = _weight_scales(flat, dims)                # (4H,)
    W = dims.weights(flat)
    qw = [(np.rint(wx * ws[:, None]), np.rint(wh * ws[:, None]), bx, bh)
          for wx, wh, _, bx, bh in W]
    deq = (np.float32(1) / (s * ws)).astype(np.float64)   # int32 sums -> float
    xq = data.astype(np.float64) - z               # (q - shift): the matmul operand
    hy = np.empty((dims.L * D, N, H), np.float32)
    cy = np.empty((dims.L * D, N, H), np.float32)
    y = None
    for layer in range(dims.L):
        y = np.empty((T, N, D * H), np.float32)
        for d in range(D):
            k = layer * D + d
            wxq, whq, bx, bh = qw[k]
            xw = (xq.reshape(T * N, -1) @ wxq.T.astype(np.float64)).reshape(T, N, 4 * H)
            h = state[k].astype(np.float32)
            c = state_cell[k].astype(np.float32)
            b = (bx + bh).astype(np.float32)
            for t in (range(T - 1, -1, -1) if d == 1 else range(T)):
                hq = _quant_u8(h, s, z).astype(np.float64) - z
                acc = xw[t] + hq @ whq.T.astype(np.float64)
                a = (acc * deq).astype(np.float32) + b
                i = 1 / (1 + np.exp(-a[:, :H]))
                f = 1 / (1 + np.exp(-a[:, H:2 * H]))
                g = np.tanh(a[:, 2 * H:3 * H])
                o = 1 / (1 + np.exp(-a[:, 3 * H:]))
                c = (f * c + i * g).astype(np.float32)
                # the hidden state comes out as uint8 over the data's range
                # (oneDNN's int8 LSTM), given back as float32
                h = ((_quant_u8(o * np.tanh(c), s, z) - z) / s).astype(np.float32)
                y[t, :, d * H:(d + 1) * H] = h
            hy[k], cy[k] = h, c
        # the next layer reads this one's output as uint8 over the data's range
        xq = _quant_u8(y, s, z).astype(np.float64) - z
    outs[0][...] = y
    if len(outs) == 3:
        outs[1][...] = hy
        outs[2][...] = cy


_REGISTRY["_contrib_quantized_rnn"].__class__ = _QRnnOp
set_grads({"_contrib_quantized_rnn": lambda F, at, ins, outs, og: [None] * len(ins)})
host_kernels("_contrib_quantized_rnn")
