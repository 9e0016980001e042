"""MXNet's fused ``RNN`` operator (modes rnn_relu, rnn_tanh, lstm, gru;
stacked layers, bidirectional, dropout between layers, LSTM projection and
state clipping, variable sequence lengths) and its BPTT gradient
``_backward_RNN``.

Layout (MXNet 1.9.1, rnn-inl.h / rnn_impl.h): data is (T, N, C); the
parameters are ONE flat vector holding first every weight, layer by layer
and direction by direction (``l0 fwd, l0 bwd, l1 fwd, ...``), each as
``W_x (G*H, C_l)``, ``W_h (G*H, P)`` and, with projection_size, ``W_r (P, H)``;
then every bias in the same order, each as ``b_x (G*H)``, ``b_h (G*H)``.
G is 1 (rnn_*), 4 (lstm: gates i, f, g, o) or 3 (gru: gates r, z, n); P is
projection_size or H = state_size; C_l is C for layer 0 and D*P above.

    lstm: c' = f*c + i*g,  h' = o*tanh(c')  (r' = W_r h' with projection)
    gru:  n = tanh(W_xn x + b_xn + r*(W_hn h + b_hn)),  h' = (1-z)*n + z*h

The forward computes x.W_x for all time steps in one matmul per layer and
direction and then one (N, P) x (P, G*H) matmul per step; it saves what the
backward needs (gate activations, cell states, layer outputs, dropout masks)
in a hidden fourth output, ``reserve``. ``_backward_RNN`` runs BPTT over it
with the same per-step batched matmuls and one matmul per weight at the end.

Outputs are ``out (T, N, D*P)`` and, with state_outputs=True, ``hy
(L*D, N, P)`` and (lstm) ``cy (L*D, N, H)``; they are always computed
(hidden otherwise), which keeps the output positions fixed.

Beyond MXNet's CPU operator (which raises for them) this implements what
MXNet does with cuDNN: projection in training, lstm_state_clip_min/max
(lstm_state_clip_nan=True turns NaN cells into clip_max, like fmin/fmax) and
use_sequence_length (steps at or after a sequence's length give zeros and
leave the state unchanged; hy/cy are the states at the last valid step, the
backward direction starts at each sequence's last valid step). Dropout
(p > 0) applies to every layer's output except the last one, in training
only; its random stream is aiond's, not MXNet's.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from ._nn_util import _errstate
from .random import uniform01
from .registry import Null, Param, p_bool, p_float, p_int, p_str, register

_MODES = ("gru", "lstm", "rnn_relu", "rnn_tanh")
_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_F32 = np.dtype(np.float32)


def _p_opt_int(v):
    if v is None or v is Null or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_int(v)


def _p_opt_float(v):
    if v is None or v is Null or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_float(v)


def _check_attrs(op, attrs):
    name = op.name
    if attrs["state_size"] < 1:
        raise OpError("%s: state_size=%d must be at least 1" % (name, attrs["state_size"]))
    if attrs["num_layers"] < 1:
        raise OpError("%s: num_layers=%d must be at least 1" % (name, attrs["num_layers"]))
    if not 0.0 <= attrs["p"] < 1.0:
        raise OpError("%s: p=%r is out of range; the dropout rate must be in [0, 1)"
                      % (name, attrs["p"]))
    P = attrs["projection_size"]
    if P is not None:
        if attrs["mode"] != "lstm":
            raise OpError("%s: projection_size is only supported with mode='lstm', not %r"
                          % (name, attrs["mode"]))
        if not 1 <= P <= attrs["state_size"]:
            raise OpError("%s: projection_size=%d must be in [1, state_size=%d]"
                          % (name, P, attrs["state_size"]))
    lo, hi = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    if lo is not None or hi is not None:
        if attrs["mode"] != "lstm":
            raise OpError("%s: lstm_state_clip_min/max are only supported with mode='lstm'"
                          % name)
        if lo is None or hi is None:
            raise OpError("%s: lstm_state_clip_min and lstm_state_clip_max must be given "
                          "together" % name)
        if hi < lo:
            raise OpError("%s: lstm_state_clip_max=%r must be >= lstm_state_clip_min=%r"
                          % (name, hi, lo))


class _Dims:
    """Sizes of one RNN call: T, N, C, H, P (output/state width), G, L, D."""
    __slots__ = ("T", "N", "C", "H", "P", "G", "L", "D", "mode", "proj", "p")

    def __init__(self, attrs, data_shape):
        self.T, self.N, self.C = data_shape
        self.H = attrs["state_size"]
        self.proj = attrs["projection_size"]
        self.P = self.proj or self.H
        self.mode = attrs["mode"]
        self.G = _GATES[self.mode]
        self.L = attrs["num_layers"]
        self.D = 2 if attrs["bidirectional"] else 1
        self.p = attrs["p"]

    def in_size(self, layer):
        return self.C if layer == 0 else self.D * self.P

    def param_size(self):
        G, H, P = self.G, self.H, self.P
        n = 0
        for layer in range(self.L):
            n += self.D * (G * H * (self.in_size(layer) + P) + (P * H if self.proj else 0))
        return n + self.L * self.D * 2 * G * H

    def weights(self, params):
        """[(W_x, W_h, W_r or None, b_x, b_h)] per (layer, direction) as views of params."""
        G, H, P = self.G, self.H, self.P
        res = []
        off = 0
        boff = self.param_size() - self.L * self.D * 2 * G * H
        for layer in range(self.L):
            ci = self.in_size(layer)
            for _ in range(self.D):
                wx = params[off:off + G * H * ci].reshape(G * H, ci)
                off += G * H * ci
                wh = params[off:off + G * H * P].reshape(G * H, P)
                off += G * H * P
                wr = None
                if self.proj:
                    wr = params[off:off + P * H].reshape(P, H)
                    off += P * H
                bx = params[boff:boff + G * H]
                bh = params[boff + G * H:boff + 2 * G * H]
                boff += 2 * G * H
                res.append((wx, wh, wr, bx, bh))
        return res

    def layout(self):
        """The reserve output's pieces: {(kind, layer[, dir]): (offset, shape)}, size.
        'y': a lower layer's output (before dropout), 'mask': its dropout
        mask, 'gates': activations per step, 'cell': lstm cell states (after
        clipping) or gru's W_hn h + b_hn."""
        T, N, H, P, G, D = self.T, self.N, self.H, self.P, self.G, self.D
        pieces = {}
        off = 0

        def add(key, shape):
            nonlocal off
            pieces[key] = (off, shape)
            off += int(np.prod(shape))
        for layer in range(self.L):
            if layer < self.L - 1:
                add(("y", layer), (T, N, D * P))
                if self.p > 0:
                    add(("mask", layer), (T, N, D * P))
            for d in range(D):
                add(("gates", layer, d), (T, N, G * H))
                if self.mode in ("lstm", "gru"):
                    add(("cell", layer, d), (T, N, H))
        return pieces, max(off, 1)


