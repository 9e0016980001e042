"""MXNet 1.9.1's multi-weight optimizer ops: ``multi_sgd_update``,
``multi_sgd_mom_update``, ``multi_mp_sgd_update``, ``multi_mp_sgd_mom_update``
(src/operator/optimizer_op.cc), their ``preloaded_*`` forms that read the
learning rates and weight decays from float32 arrays
(contrib/preloaded_multi_sgd.cc), ``multi_sum_sq``, ``multi_lars`` and
``_multi_lamb_update`` / ``_multi_mp_lamb_update`` (contrib/).

They update many weights in ONE engine op: what MXNet's SGD, LARS and LAMB
optimizers push, and what makes ``Trainer.step`` cost a handful of pushes
instead of one per parameter. The kernel loops over the weights with numpy,
in MXNet's float arithmetic: the scalars have the C types of MXNet's kernel
(``lrs``/``wds`` tuples are cast to the kernel's float type, the preloaded
arrays stay float32 and promote), every intermediate is rounded to that type,
sums of squares accumulate one element at a time in float32 as MXNet's CPU
loop does. Inputs are flattened per weight (``weight_0, grad_0, mom_0,
weight32_0, weight_1, ...``); the states and master weights are written in
place (``mutates``), and ``out=weights`` updates the weights in place.
"""
from __future__ import annotations

import math
import threading

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from .optimizer_ops import _CLIP, _F32, _FLOATS, _MOM, _P, _RESCALE, _cast_into, p_f32
from .registry import Param, _lit, p_bool, p_int, register

__all__ = []


def _p_floats(v):
    """A ``Tuple<float>``: each value rounded to float32 as MXNet stores it."""
    v = _lit(v)
    if isinstance(v, (int, float, np.number)):
        v = (v,)
    # one conversion for the whole list (the optimizer passes one per push)
    return tuple(np.asarray(v, dtype=np.float64).reshape(-1).astype(np.float32).tolist())


def _p_ints(v):
    v = _lit(v)
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    if isinstance(v, np.ndarray):
        v = v.reshape(-1).tolist()
    return tuple(p_int(x) for x in v)


def _outs(out):
    return out if isinstance(out, (list, tuple)) else [out]


def _stride_mutates(stride, first, last):
    """Mutated inputs: slots ``first..last`` of every ``stride``-input weight group."""
    def mutated(n_inputs):
        n = n_inputs // stride
        return tuple(i * stride + j for i in range(n) for j in range(first, last + 1))
    return mutated


# --------------------------------------------------------------- shape rules

def _multi_rule(names, n_f32, count="num_weights", preloaded=False,
                lists=(("lrs", "learning rates"), ("wds", "weight decays"))):
    """Shape/dtype rule of a multi-weight update: ``len(names)`` inputs per weight
    (the last ``n_f32`` float32 master copies / states), one output per weight
    of the weight's shape and dtype; ``preloaded``: then the lrs and wds arrays."""
    stride = len(names)

    def rule(attrs, shapes, dtypes):
        n = attrs[count]
        if n < 1:
            raise OpError("%s=%d must be at least 1" % (count, n))
        want = stride * n + (2 if preloaded else 0)
        if len(shapes) != want:
            raise OpError("expected %d inputs (%s=%d, %d per weight: %s%s), got %d"
                          % (want, count, n, stride, ", ".join(names),
                             "; then lrs and wds" if preloaded else "", len(shapes)))
        if preloaded:
            for k, what in ((stride * n, "learning rates"), (stride * n + 1, "weight decays")):
                size = math.prod(shapes[k])
                if size != n:
                    raise OpError("Number of %s is inconsistent with num_weights parameter "
                                  "passed. Expected number of %s: %d, and got %d"
                                  % (what, what, n, size))
                if dtypes[k] != _F32:
                    raise OpError("the %s array must be float32, got %s" % (what, dtypes[k].name))
        else:
            for key, what in lists:
                if len(attrs[key]) != n:
                    raise OpError("Number of %s is inconsistent with %s parameter passed. "
                                  "Expected number of %s: %d, and got %d"
                                  % (what, count, what, n, len(attrs[key])))
        d0 = dtypes[0]
        if d0 not in _FLOATS:
            raise OpError("weight_0 has dtype %s; update ops need float16, float32 or float64"
                          % d0.name)
        for i in range(n):
            b = i * stride
            s = shapes[b]
            for j in range(1, stride):
                if shapes[b + j] != s:
                    raise ShapeError("%s%d has shape %s but weight_%d has %s; each weight's "
                                     "gradient and states must have its shape"
                                     % (names[j], i, fmt(shapes[b + j]), i, fmt(s)))
            for j in range(stride - n_f32):
                if dtypes[b + j] != d0:
                    raise OpError("%s%d has dtype %s but weight_0 has %s; the weights and "
                                  "gradients must have one dtype"
                                  % (names[j], i, dtypes[b + j].name, d0.name))
            for j in range(stride - n_f32, stride):
                if dtypes[b + j] != _F32:
                    raise OpError("%s%d has dtype %s; the multi-precision states and master "
                                  "weights must be float32" % (names[j], i, dtypes[b + j].name))
        return (tuple(tuple(shapes[i * stride]) for i in range(n)),
                tuple(d0 for _ in range(n)))
    return rule


