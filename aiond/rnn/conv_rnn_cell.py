"""Convolutional recurrent cells for ``mx.rnn`` (MXNet 1.9.1's
``ConvRNNCell``, ``ConvLSTMCell``, ``ConvGRUCell``): the input-to-hidden
and hidden-to-hidden transforms are convolutions, so states are feature
maps ``(N, num_hidden, H', W')`` (NCHW) whose spatial size is what the
i2h convolution makes of ``input_shape``. The h2h convolution keeps the
size (odd kernels, "same" padding)."""
from __future__ import annotations

import functools

from .. import symbol
from .rnn_cell import BaseRNNCell

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_LEAKY = functools.partial(symbol.LeakyReLU, act_type='leaky', slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Abstract base of the convolutional cells.

    Parameters
    ----------
    input_shape : tuple
        Shape of one step's input, batch first (the batch size is free).
    num_hidden : int
        Channels of the state.
    h2h_kernel, h2h_dilate : tuple
        Hidden-to-hidden convolution (kernel sides must be odd).
    i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple
        Input-to-hidden convolution.
    i2h_weight_initializer, h2h_weight_initializer,
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    activation : str or callable
        An ``act_type`` or a function ``f(symbol, name=...)``.
    prefix : str
    params : RNNParams, optional
    conv_layout : str
        'NCHW' (or 'NHWC' ...), the layout of inputs and states.
    """

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                 i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                 h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 activation, prefix='', params=None, conv_layout='NCHW'):
        super(BaseConvRNNCell, self).__init__(prefix=prefix, params=params)
        if any(k % 2 != 1 for k in h2h_kernel):
            raise ValueError("Only support odd number, get h2h_kernel= %s (the hidden-to-hidden "
                             "convolution must keep the state's size)" % str(h2h_kernel))
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate, h2h_kernel))
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation

        # the state is what the i2h convolution makes of one input, batch left free (0)
        probe = symbol.Convolution(data=symbol.Variable('data'), num_filter=num_hidden,
                                   kernel=i2h_kernel, stride=i2h_stride, pad=i2h_pad,
                                   dilate=i2h_dilate, layout=conv_layout)
        out_shape = probe.infer_shape(data=input_shape)[1][0]
        self._state_shape = (0,) + tuple(out_shape[1:])

        self._iW = self.params.get('i2h_weight', init=i2h_weight_initializer)
        self._hW = self.params.get('h2h_weight', init=h2h_weight_initializer)
        self._iB = self.params.get('i2h_bias', init=i2h_bias_initializer)
        self._hB = self.params.get('h2h_bias', init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout},
                {'shape': self._state_shape, '__layout__': self._conv_layout}]

    def _conv_forward(self, inputs, states, name):
        i2h = symbol.Convolution(name='%si2h' % name, data=inputs,
                                 num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate,
                                 weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name='%sh2h' % name, data=states[0],
                                 num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1,) * len(self._h2h_kernel),
                                 weight=self._hW, bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")


def _conv_cell_init(cls, self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                    i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                    h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                    activation, prefix, params, conv_layout):
    super(cls, self).__init__(
        input_shape=input_shape, num_hidden=num_hidden, h2h_kernel=h2h_kernel,
        h2h_dilate=h2h_dilate, i2h_kernel=i2h_kernel, i2h_stride=i2h_stride, i2h_pad=i2h_pad,
        i2h_dilate=i2h_dilate, i2h_weight_initializer=i2h_weight_initializer,
        h2h_weight_initializer=h2h_weight_initializer,
        i2h_bias_initializer=i2h_bias_initializer, h2h_bias_initializer=h2h_bias_initializer,
        activation=activation, prefix=prefix, params=params, conv_layout=conv_layout)


class ConvRNNCell(BaseConvRNNCell):
    """``h' = activation(conv(x) + conv(h))`` (default activation
    LeakyReLU with slope 0.2)."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvRNN_', params=None, conv_layout='NCHW'):
        _conv_cell_init(ConvRNNCell, self, input_shape, num_hidden, h2h_kernel, h2h_dilate,
                        i2h_kernel, i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                        h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                        activation, prefix, params, conv_layout)

    @property
    def _gate_names(self):
        return ('',)

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM (Shi et al. 2015): gates i, f, c, o from
    convolutions; states ``[h, c]``."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvLSTM_', params=None, conv_layout='NCHW'):
        _conv_cell_init(ConvLSTMCell, self, input_shape, num_hidden, h2h_kernel, h2h_dilate,
                        i2h_kernel, i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                        h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                        activation, prefix, params, conv_layout)

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout},
                {'shape': self._state_shape, '__layout__': self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4,
                                    axis=self._conv_layout.find('C'), name="%sslice" % name)
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name='%sf' % name)
        in_transform = self._get_activation(gates[2], self._activation, name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name='%so' % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name='%sstate' % name)
        next_h = symbol._internal._mul(out_gate, self._get_activation(next_c, self._activation),
                                       name='%sout' % name)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU: reset and update gates from convolutions; state
    ``[h]``."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvGRU_', params=None, conv_layout='NCHW'):
        _conv_cell_init(ConvGRUCell, self, input_shape, num_hidden, h2h_kernel, h2h_dilate,
                        i2h_kernel, i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                        h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                        activation, prefix, params, conv_layout)

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        axis = self._conv_layout.find('C')
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, axis=axis,
                                                name="%s_i2h_slice" % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, axis=axis,
                                                name="%s_h2h_slice" % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid",
                                       name="%s_r_act" % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name="%s_z_act" % name)
        next_h_tmp = self._get_activation(i2h + reset_gate * h2h, self._activation,
                                          name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update_gate) * next_h_tmp,
                                        update_gate * states[0], name='%sout' % name)
        return next_h, [next_h]