def _view(reserve, pieces, key):
    off, shape = pieces[key]
    return reserve[off:off + int(np.prod(shape))].reshape(shape)


def _num_inputs(attrs):
    return (4 if attrs["mode"] == "lstm" else 3) + (1 if attrs["use_sequence_length"] else 0)


def _input_names(attrs):
    names = ["data", "parameters", "state"]
    if attrs["mode"] == "lstm":
        names.append("state_cell")
    if attrs["use_sequence_length"]:
        names.append("sequence_length")
    return names


def _rnn_rule(attrs, shapes, dtypes):
    names = _input_names(attrs)
    if len(shapes) != len(names):
        why = (" with mode=%r" % attrs["mode"]) + (
            ", use_sequence_length=True" if attrs["use_sequence_length"] else "")
        raise OpError("expects %d inputs (%s)%s, got %d"
                      % (len(names), ", ".join(names), why, len(shapes)))
    d = tuple(shapes[0])
    if len(d) != 3:
        raise ShapeError("data must be 3-D (sequence length, batch size, input size) in "
                         "layout TNC, got shape %s" % fmt(d))
    dims = _Dims(attrs, d)
    T, N = dims.T, dims.N
    LD = dims.L * dims.D
    want = param_shapes(attrs, d)
    for i, n in enumerate(names[1:], 1):
        if tuple(shapes[i]) != want[n]:
            raise ShapeError("%s has shape %s but expected %s (data %s, state_size=%d, "
                             "num_layers=%d%s%s)"
                             % (n, fmt(shapes[i]), fmt(want[n]), fmt(d), dims.H, dims.L,
                                ", bidirectional" if dims.D == 2 else "",
                                ", projection_size=%d" % dims.proj if dims.proj else ""))
    dt = dtypes[0]
    if dt not in _FLOATS:
        raise OpError("only supports floating point data, got %s (cast it with "
                      ".astype('float32'))" % dt.name)
    for i, n in enumerate(names[1:], 1):
        if n != "sequence_length" and dtypes[i] != dt:
            raise OpError("%s has dtype %s but data has %s; they must be the same"
                          % (n, dtypes[i].name, dt.name))
    _, rsize = dims.layout()
    rdt = _F32 if dt == np.float16 else dt
    return (((T, N, dims.D * dims.P), (LD, N, dims.P), (LD, N, dims.H), (rsize,)),
            (dt, dt, dt, rdt))