# ------------------------------------------------------------- SGD kernels

def _mul_into(xp, a, s, out):
    """``out = a * s`` computed in the promoted type of ``a`` and scalar ``s`` (as C
    promotes float*double, and mshadow's half_t rounds float*half to half), stored
    in ``out``'s dtype."""
    loop = np.promote_types(a.dtype, np.dtype(type(s)))
    if loop == out.dtype and a.dtype == loop:
        xp.multiply(a, s, out=out)
    else:
        xp.multiply(a, s, out=out, dtype=loop, casting="unsafe")


_tls = threading.local()


def _scratch_like(xp, a, dtype):
    """A per-thread scratch array of ``a``'s shape: a fresh temporary of a
    large weight's size comes back from malloc as new pages every step,
    which costs more than the update's arithmetic."""
    if xp is not np:
        return xp.empty(a.shape, dtype=dtype)
    n = a.size
    buf = getattr(_tls, "buf", None)
    if buf is None or buf.dtype != dtype or buf.size < n:
        buf = _tls.buf = np.empty(max(n, 1), dtype=dtype)
    return buf[:n].reshape(a.shape)


def _sgd_one(xp, w, g, mom, w32, out, lr, wd, momentum, rescale, clip, preloaded):
    """One weight of MXNet's (Preloaded)MultiSGDKernel:

        mom = momentum*mom - lr*wd*w - lr*clip(rescale*grad)   (or (lr*rescale)*grad)
        w = w + mom

    in the kernel's type ``f`` (float32 for mp, else the weight's); ``lr``/``wd``
    are ``f`` (multi_*) or float32 (preloaded_*, promoted where they meet ``f``).
    numpy's scalar promotion (NEP 50) is C's: float32 scalar * float64 array is
    double; float32 scalar * float16 array is float, rounded here to half as
    mshadow's half_t operators round."""
    f = np.float32 if w32 is not None else w.dtype.type
    src = w32 if w32 is not None else w
    # preloaded on a device: lr and wd are 0-d float32 device arrays (reading
    # them would be a host sync), used in the same promotions as the scalars
    dev = preloaded and xp is not np
    if not dev:
        lr, wd = (np.float32(lr), np.float32(wd)) if preloaded else (f(lr), f(wd))
    if (not dev and wd == 0 and mom is None and w32 is None and clip < 0
            and f is np.float32 and type(lr) is f):
        # plain SGD, the common case, in two passes: w + ((0 - 0*w) - t) is
        # w - t for finite weights (a non-finite weight stays inf here where
        # the kernel's 0*w makes it NaN; a -0 weight under a +0 step keeps
        # its sign); each extra pass over a large weight costs what the
        # update itself does
        t = _scratch_like(xp, g, f)
        xp.multiply(g, f(lr * f(rescale)), out=t)
        xp.subtract(w, t, out=out)
        return
    a = xp.multiply(src, lr * wd)                       # lr*wd*w
    if a.dtype.type is not f:
        a = a.astype(f)
    if clip >= 0:
        t = xp.multiply(g, f(rescale))
        xp.clip(t, f(-clip), f(clip), out=t)
        if t.dtype.type is f and type(lr) is f:
            xp.multiply(t, lr, out=t)                   # lr*clip(rescale*grad)
        else:
            t = xp.multiply(t, lr).astype(f)
    else:
        s = (lr * f(rescale)).astype(f) if dev else f(lr * f(rescale))
        t = xp.multiply(g, s)                           # (lr*rescale)*grad, in f
    if mom is not None:
        xp.multiply(mom, f(momentum), out=mom)
        xp.subtract(mom, a, out=mom)
        xp.subtract(mom, t, out=mom)
        m = mom
    else:
        xp.subtract(f(0), a, out=a)                     # momentum*0 - lr*wd*w
        xp.subtract(a, t, out=a)
        m = a
    if w32 is not None:
        xp.add(w32, m, out=w32)
        _cast_into(xp, out, w32)
    else:
        xp.add(w, m, out=out)


