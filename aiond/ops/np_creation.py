"""NumPy-interface creation ops (MXNet's ``_npi_zeros``, ``_npi_arange``,
``_npi_linspace``, ``_npi_eye``, windows, index grids) and the small
index-valued ops (``_npi_unravel_index``, ``_npi_diag_indices_from``,
``_npi_polyval``). Float results default to float32, as MXNet's do."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError
from .elemwise import cast_scalar
from .registry import Param, p_bool, p_dtype, p_float, p_int, p_shape, register

_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def _no_grad(F, attrs, ins, outs, og):
    return [None] * len(ins)


def _shape_param(v):
    s = p_shape(v)
    if s is None:
        return ()
    for d in s:
        if d < 0:
            raise ValueError("negative dimensions are not allowed")
    return s


_CTX = Param("ctx", str, "", "the device (in a graph, the executor's)")


def _dt(attrs, default=_F32):
    return attrs.get("dtype") or default


def _fill_rule(attrs, shapes, dtypes):
    return (tuple(attrs["shape"]),), (_dt(attrs),)


def _filler(name, value):
    @register(name, inputs=(), params=[Param("shape", _shape_param, ()),
                                       Param("dtype", p_dtype, None), _CTX],
              infer=_fill_rule, grad=_no_grad)
    def kernel(xp, out, shape=(), dtype=None, ctx=""):
        out.fill(value)
    kernel.__doc__ = "%s(shape, dtype, ctx): an array of %ss (float32 by default)." % (
        name, value)
    return kernel


_filler("_npi_zeros", 0)
_filler("_npi_ones", 1)


@register("_npi_full", inputs=(), params=[Param("shape", _shape_param, ()),
                                          Param("dtype", p_dtype, None),
                                          Param("value", p_float, 0.0), _CTX],
          infer=_fill_rule, grad=_no_grad)
def _npi_full(xp, out, shape=(), dtype=None, value=0.0, ctx=""):
    """_npi_full(shape, value, dtype, ctx): an array of shape filled with value."""
    out.fill(cast_scalar(value, out.dtype))


@register("_npi_empty_like", inputs=("prototype",),
          params=[Param("dtype", p_dtype, None), Param("order", str, "C"),
                  Param("subok", p_bool, False), Param("shape", p_shape, None)],
          infer=lambda at, s, d: ((tuple(s[0]) if at["shape"] is None else tuple(at["shape"]),),
                                  (at["dtype"] or d[0],)),
          grad=_no_grad)
def _npi_empty_like(xp, prototype, out, dtype=None, order="C", subok=False, shape=None):
    """_npi_empty_like(prototype, dtype): an array of prototype's shape and dtype
    (uninitialised in NumPy's terms; aiond hands out zeros)."""
    out.fill(0)


# ------------------------------------------------------------ ranges
def _arange_len(start, stop, step):
    if step == 0:
        raise OpError("step cannot be 0")
    return max(0, int(math.ceil((stop - start) / step)))


def _arange_rule(attrs, shapes, dtypes):
    start, stop, step = attrs["start"], attrs["stop"], attrs["step"]
    if stop is None:
        start, stop = 0.0, start
    n = _arange_len(start, stop, step) * attrs["repeat"]
    return ((n,),), (_dt(attrs),)


def _opt_float(v):
    from .registry import _lit
    v = _lit(v)
    return None if v is None else p_float(v)


@register("_npi_arange", inputs=(), params=[
    Param("start", p_float, 0.0), Param("stop", _opt_float, None), Param("step", p_float, 1.0),
    Param("repeat", p_int, 1), Param("infer_range", p_bool, False),
    Param("dtype", p_dtype, None), _CTX], infer=_arange_rule, grad=_no_grad)
def _npi_arange(xp, out, start=0.0, stop=None, step=1.0, repeat=1, infer_range=False,
                dtype=None, ctx=""):
    """_npi_arange(start, stop, step, dtype): evenly spaced values in [start, stop)."""
    if stop is None:
        start, stop = 0.0, start
    n = _arange_len(start, stop, step)
    v = start + step * np.arange(n, dtype=np.float64)
    if out.dtype.kind in "iu":
        # NumPy's integer arange counts in the integer type
        v = int(start) + int(step) * np.arange(n, dtype=np.int64) if float(start).is_integer() \
            and float(step).is_integer() else v
    if repeat > 1:
        v = np.repeat(v, repeat)
    out[...] = xp.asarray(v.astype(out.dtype))


def _linspace_rule(attrs, shapes, dtypes):
    if attrs["num"] < 0:
        raise OpError("Number of sequence should be non-negative, got %d" % attrs["num"])
    return ((attrs["num"],),), (_dt(attrs),)


_LIN = [Param("start", p_float), Param("stop", p_float), Param("num", p_int, 50),
        Param("endpoint", p_bool, True), Param("dtype", p_dtype, None), _CTX]


def _linspace_values(start, stop, num, endpoint):
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float64)


