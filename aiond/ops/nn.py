"""Neural-network ops with MXNet 1.9.1's names, arguments, defaults and
quirks: FullyConnected, Activation, LeakyReLU, softmax / log_softmax,
SoftmaxActivation, SoftmaxOutput (alias Softmax), the regression outputs,
Dropout, Embedding, BlockGrad, make_loss / MakeLoss, smooth_l1,
softmax_cross_entropy, L2Normalization and nearest UpSampling.

MXNet behaviours kept on purpose (checked against MXNet 1.9.1):

- the loss heads (SoftmaxOutput, *RegressionOutput, make_loss, MakeLoss)
  ignore the incoming head gradient; SoftmaxOutput(out_grad=True)
  multiplies its gradient by the softmax *output* (MXNet passes the output
  where the head gradient belongs);
- SoftmaxOutput(multi_output=True, normalization='null'|'batch') also
  divides by the spatial size; normalization never applies to a
  probability label (label.shape == data.shape);
- LeakyReLU's leaky/elu/selu gradients are computed from the output:
  selu's is ``lambda * (alpha + out)`` for out <= 0 (not d/dx);
- SoftmaxActivation(mode='instance') normalises over the last axis but its
  gradient reduces over axis 1 (the same for 2-D data);
- Dropout with p=1 gives NaN (0 * 1/0), Embedding clips indices to
  [0, input_dim - 1], softmax_cross_entropy clips probabilities at 1e-8.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._fast import last_axis_max, relu_into
from ._rules import fmt, same_dtype
from .random import uniform01
from .registry import Null, Param, p_bool, p_dtype, p_float, p_int, p_shape, p_str, register

_prod = math.prod
_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_F32 = np.dtype(np.float32)


from .registry import optional as _optional  # noqa: E402
from .matrix import MATMUL_SPLIT_MACS  # noqa: E402


def _need_float(dtype, what="data"):
    if dtype not in _FLOATS:
        raise OpError("only supports floating point types, got %s for %s (cast it with "
                      ".astype('float32'))" % (dtype.name, what))


def _num_inputs(shapes, names, why=""):
    if len(shapes) != len(names):
        raise OpError("expects %d input(s) (%s)%s, got %d"
                      % (len(names), ", ".join(names), why, len(shapes)))


def _float_unary(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    return (shapes[0],), (dtypes[0],)


def _p_opt_float(v):
    if v is None or v is Null or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_float(v)


def _p_opt_bool(v):
    if v is None or (isinstance(v, str) and v.strip() == "None"):
        return None
    return p_bool(v)


def _in_range(*checks):
    """attr_check: each (name, lo, hi) must hold lo <= attrs[name] <= hi."""
    def check(op, attrs):
        for name, lo, hi in checks:
            v = attrs[name]
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                bound = ("[%s, %s]" % (lo, hi) if hi is not None else ">= %s" % lo)
                raise OpError("%s: %s=%r is out of range; it must be %s"
                              % (op.name, name, v, bound))
    return check


def _errstate():
    return np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore")


# ---------------------------------------------------------------- erf
# Cephes' rational approximations (Moshier, public domain), full float64 accuracy.
_ERF_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
          7.00332514112805075473E3, 5.55923013010394962768E4)
_ERF_U = (1.0, 3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3,
          2.26290000613890934246E4, 4.92673942608635921086E4)
_ERFC_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
           4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
           9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_ERFC_Q = (1.0, 1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
           9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
           1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
           6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC_S = (1.0, 2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
           1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)


def _poly(x, coefs):
    r = x * 0 + coefs[0]
    for c in coefs[1:]:
        r = r * x + c
    return r


def erf(xp, x):
    """erf(x) in float64 from xp operations only (numpy has no erf)."""
    x = xp.asarray(x, dtype=np.float64)
    with _errstate():
        xs = xp.clip(x, -1.0, 1.0)
        z = xs * xs
        small = xs * _poly(z, _ERF_T) / _poly(z, _ERF_U)
        a = xp.minimum(xp.abs(x), 30.0)        # erfc(30) underflows to 0
        ez = xp.exp(-a * a)
        erfc = xp.where(a < 8.0, ez * _poly(a, _ERFC_P) / _poly(a, _ERFC_Q),
                        ez * _poly(a, _ERFC_R) / _poly(a, _ERFC_S))
        large = xp.sign(x) * (1.0 - erfc)
        return xp.where(xp.abs(x) <= 1.0, small, large)


@register("_nn_erf", infer=_float_unary, elemwise=True)
def _nn_erf(xp, data, out):
    """_nn_erf(data): the error function (used by LeakyReLU's gelu gradient)."""
    xp.copyto(out, erf(xp, data), casting="unsafe")


# ---------------------------------------------------------- FullyConnected


def _fc_cost(attrs, shapes, oshapes):
    n = 1
    for d in oshapes[0]:
        n *= d
    return n * (shapes[1][1] if len(shapes) > 1 and len(shapes[1]) > 1 else 1) // 8


def _fc_rule(attrs, shapes, dtypes):
    nh = attrs["num_hidden"]
    if attrs["no_bias"]:
        _num_inputs(shapes, ("data", "weight"), " when no_bias=True")
    else:
        _num_inputs(shapes, ("data", "weight", "bias"), " (pass no_bias=True to leave out bias)")
    d = tuple(shapes[0])
    if len(d) == 0:
        raise ShapeError("data must have at least 1 dimension, got shape ()")
    k = d[-1] if not attrs["flatten"] else _prod(d[1:])
    if tuple(shapes[1]) != (nh, k):
        raise ShapeError("weight has shape %s but expected %s: (num_hidden=%d, %d input feature%s "
                         "of data %s%s)" % (fmt(shapes[1]), fmt((nh, k)), nh, k,
                                            "" if k == 1 else "s", fmt(d),
                                            "" if attrs["flatten"] else ", flatten=False"))
    if not attrs["no_bias"] and tuple(shapes[2]) not in ((nh,), (nh, 1)):
        raise ShapeError("bias has shape %s but expected (%d,) (num_hidden=%d)"
                         % (fmt(shapes[2]), nh, nh))
    dt = same_dtype(dtypes)
    out = d[:-1] + (nh,) if not attrs["flatten"] else (d[0], nh)
    return (out,), (dt,)


@register("FullyConnected", inputs=("data", "weight", "bias"), params=[
    Param("num_hidden", p_int, doc="Number of hidden nodes of the output."),
    Param("no_bias", p_bool, False, "Whether to disable bias parameter."),
    Param("flatten", p_bool, True, "Whether to collapse all but the first axis of the input.")],
    infer=_fc_rule, inline=_fc_cost, attr_check=_in_range(("num_hidden", 1, None)))
@_optional("bias")
def fully_connected(xp, data, weight, *bias, out, num_hidden, no_bias=False, flatten=True):
    """FullyConnected(data, weight, bias, num_hidden, no_bias=False, flatten=True):
    ``data @ weight.T + bias``; flatten=True collapses all but the first axis
    of data, flatten=False applies the layer to the last axis."""
    o2 = out.reshape(-1, num_hidden)
    xp.matmul(data.reshape(-1, weight.shape[1]), weight.T, out=o2)
    if bias:
        o2 += bias[0].reshape(-1)


def _fc_rows_install():
    from .registry import get
    get("FullyConnected").rows = _fc_rows


def _fc_rows(xp, ins, out, attrs):
    """FullyConnected by ranges of rows of the flattened data."""
    data, weight = ins[0], ins[1]
    nh = attrs["num_hidden"]
    x2 = data.reshape(-1, weight.shape[1])
    if x2.shape[0] * x2.shape[1] * nh < MATMUL_SPLIT_MACS:
        return 0, None
    o2 = out.reshape(-1, nh)
    wt = weight.T
    bias = ins[2].reshape(-1) if len(ins) > 2 else None

    def run(lo, hi):
        xp.matmul(x2[lo:hi], wt, out=o2[lo:hi])
        if bias is not None:
            o2[lo:hi] += bias
    return o2.shape[0], run


# ----------------------------------------------------------- Activation
_ACT_TYPES = ("relu", "sigmoid", "softrelu", "softsign", "tanh")


_fc_rows_install()


@register("Activation", params=[
    Param("act_type", p_str, doc="Activation function to be applied.", choices=_ACT_TYPES)],
    infer=_float_unary, elemwise=True)
def activation(xp, data, out, act_type):
    """Activation(data, act_type): relu, sigmoid, tanh, softrelu (softplus) or softsign."""
    with _errstate():
        if act_type == "relu":
            relu_into(xp, data, out)
        elif act_type == "sigmoid":
            xp.negative(data, out=out)
            xp.exp(out, out=out)
            out += 1
            xp.reciprocal(out, out=out)
        elif act_type == "tanh":
            xp.tanh(data, out=out)
        elif act_type == "softrelu":
            # MXNet: x itself above 20 (log1p(exp(x)) == x in float32 there)
            xp.copyto(out, xp.where(data > 20, data, xp.log1p(xp.exp(data))))
        else:
            xp.abs(data, out=out)
            out += 1
            xp.true_divide(data, out, out=out)


_OUT_GRAD_ACTS = ("relu", "sigmoid", "tanh")


def _bwd_act_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("ograd", "output"))
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise ShapeError("ograd has shape %s but the output has shape %s"
                         % (fmt(shapes[0]), fmt(shapes[1])))
    return (shapes[1],), (same_dtype(dtypes),)


