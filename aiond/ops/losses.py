"""Loss heads and pass-through ops (MXNet 1.9.1): the regression outputs
(Linear, MAE, Logistic), BlockGrad (alias stop_gradient), make_loss,
MakeLoss and smooth_l1.

MXNet behaviours kept on purpose: the regression outputs, make_loss and
MakeLoss ignore the incoming head gradient."""
from __future__ import annotations

from ..base import ShapeError
from ._grad import set_grads
from ._nn_util import (_F32, _FLOATS, _any_unary, _errstate, _float_unary, _need_float,
                       _num_inputs, _prod)
from ._rules import fmt, same_dtype
from .registry import Param, p_float, p_str, register


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


set_grads({
    "LinearRegressionOutput": _reg_grad(False),
    "LogisticRegressionOutput": _reg_grad(False),
    "MAERegressionOutput": _reg_grad(True),
    "BlockGrad": lambda F, at, ins, outs, og: [None],
    "make_loss": lambda F, at, ins, outs, og: [F.ones_like(ins[0])],
    "MakeLoss": _make_loss_grad,
    "smooth_l1": _smooth_l1_grad,
})