@register("_npi_linspace", inputs=(), params=_LIN, infer=_linspace_rule, grad=_no_grad)
def _npi_linspace(xp, out, start, stop, num=50, endpoint=True, dtype=None, ctx=""):
    """_npi_linspace(start, stop, num, endpoint, dtype): num evenly spaced values."""
    v = _linspace_values(start, stop, num, endpoint)
    if out.dtype.kind in "iu":
        v = np.floor(v)
    out[...] = xp.asarray(v.astype(out.dtype))


@register("_npi_logspace", inputs=(), params=_LIN[:4] + [Param("base", p_float, 10.0)]
          + _LIN[4:], infer=_linspace_rule, grad=_no_grad)
def _npi_logspace(xp, out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, ctx=""):
    """_npi_logspace(start, stop, num, endpoint, base, dtype): base ** linspace(...)."""
    v = np.power(base, _linspace_values(start, stop, num, endpoint))
    out[...] = xp.asarray(v.astype(out.dtype))


# ------------------------------------------------------------ eye, identity
def _eye_rule(attrs, shapes, dtypes):
    n = attrs["N"]
    m = n if attrs["M"] is None else attrs["M"]
    if n < 0 or m < 0:
        raise OpError("negative dimensions are not allowed")
    return ((n, m),), (_dt(attrs),)


@register("_npi_eye", inputs=(), params=[
    Param("N", p_int), Param("M", lambda v: None if v in (None, "None") else p_int(v), None),
    Param("k", p_int, 0), _CTX, Param("dtype", p_dtype, None)], infer=_eye_rule, grad=_no_grad)
def _npi_eye(xp, out, N, M=None, k=0, ctx="", dtype=None):
    """_npi_eye(N, M, k, dtype): a 2-D array with ones on the k-th diagonal."""
    out[...] = xp.eye(out.shape[0], out.shape[1], k, dtype=out.dtype)


@register("_npi_identity", inputs=(), params=[Param("shape", _shape_param, ()),
                                              Param("dtype", p_dtype, None), _CTX],
          infer=_fill_rule, grad=_no_grad)
def _npi_identity(xp, out, shape=(), dtype=None, ctx=""):
    """_npi_identity(shape=(n, n), dtype): the identity matrix."""
    out[...] = xp.eye(out.shape[0], out.shape[1], dtype=out.dtype)


# ------------------------------------------------------------ grids, windows
@register("_npi_indices", inputs=(), params=[Param("dimensions", _shape_param),
                                             Param("dtype", p_dtype, None), _CTX],
          infer=lambda at, s, d: (((len(at["dimensions"]),) + tuple(at["dimensions"]),),
                                  (at["dtype"] or np.dtype(np.int32),)), grad=_no_grad)
def _npi_indices(xp, out, dimensions, dtype=None, ctx=""):
    """_npi_indices(dimensions, dtype): the index grid of an array of shape dimensions."""
    out[...] = xp.indices(tuple(dimensions), dtype=out.dtype)


def _window(name, fn):
    @register(name, inputs=(), params=[Param("M", p_int), Param("dtype", p_dtype, None), _CTX],
              infer=lambda at, s, d: (((max(at["M"], 0),),), (_dt(at),)), grad=_no_grad)
    def kernel(xp, out, M, dtype=None, ctx=""):
        out[...] = xp.asarray(fn(max(M, 0)).astype(out.dtype))
    kernel.__doc__ = "%s(M, dtype): NumPy's %s window of M points." % (name, name[5:])


