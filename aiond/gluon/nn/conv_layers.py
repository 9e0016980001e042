"""Convolution, pooling and padding layers (MXNet 1.9.1's
``gluon.nn.conv_layers``): Conv1D/2D/3D, their transposes, max/avg and
global pooling, ReflectionPad2D.

Parameter names, shapes, defaults and deferred initialization follow
MXNet: ``conv0_weight`` of shape ``(channels, in_channels/groups, *kernel)``
(``(in_channels, channels/groups, *kernel)`` for the transposes) with
``in_channels`` 0 until the first input arrives, ``conv0_bias`` of shape
``(channels,)``. aiond's operators run channel-first layouts; the
channel-last ones (NWC/NHWC/NDHWC, GPU-only in MXNet) are accepted here and
refused by the operator with a message.
"""
from __future__ import annotations

from ...base import numeric_types
from ..block import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D",
           "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
           "MaxPool1D", "MaxPool2D", "MaxPool3D",
           "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D",
           "ReflectionPad2D"]


def _tuple(v, n):
    if isinstance(v, numeric_types):
        return (int(v),) * n
    return tuple(v)


def _weight_shape(op_name, layout, channels, in_channels, kernel, groups):
    """MXNet's inferred weight shape for data with ``in_channels`` channels
    (0: unknown), as ``_infer_weight_shape`` gets it from the operator."""
    cin = in_channels // groups if in_channels else 0
    if op_name == "Deconvolution":
        out_in = (in_channels, channels // groups)
    else:
        out_in = (channels, cin)
    if layout.find("C") == len(layout) - 1:      # channel-last: O, *kernel, I
        return (out_in[0],) + tuple(kernel) + (out_in[1],)
    return out_in + tuple(kernel)


class _Conv(HybridBlock):
    """Abstract nD convolution layer (private, used as implementation base).

    A convolution kernel is convolved with the input to produce the
    output; with ``use_bias`` a bias vector is added, then ``activation``
    (if any) is applied.

    Parameters
    ----------
    channels : int
        Number of output channels.
    kernel_size : tuple of n ints
        Dimensions of the convolution window.
    strides, padding, dilation : int or tuple of n ints
        Stride, zero padding (both sides) and dilation per spatial axis.
    groups : int
        Number of groups of input/output channels convolved separately.
    layout : str
        'NCW', 'NCHW' or 'NCDHW' (channel-last layouts are GPU-only in MXNet
        and refused by aiond's operator).
    in_channels : int, default 0
        Number of input channels; 0 defers initialization to the first
        forward, which infers it from the input.
    activation : str
        Activation applied to the output (``mx.nd.Activation`` act_type).
    use_bias : bool
        Whether the layer has a bias vector.
    weight_initializer, bias_initializer : str or Initializer
    """

    def __init__(self, channels, kernel_size, strides, padding, dilation,
                 groups, layout, in_channels=0, activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros",
                 op_name="Convolution", adj=None, prefix=None, params=None):
        super(_Conv, self).__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            nd = len(kernel_size)
            strides = _tuple(strides, nd)
            padding = _tuple(padding, nd)
            dilation = _tuple(dilation, nd)
            self._op_name = op_name
            self._kwargs = {
                "kernel": kernel_size, "stride": strides, "dilate": dilation,
                "pad": padding, "num_filter": channels, "num_group": groups,
                "no_bias": not use_bias, "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj

            wshape = _weight_shape(op_name, layout, channels, in_channels, kernel_size, groups)
            self.weight = self.params.get("weight", shape=wshape,
                                          init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(channels,),
                                            init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None

            if activation is not None:
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        if bias is None:
            act = getattr(F, self._op_name)(x, weight, name="fwd", **self._kwargs)
        else:
            act = getattr(F, self._op_name)(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            act = self.act(act)
        return act

    def _alias(self):
        return "conv"

    def __repr__(self):
        s = "{name}({mapping}, kernel_size={kernel}, stride={stride}"
        len_kernel_size = len(self._kwargs["kernel"])
        if self._kwargs["pad"] != (0,) * len_kernel_size:
            s += ", padding={pad}"
        if self._kwargs["dilate"] != (1,) * len_kernel_size:
            s += ", dilation={dilate}"
        if hasattr(self, "out_pad") and self.out_pad != (0,) * len_kernel_size:
            s += ", output_padding={out_pad}".format(out_pad=self.out_pad)
        if self._kwargs["num_group"] != 1:
            s += ", groups={num_group}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += ", {}".format(self.act)
        s += ")"
        shape = self.weight.shape
        return s.format(name=self.__class__.__name__,
                        mapping="{0} -> {1}".format(shape[1] if shape[1] else None, shape[0]),
                        **self._kwargs)


def _kernel(kernel_size, n):
    if isinstance(kernel_size, numeric_types):
        kernel_size = (kernel_size,) * n
    kernel_size = tuple(kernel_size)
    assert len(kernel_size) == n, "kernel_size must be a number or a list of %d ints" % n
    return kernel_size


class Conv1D(_Conv):
    r"""1D convolution layer (e.g. temporal convolution) over ``(batch,
    in_channels, width)`` data (layout 'NCW').

    out_width = floor((width+2*padding-dilation*(kernel_size-1)-1)/stride)+1

    See ``_Conv`` for the parameters; ``in_channels=0`` defers the weight's
    shape to the first input.
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1,
                 groups=1, layout="NCW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros",
                 in_channels=0, **kwargs):
        assert layout == "NCW", "Only supports 'NCW' layout for now"
        kernel_size = _kernel(kernel_size, 1)
        op_name = kwargs.pop("op_name", "Convolution")
        super(Conv1D, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer, bias_initializer,
            op_name, **kwargs)


class Conv2D(_Conv):
    r"""2D convolution layer (e.g. spatial convolution over images) over
    ``(batch, in_channels, height, width)`` data (layout 'NCHW').

    out_height = floor((height+2*padding[0]-dilation[0]*(kernel_size[0]-1)-1)/stride[0])+1
    (likewise for the width).

    See ``_Conv`` for the parameters; ``in_channels=0`` defers the weight's
    shape to the first input.
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout="NCHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        assert layout in ("NCHW", "NHWC"), "Only supports 'NCHW' and 'NHWC' layout for now"
        kernel_size = _kernel(kernel_size, 2)
        op_name = kwargs.pop("op_name", "Convolution")
        super(Conv2D, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer, bias_initializer,
            op_name, **kwargs)


class Conv3D(_Conv):
    """3D convolution layer (e.g. spatial convolution over volumes) over
    ``(batch, in_channels, depth, height, width)`` data (layout 'NCDHW').

    See ``_Conv`` for the parameters; ``in_channels=0`` defers the weight's
    shape to the first input.
    """

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout="NCDHW", activation=None,
                 use_bias=True, weight_initializer=None, bias_initializer="zeros",
                 in_channels=0, **kwargs):
        assert layout in ("NCDHW", "NDHWC"), "Only supports 'NCDHW' and 'NDHWC' layout for now"
        kernel_size = _kernel(kernel_size, 3)
        op_name = kwargs.pop("op_name", "Convolution")
        super(Conv3D, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer, bias_initializer,
            op_name, **kwargs)


def _outpad(output_padding, n):
    if isinstance(output_padding, numeric_types):
        output_padding = (output_padding,) * n
    output_padding = tuple(output_padding)
    assert len(output_padding) == n, "output_padding must be a number or a list of %d ints" % n
    return output_padding


class Conv1DTranspose(_Conv):
    """Transposed 1D convolution (deconvolution) layer; the weight is
    ``(in_channels, channels/groups, kernel)``.

    out_width = (width-1)*strides-2*padding+kernel_size+output_padding
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout="NCW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros",
                 in_channels=0, **kwargs):
        assert layout == "NCW", "Only supports 'NCW' layout for now"
        kernel_size = _kernel(kernel_size, 1)
        output_padding = _outpad(output_padding, 1)
        op_name = kwargs.pop("op_name", "Deconvolution")
        super(Conv1DTranspose, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer,
            bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv2DTranspose(_Conv):
    """Transposed 2D convolution (deconvolution) layer; the weight is
    ``(in_channels, channels/groups, kh, kw)``.

    out_height = (height-1)*strides[0]-2*padding[0]+kernel_size[0]+output_padding[0]
    (likewise for the width).
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout="NCHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        assert layout in ("NCHW", "NHWC"), "Only supports 'NCHW' and 'NHWC' layout for now"
        kernel_size = _kernel(kernel_size, 2)
        output_padding = _outpad(output_padding, 2)
        op_name = kwargs.pop("op_name", "Deconvolution")
        super(Conv2DTranspose, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer,
            bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv3DTranspose(_Conv):
    """Transposed 3D convolution (deconvolution) layer; the weight is
    ``(in_channels, channels/groups, kd, kh, kw)``."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout="NCDHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        assert layout in ("NCDHW", "NDHWC"), "Only supports 'NCDHW' and 'NDHWC' layout for now"
        kernel_size = _kernel(kernel_size, 3)
        output_padding = _outpad(output_padding, 3)
        op_name = kwargs.pop("op_name", "Deconvolution")
        super(Conv3DTranspose, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer,
            bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class _Pooling(HybridBlock):
    """Abstract class for different pooling layers."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool,
                 pool_type, layout, count_include_pad=None, **kwargs):
        super(_Pooling, self).__init__(**kwargs)
        if strides is None:
            strides = pool_size
        if isinstance(strides, numeric_types):
            strides = (strides,) * len(pool_size)
        if isinstance(padding, numeric_types):
            padding = (padding,) * len(pool_size)
        self._kwargs = {
            "kernel": pool_size, "stride": strides, "pad": padding,
            "global_pool": global_pool, "pool_type": pool_type,
            "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self):
        s = "{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}"
        s += ", global_pool={global_pool}, pool_type={pool_type}, layout={layout})"
        return s.format(name=self.__class__.__name__,
                        ceil_mode=self._kwargs["pooling_convention"] == "full",
                        **self._kwargs)


def _pool_size(pool_size, n):
    if isinstance(pool_size, numeric_types):
        pool_size = (pool_size,) * n
    pool_size = tuple(pool_size)
    assert len(pool_size) == n, "pool_size must be a number or a list of %d ints" % n
    return pool_size


class MaxPool1D(_Pooling):
    """Max pooling over temporal data ``(batch, channels, width)``;
    ``strides`` defaults to ``pool_size``; ``ceil_mode`` uses ceil for the
    output size: out_width = floor((width+2*padding-pool_size)/strides)+1."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW",
                 ceil_mode=False, **kwargs):
        assert layout in ("NCW", "NWC"), "Only NCW and NWC layouts are valid for 1D Pooling"
        pool_size = _pool_size(pool_size, 1)
        super(MaxPool1D, self).__init__(
            pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class MaxPool2D(_Pooling):
    """Max pooling over spatial data ``(batch, channels, height, width)``;
    ``strides`` defaults to ``pool_size``."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW",
                 ceil_mode=False, **kwargs):
        assert layout in ("NCHW", "NHWC"), "Only NCHW and NHWC layouts are valid for 2D Pooling"
        pool_size = _pool_size(pool_size, 2)
        super(MaxPool2D, self).__init__(
            pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class MaxPool3D(_Pooling):
    """Max pooling over 3D data ``(batch, channels, depth, height, width)``;
    ``strides`` defaults to ``pool_size``."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0,
                 ceil_mode=False, layout="NCDHW", **kwargs):
        assert layout in ("NCDHW", "NDHWC"), \
            "Only NCDHW and NDHWC layouts are valid for 3D Pooling"
        pool_size = _pool_size(pool_size, 3)
        super(MaxPool3D, self).__init__(
            pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class AvgPool1D(_Pooling):
    """Average pooling over temporal data; ``count_include_pad=False``
    leaves the padding out of the averages."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW",
                 ceil_mode=False, count_include_pad=True, **kwargs):
        assert layout in ("NCW", "NWC"), "Only NCW and NWC layouts are valid for 1D Pooling"
        pool_size = _pool_size(pool_size, 1)
        super(AvgPool1D, self).__init__(
            pool_size, strides, padding, ceil_mode, False, "avg", layout, count_include_pad,
            **kwargs)


class AvgPool2D(_Pooling):
    """Average pooling over spatial data; ``count_include_pad=False``
    leaves the padding out of the averages."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0,
                 ceil_mode=False, layout="NCHW", count_include_pad=True, **kwargs):
        assert layout in ("NCHW", "NHWC"), "Only NCHW and NHWC layouts are valid for 2D Pooling"
        pool_size = _pool_size(pool_size, 2)
        super(AvgPool2D, self).__init__(
            pool_size, strides, padding, ceil_mode, False, "avg", layout, count_include_pad,
            **kwargs)


class AvgPool3D(_Pooling):
    """Average pooling over 3D data; ``count_include_pad=False`` leaves the
    padding out of the averages."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0,
                 ceil_mode=False, layout="NCDHW", count_include_pad=True, **kwargs):
        assert layout in ("NCDHW", "NDHWC"), \
            "Only NCDHW and NDHWC layouts are valid for 3D Pooling"
        pool_size = _pool_size(pool_size, 3)
        super(AvgPool3D, self).__init__(
            pool_size, strides, padding, ceil_mode, False, "avg", layout, count_include_pad,
            **kwargs)


class GlobalMaxPool1D(_Pooling):
    """Global max pooling over temporal data: output ``(batch, channels, 1)``."""

    def __init__(self, layout="NCW", **kwargs):
        assert layout in ("NCW", "NWC"), "Only NCW and NWC layouts are valid for 1D Pooling"
        super(GlobalMaxPool1D, self).__init__(
            (1,), None, 0, True, True, "max", layout, **kwargs)


class GlobalMaxPool2D(_Pooling):
    """Global max pooling over spatial data: output ``(batch, channels, 1, 1)``."""

    def __init__(self, layout="NCHW", **kwargs):
        assert layout in ("NCHW", "NHWC"), "Only NCHW and NHWC layouts are valid for 2D Pooling"
        super(GlobalMaxPool2D, self).__init__(
            (1, 1), None, 0, True, True, "max", layout, **kwargs)


class GlobalMaxPool3D(_Pooling):
    """Global max pooling over 3D data: output ``(batch, channels, 1, 1, 1)``."""

    def __init__(self, layout="NCDHW", **kwargs):
        assert layout in ("NCDHW", "NDHWC"), \
            "Only NCDHW and NDHWC layouts are valid for 3D Pooling"
        super(GlobalMaxPool3D, self).__init__(
            (1, 1, 1), None, 0, True, True, "max", layout, **kwargs)


class GlobalAvgPool1D(_Pooling):
    """Global average pooling over temporal data: output ``(batch, channels, 1)``."""

    def __init__(self, layout="NCW", **kwargs):
        assert layout in ("NCW", "NWC"), "Only NCW and NWC layouts are valid for 1D Pooling"
        super(GlobalAvgPool1D, self).__init__(
            (1,), None, 0, True, True, "avg", layout, **kwargs)


class GlobalAvgPool2D(_Pooling):
    """Global average pooling over spatial data: output ``(batch, channels, 1, 1)``."""

    def __init__(self, layout="NCHW", **kwargs):
        assert layout in ("NCHW", "NHWC"), "Only NCHW and NHWC layouts are valid for 2D Pooling"
        super(GlobalAvgPool2D, self).__init__(
            (1, 1), None, 0, True, True, "avg", layout, **kwargs)


class GlobalAvgPool3D(_Pooling):
    """Global average pooling over 3D data: output ``(batch, channels, 1, 1, 1)``."""

    def __init__(self, layout="NCDHW", **kwargs):
        assert layout in ("NCDHW", "NDHWC"), \
            "Only NCDHW and NDHWC layouts are valid for 3D Pooling"
        super(GlobalAvgPool3D, self).__init__(
            (1, 1, 1), None, 0, True, True, "avg", layout, **kwargs)


class ReflectionPad2D(HybridBlock):
    r"""Pads ``(N, C, H, W)`` input with the reflection of its boundary:
    ``padding`` (an int) on each side of H and W, or MXNet's 8-element
    ``pad_width`` tuple.

    >>> m = nn.ReflectionPad2D(3)
    >>> m(mx.nd.random.normal(shape=(16, 3, 224, 224))).shape
    (16, 3, 230, 230)
    """

    def __init__(self, padding=0, **kwargs):
        super(ReflectionPad2D, self).__init__(**kwargs)
        if isinstance(padding, numeric_types):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        assert len(padding) == 8
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)