def param_shapes(attrs, data_shape):
    """{input name: shape} of RNN's inputs other than data, given data's shape
    (MXNet's RNNShape; for Symbol shape inference: PARAM_SHAPES' signature)."""
    dims = _Dims(attrs, tuple(data_shape))
    LD = dims.L * dims.D
    return {"parameters": (dims.param_size(),), "state": (LD, dims.N, dims.P),
            "state_cell": (LD, dims.N, dims.H), "sequence_length": (dims.N,)}


def _num_visible(attrs):
    if not attrs["state_outputs"]:
        return 1
    return 3 if attrs["mode"] == "lstm" else 2


_PARAMS = [
    Param("state_size", p_int, doc="size of the state for each layer"),
    Param("num_layers", p_int, doc="number of stacked layers"),
    Param("bidirectional", p_bool, False, "whether to use bidirectional recurrent layers"),
    Param("mode", p_str, doc="the type of RNN to compute", choices=_MODES),
    Param("p", p_float, 0.0, "drop rate of the dropout on the outputs of each RNN layer, "
          "except the last layer."),
    Param("state_outputs", p_bool, False, "Whether to have the states as symbol outputs."),
    Param("projection_size", _p_opt_int, None, "size of project size"),
    Param("lstm_state_clip_min", _p_opt_float, None, "Minimum clip value of LSTM states."),
    Param("lstm_state_clip_max", _p_opt_float, None, "Maximum clip value of LSTM states."),
    Param("lstm_state_clip_nan", p_bool, False, "Whether to stop NaN from propagating in state "
          "by clipping it to min/max."),
    Param("use_sequence_length", p_bool, False, "If set to true, this layer takes in an extra "
          "input parameter `sequence_length` to specify variable length sequence"),
]


def _sigmoid(xp, x):
    with _errstate():
        return 1.0 / (1.0 + xp.exp(-x))


def _split_inputs(attrs, rest):
    """(state_cell or None, sequence_length or None) from the trailing inputs."""
    rest = list(rest)
    cell = rest.pop(0) if attrs["mode"] == "lstm" else None
    length = rest.pop(0) if attrs["use_sequence_length"] else None
    return cell, length


def _valid_steps(xp, length, T):
    """(T, N, 1) booleans: step t is inside sequence n."""
    if length is None:
        return None
    L = xp.trunc(length.astype(np.float64)) if length.dtype.kind == "f" else length
    return (xp.arange(T).reshape(T, 1, 1) < L.reshape(1, -1, 1))


def _clip_cell(xp, c, attrs):
    lo, hi = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    if lo is None:
        return c
    if attrs["lstm_state_clip_nan"]:
        return xp.fmax(xp.fmin(c, hi), lo)
    return xp.minimum(xp.maximum(c, lo), hi)