def _sgd_multi(xp, ins, out, stride, mom_at, w32_at, lrs, wds, momentum, rescale, clip,
               preloaded):
    outs = _outs(out)
    n = len(outs)
    if preloaded:
        lrs = ins[stride * n].reshape(-1)
        wds = ins[stride * n + 1].reshape(-1)
        if xp is np:
            lrs, wds = lrs.tolist(), wds.tolist()
    for i in range(n):
        b = i * stride
        _sgd_one(xp, ins[b], ins[b + 1], ins[b + mom_at] if mom_at else None,
                 ins[b + w32_at] if w32_at else None, outs[i], lrs[i], wds[i], momentum,
                 rescale, clip, preloaded)


_NW = Param("num_weights", p_int, 1, "number of updated weights")
_LRS = Param("lrs", _p_floats, doc="learning rates")
_WDS = Param("wds", _p_floats, doc="weight decays")
_MULTI_PARAMS = [_LRS, _WDS, _RESCALE, _CLIP, _NW]
_MULTI_MOM_PARAMS = [_LRS, _WDS, _MOM, _RESCALE, _CLIP, _NW]
_PRE_PARAMS = [_RESCALE, _CLIP, _NW]
_PRE_MOM_PARAMS = [_MOM, _RESCALE, _CLIP, _NW]

_N_OUT = lambda a: a["num_weights"]     # noqa: E731

# (name, per-weight inputs, float32 inputs, momentum slot, weight32 slot)
_SGD_VARIANTS = [
    ("multi_sgd_update", ("weight_", "grad_"), 0, 0, 0),
    ("multi_sgd_mom_update", ("weight_", "grad_", "mom_"), 0, 2, 0),
    ("multi_mp_sgd_update", ("weight_", "grad_", "weight32_"), 1, 0, 2),
    ("multi_mp_sgd_mom_update", ("weight_", "grad_", "mom_", "weight32_"), 2, 2, 3),
]

_SGD_DOCS = {
    "sgd": "weight = weight - lr*(rescale_grad*clip(grad, clip_gradient) + wd*weight)",
    "sgd_mom": "mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); "
               "weight = weight + mom",
}


def _make_sgd(name, names, n_f32, mom_at, w32_at, preloaded):
    stride = len(names)
    has_mom = bool(mom_at)
    params = (_PRE_MOM_PARAMS if has_mom else _PRE_PARAMS) if preloaded \
        else (_MULTI_MOM_PARAMS if has_mom else _MULTI_PARAMS)
    mutated = _stride_mutates(stride, 2, stride - 1) if stride > 2 else ()

    def kernel(xp, *ins, out, num_weights=1, lrs=(), wds=(), momentum=0.0, rescale_grad=1.0,
               clip_gradient=-1.0):
        _sgd_multi(xp, ins, out, stride, mom_at, w32_at, lrs, wds, momentum, rescale_grad,
                   clip_gradient, preloaded)

    kernel.__name__ = name
    what = "multi-precision " if w32_at else ""
    kernel.__doc__ = (
        "%s(*data, %snum_weights, ...): %sSGD%s update of num_weights weights in one op: "
        "for each, %s. data is %s per weight%s. %s"
        % (name, "" if preloaded else "lrs, wds, ", what, " with momentum" if has_mom else "",
           _SGD_DOCS["sgd_mom" if has_mom else "sgd"], ", ".join(n + "i" for n in names),
           ", then lrs and wds (float32 arrays of num_weights values)" if preloaded else "",
           "The weights' float32 master copies (weight32) are updated and cast into the "
           "outputs." if w32_at else "Pass out=weights to update them in place."))
    register(name, inputs=("*data",), variadic=True, params=params, num_outputs=_N_OUT,
             mutates=mutated,
             infer=_multi_rule(names, n_f32, preloaded=preloaded))(kernel)