_window("_npi_hanning", np.hanning)
_window("_npi_hamming", np.hamming)
_window("_npi_blackman", np.blackman)


@register("_npi_tril_indices", inputs=(), params=[Param("n", p_int), Param("k", p_int, 0),
                                                  Param("m", p_int, 0), _CTX],
          infer=lambda at, s, d: (((int(np.tri(at["n"], at["m"] or at["n"], at["k"],
                                                dtype=bool).sum()),),) * 2, (_I64, _I64)),
          num_outputs=2, grad=_no_grad)
def _npi_tril_indices(xp, out, n, k=0, m=0, ctx=""):
    """_npi_tril_indices(n, k, m): the row and column indices of the lower triangle."""
    r, c = np.tril_indices(n, k, m or n)
    out[0][...] = xp.asarray(r)
    out[1][...] = xp.asarray(c)


@register("_npi_diag_indices_from", inputs=("arr",),
          infer=lambda at, s, d: _diag_idx_rule(s[0]), grad=_no_grad)
def _npi_diag_indices_from(xp, arr, out):
    """_npi_diag_indices_from(arr): (ndim, n) indices of the main diagonal of arr."""
    out[...] = xp.arange(out.shape[1], dtype=out.dtype)[None, :]


def _diag_idx_rule(s):
    s = tuple(s)
    if len(s) < 2:
        raise OpError("input array must be at least 2-d")
    if len(set(s)) != 1:
        raise OpError("All dimensions of input must be of equal length")
    return ((len(s), s[0]),), (_I64,)


@register("_npi_unravel_index", inputs=("indices",), params=[Param("shape", p_shape)],
          infer=lambda at, s, d: (((len(at["shape"]),) + tuple(s[0]),), (_I64,)),
          grad=_no_grad)
def _npi_unravel_index(xp, indices, out, shape):
    """_npi_unravel_index(indices, shape): the coordinates of flat indices in shape,
    stacked along a new first axis."""
    idx = indices.astype(np.int64)
    n = int(np.prod(shape)) if shape else 1
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise ValueError("index %d is out of bounds for array with size %d"
                         % (int(idx.max()) if int(idx.max()) >= n else int(idx.min()), n))
    for i, c in enumerate(xp.unravel_index(idx, tuple(shape))):
        out[i] = c


# ------------------------------------------------------------ polyval
def _polyval_rule(attrs, shapes, dtypes):
    if len(shapes[0]) != 1:
        raise OpError("p must be a 1-D array of coefficients, got shape %s" % (shapes[0],))
    from .np_ops import promote
    return (tuple(shapes[1]),), (promote(dtypes[0], dtypes[1]),)


@register("_npi_polyval", inputs=("p", "x"), infer=_polyval_rule)
def _npi_polyval(xp, p, x, out):
    """_npi_polyval(p, x): the polynomial with coefficients p (highest first) at x."""
    acc = xp.zeros(x.shape, dtype=out.dtype)
    for c in p.astype(out.dtype):
        acc = acc * x.astype(out.dtype) + c
    out[...] = acc


@register("_backward_npi_polyval", inputs=("ograd", "p", "x"),
          infer=lambda at, s, d: ((tuple(s[1]), tuple(s[2])), (d[1], d[2])), num_outputs=2)
def _backward_npi_polyval(xp, ograd, p, x, out):
    """d/dp_i = x ** (n-1-i); d/dx = the derivative polynomial at x."""
    n = p.shape[0]
    xf = x.astype(np.float64)
    g = ograd.astype(np.float64)
    pw = xp.stack([xf ** (n - 1 - i) for i in range(n)]) if n else xp.zeros((0,) + x.shape)
    out[0][...] = (pw * g).reshape(n, -1).sum(axis=1).astype(out[0].dtype)
    dp = xp.zeros(x.shape, dtype=np.float64)
    for i in range(n - 1):
        dp = dp * xf + (n - 1 - i) * p[i].astype(np.float64)
    out[1][...] = (dp * g).astype(out[1].dtype)