@register("_backward_Activation", inputs=("ograd", "output"), params=[
    Param("act_type", p_str, doc="relu, sigmoid or tanh", choices=_OUT_GRAD_ACTS)],
    infer=_bwd_act_rule, elemwise=True)
def _backward_activation(xp, ograd, output, *, out, act_type):
    """The gradient of Activation (relu, sigmoid, tanh) from its output, in
    one op: ograd*(output > 0), ograd*output*(1 - output), ograd*(1 - output^2),
    each rounded as those ops would be one by one."""
    with _errstate():
        if act_type == "relu":
            xp.multiply(ograd, output > 0, out=out)     # times 1 or 0: -0 and NaN kept
        elif act_type == "sigmoid":
            t = xp.multiply(ograd, output)
            xp.subtract(out.dtype.type(1), output, out=out)
            out *= t
        else:
            xp.multiply(output, output, out=out)
            xp.subtract(out.dtype.type(1), out, out=out)
            out *= ograd


# ------------------------------------------------------------ LeakyReLU
_LEAKY_TYPES = ("elu", "gelu", "leaky", "prelu", "rrelu", "selu")
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _prelu_gamma_shape(g, d):
    """MXNet's expand_shape: gamma's axes align with data's first two axes
    from the right ((C,) -> (1, C, 1, 1)); the rest become 1."""
    res = [1] * len(d)
    s = len(g) - 1
    for i in range(len(d) - 1, -1, -1):
        if s >= 0 and i <= 1 and (d[i] == g[s] or g[s] == 1):
            res[i] = g[s]
            s -= 1
    if s != -1:
        raise ShapeError("cannot broadcast gamma of shape %s to data of shape %s (gamma's axes "
                         "match data's axes 0 and 1, e.g. (channels,))" % (fmt(g), fmt(d)))
    return tuple(res)


def _leaky_rule(attrs, shapes, dtypes):
    t = attrs["act_type"]
    if t == "prelu":
        _num_inputs(shapes, ("data", "gamma"), " with act_type='prelu'")
        _prelu_gamma_shape(tuple(shapes[1]), tuple(shapes[0]))
        same_dtype(dtypes)
    else:
        _num_inputs(shapes, ("data",), " with act_type=%r (gamma is for 'prelu')" % t)
    _need_float(dtypes[0])
    if t == "rrelu":
        from .registry import hooks
        if hooks.is_training():
            raise OpError("act_type='rrelu' in training mode (random slopes) is not supported "
                          "yet; in predict mode it uses slope (lower_bound + upper_bound) / 2")
        return (shapes[0], shapes[0]), (dtypes[0], dtypes[0])
    return (shapes[0],), (dtypes[0],)


