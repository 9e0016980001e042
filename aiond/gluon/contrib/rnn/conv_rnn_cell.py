"""Convolutional recurrent cells (Shi et al., 2015, "Convolutional LSTM
Network"): the input-to-hidden and hidden-to-hidden maps of RNN, LSTM and
GRU cells are convolutions, the states are feature maps.

``input_shape`` is one sample's shape without the batch axis, e.g. (C, H, W)
for 'NCHW'; the state's spatial size is the i2h convolution's output (stride
1), and h2h convolutions (odd kernels) pad to keep it. Parameters
``i2h_weight`` (gates * hidden_channels, C, *i2h_kernel), ``h2h_weight``,
``i2h_bias``, ``h2h_bias`` and the gate order (LSTM i, f, c, o; GRU r, z, o)
are MXNet's."""
from __future__ import annotations

from ....base import numeric_types
from ...rnn.rnn_cell import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]


def _get_conv_out_size(dimensions, kernels, paddings, dilations):
    return tuple(int(x + 2 * p - d * (k - 1) - 1) + 1 if x else 0
                 for x, k, p, d in zip(dimensions, kernels, paddings, dilations))


def _spec(v, dims):
    return (v,) * dims if isinstance(v, numeric_types) else tuple(v)


class _BaseConvRNNCell(HybridRecurrentCell):
    """Abstract base class for convolutional RNNs."""

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels = hidden_channels
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        for name, spec in (("i2h_kernel", i2h_kernel), ("i2h_pad", i2h_pad),
                           ("i2h_dilate", i2h_dilate), ("h2h_kernel", h2h_kernel),
                           ("h2h_dilate", h2h_dilate)):
            if not (isinstance(spec, int) or len(spec) == dims):
                raise ValueError("For {dims}D convolution, the convolution settings can only be "
                                 "either int or list/tuple of length {dims}; {name}={spec}"
                                 .format(dims=dims, name=name, spec=spec))
        self._i2h_kernel = _spec(i2h_kernel, dims)
        self._stride = (1,) * dims
        self._i2h_pad = _spec(i2h_pad, dims)
        self._i2h_dilate = _spec(i2h_dilate, dims)
        self._h2h_kernel = _spec(h2h_kernel, dims)
        if not all(k % 2 == 1 for k in self._h2h_kernel):
            raise ValueError("Only support odd number, get h2h_kernel= %s" % str(h2h_kernel))
        self._h2h_dilate = _spec(h2h_dilate, dims)
        (self._channel_axis, self._in_channels, i2h_param_shape, h2h_param_shape,
         self._h2h_pad, self._state_shape) = self._decide_shapes()
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_param_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_param_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(hidden_channels * self._num_gates,),
                                        init=i2h_bias_initializer, allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(hidden_channels * self._num_gates,),
                                        init=h2h_bias_initializer, allow_deferred_init=True)

    def _decide_shapes(self):
        channel_axis = self._conv_layout.find("C")
        input_shape = tuple(self._input_shape)
        in_channels = input_shape[channel_axis - 1]
        hidden = self._hidden_channels
        dimensions = input_shape[1:] if channel_axis == 1 else input_shape[:-1]
        total_out = hidden * self._num_gates
        conv_out_size = _get_conv_out_size(dimensions, self._i2h_kernel, self._i2h_pad,
                                           self._i2h_dilate)
        h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        if channel_axis == 1:
            i2h_shape = (total_out, in_channels) + self._i2h_kernel
            h2h_shape = (total_out, hidden) + self._h2h_kernel
            state_shape = (hidden,) + conv_out_size
        else:
            i2h_shape = (total_out,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (total_out,) + self._h2h_kernel + (hidden,)
            state_shape = conv_out_size + (hidden,)
        return channel_axis, in_channels, i2h_shape, h2h_shape, h2h_pad, state_shape

    def __repr__(self):
        s = "{name}({mapping}"
        if hasattr(self, "_activation"):
            s += ", {_activation}"
        s += ", {_conv_layout})"
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        mapping = "{0} -> {1}".format(in_channels if in_channels else None, shape[0])
        return s.format(name=self.__class__.__name__, mapping=mapping, **self.__dict__)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        nf = self._hidden_channels * self._num_gates
        i2h = F.Convolution(data=inputs, num_filter=nf, kernel=self._i2h_kernel,
                            stride=self._stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                            weight=i2h_weight, bias=i2h_bias, layout=self._conv_layout,
                            name=prefix + "i2h")
        h2h = F.Convolution(data=states[0], num_filter=nf, kernel=self._h2h_kernel,
                            dilate=self._h2h_dilate, pad=self._h2h_pad, stride=self._stride,
                            weight=h2h_weight, bias=h2h_bias, layout=self._conv_layout,
                            name=prefix + "h2h")
        return i2h, h2h

    def state_info(self, batch_size=0):
        raise NotImplementedError("_BaseConvRNNCell is abstract class for convolutional RNN")

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError("_BaseConvRNNCell is abstract class for convolutional RNN")


class _ConvRNNCell(_BaseConvRNNCell):
    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}]

    def _alias(self):
        return "conv_rnn"

    @property
    def _gate_names(self):
        return ("",)

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout},
                {"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}]

    def _alias(self):
        return "conv_lstm"

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        gates = i2h + h2h
        sl = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice", axis=self._channel_axis)
        in_gate = F.Activation(sl[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(sl[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, sl[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(sl[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}]

    def _alias(self):
        return "conv_gru"

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice",
                                           axis=self._channel_axis)
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice",
                                           axis=self._channel_axis)
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        next_h_tmp = self._get_activation(F, i2h + reset_gate * h2h, self._activation,
                                          name=prefix + "h_act")
        next_h = F.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                name=prefix + "out")
        return next_h, [next_h]


_DOC = """{dims}D convolutional {kind} cell.

    Parameters
    ----------
    input_shape : tuple of int
        Input tensor shape at each time step for each sample, excluding the
        batch size ({shape_doc} for '{layout}').
    hidden_channels : int
        Number of output channels.
    i2h_kernel, h2h_kernel : int or tuple of int
        Input and recurrent convolution kernels (h2h: odd sizes only).
    i2h_pad : int or tuple of int, default {zero}
    i2h_dilate, h2h_dilate : int or tuple of int, default {one}
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    conv_layout : str, default '{layout}'
    activation : str or Block, default 'tanh'
    prefix : str, default '{alias}_'
    params : RNNParams, default None
    """


def _cell(base, dims, layout, kind, shape_doc):
    zero, one = (0,) * dims, (1,) * dims

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=zero,
                 i2h_dilate=one, h2h_dilate=one, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout=layout, activation="tanh",
                 prefix=None, params=None):
        base.__init__(self, input_shape=input_shape, hidden_channels=hidden_channels,
                      i2h_kernel=i2h_kernel, h2h_kernel=h2h_kernel, i2h_pad=i2h_pad,
                      i2h_dilate=i2h_dilate, h2h_dilate=h2h_dilate,
                      i2h_weight_initializer=i2h_weight_initializer,
                      h2h_weight_initializer=h2h_weight_initializer,
                      i2h_bias_initializer=i2h_bias_initializer,
                      h2h_bias_initializer=h2h_bias_initializer, dims=dims,
                      conv_layout=conv_layout, activation=activation, prefix=prefix,
                      params=params)

    name = "Conv%dD%sCell" % (dims, kind)
    __init__.__qualname__ = name + ".__init__"
    doc = _DOC.format(dims=dims, kind=kind, layout=layout, zero=zero, one=one,
                      shape_doc=shape_doc, alias=base._alias(None))
    return type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


Conv1DRNNCell = _cell(_ConvRNNCell, 1, "NCW", "RNN", "(C, W)")
Conv2DRNNCell = _cell(_ConvRNNCell, 2, "NCHW", "RNN", "(C, H, W)")
Conv3DRNNCell = _cell(_ConvRNNCell, 3, "NCDHW", "RNN", "(C, D, H, W)")
Conv1DLSTMCell = _cell(_ConvLSTMCell, 1, "NCW", "LSTM", "(C, W)")
Conv2DLSTMCell = _cell(_ConvLSTMCell, 2, "NCHW", "LSTM", "(C, H, W)")
Conv3DLSTMCell = _cell(_ConvLSTMCell, 3, "NCDHW", "LSTM", "(C, D, H, W)")
Conv1DGRUCell = _cell(_ConvGRUCell, 1, "NCW", "GRU", "(C, W)")
Conv2DGRUCell = _cell(_ConvGRUCell, 2, "NCHW", "GRU", "(C, H, W)")
Conv3DGRUCell = _cell(_ConvGRUCell, 3, "NCDHW", "GRU", "(C, D, H, W)")
