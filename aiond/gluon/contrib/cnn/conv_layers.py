"""``gluon.contrib.cnn.conv_layers``: 2-D deformable convolutions as Gluon
blocks, each holding the convolution that learns its offsets.

- ``DeformableConvolution`` (v1, Dai 2017): ``offset = Convolution(x)`` with
  ``2 * kh * kw * num_deformable_group`` filters, then
  ``contrib.DeformableConvolution(x, offset)``;
- ``ModulatedDeformableConvolution`` (v2): the offset convolution has
  ``3 * kh * kw * num_deformable_group`` filters; the first two thirds are
  the offsets, the last third through ``2 * sigmoid`` the mask.

Parameter names (``offset_weight``, ``offset_bias``,
``deformable_conv_weight``, ``deformable_conv_bias``), shapes and
initialisers (offsets start at zero: a plain convolution) are MXNet's; the
deformable weight's input-channel axis is 0 until the first input arrives.
"""
from __future__ import annotations

from ....base import numeric_types
from ...block import HybridBlock
from ...nn import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


class _DeformableBase(HybridBlock):
    _offset_factor = 2

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True, op_name=None, adj=None,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            if layout not in ("NCHW", "NHWC"):
                raise ValueError("Only supports 'NCHW' and 'NHWC' layout for now, got %r"
                                 % (layout,))
            if isinstance(kernel_size, numeric_types):
                kernel_size = (kernel_size,) * 2
            kernel_size = tuple(kernel_size)
            n = len(kernel_size)
            strides, padding, dilation = ((v,) * n if isinstance(v, numeric_types) else tuple(v)
                                          for v in (strides, padding, dilation))
            self._op_name = op_name
            kk = kernel_size[0] * kernel_size[1]
            self.offset_split_index = num_deformable_group * 2 * kk
            self._kwargs_offset = {
                "kernel": kernel_size, "stride": strides, "dilate": dilation, "pad": padding,
                "num_filter": self._offset_factor * kk * num_deformable_group,
                "num_group": groups, "no_bias": not offset_use_bias, "layout": layout}
            self._kwargs_deformable_conv = {
                "kernel": kernel_size, "stride": strides, "dilate": dilation, "pad": padding,
                "num_filter": channels, "num_group": groups,
                "num_deformable_group": num_deformable_group, "no_bias": not use_bias,
                "layout": layout}
            if adj:
                self._kwargs_offset["adj"] = adj
                self._kwargs_deformable_conv["adj"] = adj
            cin = in_channels // groups if in_channels else 0
            nf = self._kwargs_offset["num_filter"]
            if layout == "NHWC":
                off_w = (nf,) + kernel_size + (cin,)
            else:
                off_w = (nf, cin) + kernel_size
            self.offset_weight = self.params.get("offset_weight", shape=off_w,
                                                 init=offset_weight_initializer,
                                                 allow_deferred_init=True)
            self.offset_bias = self.params.get(
                "offset_bias", shape=(nf,), init=offset_bias_initializer,
                allow_deferred_init=True) if offset_use_bias else None
            # MXNet leaves the input-channel axis unknown here even when
            # in_channels is given; the first forward fills it in
            self.deformable_conv_weight = self.params.get(
                "deformable_conv_weight", shape=(channels, 0) + kernel_size,
                init=weight_initializer, allow_deferred_init=True)
            self.deformable_conv_bias = self.params.get(
                "deformable_conv_bias", shape=(channels,), init=bias_initializer,
                allow_deferred_init=True) if use_bias else None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _offset(self, F, x, offset_weight, offset_bias):
        if offset_bias is None:
            return F.Convolution(x, offset_weight, cudnn_off=True, **self._kwargs_offset)
        return F.Convolution(x, offset_weight, offset_bias, cudnn_off=True, **self._kwargs_offset)

    def __repr__(self):
        kw = self._kwargs_deformable_conv
        s = "{name}({mapping}, kernel_size={kernel}, stride={stride}"
        n = len(kw["kernel"])
        if kw["pad"] != (0,) * n:
            s += ", padding={pad}"
        if kw["dilate"] != (1,) * n:
            s += ", dilation={dilate}"
        if kw["num_group"] != 1:
            s += ", groups={num_group}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act:
            s += ", {}".format(self.act)
        s += ")"
        shape = self.deformable_conv_weight.shape
        return s.format(name=self.__class__.__name__,
                        mapping="{0} -> {1}".format(shape[1] if shape[1] else None, shape[0]),
                        **kw)


class DeformableConvolution(_DeformableBase):
    """2-D Deformable Convolution v1 (Dai, 2017): the sampling points of the
    convolution move by offsets that a second convolution of the same
    geometry learns from the input.

    Parameters: ``channels``, ``kernel_size``, ``strides``, ``padding``,
    ``dilation``, ``groups``, ``num_deformable_group``, ``layout`` ('NCHW'),
    ``use_bias``, ``in_channels`` (0: inferred), ``activation``,
    ``weight_initializer``, ``bias_initializer``, ``offset_weight_initializer``
    and ``offset_bias_initializer`` ('zeros'), ``offset_use_bias``.

    Input (batch, in_channels, H, W); output (batch, channels, out_H, out_W)
    with out_H = floor((H + 2 pad - dilation (k - 1) - 1) / stride) + 1."""

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="DeformableConvolution", adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params)

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offset(F, x, offset_weight, offset_bias)
        if deformable_conv_bias is None:
            act = F.contrib.DeformableConvolution(data=x, offset=offset,
                                                  weight=deformable_conv_weight, name="fwd",
                                                  **self._kwargs_deformable_conv)
        else:
            act = F.contrib.DeformableConvolution(data=x, offset=offset,
                                                  weight=deformable_conv_weight,
                                                  bias=deformable_conv_bias, name="fwd",
                                                  **self._kwargs_deformable_conv)
        if self.act:
            act = self.act(act)
        return act

    def _alias(self):
        return "deformable_conv"


class ModulatedDeformableConvolution(_DeformableBase):
    """2-D Deformable Convolution v2 (Zhu et al., 2018,
    https://arxiv.org/abs/1811.11168): DeformableConvolution whose taps are
    also weighted by a learned mask (2 * sigmoid of the offset convolution's
    last kh * kw * num_deformable_group channels). Same parameters as
    DeformableConvolution."""
    _offset_factor = 3

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="ModulatedDeformableConvolution", adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params)

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offset(F, x, offset_weight, offset_bias)
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=self.offset_split_index)
        mask = F.slice_axis(offset, axis=1, begin=self.offset_split_index, end=None)
        mask = F.sigmoid(mask) * 2
        if deformable_conv_bias is None:
            act = F.contrib.ModulatedDeformableConvolution(
                data=x, offset=offset_t, mask=mask, weight=deformable_conv_weight, name="fwd",
                **self._kwargs_deformable_conv)
        else:
            act = F.contrib.ModulatedDeformableConvolution(
                data=x, offset=offset_t, mask=mask, weight=deformable_conv_weight,
                bias=deformable_conv_bias, name="fwd", **self._kwargs_deformable_conv)
        if self.act:
            act = self.act(act)
        return act

    def _alias(self):
        return "modulated_deformable_conv"
