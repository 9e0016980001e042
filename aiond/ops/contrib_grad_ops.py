"""Small contrib operators of MXNet 1.9.1 and the backward ops it exposes as
``mx.nd.contrib.backward_*``:

- ``gradientmultiplier(data, scalar)``: identity forward, gradient times
  ``scalar`` (a gradient reversal layer with scalar=-1);
  ``backward_gradientmultiplier(data, scalar)`` is ``data * scalar``;
- ``backward_quadratic(ograd, data, a, b, c)``: ``ograd * (2 a data + b)``;
- ``backward_index_copy(ograd, old_tensor, index_vector, new_tensor)``: the
  gradients w.r.t. old_tensor (ograd with the copied rows zeroed), the index
  (zeros) and new_tensor (the copied rows of ograd);
- ``BatchNormWithReLU``: BatchNorm followed by relu, one op (MXNet fuses it
  for its oneDNN backend; the arguments and outputs are BatchNorm's);
- ``fft``/``ifft``: MXNet runs these on GPUs only (cuFFT); here they run on
  every device. ``fft`` takes (..., d) real data and gives (..., 2d) with
  real and imaginary parts interleaved; ``ifft`` takes that layout back to
  (..., d) real parts, unnormalised (``ifft(fft(x)) == d * x``), as cuFFT's
  inverse does;
- ``count_sketch(data, h, s, out_dim)``: out[n, h[i]] += s[i] * data[n, i]
  (MXNet: GPU only; here every device)."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt, unary
from .norm import _BN_PARAMS, _bn_rule, _bn_visible, BatchNorm as _batch_norm_kernel
from .registry import Param, get, p_float, p_int, register

_SCALAR = [Param("scalar", p_float, 1.0, "the scalar operand"),
           Param("is_int", lambda v: bool(int(v)) if isinstance(v, str) else bool(v), True,
                 "Indicate whether scalar input is int type")]


@register("_contrib_gradientmultiplier", params=_SCALAR, infer=unary, elemwise=True)
def _contrib_gradientmultiplier(xp, data, out, scalar=1.0, is_int=True):
    """gradientmultiplier(data, scalar): data unchanged; backward multiplies
    the incoming gradient by scalar."""
    xp.copyto(out, data)


@register("_contrib_backward_gradientmultiplier", params=_SCALAR, infer=unary, elemwise=True)
def _contrib_backward_gradientmultiplier(xp, data, out, scalar=1.0, is_int=True):
    """backward_gradientmultiplier(data, scalar): data * scalar (the gradient
    gradientmultiplier passes on)."""
    xp.multiply(data, out.dtype.type(scalar), out=out, casting="unsafe")


def _same2(attrs, shapes, dtypes):
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise ShapeError("ograd %s and data %s must have the same shape"
                         % (fmt(shapes[0]), fmt(shapes[1])))
    return (tuple(shapes[1]),), (dtypes[1],)


@register("_contrib_backward_quadratic", inputs=("ograd", "data"), params=[
    Param("a", p_float, 0.0, "Coefficient of the quadratic term in the quadratic function."),
    Param("b", p_float, 0.0, "Coefficient of the linear term in the quadratic function."),
    Param("c", p_float, 0.0, "Constant term in the quadratic function.")],
    infer=_same2, elemwise=True)
def _contrib_backward_quadratic(xp, ograd, data, out, a=0.0, b=0.0, c=0.0):
    """backward_quadratic(ograd, data, a, b, c): ograd * (2 a data + b), the
    gradient of quadratic(data, a, b, c)."""
    t = out.dtype.type
    xp.copyto(out, ograd * (t(2 * a) * data + t(b)), casting="unsafe")


def _bic_rule(attrs, shapes, dtypes):
    og, old, idx, new = (tuple(s) for s in shapes)
    if og != old:
        raise ShapeError("ograd %s must have old_tensor's shape %s" % (fmt(og), fmt(old)))
    if len(idx) != 1 or len(new) != len(old) or new[1:] != old[1:] or new[0] != idx[0]:
        raise ShapeError("new_tensor %s must have shape (len(index_vector),) + old_tensor's "
                         "shape[1:] (old_tensor %s, index_vector %s)"
                         % (fmt(new), fmt(old), fmt(idx)))
    return (old, idx, new), (dtypes[0], dtypes[2], dtypes[0])


@register("_contrib_backward_index_copy",
          inputs=("ograd", "old_tensor", "index_vector", "new_tensor"), num_outputs=3,
          infer=_bic_rule)
def _contrib_backward_index_copy(xp, ograd, old, index, new, out):
    """backward_index_copy(ograd, old_tensor, index_vector, new_tensor):
    (d old_tensor, d index_vector, d new_tensor) of index_copy."""
    d_old, d_idx, d_new = out
    rows = index.astype(np.int64)
    xp.copyto(d_old, ograd)
    d_old[rows] = 0
    d_idx[...] = 0
    d_new[...] = ograd[rows]


# ---------------------------------------------------------- BatchNormWithReLU
@register("_contrib_BatchNormWithReLU", inputs=("data", "gamma", "beta", "moving_mean",
                                                "moving_var"),
          params=_BN_PARAMS, infer=_bn_rule, num_outputs=3,
          output_names=("output", "mean", "var"), train_aware=True,
          aux=("moving_mean", "moving_var"), num_visible=_bn_visible, inline=False,
          mutates=(1,))
def _contrib_batch_norm_with_relu(xp, data, gamma, beta, moving_mean, moving_var, *, out,
                                  **attrs):
    """BatchNormWithReLU(data, gamma, beta, moving_mean, moving_var, ...):
    relu(BatchNorm(...)), with BatchNorm's arguments and outputs."""
    _batch_norm_kernel(xp, data, gamma, beta, moving_mean, moving_var, out=out, **attrs)
    xp.maximum(out[0], 0, out=out[0])