def _layer_forward(xp, dims, attrs, x, w, h0, c0, reverse, valid, y, gates, cell):
    """One layer and direction. Writes the (T, N, P) outputs into y, gate
    activations into gates and cell states into cell; returns (h, c)."""
    T, N, H, G = dims.T, dims.N, dims.H, dims.G
    wx, wh, wr, bx, bh = w
    mode = dims.mode
    xw = xp.matmul(x.reshape(T * N, -1), wx.T).reshape(T, N, G * H)
    xw += bx if mode == "gru" else bx + bh          # gru keeps b_h inside r * (...)
    h, c = h0, c0
    steps = range(T - 1, -1, -1) if reverse else range(T)
    with _errstate():
        for t in steps:
            hw = xp.matmul(h, wh.T)
            if mode == "lstm":
                a = xw[t] + hw
                gt = gates[t]                       # sigmoid of all four, then tanh of g
                xp.negative(a, out=gt)
                xp.exp(gt, out=gt)
                gt += 1
                xp.reciprocal(gt, out=gt)
                xp.tanh(a[:, 2 * H:3 * H], out=gt[:, 2 * H:3 * H])
                i, f, g, o = gt[:, :H], gt[:, H:2 * H], gt[:, 2 * H:3 * H], gt[:, 3 * H:]
                cn = _clip_cell(xp, f * c + i * g, attrs)
                hn = o * xp.tanh(cn)
                if wr is not None:
                    hn = xp.matmul(hn, wr.T)
            elif mode == "gru":
                hw += bh
                a = xw[t]
                r = _sigmoid(xp, a[:, :H] + hw[:, :H])
                z = _sigmoid(xp, a[:, H:2 * H] + hw[:, H:2 * H])
                n = xp.tanh(a[:, 2 * H:] + r * hw[:, 2 * H:])
                hn = (1.0 - z) * n + z * h
                gt = gates[t]
                gt[:, :H], gt[:, H:2 * H], gt[:, 2 * H:] = r, z, n
                cell[t] = hw[:, 2 * H:]
            else:
                a = xw[t] + hw
                hn = xp.maximum(a, 0) if mode == "rnn_relu" else xp.tanh(a)
                gates[t] = hn
            if valid is not None:
                v = valid[t]
                hn = xp.where(v, hn, h)
                y[t] = xp.where(v, hn, 0)
                if mode == "lstm":
                    cn = xp.where(v, cn, c)
            else:
                y[t] = hn
            h = hn
            if mode == "lstm":
                c = cn
                cell[t] = c
    return h, c


from .registry import optional as _optional  # noqa: E402


def _dropout_mask(xp, rng, dims, shape, train):
    if not train:
        return xp.ones(shape, dtype=_F32)
    u = uniform01(xp, rng, shape)      # on the device on a GPU context
    keep = np.float32(1.0 - dims.p)
    return (u >= np.float32(dims.p)).astype(np.float32) * (np.float32(1.0) / keep)


@register("RNN", inputs=("data", "parameters", "state", "state_cell", "sequence_length"),
          params=_PARAMS, infer=_rnn_rule, attr_check=_check_attrs, inline=False,
          num_outputs=4, num_visible=_num_visible, needs_rng=True, train_aware=True,
          output_names=("output", "state_output", "statecell_output", "reserve"))
@_optional("state_cell", "sequence_length")
def rnn(xp, data, parameters, state, *rest, out, rng=None, _train=False, **attrs):
    """RNN(data, parameters, state, state_cell=None, sequence_length=None,
    state_size, num_layers, mode, bidirectional=False, p=0, state_outputs=False,
    projection_size=None, lstm_state_clip_min=None, lstm_state_clip_max=None,
    lstm_state_clip_nan=False, use_sequence_length=False): a fused stack of
    recurrent layers over (T, N, C) data with MXNet's flat parameter vector.
    Returns out, or [out, hy(, cy)] with state_outputs=True."""
    y_out, hy, cy, reserve = out
    dims = _Dims(attrs, data.shape)
    cell0, length = _split_inputs(attrs, rest)
    cd = reserve.dtype                              # compute dtype (float32 for float16)
    params = parameters.astype(cd, copy=False)
    W = dims.weights(params)
    pieces, _ = dims.layout()
    valid = _valid_steps(xp, length, dims.T)
    x = data.astype(cd, copy=False)
    h0s = state.astype(cd, copy=False)
    c0s = cell0.astype(cd, copy=False) if cell0 is not None else None
    P, D = dims.P, dims.D
    if dims.mode != "lstm":
        cy[...] = 0
    for layer in range(dims.L):
        last = layer == dims.L - 1
        if last:
            y = y_out if y_out.dtype == cd else xp.empty(y_out.shape, dtype=cd)
        else:
            y = _view(reserve, pieces, ("y", layer))
        for d in range(D):
            k = layer * D + d
            gates = _view(reserve, pieces, ("gates", layer, d))
            cell = _view(reserve, pieces, ("cell", layer, d)) if ("cell", layer, d) in pieces \
                else None
            yd = xp.empty((dims.T, dims.N, P), dtype=cd)
            h, c = _layer_forward(xp, dims, attrs, x, W[k], h0s[k],
                                  c0s[k] if c0s is not None else None, d == 1, valid,
                                  yd, gates, cell)
            y[:, :, d * P:(d + 1) * P] = yd
            hy[k] = h
            if dims.mode == "lstm":
                cy[k] = c
        if last:
            if y is not y_out:
                xp.copyto(y_out, y, casting="unsafe")
        elif dims.p > 0:
            mask = _view(reserve, pieces, ("mask", layer))
            mask[...] = _dropout_mask(xp, rng, dims, mask.shape, _train)
            x = y * mask
        else:
            x = y