@register("LeakyReLU", inputs=("data", "gamma"), params=[
    Param("act_type", p_str, "leaky", "Activation function to be applied.", choices=_LEAKY_TYPES),
    Param("slope", p_float, 0.25, "Init slope for the activation. (For leaky and elu only)"),
    Param("lower_bound", p_float, 0.125, "Lower bound of random slope. (For rrelu only)"),
    Param("upper_bound", p_float, 0.334, "Upper bound of random slope. (For rrelu only)")],
    infer=_leaky_rule, elemwise=True, num_outputs=2, output_names=("output", "mask"),
    num_visible=lambda attrs: 2 if attrs["act_type"] == "rrelu" else 1)
@_optional("gamma")
def leaky_relu(xp, data, *gamma, out, act_type="leaky", slope=0.25, lower_bound=0.125,
               upper_bound=0.334):
    """LeakyReLU(data, gamma=None, act_type='leaky', slope=0.25): leaky (x or
    slope*x), prelu (learned slope gamma), elu, selu, gelu (erf form) or rrelu
    (predict mode: slope (lower_bound+upper_bound)/2; returns (output, mask))."""
    x = data
    with _errstate():
        if act_type == "leaky":
            r = xp.where(x > 0, x, x * x.dtype.type(slope))
        elif act_type == "prelu":
            g = gamma[0].reshape(_prelu_gamma_shape(gamma[0].shape, x.shape))
            r = xp.where(x > 0, x, x * g)
        elif act_type == "elu":
            r = xp.where(x > 0, x, x.dtype.type(slope) * xp.expm1(x))
        elif act_type == "selu":
            r = x.dtype.type(_SELU_LAMBDA) * xp.where(x > 0, x,
                                                      x.dtype.type(_SELU_ALPHA) * xp.expm1(x))
        elif act_type == "gelu":
            r = 0.5 * x * (1.0 + erf(xp, x * (1.0 / math.sqrt(2.0))))
        else:   # rrelu, predict mode
            s = (np.float32(lower_bound) + np.float32(upper_bound)) / np.float32(2)
            out, mask = out
            mask[...] = s
            r = xp.where(x > 0, x, x * x.dtype.type(s))
    xp.copyto(out, r, casting="unsafe")


# -------------------------------------------------------------- softmax


def _softmax_params(with_length=True):
    return [Param("axis", p_int, -1, "The axis along which to compute softmax."),
            Param("temperature", _p_opt_float, None, "Temperature parameter in softmax"),
            Param("dtype", p_dtype, None, "DType of the output (None: the input's)."),
            Param("use_length", _p_opt_bool, False,
                  "Whether to use the length input as a mask over the data input."
                  if with_length else
                  "Not supported by log_softmax (MXNet 1.9.1 has no length input).")]


def _softmax_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if attrs["use_length"]:
        _num_inputs(shapes, ("data", "length"), " with use_length=True")
    else:
        _num_inputs(shapes, ("data",), " (pass use_length=True to use a length input)")
    _need_float(dtypes[0])
    nd = len(d)
    if nd == 0 or not -nd <= attrs["axis"] < nd:
        raise OpError("axis %d exceeds the input dimension of %d" % (attrs["axis"], nd))
    if attrs["use_length"]:
        ax = attrs["axis"] % nd
        want = d[:ax] + d[ax + 1:]
        if tuple(shapes[1]) != want:
            raise ShapeError("length has shape %s but expected %s (data's shape without axis %d)"
                             % (fmt(shapes[1]), fmt(want), attrs["axis"]))
    odt = attrs["dtype"] if attrs["dtype"] is not None else dtypes[0]
    _need_float(odt, "dtype")
    return (d,), (odt,)


def _softmax_core(xp, data, axis, temperature, length=None, log=False):
    """Softmax (or log-softmax) of data along axis, MXNet style:
    exp((x - max) / T) / sum. Masks positions >= length to 0 when given."""
    if data.size == 0:
        return data     # a zero-size axis has no max: nothing to normalise
    x = data.astype(_F32) if data.dtype == np.float16 else data
    mask = None
    with _errstate():
        if length is not None:
            shp = [1] * x.ndim
            shp[axis] = x.shape[axis]
            mask = xp.arange(x.shape[axis]).reshape(shp) < xp.expand_dims(length, axis)
            m = xp.max(xp.where(mask, x, -xp.inf), axis=axis, keepdims=True)
            m = xp.where(xp.isfinite(m), m, 0)
        elif axis == x.ndim - 1:
            m = last_axis_max(xp, x)
        else:
            m = xp.max(x, axis=axis, keepdims=True)
        z = x - m
        if temperature is not None and temperature != 1.0:
            z = z / x.dtype.type(temperature)
        e = xp.exp(z)
        if mask is not None:
            e = xp.where(mask, e, 0)
        s = xp.sum(e, axis=axis, keepdims=True)
        if log:
            return z - xp.log(s)
        if mask is not None:
            s = xp.where(s == 0, 1, s)
        return e / s


@register("softmax", inputs=("data", "length"), params=_softmax_params(), infer=_softmax_rule)
@_optional("length")
def softmax(xp, data, *length, out, axis=-1, temperature=None, dtype=None, use_length=False):
    """softmax(data, length=None, axis=-1, temperature=None, dtype=None,
    use_length=False): exp(x/T) normalised along axis; with use_length,
    positions at or past length[...] along axis are 0."""
    ax = axis % data.ndim
    ln = length[0].astype(np.int64) if use_length else None
    xp.copyto(out, _softmax_core(xp, data, ax, temperature, ln), casting="unsafe")


@register("log_softmax", params=_softmax_params(False), infer=_softmax_rule)
def log_softmax(xp, data, out, axis=-1, temperature=None, dtype=None, use_length=False):
    """log_softmax(data, axis=-1, temperature=None, dtype=None): log of softmax."""
    xp.copyto(out, _softmax_core(xp, data, axis % data.ndim, temperature, log=True),
              casting="unsafe")


def _sa_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    if len(shapes[0]) == 0:
        raise ShapeError("data must have at least 1 dimension, got shape ()")
    if attrs["mode"] == "channel" and len(shapes[0]) < 3:
        raise ShapeError("mode='channel' needs data with at least 3 dimensions, got shape %s"
                         % fmt(shapes[0]))
    return (shapes[0],), (dtypes[0],)