get("_contrib_BatchNormWithReLU").graph_attrs = {"_graph": True}


def _bn_relu_grad(F, attrs, ins, outs, og):
    kw = {k: v for k, v in attrs.items() if k not in ("_train", "_graph")}
    g = og[0] * (outs[0] > 0)
    dx, dgamma, dbeta = F._internal._backward_BatchNorm(
        g, ins[0], ins[1], outs[1], outs[2], ins[3], ins[4], **kw)
    return [dx, dgamma, dbeta, None, None]


# ------------------------------------------------------------------ fft, ifft
_COMPUTE_SIZE = [Param("compute_size", p_int, 128,
                       "Maximum size of sub-batch to be forwarded at one time")]


def _fft_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) < 1 or d[-1] <= 0:
        raise ShapeError("fft: data must have a non-empty last axis, got %s" % fmt(d))
    return (d[:-1] + (2 * d[-1],),), (dtypes[0],)


def _ifft_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) < 1 or d[-1] % 2 or d[-1] <= 0:
        raise ShapeError("ifft: the last axis holds interleaved (real, imaginary) pairs, so "
                         "its length must be even and > 0, got %s" % fmt(d))
    return (d[:-1] + (d[-1] // 2,),), (dtypes[0],)


@register("_contrib_fft", params=_COMPUTE_SIZE, infer=_fft_rule)
def _contrib_fft(xp, data, out, compute_size=128):
    """fft(data): the DFT along the last axis, as interleaved (real, imag)."""
    z = xp.fft.fft(data.astype(np.float64), axis=-1)
    out[..., 0::2] = z.real
    out[..., 1::2] = z.imag


@register("_contrib_ifft", params=_COMPUTE_SIZE, infer=_ifft_rule)
def _contrib_ifft(xp, data, out, compute_size=128):
    """ifft(data): the unnormalised inverse DFT of interleaved (real, imag)
    pairs along the last axis; the real parts."""
    x = data.astype(np.float64)
    z = x[..., 0::2] + 1j * x[..., 1::2]
    n = z.shape[-1]
    out[...] = (xp.fft.ifft(z, axis=-1) * n).real


def _fft_grad(F, attrs, ins, outs, og):
    # fft is linear; the adjoint of x -> (Re, Im) of F x takes the pairs
    # (gr, gi) to Re(sum_k (gr + i gi)_k e^{+2 pi i k n / d}): ifft's map
    return [F._internal._contrib_ifft(og[0])]


def _ifft_grad(F, attrs, ins, outs, og):
    # the adjoint of ifft's map, (a, b) -> Re(sum (a + i b) e^{+...}), is
    # g -> (Re, Im) of sum g e^{-...}: fft's map
    return [F._internal._contrib_fft(og[0])]


# --------------------------------------------------------------- count_sketch
def _cs_rule(attrs, shapes, dtypes):
    d, h, s = (tuple(x) for x in shapes)
    if len(d) < 1:
        raise ShapeError("count_sketch: data must have at least 1 dimension")
    n = d[-1]
    for name, x in (("h", h), ("s", s)):
        if x not in ((n,), (1, n)):
            raise ShapeError("count_sketch: %s must have shape (%d,) or (1, %d) for data %s, "
                             "got %s" % (name, n, n, fmt(d), fmt(x)))
    if attrs["out_dim"] <= 0:
        raise OpError("count_sketch: out_dim must be > 0, got %d" % attrs["out_dim"])
    return (d[:-1] + (attrs["out_dim"],),), (dtypes[0],)


@register("_contrib_count_sketch", inputs=("data", "h", "s"), params=[
    Param("out_dim", p_int, None, "The output dimension."),
    Param("processing_batch_size", p_int, 32, "How many sketch vectors to process at one time.")],
    infer=_cs_rule)
def _contrib_count_sketch(xp, data, h, s, out, out_dim, processing_batch_size=32):
    """count_sketch(data, h, s, out_dim): out[..., h[i]] += s[i] * data[..., i]."""
    idx = h.reshape(-1).astype(np.int64)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= out_dim):
        raise OpError("count_sketch: h holds indices outside [0, out_dim=%d)" % out_dim)
    acc = xp.zeros(data.shape[:-1] + (out_dim,), dtype=np.float64)
    v = data.astype(np.float64) * s.reshape(-1).astype(np.float64)
    onehot = xp.zeros((idx.size, out_dim), dtype=np.float64)
    onehot[xp.arange(idx.size), idx] = 1.0
    acc += v @ onehot
    out[...] = acc


def _cs_grad(F, attrs, ins, outs, og):
    data, h, s = ins
    g = F.take(og[0], F.reshape(h, shape=(-1,)), axis=-1) * F.reshape(s, shape=(-1,))
    return [g, None, None]


set_grads({
    "_contrib_gradientmultiplier": lambda F, at, ins, outs, og: [og[0] * at["scalar"]],
    "_contrib_backward_gradientmultiplier": lambda F, at, ins, outs, og: [og[0] * at["scalar"]],
    "_contrib_backward_quadratic": lambda F, at, ins, outs, og: [
        og[0] * (ins[1] * (2.0 * at["a"]) + at["b"]), og[0] * ins[0] * (2.0 * at["a"])],
    "_contrib_backward_index_copy": lambda F, at, ins, outs, og: [
        F._internal._contrib_index_copy(og[0], ins[2], og[2]), None, None, None],
    "_contrib_BatchNormWithReLU": _bn_relu_grad,
    "_contrib_fft": _fft_grad,
    "_contrib_ifft": _ifft_grad,
    "_contrib_count_sketch": _cs_grad,
})
