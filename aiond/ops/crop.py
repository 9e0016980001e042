"""MXNet's legacy ``Crop`` (src/operator/crop-inl.h) and ``_rnn_param_concat``
(src/operator/nn/concat.cc), the concat MXNet's fused RNN layers build their
flat parameter vector with.

``Crop`` cuts the two spatial axes of an NCHW batch to ``h_w`` (one input) or
to the height and width of a second input (``crop_like``), at ``offset``
(y, x) or centred."""
from __future__ import annotations

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, p_bool, p_int, p_shape, register
from .shape import _concat_grad, _concat_rule, concat


def _crop_rule(attrs, shapes, dtypes):
    n = attrs["num_args"] or len(shapes)
    if n not in (1, 2) or len(shapes) != n:
        raise OpError("Crop takes num_args=1 (crop to h_w) or 2 (crop to the second input's "
                      "height and width); got num_args=%s and %d input(s)"
                      % (attrs["num_args"], len(shapes)))
    d = tuple(shapes[0])
    if len(d) != 4:
        raise ShapeError("Crop's data has shape %s; it takes 4-d NCHW data" % fmt(d))
    if n == 1:
        h, w = (tuple(attrs["h_w"]) + (0, 0))[:2]
        if not (1 <= h <= d[2] and 1 <= w <= d[3]):
            raise ShapeError("h_w=(%d, %d) must be within 1..(%d, %d), the data's height and "
                             "width" % (h, w, d[2], d[3]))
    else:
        like = tuple(shapes[1])
        if len(like) != 4:
            raise ShapeError("Crop's crop_like input has shape %s; it must be 4-d NCHW"
                             % fmt(like))
        h, w = like[2], like[3]
        if h > d[2] or w > d[3]:
            raise ShapeError("crop_like's height and width (%d, %d) exceed the data's (%d, %d)"
                             % (h, w, d[2], d[3]))
    return ((d[0], d[1], h, w),), (dtypes[0],)


def _crop_offset(attrs, dshape, oshape):
    if attrs["center_crop"]:
        return (dshape[2] - oshape[2]) // 2, (dshape[3] - oshape[3]) // 2
    y, x = (tuple(attrs["offset"]) + (0, 0))[:2]
    if not (0 <= y <= dshape[2] - oshape[2] and 0 <= x <= dshape[3] - oshape[3]):
        raise OpError("offset=(%d, %d) leaves no room for a (%d, %d) crop of a (%d, %d) image"
                      % (y, x, oshape[2], oshape[3], dshape[2], dshape[3]))
    return y, x


@register("Crop", inputs=("*args",), variadic=True, params=[
    Param("num_args", p_int, 0, "1: crop to h_w; 2: crop to the second input's height and "
          "width (filled in from the inputs given)."),
    Param("offset", p_shape, (0, 0), "crop offset coordinate: (y, x)"),
    Param("h_w", p_shape, (0, 0), "crop height and width: (h, w)"),
    Param("center_crop", p_bool, False, "crop at the centre instead of at offset")],
    infer=_crop_rule)
def crop(xp, *args, out, num_args=0, offset=(0, 0), h_w=(0, 0), center_crop=False):
    """Crop(data, [crop_like], offset=(0, 0), h_w=(0, 0), center_crop=False)."""
    attrs = {"offset": offset, "center_crop": center_crop}
    y, x = _crop_offset(attrs, args[0].shape, out.shape)
    out[...] = args[0][:, :, y:y + out.shape[2], x:x + out.shape[3]]


def _crop_grad(F, attrs, ins, outs, og):
    d = ins[0].shape
    y, x = _crop_offset(attrs, d, outs[0].shape)
    g = F._internal._slice_assign(F.zeros_like(ins[0]), og[0], begin=(0, 0, y, x),
                                  end=(d[0], d[1], y + outs[0].shape[2], x + outs[0].shape[3]))
    return [g] + [F.zeros_like(t) for t in ins[1:]]


@register("_rnn_param_concat", inputs=("*data",), variadic=True,
          aliases=("_npi_rnn_param_concat",),
          params=[Param("dim", p_int, 1, "the dimension to be concated."),
                  Param("num_args", p_int, 0, "Number of inputs (filled in from the inputs "
                        "given).")], infer=_concat_rule)
def rnn_param_concat(xp, *data, out, dim=1, num_args=0):
    """_rnn_param_concat(*data, dim=1): Concat, as the fused RNN layers use it."""
    concat(xp, *data, out=out, dim=dim, num_args=num_args)


set_grads({"Crop": _crop_grad, "_rnn_param_concat": _concat_grad})