def _bwd_rule(attrs, shapes, dtypes):
    return ((tuple(shapes[0]), tuple(shapes[1]), tuple(shapes[2]), tuple(shapes[3])),
            (dtypes[0], dtypes[1], dtypes[2], dtypes[3]))


@register("_backward_RNN", inputs=("data", "parameters", "state", "state_cell", "output",
                                   "reserve", "dout", "dhy", "dcy", "sequence_length"),
          params=_PARAMS, infer=_bwd_rule, inline=False, num_outputs=4,
          output_names=("data_grad", "parameters_grad", "state_grad", "state_cell_grad"))
@_optional("sequence_length")
def _backward_rnn(xp, data, parameters, state, state_cell, y_top, reserve, dout, dhy, dcy,
                  *length, out, **attrs):
    """_backward_RNN(data, parameters, state, state_cell, output, reserve, dout, dhy,
    dcy[, sequence_length]): BPTT through RNN's forward saved in reserve; returns
    the gradients of data, parameters, state and state_cell (a zero
    placeholder for modes other than lstm, where state_cell is state)."""
    dx_out, dp_out, dh0_out, dc0_out = out
    dims = _Dims(attrs, data.shape)
    T, N, H, P, G, D = dims.T, dims.N, dims.H, dims.P, dims.G, dims.D
    cd = reserve.dtype
    params = parameters.astype(cd, copy=False)
    W = dims.weights(params)
    dparams = xp.zeros(params.shape, dtype=cd)
    dW = dims.weights(dparams)                      # views into dparams
    pieces, _ = dims.layout()
    valid = _valid_steps(xp, length[0] if length else None, T)
    lstm = dims.mode == "lstm"
    gru = dims.mode == "gru"
    h0s = state.astype(cd, copy=False)
    c0s = state_cell.astype(cd, copy=False)
    dh0 = xp.zeros(h0s.shape, dtype=cd)
    dc0 = xp.zeros((dims.L * D, N, H), dtype=cd)
    dy = dout.astype(cd, copy=False)
    with _errstate():
        for layer in range(dims.L - 1, -1, -1):
            if layer == 0:
                x = data.astype(cd, copy=False)
            else:
                x = _view(reserve, pieces, ("y", layer - 1))
                if dims.p > 0:
                    x = x * _view(reserve, pieces, ("mask", layer - 1))
            y = y_top.astype(cd, copy=False) if layer == dims.L - 1 else \
                _view(reserve, pieces, ("y", layer))
            dx = xp.zeros(x.shape, dtype=cd)
            for d in range(D):
                k = layer * D + d
                wx, wh, wr, bx, bh = W[k]
                gwx, gwh, gwr, gbx, gbh = dW[k]
                gates = _view(reserve, pieces, ("gates", layer, d))
                cell = _view(reserve, pieces, ("cell", layer, d)) if lstm or gru else None
                yd = y[:, :, d * P:(d + 1) * P]
                dyd = dy[:, :, d * P:(d + 1) * P]
                h0 = h0s[k]
                # the state each step started from (a skipped step keeps the state)
                if d == 0:       # valid steps are a prefix: a valid step follows a valid one
                    hprev = xp.concatenate([h0[None], yd[:-1]], axis=0)
                    cprev = xp.concatenate([c0s[k][None], cell[:-1]], axis=0) if lstm else None
                else:
                    hprev = xp.concatenate([yd[1:], h0[None]], axis=0)
                    cprev = xp.concatenate([cell[1:], c0s[k][None]], axis=0) if lstm else None
                    if valid is not None:
                        nxt = xp.concatenate([valid[1:], valid[-1:] & False])
                        hprev = xp.where(nxt, hprev, h0)
                        if lstm:
                            cprev = xp.where(nxt, cprev, c0s[k])
                dpre = xp.zeros((T, N, G * H), dtype=cd)       # d(x.W_x + b_x) per step
                dhw_all = xp.zeros((T, N, G * H), dtype=cd) if gru else dpre
                dwr = xp.zeros((P, H), dtype=cd) if wr is not None else None
                dh = dhy[k].astype(cd, copy=False).copy()
                dc = dcy[k].astype(cd, copy=False).copy() if lstm else None
                steps = range(T) if d == 1 else range(T - 1, -1, -1)
                for t in steps:
                    v = valid[t] if valid is not None else None
                    dht = dh + (dyd[t] if v is None else xp.where(v, dyd[t], 0))
                    if lstm:
                        gt = gates[t]
                        i, f, g, o = gt[:, :H], gt[:, H:2 * H], gt[:, 2 * H:3 * H], gt[:, 3 * H:]
                        c = cell[t]
                        tc = xp.tanh(c)
                        if wr is not None:
                            dwr += xp.matmul((dht if v is None else xp.where(v, dht, 0)).T,
                                             o * tc)
                            dhh = xp.matmul(dht, wr)
                        else:
                            dhh = dht
                        dct = dc + dhh * o * (1.0 - tc * tc)
                        if attrs["lstm_state_clip_min"] is not None:
                            dct = dct * ((c > attrs["lstm_state_clip_min"])
                                         & (c < attrs["lstm_state_clip_max"]))
                        dg = xp.empty((N, G * H), dtype=cd)
                        dg[:, :H] = dct * g * i * (1.0 - i)
                        dg[:, H:2 * H] = dct * cprev[t] * f * (1.0 - f)
                        dg[:, 2 * H:3 * H] = dct * i * (1.0 - g * g)
                        dg[:, 3 * H:] = dhh * tc * o * (1.0 - o)
                        dcn = dct * f
                        dhn = xp.matmul(dg, wh)
                        if v is not None:
                            dg = xp.where(v, dg, 0)
                            dhn = xp.where(v, dhn, dht)
                            dcn = xp.where(v, dcn, dc)
                        dc = dcn
                    elif gru:
                        gt = gates[t]
                        r, z, n = gt[:, :H], gt[:, H:2 * H], gt[:, 2 * H:]
                        dn = dht * (1.0 - z) * (1.0 - n * n)
                        dz = dht * (hprev[t] - n) * z * (1.0 - z)
                        dr = dn * cell[t] * r * (1.0 - r)
                        dg = xp.concatenate([dr, dz, dn], axis=1)
                        dhw = xp.concatenate([dr, dz, dn * r], axis=1)
                        dhn = xp.matmul(dhw, wh) + dht * z
                        if v is not None:
                            dg = xp.where(v, dg, 0)
                            dhw = xp.where(v, dhw, 0)
                            dhn = xp.where(v, dhn, dht)
                        dhw_all[t] = dhw
                    else:
                        hcur = gates[t]
                        act = (hcur > 0) if dims.mode == "rnn_relu" else (1.0 - hcur * hcur)
                        dg = dht * act
                        dhn = xp.matmul(dg, wh)
                        if v is not None:
                            dg = xp.where(v, dg, 0)
                            dhn = xp.where(v, dhn, dht)
                    dpre[t] = dg
                    dh = dhn
                dh0[k] = dh
                if lstm:
                    dc0[k] = dc
                dp2 = dpre.reshape(T * N, G * H)
                gwx += xp.matmul(dp2.T, x.reshape(T * N, -1))
                gwh += xp.matmul(dhw_all.reshape(T * N, G * H).T, hprev.reshape(T * N, P))
                if dwr is not None:
                    gwr += dwr
                gbx += dp2.sum(axis=0)
                gbh += dhw_all.reshape(T * N, G * H).sum(axis=0)
                dx += xp.matmul(dp2, wx).reshape(x.shape)
            if layer > 0:
                dy = dx * _view(reserve, pieces, ("mask", layer - 1)) if dims.p > 0 else dx
            else:
                xp.copyto(dx_out, dx, casting="unsafe")
    xp.copyto(dp_out, dparams, casting="unsafe")
    xp.copyto(dh0_out, dh0, casting="unsafe")
    if lstm:
        xp.copyto(dc0_out, dc0, casting="unsafe")
    else:
        dc0_out[...] = 0