for _name, _names, _nf32, _mom, _w32 in _SGD_VARIANTS:
    _make_sgd(_name, _names, _nf32, _mom, _w32, False)
    _make_sgd("preloaded_" + _name, _names, _nf32, _mom, _w32, True)


# ---------------------------------------------------------- sums of squares

def sum_sq(xp, a):
    """MXNet's CPU ``multi_sum_sq`` of one array: ``sum += x*x`` one element at a
    time in float32, ``x*x`` in the array's type (rounded to float16 for float16;
    float64 products are rounded to float32 before they are added, where MXNet
    adds them to the float32 sum in double: the last bit may differ there)."""
    flat = a.reshape(-1)
    if flat.size == 0:
        return np.float32(0) if xp is np else xp.zeros((), np.float32)
    sq = xp.multiply(flat, flat)
    if sq.dtype != _F32:
        sq = sq.astype(np.float32)
    # cumsum is strictly sequential, as the C loop; a plain sum is pairwise
    total = xp.cumsum(sq, dtype=np.float32)[-1]
    # on a device the sum stays there (a 0-d array): reading it would be a host sync
    return np.float32(total) if xp is np else total


def _sum_sq_rule(attrs, shapes, dtypes):
    n = attrs["num_arrays"]
    if len(shapes) != n:
        raise OpError("got %d arrays but num_arrays=%d" % (len(shapes), n))
    if n < 1:
        raise OpError("num_arrays=%d must be at least 1" % n)
    d0 = dtypes[0]
    if d0 not in _FLOATS:
        raise OpError("array_0 has dtype %s; multi_sum_sq needs float16, float32 or float64"
                      % d0.name)
    for i, d in enumerate(dtypes):
        if d != d0:
            raise OpError("array_%d has dtype %s but array_0 has %s; they must match"
                          % (i, d.name, d0.name))
    return ((n,),), (_F32,)


@register("multi_sum_sq", inputs=("*data",), variadic=True,
          params=[Param("num_arrays", p_int, doc="number of input arrays")], infer=_sum_sq_rule)
def multi_sum_sq(xp, *data, out, num_arrays):
    """multi_sum_sq(*data, num_arrays): float32 array of the sums of squares of each
    input array (one op for many arrays; LARS and LAMB use it for their norms)."""
    for i, a in enumerate(data):
        out[i] = sum_sq(xp, a)


# --------------------------------------------------------------------- LARS

def _lars_rule(attrs, shapes, dtypes):
    s0, d0 = shapes[0], dtypes[0]
    names = ("lrs", "weights_sum_sq", "grads_sum_sq", "wds")
    for i in range(1, 4):
        if shapes[i] != s0:
            raise ShapeError("%s has shape %s but lrs has %s; the four inputs must have one "
                             "shape" % (names[i], fmt(shapes[i]), fmt(s0)))
        if dtypes[i] != d0:
            raise OpError("%s has dtype %s but lrs has %s; they must match"
                          % (names[i], dtypes[i].name, d0.name))
    if d0 != _F32:
        raise OpError("MultiLARS only support float (got %s)" % d0.name)
    return (s0,), (d0,)


@register("multi_lars", inputs=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"),
          params=[Param("eta", p_f32, doc="LARS eta"), Param("eps", p_f32, doc="LARS eps"),
                  Param("rescale_grad", p_f32, 1.0, "gradient rescaling factor")],
          infer=_lars_rule)