@register("SoftmaxActivation", params=[
    Param("mode", p_str, "instance", "instance: softmax over the last axis; channel: over axis 1.",
          choices=("channel", "instance"))], infer=_sa_rule)
def softmax_activation(xp, data, out, mode="instance"):
    """SoftmaxActivation(data, mode='instance'): softmax over the last axis
    (instance) or over axis 1 (channel)."""
    ax = data.ndim - 1 if mode == "instance" else 1
    xp.copyto(out, _softmax_core(xp, data, ax, None), casting="unsafe")


# -------------------------------------------------------- SoftmaxOutput
_SO_PARAMS = [
    Param("grad_scale", p_float, 1.0, "Scales the gradient by a float factor."),
    Param("ignore_label", p_float, -1.0, "Label ignored in backward when use_ignore is set."),
    Param("multi_output", p_bool, False, "Softmax along axis 1 (labels (n, spatial...))."),
    Param("use_ignore", p_bool, False, "Whether ignore_label contributes no gradient."),
    Param("preserve_shape", p_bool, False, "Softmax along the last axis."),
    Param("normalization", p_str, "null", "Normalizes the gradient.",
          choices=("batch", "null", "valid")),
    Param("out_grad", p_bool, False, "Multiplies the gradient (MXNet: by the output)."),
    Param("smooth_alpha", p_float, 0.0, "Label smoothing constant for the backward pass."),
]


