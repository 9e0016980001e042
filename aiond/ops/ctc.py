"""Connectionist Temporal Classification loss: MXNet 1.9.1's ``CTCLoss``
(aliases ``ctc_loss``, ``_contrib_CTCLoss``, ``_contrib_ctc_loss``;
``src/operator/nn/ctc_loss-inl.h``).

``data`` is (T, N, C) unnormalised activations (softmax is applied inside),
``label`` is (N, L). With ``blank_label='first'`` the blank is class 0 and
labels are padded with 0; with ``'last'`` the blank is class C-1 and labels
are padded with -1. Without ``use_label_lengths`` a label ends at its first
padding value; without ``use_data_lengths`` every sequence has length T.

The forward computes the per-sequence negative log-likelihood by the
forward-backward recursions in log space (float64, vectorised over the batch
and the label positions) and, as MXNet does, the gradient w.r.t. ``data`` in
a hidden second output; time steps at or past a sequence's length get a zero
gradient (and are never read, so padding may hold anything, even NaN)."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, p_bool, p_str, register
from .registry import optional as _optional


def _ctc_rule(attrs, shapes, dtypes):
    want = ["data", "label"]
    if attrs["use_data_lengths"]:
        want.append("data_lengths")
    if attrs["use_label_lengths"]:
        want.append("label_lengths")
    if len(shapes) != len(want):
        raise OpError("expects %d inputs (%s) with use_data_lengths=%s, use_label_lengths=%s, "
                      "got %d" % (len(want), ", ".join(want), attrs["use_data_lengths"],
                                  attrs["use_label_lengths"], len(shapes)))
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 3:
        raise ShapeError("data must be 3-D (sequence length, batch, alphabet size), got %s"
                         % fmt(d))
    if len(lab) != 2 or lab[0] != d[1]:
        raise ShapeError("label must be 2-D (batch, label length) with batch %d, got %s"
                         % (d[1], fmt(lab)))
    for name, s in zip(want[2:], shapes[2:]):
        if tuple(s) != (d[1],):
            raise ShapeError("%s must have shape (%d,), got %s" % (name, d[1], fmt(s)))
    if dtypes[0].kind != "f":
        raise OpError("data must be a float array, got %s" % dtypes[0].name)
    return ((d[1],), d), (dtypes[0], dtypes[0])


def _logsumexp(xp, *arrays):
    m = arrays[0]
    for a in arrays[1:]:
        m = xp.maximum(m, a)
    safe = xp.where(xp.isfinite(m), m, 0.0)
    s = 0.0
    for a in arrays:
        s = s + xp.exp(a - safe)
    with np.errstate(divide="ignore"):
        return xp.where(xp.isfinite(m), safe + xp.log(s), m)


def ctc_forward_backward(xp, data, labels, label_len, data_len, blank):
    """(loss (N,), gradient (T, N, C)) of CTC for float64 inputs."""
    T, N, C = data.shape
    t_idx = xp.arange(T)[:, None]
    valid_t = t_idx < data_len[None, :]                                  # (T, N)
    x = xp.where(valid_t[..., None], data, 0.0)
    m = x.max(axis=2, keepdims=True)
    logp = x - m - xp.log(xp.exp(x - m).sum(axis=2, keepdims=True))      # log softmax
    L = labels.shape[1]
    S = 2 * L + 1
    ext = xp.full((N, S), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    s_len = 2 * label_len + 1                                            # (N,)
    s_idx = xp.arange(S)[None, :]
    valid_s = s_idx < s_len[:, None]
    # the s-2 transition: allowed into a non-blank that differs from the one before
    skip = xp.zeros((N, S), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    emit = xp.take_along_axis(logp, xp.broadcast_to(ext[None], (T, N, S)), axis=2)  # (T, N, S)
    ninf = -xp.inf
    alpha = xp.full((T, N, S), ninf)
    a0 = xp.full((N, S), ninf)
    a0[:, 0] = emit[0, :, 0]
    a0[:, 1] = xp.where(label_len > 0, emit[0, :, 1], ninf)
    alpha[0] = xp.where(valid_s, a0, ninf)
    for t in range(1, T):
        p = alpha[t - 1]
        p1 = xp.concatenate([xp.full((N, 1), ninf), p[:, :-1]], axis=1)
        p2 = xp.concatenate([xp.full((N, 2), ninf), p[:, :-2]], axis=1)
        a = _logsumexp(xp, p, p1, xp.where(skip, p2, ninf)) + emit[t]
        alpha[t] = xp.where(valid_s & valid_t[t][:, None], a, ninf)
    last = xp.clip(data_len - 1, 0, T - 1)
    a_last = alpha[last, xp.arange(N)]                                   # (N, S)
    end1 = xp.take_along_axis(a_last, (s_len - 1)[:, None], axis=1)[:, 0]
    end2 = xp.take_along_axis(a_last, xp.maximum(s_len - 2, 0)[:, None], axis=1)[:, 0]
    loglik = _logsumexp(xp, end1, xp.where(s_len >= 2, end2, ninf))
    beta = xp.full((T, N, S), ninf)
    b = xp.full((N, S), ninf)
    for t in range(T - 1, -1, -1):
        n1 = xp.concatenate([b[:, 1:], xp.full((N, 1), ninf)], axis=1)
        n2 = xp.concatenate([b[:, 2:], xp.full((N, 2), ninf)], axis=1)
        skip2 = xp.concatenate([skip[:, 2:], xp.zeros((N, 2), dtype=bool)], axis=1)
        rec = _logsumexp(xp, b, n1, xp.where(skip2, n2, ninf)) + emit[t]
        init = xp.where((s_idx == s_len[:, None] - 1) | (s_idx == s_len[:, None] - 2),
                        emit[t], ninf)
        at_end = (t == data_len - 1)[:, None]
        inside = (t < data_len - 1)[:, None]
        b = xp.where(valid_s & at_end, init, xp.where(valid_s & inside, rec, ninf))
        beta[t] = b
    gamma = alpha + beta - emit                                          # log posteriors
    with np.errstate(invalid="ignore", over="ignore"):
        post = xp.exp(gamma - loglik[None, :, None])
    post = xp.where(xp.isfinite(post), post, 0.0)
    occ = xp.zeros((T, N, C))
    tt, nn = xp.meshgrid(xp.arange(T), xp.arange(N), indexing="ij")
    for s in range(S):
        xp.add.at(occ, (tt, nn, xp.broadcast_to(ext[None, :, s], (T, N))), post[:, :, s])
    grad = xp.where(valid_t[..., None], xp.exp(logp) - occ, 0.0)
    return -loglik, grad


def _lengths(xp, labels, pad):
    hit = labels == pad
    first = xp.where(hit.any(axis=1), hit.argmax(axis=1), labels.shape[1])
    return first.astype(np.int64)


@register("CTCLoss", inputs=("data", "label", "data_lengths", "label_lengths"), params=[
    Param("use_data_lengths", p_bool, False, "Whether the data lenghts are decided by "
          "`data_lengths`. If false, the lengths are equal to the max sequence length."),
    Param("use_label_lengths", p_bool, False, "Whether the label lenghts are decided by "
          "`label_lengths`, or derived from `padding_mask`. If false, the lengths are derived "
          "from the first occurrence of the value of `padding_mask`. The value of "
          "`padding_mask` is ``0`` when first CTC label is reserved for blank, and ``-1`` "
          "when last label is reserved for blank. See `blank_label`."),
    Param("blank_label", p_str, "first", "Set the label that is reserved for blank label."
          "If \"first\", 0-th label is reserved, and label values for tokens in the vocabulary "
          "are between ``1`` and ``alphabet_size-1``, and the padding mask is ``-1``. If "
          "\"last\", last label value ``alphabet_size-1`` is reserved for blank label instead, "
          "and label values for tokens in the vocabulary are between ``0`` and "
          "``alphabet_size-2``, and the padding mask is ``0``.", choices=("first", "last"))],
    infer=_ctc_rule, num_outputs=2, output_names=("output", "grad"),
    num_visible=lambda a: 1, aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    inline=False)
@_optional("data_lengths", "label_lengths")
def ctc_loss(xp, data, label, *lengths, out, use_data_lengths=False, use_label_lengths=False,
             blank_label="first"):
    """CTCLoss(data, label, data_lengths=None, label_lengths=None,
    use_data_lengths=False, use_label_lengths=False, blank_label='first'):
    the CTC negative log-likelihood of each label sequence, shape (batch,)."""
    T, N, C = data.shape
    lengths = list(lengths)
    data_len = (xp.asarray(lengths.pop(0)).astype(np.int64) if use_data_lengths
                else xp.full((N,), T, dtype=np.int64))
    labels = label.astype(np.int64)
    first = blank_label == "first"
    if use_label_lengths:
        label_len = xp.asarray(lengths.pop(0)).astype(np.int64)
    else:
        label_len = _lengths(xp, labels, 0 if first else -1)
    blank = 0 if first else C - 1
    label_len = xp.clip(label_len, 0, labels.shape[1])
    data_len = xp.clip(data_len, 0, T)
    pos = xp.arange(labels.shape[1])[None, :]
    labels = xp.where(pos < label_len[:, None], labels, blank)
    if bool(((labels < 0) | (labels >= C)).any()):
        raise OpError("CTCLoss: label values must lie in [0, %d), got %s" % (C, labels.tolist()))
    loss, grad = ctc_forward_backward(xp, data.astype(np.float64), labels, label_len,
                                      data_len, blank)
    out[0][...] = loss
    out[1][...] = grad


def _ctc_grad(F, attrs, ins, outs, og):
    g = og[0]
    dx = F.broadcast_mul(outs[1], g.reshape((1, -1, 1)))
    return [dx] + [None] * (len(ins) - 1)


set_grads({"CTCLoss": _ctc_grad})
