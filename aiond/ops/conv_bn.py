"""Inference Convolution + BatchNorm (+ ReLU) as one kernel.

MXNet's oneDNN subgraph backend folds an inference BatchNorm into the
convolution before it and runs the ReLU after it as a post-op of the same
primitive; a plan does the same (``ndarray/_plan_fuse.py`` finds the steps):

    BN(conv(x, w) + b) = conv(x, w * s) + (b - mean) * s + beta,
    s = gamma / sqrt(var + eps)      (gamma = 1 with fix_gamma)

so the BatchNorm's pass over the output, and the ReLU's, disappear. The
folded weight and bias are kept while the versions of the six arrays they
come from hold (``onednn._wcache`` stamps); a change to any of them folds
again at the next call. Results equal the unfused steps within float32
rounding (the scale multiplies the weight instead of the output).

Not a registered operator: a plan step made only by the fusion pass.
"""
from __future__ import annotations

import collections
import threading

import numpy as np

from ._fast import relu_into
from .conv_gemm import fwd_plan, run_all
from . import onednn as _dnn
from .onednn import _wcache

_F32 = np.dtype(np.float32)
CAPACITY = 256 << 20    # bytes of folded weights kept (least recently used go first)

_folded: "collections.OrderedDict" = collections.OrderedDict()
_lock = threading.Lock()
_bytes = [0]
stats = {"folds": 0, "hits": 0}


class _Folded:
    """A folded (weight, bias): stands as the variable of the folded weight
    in the weight cache (a new one, a new variable, each time it is made)."""
    __slots__ = ("w", "b", "version")

    def __init__(self, w, b):
        self.w, self.b, self.version = w, b, 0


def _fold(xp, weight, bias, gamma, beta, mean, var, eps, fix_gamma):
    srcs = (weight, bias, None if fix_gamma else gamma, beta, mean, var)
    stamps = None
    if xp is np:
        stamps = tuple(None if a is None else _wcache.stamp(a) for a in srcs)
        if any(st is None for st, a in zip(stamps, srcs) if a is not None):
            stamps = None
    if stamps is not None:
        key = (tuple(None if st is None else id(st[0]) for st in stamps), weight.ctypes.data,
               weight.shape, eps, fix_gamma)
        e = _folded.get(key)
        if e is not None and all(
                (a is None and b is None) or (a is not None and b is not None
                                              and a[0] is b[0] and a[1] == b[1])
                for a, b in zip(e[0], stamps)):
            stats["hits"] += 1
            return e[1]
    acc = weight.dtype
    s = 1.0 / xp.sqrt(var.astype(acc, copy=False) + acc.type(eps))
    if not fix_gamma:
        s = s * gamma.astype(acc, copy=False)
    s = s.astype(acc, copy=False)
    w2 = weight * s.reshape((-1,) + (1,) * (weight.ndim - 1))
    b0 = -mean.astype(acc, copy=False) if bias is None else bias - mean
    b2 = (b0 * s + beta.astype(acc, copy=False)).astype(acc, copy=False)
    f = _Folded(xp.ascontiguousarray(w2), xp.ascontiguousarray(b2))
    stats["folds"] += 1
    if stamps is not None:
        with _lock:
            # the entry holds the variables: their ids stay theirs while it lives
            old = _folded.pop(key, None)
            if old is not None:
                _bytes[0] -= old[1].w.nbytes
            _folded[key] = (stamps, f)
            _bytes[0] += f.w.nbytes
            while _bytes[0] > CAPACITY and len(_folded) > 1:
                _, (_, e) = _folded.popitem(last=False)
                _bytes[0] -= e.w.nbytes
    return f


def _split(ins, a):
    data, weight = ins[0], ins[1]
    bias = ins[2] if a["has_bias"] else None
    gamma, beta, mean, var = ins[-4:]
    return data, weight, bias, gamma, beta, mean, var


def rows(xp, ins, out, a):
    """(units, run) of the fused step (see ``ndarray/_plan.py``'s ``rows``)."""
    data, weight, bias, gamma, beta, mean, var = _split(ins, a)
    f = _fold(xp, weight, bias, gamma, beta, mean, var, a["eps"], a["fix_gamma"])
    k, s, d, p, g = a["kernel"], a["stride"], a["dilate"], a["pad"], a["num_group"]
    relu = a["relu"]
    if xp is np:
        plan = _dnn.conv_plan("fwd", data, f.w, out, k, s, d, p, g, f.b, relu, (f, 0))
        if plan:
            return plan
    n, run = fwd_plan(xp, data, f.w, out, k, s, d, p, g, a["workspace"], f.b)
    if not relu or run is None or not n:
        return n, run
    # the ranges may split the output any way: the ReLU runs once all are done
    left = [n]
    lock = threading.Lock()

    def run_relu(lo, hi):
        run(lo, hi)
        with lock:
            left[0] -= hi - lo
            last = left[0] == 0
        if last:
            relu_into(xp, out, out)
    return n, run_relu


def kernel(xp, *ins, out, **a):
    run_all(rows(xp, ins, out, a))