# ------------------------------------------------------------ gradient table
from ._grad import set_grads  # noqa: E402


def _rnn_grad(F, attrs, ins, outs, og):
    kw = {k: v for k, v in attrs.items() if k != "_train"}
    lstm = attrs["mode"] == "lstm"
    data, params, state = ins[0], ins[1], ins[2]
    cell = ins[3] if lstm else state
    extra = [ins[-1]] if attrs["use_sequence_length"] else []
    dx, dp, dh, dc = F._internal._backward_RNN(data, params, state, cell, outs[0], outs[3],
                                               og[0], og[1], og[2], *extra, **kw)
    res = [dx, dp, dh]
    if lstm:
        res.append(dc)
    return res + [None] * len(extra)


set_grads({"RNN": _rnn_grad})


# ------------------------------------------------------------ the parameters by name
# The flat parameter vector's pieces by the names mx.rnn.FusedRNNCell gives them
# (``<prefix><l|r><layer>_<i2h|h2h><gate>_<weight|bias>``), shared by that cell and
# mx.init.FusedRNN; no projection (neither has one).
FUSED_GATE_NAMES = {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
                    "gru": ["_r", "_z", "_o"]}


def fused_num_input(size, mode, num_layers, bidirectional, num_hidden):
    """The input width C that a parameter vector of ``size`` elements implies."""
    b, m, h = 2 if bidirectional else 1, len(FUSED_GATE_NAMES[mode]), num_hidden
    return size // b // h // m - (num_layers - 1) * (h + b * h + 2) - h - 2