def _polyval_grad(F, attrs, ins, outs, og):
    gp, gx = F._internal._backward_npi_polyval(og[0], ins[0], ins[1])
    return [gp, gx]


from .registry import get as _get  # noqa: E402
_get("_npi_polyval").grad = _polyval_grad


# ------------------------------------------------------------ boolean mask assign
def _bma_rule(attrs, shapes, dtypes):
    d, m = tuple(shapes[0]), tuple(shapes[1])
    start = attrs["start_axis"] % max(len(d), 1) if d else 0
    if d[start:start + len(m)] != m:
        raise OpError("boolean index did not match indexed array: mask shape %s, data shape %s "
                      "from axis %d" % (m, d, start))
    return (d,), (dtypes[0],)


def _bma_key(data, mask, start_axis):
    start = start_axis % max(data.ndim, 1) if data.ndim else 0
    return (slice(None),) * start + (mask.astype(bool),)


@register("_npi_boolean_mask_assign_scalar", inputs=("data", "mask"),
          params=[Param("value", p_float, 0.0), Param("start_axis", p_int, 0)],
          infer=_bma_rule, mutates=())
def _npi_boolean_mask_assign_scalar(xp, data, mask, out, value=0.0, start_axis=0):
    """_npi_boolean_mask_assign_scalar(data, mask, value, start_axis): data with value
    where mask (aligned at start_axis) is true."""
    out[...] = data
    out[_bma_key(data, mask, start_axis)] = cast_scalar(value, out.dtype)


def _bmat_rule(attrs, shapes, dtypes):
    _bma_rule(attrs, shapes[:2], dtypes)
    return (tuple(shapes[0]),), (dtypes[0],)


@register("_npi_boolean_mask_assign_tensor", inputs=("data", "mask", "value"),
          params=[Param("start_axis", p_int, 0)], infer=_bmat_rule)
def _npi_boolean_mask_assign_tensor(xp, data, mask, value, out, start_axis=0):
    """_npi_boolean_mask_assign_tensor(data, mask, value, start_axis): data with value's
    entries where mask is true."""
    out[...] = data
    key = _bma_key(data, mask, start_axis)
    out[key] = value.astype(out.dtype)


def _bma_grad(F, attrs, ins, outs, og):
    m = ins[1]
    g = F._internal._npi_boolean_mask_assign_scalar(og[0], m, value=0.0,
                                                     start_axis=attrs["start_axis"])
    return [g, None]


_get("_npi_boolean_mask_assign_scalar").grad = _bma_grad
_get("_npi_boolean_mask_assign_tensor").grad = lambda F, at, ins, outs, og: [
    _bma_grad(F, at, ins, outs, og)[0], None, None]



# ------------------------------------------------------------ interp
def _interp_rule(attrs, shapes, dtypes):
    if len(shapes[1]) != 1 or tuple(shapes[1]) != tuple(shapes[2]):
        raise OpError("xp and fp must be 1-D sequences of the same length, got %s and %s"
                      % (tuple(shapes[1]), tuple(shapes[2])))
    if shapes[1][0] == 0:
        raise OpError("array of sample points is empty")
    return (tuple(shapes[0]),), (np.dtype(np.float64),)    # NumPy's (and MXNet's) result


def _opt_num(v):
    from .registry import _lit
    v = _lit(v)
    return None if v is None else p_float(v)


@register("_npi_interp", inputs=("x", "xp", "fp"), infer=_interp_rule, grad=_no_grad,
          params=[Param("left", _opt_num, None), Param("right", _opt_num, None),
                  Param("period", _opt_num, None)])
def _npi_interp(xp, x, xp_, fp, out, left=None, right=None, period=None):
    """_npi_interp(x, xp, fp, left, right, period): NumPy's 1-D linear interpolation."""
    out[...] = xp.interp(x.astype(np.float64), xp_.astype(np.float64), fp.astype(np.float64),
                         left=left, right=right, period=period).astype(out.dtype)
