"""``_contrib_hawkesll`` (src/operator/contrib/hawkes_ll-inl.h): the log
likelihood of marked self-exciting (Hawkes) point processes with exponential
kernels, and its gradient.

For each of N sequences, K marks: background intensities ``lda`` (N, K),
branching ratios ``alpha`` (K,), decays ``beta`` (K,), starting states
(N, K), interarrival times ``lags`` (N, T), int32 ``marks`` (N, T), the
number of valid points ``valid_length`` (N,) and the end of the observation
window ``max_time`` (N,). The intensity of mark k is
``lda_k + alpha_k * beta_k * sum_{past points of k} exp(-beta_k (t - t_i))``;
the state of a mark is that sum at its last point. Outputs: the log
likelihood (N,) and the states decayed to ``max_time`` (N, K).

The sums run one point at a time for all sequences together, in float64
(rounded to the inputs' dtype at the end). The gradient covers lda, alpha,
beta and the starting states (MXNet gives zeros for these); the head
gradient of the output states is used too (MXNet drops it). lags, marks,
valid_length and max_time get none, as in MXNet."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import host_kernels, register

_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")
_NDIM = (2, 1, 1, 2, 2, 2, 1, 1)
_I32 = np.dtype(np.int32)


def _check(shapes, dtypes, names=_INPUTS):
    if len(shapes) != len(names):
        raise OpError("expects %d inputs (%s), got %d" % (len(names), ", ".join(names),
                                                          len(shapes)))
    for nm, s, nd in zip(names, shapes, _NDIM):
        if len(s) != nd:
            raise ShapeError("%s has shape %s; it must be %d-d" % (nm, fmt(s), nd))
    n, t = shapes[4]
    k = shapes[0][1]
    want = {"lda": (n, k), "alpha": (k,), "beta": (k,), "state": (n, k), "marks": (n, t),
            "valid_length": (n,), "max_time": (n,)}
    for nm, s in zip(names, shapes):
        if nm in want and tuple(s) != want[nm]:
            raise ShapeError("%s has shape %s but lags is %s and lda has %d marks: expected %s"
                             % (nm, fmt(s), fmt(shapes[4]), k, fmt(want[nm])))
    d0 = dtypes[0]
    if d0.kind != "f":
        raise OpError("lda has dtype %s; hawkesll needs floating point parameters" % d0.name)
    for nm, d in zip(names, dtypes):
        if nm == "marks":
            if d != _I32:
                raise OpError("marks has dtype %s; it must be int32 (use .astype('int32'))"
                              % d.name)
        elif d != d0:
            raise OpError("%s has dtype %s but lda has %s; every input but marks must have "
                          "lda's dtype" % (nm, d.name, d0.name))
    return n, k, d0


def _hawkes_rule(attrs, shapes, dtypes):
    n, k, d = _check(shapes, dtypes)
    return ((n,), (n, k)), (d, d)


def _host(a, dtype=np.float64):
    a = a.get() if hasattr(a, "get") else a
    return np.asarray(a, dtype=dtype)


class _Walk:
    """The per-point recursion, shared by the forward pass and the gradient:
    yields, for each point index, the rows still inside their valid length,
    their marks, the gap ``d`` to the previous point of the same mark and
    ``exp(-beta d)``, after which the caller updates the states."""

    def __init__(self, lags, marks, valid_length, k):
        self.lags = _host(lags)
        self.marks = _host(marks, np.int64)
        self.valid = _host(valid_length)
        self.k = k
        n = self.lags.shape[0]
        self.rows = np.arange(n)
        self.last = np.zeros((n, k))
        self.t = np.zeros(n)

    def points(self, beta):
        for j in range(self.lags.shape[1]):
            act = j < self.valid            # MXNet: for (j = 0; j < valid_length[i]; ++j)
            if not act.any():
                break
            r = self.rows[act]
            c = self.marks[act, j]
            if c.size and (c.min() < 0 or c.max() >= self.k):
                bad = c[(c < 0) | (c >= self.k)][0]
                raise OpError("hawkesll: marks[%d, %d] = %d is not a mark in [0, %d)"
                              % (r[(c < 0) | (c >= self.k)][0], j, bad, self.k))
            self.t[r] += self.lags[r, j]
            d = self.t[r] - self.last[r, c]
            ed = np.exp(-beta[c] * d)
            yield r, c, d, ed
            self.last[r, c] = self.t[r]

    def tail(self, max_time, beta):
        d = _host(max_time)[:, None] - self.last
        return d, np.exp(-beta[None, :] * d)


@register("_contrib_hawkesll", inputs=_INPUTS, infer=_hawkes_rule, num_outputs=2,
          output_names=("output", "out_state"), inline=False)
def _contrib_hawkesll(xp, lda, alpha, beta, state, lags, marks, valid_length, max_time, out):
    """hawkesll(lda, alpha, beta, state, lags, marks, valid_length, max_time):
    (log likelihood (N,), states at max_time (N, K)) of marked Hawkes
    processes with exponential kernels; see mx.nd.contrib.hawkesll."""
    mu_, a, b = _host(lda), _host(alpha), _host(beta)
    phi = _host(state).copy()
    w = _Walk(lags, marks, valid_length, mu_.shape[1])
    ll = np.zeros(mu_.shape[0])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for r, c, d, ed in w.points(b):
            p = phi[r, c]
            lda = mu_[r, c] + a[c] * b[c] * p * ed
            ll[r] += np.log(lda) - (mu_[r, c] * d + a[c] * p * (1 - ed))
            phi[r, c] = 1 + p * ed
        d, ed = w.tail(max_time, b)
        ll -= (mu_ * d + a[None, :] * phi * (1 - ed)).sum(axis=1)
        phi *= ed
    out[0][...] = xp.asarray(ll.astype(out[0].dtype))
    out[1][...] = xp.asarray(phi.astype(out[1].dtype))


def _bwd_rule(attrs, shapes, dtypes):
    if len(shapes) != 10:
        raise OpError("expects 10 inputs (the two head gradients, then %s), got %d"
                      % (", ".join(_INPUTS), len(shapes)))
    n, k, d = _check(shapes[2:], dtypes[2:])
    if tuple(shapes[0]) != (n,) or tuple(shapes[1]) != (n, k):
        raise ShapeError("head gradients of shapes %s and %s do not match outputs (%d,) and "
                         "(%d, %d)" % (fmt(shapes[0]), fmt(shapes[1]), n, n, k))
    return ((n, k), (k,), (k,), (n, k)), (d,) * 4


@register("_contrib_backward_hawkesll", inputs=("ograd_ll", "ograd_state") + _INPUTS,
          infer=_bwd_rule, num_outputs=4, inline=False,
          output_names=("lda_grad", "alpha_grad", "beta_grad", "state_grad"))
def _contrib_backward_hawkesll(xp, g_ll, g_st, lda, alpha, beta, state, lags, marks,
                               valid_length, max_time, out):
    """The gradients of hawkesll's outputs w.r.t. lda, alpha, beta and state."""
    mu_, a, b = _host(lda), _host(alpha), _host(beta)
    n, k = mu_.shape
    phi = _host(state).copy()
    dphi = np.zeros((n, k))         # d state / d beta
    sphi = np.ones((n, k))          # d state / d starting state
    gmu, ga, gb, gs = (np.zeros((n, k)) for _ in range(4))
    w = _Walk(lags, marks, valid_length, k)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for r, c, d, ed in w.points(b):
            p, dp, sp = phi[r, c], dphi[r, c], sphi[r, c]
            ac, bc = a[c], b[c]
            lda = mu_[r, c] + ac * bc * p * ed
            gmu[r, c] += 1 / lda - d
            ga[r, c] += bc * p * ed / lda - p * (1 - ed)
            gb[r, c] += (ac * ed * (p * (1 - bc * d) + bc * dp) / lda
                         - ac * (dp * (1 - ed) + p * d * ed))
            gs[r, c] += ac * bc * ed * sp / lda - ac * (1 - ed) * sp
            dphi[r, c] = ed * (dp - d * p)
            sphi[r, c] = ed * sp
            phi[r, c] = 1 + p * ed
        d, ed = w.tail(max_time, b)
        gmu -= d
        ga -= phi * (1 - ed)
        gb -= a[None, :] * (dphi * (1 - ed) + phi * d * ed)
        gs -= a[None, :] * (1 - ed) * sphi
        gl = _host(g_ll)[:, None]
        gst = _host(g_st)
        res = (gl * gmu, (gl * ga).sum(axis=0),
               (gl * gb + gst * ed * (dphi - d * phi)).sum(axis=0),
               gl * gs + gst * ed * sphi)
    for o, v in zip(out, res):
        o[...] = xp.asarray(v.astype(o.dtype))


host_kernels("_contrib_hawkesll", "_contrib_backward_hawkesll")


def _hawkes_grad(F, attrs, ins, outs, og):
    g = F._internal._contrib_backward_hawkesll(og[0], og[1], *ins)
    return [g[0], g[1], g[2], g[3], None, None, None, None]


set_grads({"_contrib_hawkesll": _hawkes_grad})
