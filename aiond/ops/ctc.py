"""Connectionist Temporal Classification loss: MXNet 1.9.1's ``CTCLoss``
(aliases ``ctc_loss``, ``_contrib_CTCLoss``, ``_contrib_ctc_loss``).

Semantics follow MXNet's CPU operator (src/operator/nn/ctc_loss-inl.h over
Baidu's warp-ctc, 3rdparty/ctc_include/detail/cpu_ctc.h):

- ``data`` is ``(sequence_length, batch_size, alphabet_size)`` of
  unnormalised activations; a log-softmax over the alphabet is taken inside.
- ``label`` is ``(batch_size, label_sequence_length)``; without
  ``use_label_lengths`` a label ends at the first padding value (0 with
  ``blank_label='first'``, -1 with ``'last'``).
- ``data_lengths`` / ``label_lengths`` are extra inputs present only when
  ``use_data_lengths`` / ``use_label_lengths`` are set.
- The blank is channel 0 (``'first'``) or ``alphabet_size - 1`` (``'last'``).
- ``out`` is ``-log p(label | data)`` per example; a label that cannot fit
  in its sequence (length plus repeated neighbours > data length) costs 0,
  as warp-ctc reports it.
- A hidden second output holds the gradient of the cost w.r.t. the
  activations (softmax minus the normalised alpha*beta occupation), zero at
  time steps past each data length; the backward op scales it by the output
  gradient per example.

The recursions run in log space over all examples at once (time steps in a
Python loop, states and batch vectorised).
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from ._nn_util import _errstate
from .registry import Param, p_bool, p_str, register
from .registry import optional as _optional

__all__ = ["ctc_loss"]

_BLANKS = ("first", "last")


def _ctc_rule(attrs, shapes, dtypes):
    n = 2 + bool(attrs["use_data_lengths"]) + bool(attrs["use_label_lengths"])
    if len(shapes) != n:
        names = ["data", "label"] + (["data_lengths"] if attrs["use_data_lengths"] else []) \
            + (["label_lengths"] if attrs["use_label_lengths"] else [])
        raise OpError("expects %d inputs (%s) with use_data_lengths=%s, use_label_lengths=%s; "
                      "got %d" % (n, ", ".join(names), attrs["use_data_lengths"],
                                  attrs["use_label_lengths"], len(shapes)))
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 3:
        raise ShapeError("The number of dimensions of data array must be 3 "
                         "(sequence_length, batch_size, alphabet_size), got shape %s" % fmt(d))
    if len(lab) != 2:
        raise ShapeError("The number of dimensions of labels array must be 2 "
                         "(batch_size, label_sequence_length), got shape %s" % fmt(lab))
    if d[1] != lab[0]:
        raise ShapeError("The batch size for the labels and data arrays must be the same: "
                         "data %s, label %s" % (fmt(d), fmt(lab)))
    k = 2
    if attrs["use_data_lengths"]:
        s = tuple(shapes[k])
        if len(s) != 1 or s[0] != d[1]:
            raise ShapeError("data_lengths must be a vector of batch_size=%d, got shape %s"
                             % (d[1], fmt(s)))
        k += 1
    if attrs["use_label_lengths"]:
        s = tuple(shapes[k])
        if len(s) != 1 or s[0] != lab[0]:
            raise ShapeError("label_lengths must be a vector of batch_size=%d, got shape %s"
                             % (lab[0], fmt(s)))
    if d[0] < lab[1]:
        raise ShapeError("The max number of labels cannot exceed the maximum sequence length "
                         "of the data: label %s, data %s" % (fmt(lab), fmt(d)))
    if dtypes[0].kind != "f":
        raise OpError("data dtype %s is not supported; CTCLoss needs float data"
                      % dtypes[0].name)
    return ((d[1],), d), (dtypes[0], dtypes[0])


def _check(op, attrs):
    if attrs["blank_label"] not in _BLANKS:
        raise OpError("CTCLoss: blank_label=%r is not supported; expected 'first' or 'last'"
                      % (attrs["blank_label"],))


_PARAMS = [
    Param("use_data_lengths", p_bool, False, "Whether the data lengths are decided by "
          "`data_lengths`. If false, the lengths are equal to the max sequence length."),
    Param("use_label_lengths", p_bool, False, "Whether the label lengths are decided by "
          "`label_lengths`, or derived from the padding value (0 with blank_label='first', "
          "-1 with 'last')."),
    Param("blank_label", p_str, "first", "'first': channel 0 is the blank; 'last': channel "
          "alphabet_size-1 is.", choices=_BLANKS)]


def _labels(label, label_lengths, blank, A):
    """(int labels (B, Lmax), lengths (B,)) as MXNet packs them."""
    lab = np.asarray(label)
    if lab.dtype.kind == "f":
        with _errstate():
            lab = np.trunc(lab)
    lab = lab.astype(np.int64)
    B, Lmax = lab.shape
    if label_lengths is not None:
        lens = np.asarray(label_lengths)
        with _errstate():
            lens = np.trunc(lens).astype(np.int64) if lens.dtype.kind == "f" \
                else lens.astype(np.int64)
        if (lens < 0).any() or (lens > Lmax).any():
            raise OpError("CTCLoss: label_lengths %s out of range [0, %d]" % (lens.tolist(), Lmax))
    else:
        pad = 0 if blank == 0 else -1
        hit = lab == pad
        lens = np.where(hit.any(axis=1), hit.argmax(axis=1), Lmax)
    valid = np.arange(Lmax)[None, :] < lens[:, None]
    bad = valid & ((lab < 0) | (lab >= A))
    if bad.any():
        raise OpError("CTCLoss: label values must lie in [0, %d), got %s"
                      % (A, sorted(set(lab[bad].tolist()))))
    return lab, lens


def ctc_loss(data, label, data_lengths=None, label_lengths=None, blank_label="first"):
    """(cost (B,), grad (T, B, A)) in float64 numpy, MXNet's CPU semantics."""
    data = np.asarray(data, dtype=np.float64)
    T, B, A = data.shape
    blank = 0 if blank_label == "first" else A - 1
    lab, L = _labels(label, label_lengths, blank, A)
    if data_lengths is not None:
        Tb = np.asarray(data_lengths)
        with _errstate():
            Tb = (np.trunc(Tb) if Tb.dtype.kind == "f" else Tb).astype(np.int64)
        if (Tb < 0).any() or (Tb > T).any():
            raise OpError("CTCLoss: data_lengths %s out of range [0, %d]" % (Tb.tolist(), T))
    else:
        Tb = np.full(B, T, dtype=np.int64)
    cost = np.zeros(B)
    grad = np.zeros((T, B, A))
    if B == 0 or T == 0:
        return cost, grad
    tmask = np.arange(T)[:, None] < Tb[None, :]                    # (T, B) steps in use
    with _errstate():
        x = np.where(tmask[..., None], data, 0.0)                  # ignore data past lengths
        m = x.max(axis=2, keepdims=True)
        logy = x - m - np.log(np.exp(x - m).sum(axis=2, keepdims=True))
    Lmax = lab.shape[1]
    S = 2 * Lmax + 1
    Sb = 2 * L + 1
    ext = np.full((B, S), blank, dtype=np.int64)                   # labels with blanks
    ext[:, 1::2] = np.where(np.arange(Lmax)[None, :] < L[:, None], lab, blank)
    same = np.zeros((B, Lmax), dtype=bool)
    if Lmax > 1:
        same[:, 1:] = lab[:, 1:] == lab[:, :-1]
    repeats = (same & (np.arange(Lmax)[None, :] < L[:, None])).sum(axis=1)
    feasible = (L + repeats <= Tb) & (Tb > 0)
    sidx = np.arange(S)
    svalid = sidx[None, :] < Sb[:, None]                           # (B, S)
    # a label state may be entered from two states back unless it repeats it
    skip = np.zeros((B, S), dtype=bool)
    skip[:, 3::2] = ~same[:, 1:] if Lmax > 1 else skip[:, 3::2]
    skip &= svalid
    bidx = np.arange(B)[:, None]
    e = logy[:, bidx, ext]                                         # (T, B, S) emissions
    ninf = -np.inf
    alpha = np.full((T, B, S), ninf)
    a0 = np.full((B, S), ninf)
    a0[:, 0] = e[0, :, 0]
    if S > 1:
        a0[:, 1] = np.where(L > 0, e[0, :, 1], ninf)
    alpha[0] = a0
    with _errstate():
        for t in range(1, T):
            p = alpha[t - 1]
            s1 = np.concatenate([np.full((B, 1), ninf), p[:, :-1]], axis=1)
            s2 = np.concatenate([np.full((B, 2), ninf), p[:, :-2]], axis=1)
            acc = np.logaddexp(p, s1)
            acc = np.where(skip, np.logaddexp(acc, s2), acc)
            alpha[t] = np.where(svalid, acc + e[t], ninf)
        last = Tb - 1
        aT = alpha[np.maximum(last, 0), np.arange(B)]                 # (B, S)
        end1 = aT[np.arange(B), Sb - 1]
        end2 = np.where(L > 0, aT[np.arange(B), np.maximum(Sb - 2, 0)], ninf)
        logz = np.logaddexp(end1, end2)
        beta = np.full((T, B, S), ninf)
        # skipping forward from s to s + 2 is allowed where s + 2 may be entered by a skip
        fskip = np.zeros((B, S), dtype=bool)
        fskip[:, :-2] = skip[:, 2:]
        cur = np.full((B, S), ninf)
        for t in range(T - 1, -1, -1):
            n1 = np.concatenate([cur[:, 1:], np.full((B, 1), ninf)], axis=1)
            n2 = np.concatenate([cur[:, 2:], np.full((B, 2), ninf)], axis=1)
            acc = np.logaddexp(cur, n1)
            acc = np.where(fskip, np.logaddexp(acc, n2), acc)
            start = (t == last)[:, None] & ((sidx[None, :] == (Sb - 1)[:, None])
                                            | ((sidx[None, :] == (Sb - 2)[:, None])
                                               & (L > 0)[:, None]))
            nxt = np.where(start, e[t], np.where(svalid & (t < last)[:, None], acc + e[t], ninf))
            beta[t] = nxt
            cur = nxt
        # occupation of each state, normalised and divided by the emission once
        # (alpha and beta both include it): summed per alphabet symbol
        occ = np.exp(alpha + beta - logz[None, :, None] - e)
        occ = np.where(np.isfinite(occ), occ, 0.0)
        key = (np.arange(T)[:, None, None] * B + np.arange(B)[None, :, None]) * A + ext[None]
        post = np.bincount(key.ravel(), weights=occ.ravel(), minlength=T * B * A)
        post = post.reshape(T, B, A)
        g = np.exp(logy) - post
    ok = feasible & np.isfinite(logz)
    cost = np.where(ok, -logz, 0.0)
    grad = np.where((tmask & ok[None, :])[..., None], g, 0.0)
    return cost, grad