def fused_param_size(num_input, mode, num_layers, bidirectional, num_hidden):
    """The parameter vector's length for input width ``num_input``."""
    b, m, h = 2 if bidirectional else 1, len(FUSED_GATE_NAMES[mode]), num_hidden
    return (num_input + h + 2) * h * m * b + (num_layers - 1) * m * h * (h + b * h + 2) * b


def fused_weight_views(arr, mode, num_layers, bidirectional, num_input, num_hidden, prefix=""):
    """Views of the flat parameter vector ``arr`` (any array that slices and
    reshapes) by name: all weights layer by layer, direction by direction,
    then all biases in the same order, as the RNN op reads them."""
    gates = FUSED_GATE_NAMES[mode]
    dirs = ["l", "r"] if bidirectional else ["l"]
    b, lh = len(dirs), num_hidden
    args, p = {}, 0
    for layer in range(num_layers):
        for d in dirs:
            for gate in gates:
                name = "%s%s%d_i2h%s_weight" % (prefix, d, layer, gate)
                cols = b * lh if layer > 0 else num_input
                args[name] = arr[p:p + lh * cols].reshape((lh, cols))
                p += lh * cols
            for gate in gates:
                name = "%s%s%d_h2h%s_weight" % (prefix, d, layer, gate)
                args[name] = arr[p:p + lh * lh].reshape((lh, lh))
                p += lh * lh
    for layer in range(num_layers):
        for d in dirs:
            for group in ("i2h", "h2h"):
                for gate in gates:
                    args["%s%s%d_%s%s_bias" % (prefix, d, layer, group, gate)] = arr[p:p + lh]
                    p += lh
    if p != arr.size:
        raise ValueError("a fused %s RNN's parameters (%d layer(s), %s, %d hidden, %d inputs) "
                         "hold %d elements, got a vector of %d"
                         % (mode, num_layers, "bidirectional" if bidirectional else "one way",
                            num_hidden, num_input, p, arr.size))
    return args