def multi_lars(xp, lrs, weights_sum_sq, grads_sum_sq, wds, out, eta, eps, rescale_grad=1.0):
    """multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, eta, eps, rescale_grad): the
    LARS learning rates lrs*eta*w_norm / (g_norm*rescale_grad + wds*w_norm + eps)
    where both norms are positive, else lrs (w_norm = sqrt(weights_sum_sq))."""
    f = np.float32
    w_norm = xp.sqrt(weights_sum_sq)
    den = xp.sqrt(grads_sum_sq)
    xp.multiply(den, f(rescale_grad), out=den)
    t = xp.multiply(wds, w_norm)
    xp.add(den, t, out=den)
    xp.add(den, f(eps), out=den)
    xp.multiply(lrs, f(eta), out=t)
    xp.multiply(t, w_norm, out=t)
    with np.errstate(divide="ignore", invalid="ignore"):
        xp.divide(t, den, out=t)
    valid = (w_norm > 0) & (grads_sum_sq > 0)
    # out may be lrs itself (LARS passes out=lrs[:n]): t is computed first
    xp.copyto(out, xp.where(valid, t, lrs))


# --------------------------------------------------------------------- LAMB

_LAMB_PARAMS = [Param("learning_rates", _p_floats, doc="list of learning rates"),
                _P("beta1", 0.9), _P("beta2", 0.999), _P("epsilon", 1e-6),
                Param("wds", _p_floats, doc="list of weight decays"), _RESCALE,
                _P("lower_bound", -1.0), _P("upper_bound", -1.0), _CLIP,
                Param("bias_correction", p_bool, True, "whether to use bias correction"),
                Param("step_count", _p_ints, doc="step count for each tensor"),
                Param("num_tensors", p_int, 1, "number of tensors")]
_LAMB_LISTS = (("learning_rates", "learning rates"), ("wds", "weight decays"),
               ("step_count", "step counts"))


def _lamb_multi_rule(names, n_f32):
    base = _multi_rule(names, n_f32, count="num_tensors", lists=_LAMB_LISTS)

    def rule(attrs, shapes, dtypes):
        if attrs["num_tensors"] > 45:
            raise OpError("Invalid number of tensors, the maximum value is 45, and got %d"
                          % attrs["num_tensors"])
        return base(attrs, shapes, dtypes)
    return rule