@register("CTCLoss", inputs=("data", "label", "data_lengths", "label_lengths"), params=_PARAMS,
          infer=_ctc_rule, attr_check=_check, num_outputs=2, output_names=("out", "grad"),
          num_visible=lambda attrs: 1, inline=False,
          aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"))
@_optional("data_lengths", "label_lengths")
def ctc_loss_op(xp, data, label, *lengths, out, use_data_lengths=False, use_label_lengths=False,
                blank_label="first"):
    """CTCLoss(data, label, data_lengths=None, label_lengths=None, use_data_lengths=False,
    use_label_lengths=False, blank_label='first'): Connectionist Temporal
    Classification loss of activations data (sequence_length, batch_size,
    alphabet_size) against label (batch_size, label_sequence_length); returns
    the loss per example (batch_size,)."""
    lengths = list(lengths)
    dl = lengths.pop(0) if use_data_lengths else None
    ll = lengths.pop(0) if use_label_lengths else None
    to_np = getattr(xp, "asnumpy", np.asarray)
    cost, grad = ctc_loss(to_np(data), to_np(label), None if dl is None else to_np(dl),
                          None if ll is None else to_np(ll), blank_label)
    out[0][...] = xp.asarray(cost.astype(out[0].dtype))
    out[1][...] = xp.asarray(grad.astype(out[1].dtype))


def _ctc_grad(F, attrs, ins, outs, og):
    g = og[0]
    b = g.shape[0]
    dgrad = F.broadcast_mul(g.reshape((1, b, 1)), outs[1])
    return [dgrad] + [None] * (len(ins) - 1)


set_grads({"CTCLoss": _ctc_grad})