def _so_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data", "label"))
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) == 0:
        raise ShapeError("data must have at least 1 dimension, got shape ()")
    if d != lab:
        if attrs["multi_output"]:
            if len(d) < 2:
                raise ShapeError("multi_output=True needs data with at least 2 dimensions, "
                                 "got %s" % fmt(d))
            l1 = (d[0], _prod(d) // d[0] // d[1] if d[1] else 0)
            l2 = (d[0],) + d[2:]
            l3 = (d[0], 1) + d[2:]
            if lab not in (l1, l2, l3):
                raise ShapeError("label has shape %s but expected %s or %s for data %s with "
                                 "multi_output=True" % (fmt(lab), fmt(l1), fmt(l2), fmt(d)))
        elif lab != d[:-1]:
            raise ShapeError("label has shape %s but expected %s (data's shape without its last "
                             "axis) or %s (a probability label)" % (fmt(lab), fmt(d[:-1]), fmt(d)))
    dt = same_dtype(dtypes)
    _need_float(dt)
    return (d,), (dt,)


def _so_view(shape, multi_output, preserve_shape):
    n = _prod(shape)
    if multi_output:
        return (shape[0], shape[1], n // shape[0] // shape[1] if shape[1] else 0)
    if preserve_shape:
        return (n // shape[-1] if shape[-1] else 0, shape[-1])
    return (shape[0], n // shape[0] if shape[0] else 0)


@register("SoftmaxOutput", inputs=("data", "label"), params=_SO_PARAMS, infer=_so_rule,
          aliases=("Softmax",))
def softmax_output(xp, data, label, out, grad_scale=1.0, ignore_label=-1.0, multi_output=False,
                   use_ignore=False, preserve_shape=False, normalization="null", out_grad=False,
                   smooth_alpha=0.0):
    """SoftmaxOutput(data, label, ...): softmax forward (over data reshaped to
    (n, -1) by default, axis 1 with multi_output, the last axis with
    preserve_shape); backward is the cross-entropy gradient
    ``(softmax - onehot(label)) * grad_scale`` (normalised), ignoring the head
    gradient."""
    v = _so_view(data.shape, multi_output, preserve_shape)
    xp.copyto(out.reshape(v), _softmax_core(xp, data.reshape(v), 1, None), casting="unsafe")


def _so_backward_rule(attrs, shapes, dtypes):
    return (shapes[0],), (dtypes[0],)


@register("_backward_SoftmaxOutput", inputs=("output", "label"), params=_SO_PARAMS,
          infer=_so_backward_rule)
def _backward_softmax_output(xp, y, label, out, grad_scale=1.0, ignore_label=-1.0,
                             multi_output=False, use_ignore=False, preserve_shape=False,
                             normalization="null", out_grad=False, smooth_alpha=0.0):
    """The gradient of SoftmaxOutput w.r.t. data, from its output and label."""
    dt = y.dtype.type
    if label.shape == y.shape:          # a probability label: no normalisation
        g = (y - label) * dt(grad_scale)
        if out_grad:
            g = g * y
        xp.copyto(out, g, casting="unsafe")
        return
    ign = int(ignore_label)
    lab = label.astype(np.int64)        # static_cast<int>: truncates toward zero
    if multi_output:
        n, k, s = _so_view(y.shape, True, False)
        y3 = y.reshape(n, k, s)
        lab2 = lab.reshape(n, s)
        g = y3 - (xp.arange(k).reshape(1, k, 1) == lab2[:, None, :]).astype(y.dtype)
        if use_ignore:
            g = xp.where((lab2 == ign)[:, None, :], dt(0), g)
        if normalization == "batch":
            cnt = n
        elif normalization == "valid":
            cnt = max(int(lab2.size - xp.count_nonzero(lab2 == ign)), 1)
        else:
            cnt = 1
        g = g * dt(grad_scale / (1 if normalization == "valid" else s) / cnt)
        if out_grad:
            g = g * y3
    else:
        rows, cols = _so_view(y.shape, False, preserve_shape)
        y2 = y.reshape(rows, cols)
        flat = lab.reshape(-1)
        lr = flat[:rows]
        hot = xp.arange(cols).reshape(1, cols) == lr[:, None]
        if smooth_alpha == 0.0:
            g = y2 - hot.astype(y.dtype)
        else:
            g = y2 - xp.where(hot, dt(1.0 - smooth_alpha), dt(smooth_alpha / (cols - 1)))
        if use_ignore:
            g = xp.where((lr == ign)[:, None], dt(0), g)
        if normalization == "batch":
            cnt = flat.size
        elif normalization == "valid":
            cnt = max(int(flat.size - xp.count_nonzero(flat == ign)), 1)
        else:
            cnt = 1
        g = g * dt(grad_scale / cnt)
        if out_grad:
            g = g * y2
    xp.copyto(out, g.reshape(out.shape), casting="unsafe")


# ---------------------------------------------------- regression outputs


def _reg_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data", "label"))
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) == 0 or len(lab) == 0 or lab[0] != d[0] or _prod(lab) != _prod(d):
        raise ShapeError("label has shape %s but data has shape %s; the label needs the same "
                         "size and first dimension" % (fmt(lab), fmt(d)))
    dt = same_dtype(dtypes)
    _need_float(dt)
    return (d,), (dt,)


_REG_PARAMS = [Param("grad_scale", p_float, 1.0, "Scale the gradient by a float factor")]


def _make_regression(name, logistic, doc):
    def kernel(xp, data, label, out, grad_scale=1.0):
        if logistic:
            with _errstate():
                xp.copyto(out, 1.0 / (1.0 + xp.exp(-data)), casting="unsafe")
        else:
            xp.copyto(out, data)
    kernel.__doc__ = doc
    register(name, inputs=("data", "label"), params=_REG_PARAMS, infer=_reg_rule,
             elemwise=False)(kernel)


_make_regression("LinearRegressionOutput", False,
                 "LinearRegressionOutput(data, label, grad_scale=1): identity forward; "
                 "gradient (out - label) * grad_scale / num_output.")
_make_regression("MAERegressionOutput", False,
                 "MAERegressionOutput(data, label, grad_scale=1): identity forward; "
                 "gradient sign(out - label) * grad_scale / num_output.")
_make_regression("LogisticRegressionOutput", True,
                 "LogisticRegressionOutput(data, label, grad_scale=1): sigmoid forward; "
                 "gradient (out - label) * grad_scale / num_output.")


# ---------------------------------------------------------------- Dropout


def _dropout_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    d = tuple(shapes[0])
    mask = list(d)
    for a in attrs["axes"]:
        if not -len(d) <= a < max(len(d), 1):
            raise OpError("axes=%s is out of range for data of shape %s" % (attrs["axes"], fmt(d)))
        mask[a % len(d)] = 1
    return (d, tuple(mask)), (dtypes[0], dtypes[0])


@register("Dropout", params=[
    Param("p", p_float, 0.5, "Fraction of the input that gets dropped out during training time."),
    Param("mode", p_str, "training", "Whether to only turn on dropout during training or also "
          "for inference.", choices=("always", "training")),
    Param("axes", p_shape, (), "Axes for variational dropout kernel (the mask is shared there)."),
    Param("cudnn_off", _p_opt_bool, False, "Ignored (no cuDNN in aiond).")],
    infer=_dropout_rule, needs_rng=True, train_aware=True, num_outputs=2,
    output_names=("output", "mask"), num_visible=lambda attrs: 1,
    attr_check=_in_range(("p", 0.0, 1.0)))
def dropout(xp, data, out, rng, p=0.5, mode="training", axes=(), cudnn_off=False, _train=False):
    """Dropout(data, p=0.5, mode='training', axes=()): in training (or with
    mode='always') zero each element with probability p and scale the rest
    by 1/(1-p); identity otherwise. Returns one array (the mask is hidden)."""
    y, mask = out
    pkeep = 1.0 - p
    if pkeep < 1.0 and (_train or mode == "always"):
        u = uniform01(xp, rng, mask.shape)      # on the device on a GPU context
        with _errstate():
            scale = np.float32(1.0) / np.float32(pkeep)       # p=1: 0 * inf = NaN, as MXNet
            xp.copyto(mask, (u < np.float32(pkeep)).astype(np.float32) * scale, casting="unsafe")
        xp.multiply(data, mask, out=y)
    else:
        mask[...] = 1
        xp.copyto(y, data)


# -------------------------------------------------------------- Embedding


def _embedding_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data", "weight"))
    want = (attrs["input_dim"], attrs["output_dim"])
    if tuple(shapes[1]) != want:
        raise ShapeError("weight has shape %s but expected %s (input_dim, output_dim)"
                         % (fmt(shapes[1]), fmt(want)))
    return (tuple(shapes[0]) + (attrs["output_dim"],),), (dtypes[1],)


_EMB_PARAMS = [
    Param("input_dim", p_int, doc="Vocabulary size of the input indices."),
    Param("output_dim", p_int, doc="Dimension of the embedding vectors."),
    Param("dtype", p_dtype, np.dtype(np.float32), "Data type of weight (the weight's own "
          "dtype is used)."),
    Param("sparse_grad", p_bool, False, "Ignored: gradients are dense in aiond.")]


def _clip_index(xp, data, n):
    return xp.clip(data.astype(np.int64).reshape(-1), 0, n - 1)


@register("Embedding", inputs=("data", "weight"), params=_EMB_PARAMS, infer=_embedding_rule,
          attr_check=_in_range(("input_dim", 1, None), ("output_dim", 1, None)))
def embedding(xp, data, weight, out, input_dim, output_dim, dtype=None, sparse_grad=False):
    """Embedding(data, weight, input_dim, output_dim): rows of weight at the
    indices in data (clipped to [0, input_dim - 1]); shape data.shape + (output_dim,)."""
    xp.take(weight, _clip_index(xp, data, input_dim), axis=0, out=out.reshape(-1, output_dim))


def _emb_backward_rule(attrs, shapes, dtypes):
    return ((attrs["input_dim"], attrs["output_dim"]),), (dtypes[1],)


@register("_backward_Embedding", inputs=("data", "ograd"), params=_EMB_PARAMS,
          infer=_emb_backward_rule, inline=False)
def _backward_embedding(xp, data, ograd, out, input_dim, output_dim, dtype=None, sparse_grad=False):
    """The gradient of Embedding w.r.t. weight: ograd rows added at data's indices."""
    out[...] = 0
    xp.add.at(out, _clip_index(xp, data, input_dim), ograd.reshape(-1, output_dim))


# ------------------------------------------------- losses and pass-through


def _any_unary(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    return (shapes[0],), (dtypes[0],)


@register("BlockGrad", infer=_any_unary, elemwise=True, aliases=("stop_gradient",))
def block_grad(xp, data, out):
    """BlockGrad(data): data, with no gradient flowing back through it."""
    xp.copyto(out, data)


@register("make_loss", infer=_any_unary, elemwise=True)
def make_loss(xp, data, out):
    """make_loss(data): data; its gradient is ones (the head gradient is ignored)."""
    xp.copyto(out, data)


@register("MakeLoss", params=[
    Param("grad_scale", p_float, 1.0, "Gradient scale."),
    Param("valid_thresh", p_float, 0.0, "Elements above it count as valid "
          "(normalization='valid')."),
    Param("normalization", p_str, "null", "null, batch (divide by batch size) or valid (divide "
          "by the number of valid elements).", choices=("batch", "null", "valid"))],
    infer=_float_unary, elemwise=True)
def make_loss_legacy(xp, data, out, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    """MakeLoss(data, grad_scale=1, valid_thresh=0, normalization='null'): data;
    its gradient is grad_scale (normalised), ignoring the head gradient."""
    xp.copyto(out, data)


@register("smooth_l1", params=[Param("scalar", p_float, 1.0, "sigma")], infer=_any_unary,
          elemwise=True)
def smooth_l1(xp, data, out, scalar=1.0):
    """smooth_l1(data, scalar=1): 0.5*(sigma*x)^2 where |x| < 1/sigma^2,
    |x| - 0.5/sigma^2 elsewhere."""
    x = data if data.dtype in _FLOATS else data.astype(_F32)
    bsq = scalar * scalar
    ibsq = 1.0 / bsq
    ax = xp.abs(x)
    r = xp.where(ax > ibsq, ax - 0.5 * ibsq, 0.5 * x * x * bsq)
    xp.copyto(out, r, casting="unsafe")


def _sce_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data", "label"))
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 2:
        raise ShapeError("only accepts 2-D data, got shape %s" % fmt(d))
    if len(lab) != 1:
        raise ShapeError("only accepts a 1-D label, got shape %s" % fmt(lab))
    if d[0] != lab[0]:
        raise ShapeError("data %s and label %s do not match: %d rows vs %d labels"
                         % (fmt(d), fmt(lab), d[0], lab[0]))
    dt = same_dtype(dtypes)
    _need_float(dt)
    return ((1,),), (dt,)


def _picked(xp, data, label):
    idx = xp.clip(label.astype(np.int64), 0, data.shape[1] - 1)
    return idx, xp.arange(data.shape[1]).reshape(1, -1) == idx[:, None]


@register("softmax_cross_entropy", inputs=("data", "label"), infer=_sce_rule)
def softmax_cross_entropy(xp, data, label, out):
    """softmax_cross_entropy(data, label): sum over rows of
    -log(softmax(data)[label]), shape (1,)."""
    p = _softmax_core(xp, data, 1, None)
    _, hot = _picked(xp, data, label)
    picked = xp.sum(xp.where(hot, p, 0), axis=1)
    with _errstate():
        out[...] = -xp.sum(xp.log(xp.maximum(picked, p.dtype.type(1e-8))))


@register("_backward_softmax_cross_entropy", inputs=("data", "label"),
          infer=lambda a, s, d: ((s[0],), (d[0],)))
def _backward_softmax_cross_entropy(xp, data, label, out):
    """softmax(data) - onehot(label): the gradient of softmax_cross_entropy for a head of 1."""
    _, hot = _picked(xp, data, label)
    xp.copyto(out, _softmax_core(xp, data, 1, None) - hot, casting="unsafe")


# -------------------------------------------------------- L2Normalization


def _l2_norm_shape(d, mode):
    if mode == "instance":
        return (d[0],)
    if mode == "channel":
        return (d[0], _prod(d[2:]))
    return (d[0], d[1])


def _l2_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    d = tuple(shapes[0])
    mode = attrs["mode"]
    if len(d) == 0:
        raise ShapeError("data must have at least 1 dimension, got shape ()")
    if mode != "instance" and len(d) < 3:
        raise ShapeError("mode=%r needs data with at least 3 dimensions, got shape %s"
                         % (mode, fmt(d)))
    return (d, _l2_norm_shape(d, mode)), (dtypes[0], dtypes[0])


@register("L2Normalization", params=[
    Param("eps", p_float, 1e-10, "A small constant for numerical stability."),
    Param("mode", p_str, "instance", "Specify the dimension along which to compute L2 norm.",
          choices=("channel", "instance", "spatial"))],
    infer=_l2_rule, num_outputs=2, output_names=("output", "norm"), num_visible=lambda a: 1)
def l2_normalization(xp, data, out, eps=1e-10, mode="instance"):
    """L2Normalization(data, eps=1e-10, mode='instance'): data / sqrt(sum(data^2) + eps)
    over all but axis 0 (instance), over axis 1 (channel) or over axes 2.. (spatial)."""
    y, nrm = out
    n = data.shape[0]
    if mode == "instance":
        x = data.reshape(n, -1)
        s = xp.sqrt(xp.sum(x * x, axis=1) + x.dtype.type(eps))
        xp.copyto(nrm, s)
        xp.divide(x, s[:, None], out=y.reshape(n, -1))
        return
    x = data.reshape(n, data.shape[1], -1)
    ax = 1 if mode == "channel" else 2
    s = xp.sqrt(xp.sum(x * x, axis=ax, keepdims=True) + x.dtype.type(eps))
    xp.copyto(nrm, s.reshape(nrm.shape))
    xp.divide(x, s, out=y.reshape(x.shape))


# ------------------------------------------------------------ UpSampling


def _up_rule(attrs, shapes, dtypes):
    if attrs["sample_type"] == "bilinear":
        from .upsampling import bilinear_rule
        return bilinear_rule(attrs, shapes, dtypes)
    if not shapes:
        raise OpError("needs at least one input")
    if attrs["num_args"] and attrs["num_args"] != len(shapes):
        raise OpError("num_args=%d but %d input(s) were given" % (attrs["num_args"], len(shapes)))
    d0 = tuple(shapes[0])
    scale = attrs["scale"]
    for i, s in enumerate(shapes):
        s = tuple(s)
        if len(s) != 4:
            raise ShapeError("input %d has shape %s; inputs must be 4-D (batch, channel, y, x)"
                             % (i, fmt(s)))
        if s[0] != d0[0]:
            raise ShapeError("input %d has batch size %d but input 0 has %d" % (i, s[0], d0[0]))
        oh, ow = d0[2] * scale, d0[3] * scale
        if (s[2] == 0 or oh % s[2]) or (s[3] == 0 or ow % s[3]):
            raise ShapeError("input %d of shape %s does not divide the output size (%d, %d)"
                             % (i, fmt(s), oh, ow))
        if oh // s[2] != ow // s[3]:
            raise ShapeError("input %d of shape %s needs scale %d along y but %d along x to "
                             "reach the output size (%d, %d)"
                             % (i, fmt(s), oh // s[2], ow // s[3], oh, ow))
        if attrs["multi_input_mode"] == "sum" and s[1] != d0[1]:
            raise ShapeError("input %d has %d channels but input 0 has %d; "
                             "multi_input_mode='sum' needs equal channels" % (i, s[1], d0[1]))
    dt = same_dtype(dtypes)
    _need_float(dt)
    c = d0[1] if attrs["multi_input_mode"] == "sum" else sum(s[1] for s in shapes)
    return ((d0[0], c, d0[2] * scale, d0[3] * scale),), (dt,)


@register("UpSampling", inputs=("*data",), variadic=True, params=[
    Param("scale", p_int, doc="Up sampling scale"),
    Param("num_filter", p_int, 0, "Input filter (bilinear only)."),
    Param("sample_type", p_str, doc="upsampling method", choices=("bilinear", "nearest")),
    Param("multi_input_mode", p_str, "concat", "How to handle multiple inputs: concat along "
          "channels or sum.", choices=("concat", "sum")),
    Param("num_args", p_int, 0, "Number of inputs (filled in from the inputs given)."),
    Param("workspace", p_int, 512, "Ignored.")],
    infer=_up_rule, attr_check=_in_range(("scale", 1, None)))
def upsampling(xp, *data, out, scale, sample_type="nearest", num_filter=0,
               multi_input_mode="concat", num_args=0, workspace=512):
    """UpSampling(*data, scale, sample_type='nearest', multi_input_mode='concat'):
    nearest-neighbour upsampling of 4-D inputs to (scale*h0, scale*w0); several
    inputs are concatenated along channels or summed. sample_type='bilinear'
    takes (data, weight) and is a depthwise Deconvolution (upsampling.py)."""
    if sample_type == "bilinear":
        from .upsampling import bilinear
        return bilinear(xp, *data, out, {"scale": scale})
    oh = out.shape[2]
    begin = 0
    for i, d in enumerate(data):
        s = oh // d.shape[2]
        if multi_input_mode == "sum":
            o = out
        else:
            o = out[:, begin:begin + d.shape[1]]
            begin += d.shape[1]
        for a in range(s):          # s*s strided copies, each a whole-array op
            for b in range(s):
                if multi_input_mode == "sum" and i > 0:
                    o[:, :, a::s, b::s] += d
                else:
                    o[:, :, a::s, b::s] = d


# ------------------------------------------------------------ gradient table
from ._grad import takes_need, set_grads, unbroadcast  # noqa: E402

_SQRT_2PI = math.sqrt(2.0 * math.pi)


@takes_need
def _fc_grad(F, attrs, ins, outs, og, need=(True, True, True)):
    x, w = ins[0], ins[1]
    nh = attrs["num_hidden"]
    g2 = og[0].reshape((-1, nh))
    x2 = x.reshape((-1, w.shape[1]))
    res = [F.dot(g2, w).reshape(x.shape) if need[0] else None,
           F.dot(g2, x2, transpose_a=True) if need[1] else None]
    if len(ins) == 3:
        res.append(F.sum(g2, axis=0).reshape(ins[2].shape) if need[2] else None)
    return res


def _activation_grad(F, attrs, ins, outs, og):
    x, y, g = ins[0], outs[0], og[0]
    t = attrs["act_type"]
    if t in _OUT_GRAD_ACTS:
        return [F._internal._backward_Activation(g, y, act_type=t)]
    if t == "softrelu":
        return [-(g * F.expm1(-y))]
    return [g / F.square(1 + F.abs(x))]


def _backward_activation_grad(F, attrs, ins, outs, og):
    g, y, h = ins[0], ins[1], og[0]
    t = attrs["act_type"]
    dg = F._internal._backward_Activation(h, y, act_type=t)
    if t == "relu":
        return [dg, F.zeros_like(y)]
    if t == "sigmoid":
        return [dg, h * g * (1 - 2 * y)]
    return [dg, h * g * (-2 * y)]


def _leaky_grad(F, attrs, ins, outs, og):
    x, y, g = ins[0], outs[0], og[0]
    t = attrs["act_type"]
    if t == "leaky":                # MXNet: from the output (out > 0 ? 1 : slope)
        s = attrs["slope"]
        return [g * ((y > 0) * (1.0 - s) + s)]
    if t == "elu":
        pos = y > 0
        return [g * (pos + (1 - pos) * (y + attrs["slope"]))]
    if t == "selu":                 # MXNet's selu_grad(out) = lambda * (alpha + out) for out <= 0
        pos = y > 0
        return [g * (_SELU_LAMBDA * (pos + (1 - pos) * (y + _SELU_ALPHA)))]
    if t == "gelu":
        cdf = 0.5 * (1 + F._internal._nn_erf(x * (1.0 / math.sqrt(2.0))))
        return [g * (cdf + x * F.exp(-0.5 * x * x) * (1.0 / _SQRT_2PI))]
    if t == "prelu":
        gamma = ins[1]
        gb = gamma.reshape(_prelu_gamma_shape(gamma.shape, x.shape))
        pos = x > 0
        dx = g * (pos + (1 - pos) * gb)
        dgamma = unbroadcast(F, g * x * (1 - pos), gb.shape).reshape(gamma.shape)
        return [dx, dgamma]
    s = (np.float32(attrs["lower_bound"]) + np.float32(attrs["upper_bound"])) / np.float32(2)
    return [g * ((y > 0) * (1.0 - float(s)) + float(s))]       # rrelu, predict mode


def _softmax_grad(F, attrs, ins, outs, og):
    y, g = outs[0], og[0]
    ax = attrs["axis"]
    gi = y * (g - F.sum(g * y, axis=ax, keepdims=True))
    t = attrs["temperature"]
    if t is not None and t != 1.0:
        gi = gi / t
    if gi.dtype != ins[0].dtype:
        gi = gi.astype(ins[0].dtype)
    return [gi] + [None] * (len(ins) - 1)


def _log_softmax_grad(F, attrs, ins, outs, og):
    y, g = outs[0], og[0]
    gi = g - F.exp(y) * F.sum(g, axis=attrs["axis"], keepdims=True)
    t = attrs["temperature"]
    if t is not None and t != 1.0:
        gi = gi / t
    if gi.dtype != ins[0].dtype:
        gi = gi.astype(ins[0].dtype)
    return [gi]


def _softmax_activation_grad(F, attrs, ins, outs, og):
    y, g = outs[0], og[0]
    if y.ndim == 1:
        return [y * (g - F.sum(g * y, axis=0, keepdims=True))]
    # MXNet reduces over axis 1 of (n, c, rest) in both modes
    v = (y.shape[0], y.shape[1], -1)
    y3, g3 = y.reshape(v), g.reshape(v)
    return [(y3 * (g3 - F.sum(g3 * y3, axis=1, keepdims=True))).reshape(y.shape)]


def _so_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_SoftmaxOutput(outs[0], ins[1], **attrs), None]


def _reg_grad(mae):
    def grad(F, attrs, ins, outs, og):
        y, label = outs[0], ins[1]
        num_output = _prod(label.shape[1:])
        d = y - label.reshape(y.shape)
        if mae:
            d = (d > 0) * 2 - 1
        return [d * (attrs["grad_scale"] / num_output), None]
    return grad


def _make_loss_grad(F, attrs, ins, outs, og):
    x = ins[0]
    scale = attrs["grad_scale"]
    norm = attrs["normalization"]
    if norm == "batch":
        return [F.ones_like(x) * (scale / x.shape[0])]
    if norm == "valid":
        cnt = F._internal._maximum_scalar(F.sum(x > attrs["valid_thresh"]), scalar=1.0)
        return [F.broadcast_div(F.ones_like(x) * scale, cnt)]
    return [F.ones_like(x) * scale]


def _smooth_l1_grad(F, attrs, ins, outs, og):
    bsq = attrs["scalar"] ** 2
    return [og[0] * F.clip(ins[0] * bsq, a_min=-1.0, a_max=1.0)]


def _l2_grad(F, attrs, ins, outs, og):
    y, nrm, g = outs[0], outs[1], og[0]
    n = y.shape[0]
    mode = attrs["mode"]
    if mode == "instance":
        y2, g2 = y.reshape((n, -1)), g.reshape((n, -1))
        t = F.sum(g2 * y2, axis=1, keepdims=True)
        return [((g2 - y2 * t) / nrm.reshape((n, 1))).reshape(y.shape)]
    v = (n, y.shape[1], -1)
    y3, g3 = y.reshape(v), g.reshape(v)
    ax = 1 if mode == "channel" else 2
    t = F.sum(g3 * y3, axis=ax, keepdims=True)
    nb = nrm.reshape((n, 1, -1)) if mode == "channel" else nrm.reshape((n, -1, 1))
    return [((g3 - y3 * t) / nb).reshape(y.shape)]


def _upsampling_grad(F, attrs, ins, outs, og):
    if attrs["sample_type"] == "bilinear":
        from .upsampling import bilinear_grad
        return bilinear_grad(F, attrs, ins, outs, og)
    g = og[0]
    oh = g.shape[2]
    res = []
    begin = 0
    for x in ins:
        n, c, h, w = x.shape
        s = oh // h
        gi = g
        if attrs["multi_input_mode"] != "sum":
            gi = F.slice_axis(g, axis=1, begin=begin, end=begin + c)
            begin += c
        res.append(F.sum(gi.reshape((n, c, h, s, w, s)), axis=(3, 5)))
    return res


set_grads({
    "_nn_erf": lambda F, at, ins, outs, og: [og[0] * (2.0 / math.sqrt(math.pi))
                                             * F.exp(-ins[0] * ins[0])],
    "FullyConnected": _fc_grad,
    "Activation": _activation_grad,
    "_backward_Activation": _backward_activation_grad,
    "LeakyReLU": _leaky_grad,
    "softmax": _softmax_grad,
    "log_softmax": _log_softmax_grad,
    "SoftmaxActivation": _softmax_activation_grad,
    "SoftmaxOutput": _so_grad,
    "LinearRegressionOutput": _reg_grad(False),
    "LogisticRegressionOutput": _reg_grad(False),
    "MAERegressionOutput": _reg_grad(True),
    "Dropout": lambda F, at, ins, outs, og: [og[0] * outs[1]],
    "Embedding": lambda F, at, ins, outs, og: [None, F._internal._backward_Embedding(
        ins[0], og[0], input_dim=at["input_dim"], output_dim=at["output_dim"],
        sparse_grad=at.get("sparse_grad", False))],
    "_backward_Embedding": lambda F, at, ins, outs, og: [None, F.Embedding(
        ins[0], og[0], input_dim=at["input_dim"], output_dim=at["output_dim"])],
    "BlockGrad": lambda F, at, ins, outs, og: [None],
    "make_loss": lambda F, at, ins, outs, og: [F.ones_like(ins[0])],
    "MakeLoss": _make_loss_grad,
    "smooth_l1": _smooth_l1_grad,
    "softmax_cross_entropy": lambda F, at, ins, outs, og: [
        F._internal._backward_softmax_cross_entropy(ins[0], ins[1]) * og[0], None],
    "L2Normalization": _l2_grad,
    "UpSampling": _upsampling_grad,
})