def lamb_one(xp, w, g, mean, var, w32, out, lr, wd, t, beta1, beta2, epsilon, rescale, clip,
             bias_correction, lower_bound, upper_bound):
    """One tensor of MXNet's MultiLAMB kernels: phase 1 (mean, var, the direction g
    kept as float32), the norms by ``sum_sq`` (of the weight as stored, float16 for
    mp), phase 2 (w -= lr*trust_ratio*g)."""
    mp = w32 is not None
    f = np.float32 if mp else w.dtype.type
    src = w32 if mp else w
    b1, b2 = f(beta1), f(beta2)
    sg = xp.empty(src.shape, dtype=f)
    _mul_into(xp, g, np.float32(rescale), sg)         # MPDType(grad) * (float)rescale_grad
    if clip >= 0:
        xp.clip(sg, f(-clip), f(clip), out=sg)
    a = xp.empty(src.shape, dtype=f)
    xp.multiply(mean, b1, out=mean)
    xp.multiply(sg, f(1) - b1, out=a)
    xp.add(mean, a, out=mean)
    xp.multiply(var, b2, out=var)
    xp.multiply(sg, f(1) - b2, out=a)
    xp.multiply(a, sg, out=a)
    xp.add(var, a, out=var)
    if bias_correction:
        with np.errstate(under="ignore"):
            if f is np.float16:
                c1 = f(1) - np.power(b1, f(t))
                c2 = f(1) - np.power(b2, f(t))
            else:
                c1 = f(1) - f(float(b1) ** float(f(t)))
                c2 = f(1) - f(float(b2) ** float(f(t)))
        xp.divide(mean, f(c1), out=sg)
        xp.divide(var, f(c2), out=a)
    else:
        xp.copyto(sg, mean)
        xp.copyto(a, var)
    # the kernel's unqualified sqrt is C's double sqrt: for float and double the
    # rest of g is computed in double and rounded once; for half_t, sqrt + eps is
    # rounded to float, then to half, and the rest is half arithmetic
    if f is np.float16:
        d = xp.sqrt(a, dtype=np.float32)
        xp.add(d, np.float32(f(epsilon)), out=d)
        xp.copyto(a, d, casting="unsafe")
        xp.divide(sg, a, out=sg)
        xp.multiply(src, f(wd), out=a)
        xp.add(sg, a, out=sg)
    else:
        d = xp.sqrt(a, dtype=np.float64)
        xp.add(d, np.float64(f(epsilon)), out=d)
        xp.divide(sg, d, out=d)
        xp.multiply(src, f(wd), out=a)
        xp.add(d, a, out=d)
        xp.copyto(sg, d, casting="unsafe")
    # temp_g is a float32 buffer in MXNet
    tg = sg if sg.dtype == _F32 else sg.astype(np.float32)
    if xp is np:
        r1 = np.float32(math.sqrt(sum_sq(xp, w)))
        r2 = np.float32(math.sqrt(sum_sq(xp, tg)))
        if lower_bound >= 0:
            r1 = max(r1, np.float32(lower_bound))
        if upper_bound >= 0:
            r1 = min(r1, np.float32(upper_bound))
        r = f(1) if (r1 == 0 or r2 == 0) else f(r1 / r2)
        _mul_into(xp, tg, f(lr) * r, a)
    else:
        # the trust ratio as 0-d device arrays, the same float32 steps (a
        # float32 sqrt is the double sqrt rounded): no host round trip
        r1 = xp.sqrt(sum_sq(xp, w))
        r2 = xp.sqrt(sum_sq(xp, tg))
        if lower_bound >= 0:
            r1 = xp.maximum(r1, np.float32(lower_bound))
        if upper_bound >= 0:
            r1 = xp.minimum(r1, np.float32(upper_bound))
        with np.errstate(divide="ignore", invalid="ignore"):
            q = r1 / r2
        r = xp.where((r1 == 0) | (r2 == 0), np.float32(1), q).astype(f)
        loop = np.promote_types(tg.dtype, np.dtype(f))
        if loop == a.dtype and tg.dtype == loop:
            xp.multiply(tg, r * f(lr), out=a)
        else:
            xp.multiply(tg, r * f(lr), out=a, dtype=loop, casting="unsafe")
    if mp:
        xp.subtract(w32, a, out=w32)
        _cast_into(xp, out, w32)
    else:
        xp.subtract(w, a, out=out)


def _make_lamb(name, names, n_f32):
    stride = len(names)

    def kernel(xp, *ins, out, learning_rates, wds, step_count, beta1=0.9, beta2=0.999,
               epsilon=1e-6, rescale_grad=1.0, lower_bound=-1.0, upper_bound=-1.0,
               clip_gradient=-1.0, bias_correction=True, num_tensors=1):
        outs = _outs(out)
        for i in range(len(outs)):
            b = i * stride
            lamb_one(xp, ins[b], ins[b + 1], ins[b + 2], ins[b + 3],
                     ins[b + 4] if stride == 5 else None, outs[i], learning_rates[i], wds[i],
                     step_count[i], beta1, beta2, epsilon, rescale_grad, clip_gradient,
                     bias_correction, lower_bound, upper_bound)

    kernel.__name__ = name
    kernel.__doc__ = (
        "%s(*data, learning_rates, wds, step_count, num_tensors, ...): LAMB updates of "
        "num_tensors weights in one op; data is %s per tensor (mean and var%s updated in "
        "place). Called through mx.nd.contrib.%s."
        % (name, ", ".join(n + "i" for n in names),
           " and the float32 master weight" if stride == 5 else "", name.lstrip("_")))
    register(name, inputs=("*data",), variadic=True, params=_LAMB_PARAMS,
             num_outputs=lambda a: a["num_tensors"],
             mutates=_stride_mutates(stride, 2, stride - 1),
             infer=_lamb_multi_rule(names, n_f32))(kernel)


_make_lamb("_multi_lamb_update", ("weight_", "grad_", "mean_", "var_"), 0)
_make_lamb("_multi_mp_lamb_update", ("weight_", "grad_", "mean_", "var_", "weight32_"), 3)
