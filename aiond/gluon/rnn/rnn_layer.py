"""Fused recurrent layers (MXNet 1.9.1's ``gluon.rnn.rnn_layer``): RNN,
LSTM and GRU over whole sequences with the ``RNN`` operator.

Parameters are stored per layer and direction under MXNet's names
(``lstm0_l0_i2h_weight``, ``lstm0_r0_h2h_bias``, ``lstm0_l1_h2r_weight``
with a projection) and packed at every forward, as MXNet does, into the
operator's flat vector: all weights (layer by layer, direction by
direction, i2h then h2h then h2r), then all biases in the same order.
``save_parameters`` writes MXNet's structural names
(``_unfused.0.i2h_weight``, ``_unfused.0.l_cell.i2h_weight`` when
bidirectional), so files move both ways between MXNet and aiond.

``input_size=0`` defers the first layer's ``i2h_weight`` until the first
input: its last axis gives the size (in a traced graph too, where MXNet's
``_rnn_param_concat`` infers it backwards and aiond reads it from the
input's shape).
"""
from __future__ import annotations

import re

from ... import ndarray, symbol
from .. import _cached_op
from ..block import HybridBlock
from . import rnn_cell

__all__ = ["RNN", "LSTM", "GRU"]

tensor_types = (symbol.Symbol, ndarray.NDArray)


class _RNNLayer(HybridBlock):
    """Implementation of recurrent layers."""

    def __init__(self, hidden_size, num_layers, layout,
                 dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer,
                 mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan,
                 dtype, use_sequence_length=False, **kwargs):
        super(_RNNLayer, self).__init__(**kwargs)
        assert layout in ("TNC", "NTC"), \
            "Invalid layout %s; must be one of ['TNC' or 'NTC']" % layout
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._traced_skip_states = None

        self._gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]

        ng, ni, nh = self._gates, input_size, hidden_size
        if not projection_size:
            for i in range(num_layers):
                for j in ["l", "r"][:self._dir]:
                    self._register_param("{}{}_i2h_weight".format(j, i),
                                         shape=(ng * nh, ni),
                                         init=i2h_weight_initializer, dtype=dtype)
                    self._register_param("{}{}_h2h_weight".format(j, i),
                                         shape=(ng * nh, nh),
                                         init=h2h_weight_initializer, dtype=dtype)
                    self._register_param("{}{}_i2h_bias".format(j, i),
                                         shape=(ng * nh,),
                                         init=i2h_bias_initializer, dtype=dtype)
                    self._register_param("{}{}_h2h_bias".format(j, i),
                                         shape=(ng * nh,),
                                         init=h2h_bias_initializer, dtype=dtype)
                ni = nh * self._dir
        else:
            np_ = self._projection_size
            for i in range(num_layers):
                for j in ["l", "r"][:self._dir]:
                    self._register_param("{}{}_i2h_weight".format(j, i),
                                         shape=(ng * nh, ni),
                                         init=i2h_weight_initializer, dtype=dtype)
                    self._register_param("{}{}_h2h_weight".format(j, i),
                                         shape=(ng * nh, np_),
                                         init=h2h_weight_initializer, dtype=dtype)
                    self._register_param("{}{}_i2h_bias".format(j, i),
                                         shape=(ng * nh,),
                                         init=i2h_bias_initializer, dtype=dtype)
                    self._register_param("{}{}_h2h_bias".format(j, i),
                                         shape=(ng * nh,),
                                         init=h2h_bias_initializer, dtype=dtype)
                    self._register_param("{}{}_h2r_weight".format(j, i),
                                         shape=(np_, nh),
                                         init=h2r_weight_initializer, dtype=dtype)
                ni = np_ * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init,
                            allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = "{name}({mapping}, {_layout}"
        if self._num_layers != 1:
            s += ", num_layers={_num_layers}"
        if self._dropout != 0:
            s += ", dropout={_dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        s += ")"
        shape = self.l0_i2h_weight.shape
        mapping = "{0} -> {1}".format(shape[1] if shape[1] else None, shape[0] // self._gates)
        return s.format(name=self.__class__.__name__,
                        mapping=mapping,
                        **self.__dict__)

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        pattern = re.compile(r"(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z")

        def convert_key(m, bidirectional):  # for compatibility with old parameter format
            d, l, g, t = [m.group(i) for i in range(1, 5)]
            if bidirectional:
                return "_unfused.{}.{}_cell.{}_{}".format(l, d, g, t)
            else:
                return "_unfused.{}.{}_{}".format(l, g, t)
        bidirectional = any(pattern.match(k).group(1) == "r" for k in self._reg_params)

        ret = {prefix + convert_key(pattern.match(key), bidirectional): val
               for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """Unfuses the fused RNN in to a stack of rnn cells sharing this
        layer's parameters."""
        assert not self._projection_size, "_unfuse does not support projection layer yet!"
        assert not self._lstm_state_clip_min and not self._lstm_state_clip_max, \
            "_unfuse does not support state clipping yet!"
        get_cell = {"rnn_relu": lambda **kwargs: rnn_cell.RNNCell(self._hidden_size,
                                                                  activation="relu",
                                                                  **kwargs),
                    "rnn_tanh": lambda **kwargs: rnn_cell.RNNCell(self._hidden_size,
                                                                  activation="tanh",
                                                                  **kwargs),
                    "lstm": lambda **kwargs: rnn_cell.LSTMCell(self._hidden_size,
                                                               **kwargs),
                    "gru": lambda **kwargs: rnn_cell.GRUCell(self._hidden_size,
                                                             **kwargs)}[self._mode]

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {"input_size": ni,
                          "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(
                        get_cell(prefix="l%d_" % i, **kwargs),
                        get_cell(prefix="r%d_" % i, **kwargs)))
                else:
                    stack.add(get_cell(prefix="l%d_" % i, **kwargs))

                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))

                ni = self._hidden_size * self._dir

        return stack

    def cast(self, dtype):
        super(_RNNLayer, self).cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial state for this cell: a list of arrays made by
        ``func(name=..., shape=..., **kwargs)`` (``mx.nd.zeros`` by default),
        each ``(num_layers * num_directions, batch_size, size)``.

        Parameters
        ----------
        batch_size: int
            Only required for `NDArray` API. Size of the batch ('N' in layout).
        func : callable, default `ndarray.zeros`
        **kwargs :
            Additional keyword arguments passed to func (``ctx``, ``dtype``, ...).
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            state = func(name="%sh0_%d" % (self.prefix, i), **info)
            states.append(state)
        return states

    def _symbol_begin_state(self, inputs):
        """Zero states for Symbol ``inputs``, built from the inputs so that
        the batch size comes from the data at run time (MXNet uses
        ``sym.zeros`` with a 0 batch dimension that its backward shape
        inference fills)."""
        t_axis = self._layout.find("T")
        z = symbol.BlockGrad(symbol.zeros_like(symbol.slice_axis(inputs, axis=t_axis, begin=0,
                                                                  end=1)))
        z = symbol.slice_axis(z, axis=2, begin=0, end=1)
        if self._layout == "NTC":
            z = symbol.swapaxes(z, dim1=0, dim2=1)                   # (1, N, 1)
        states = []
        for info in self.state_info(0):
            ld, _, size = info["shape"]
            s = symbol.tile(z, reps=(ld, 1, size))
            dtype = info.get("dtype")
            if dtype is not None:
                s = symbol.cast(s, dtype=dtype)
            states.append(s)
        return states

    def _infer_input_size(self, inputs):
        """Give the first layer's i2h weights their input size from
        ``inputs`` when it was left 0 (deferred initialization)."""
        params = [self.l0_i2h_weight] + ([self.r0_i2h_weight] if self._dir == 2 else [])
        if all(p.shape[1] > 0 for p in params):
            return                      # unknown is 0, or -1 under NumPy shape semantics
        if isinstance(inputs, ndarray.NDArray):
            shape = inputs.shape
        else:
            tr = _cached_op._current()
            flag = tr.shape_dependent if tr is not None else None
            shape = _cached_op.shape_of(inputs)
            if tr is not None:
                # the graph does not depend on the shape once the weights have it
                tr.shape_dependent = flag
        if shape is None or len(shape) != 3 or not shape[2]:
            return
        for p in params:
            p.shape = (p.shape[0], shape[2])
            p._var = None

    def infer_shape(self, inputs, *args):
        """Infer the shapes of the Parameters from the inputs (the first
        layer's input size from ``inputs``, as a forward would)."""
        self._infer_input_size(inputs)
        super().infer_shape(inputs, *args)

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        self.skip_states = states is None
        if self._active and self._traced_skip_states is not None and \
                self._traced_skip_states != self.skip_states:
            # the cached graph returns the states or not: trace again
            self._clear_cached_op()
        self._traced_skip_states = self.skip_states
        self._infer_input_size(inputs)
        if states is None:
            if isinstance(inputs, ndarray.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self._symbol_begin_state(inputs)
        if isinstance(states, tensor_types):
            states = [states]

        if self._use_sequence_length:
            return super(_RNNLayer, self).__call__(inputs, states, sequence_length, **kwargs)
        else:
            return super(_RNNLayer, self).__call__(inputs, states, **kwargs)

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ValueError(
                        "Invalid recurrent state shape. Expecting %s, got %s." % (
                            str(info["shape"]), str(state.shape)))
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)

        # out is (output, state)
        return out[0] if self.skip_states else out

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        """forward using CUDNN or CPU kenrel"""
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        if self._projection_size is None:
            params = (kwargs["{}{}_{}_{}".format(d, l, g, t)].reshape(-1)
                      for t in ["weight", "bias"]
                      for l in range(self._num_layers)
                      for d in ["l", "r"][:self._dir]
                      for g in ["i2h", "h2h"])
        else:
            params = (kwargs["{}{}_{}_{}".format(d, l, g, t)].reshape(-1)
                      for t in ["weight", "bias"]
                      for l in range(self._num_layers)
                      for d in ["l", "r"][:self._dir]
                      for g in ["i2h", "h2h", "h2r"]
                      if g != "h2r" or t != "bias")

        params = F.concat(*params, dim=0)

        if self._use_sequence_length:
            rnn_args = list(states) + [sequence_length]
        else:
            rnn_args = list(states)

        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)

        if self._mode == "lstm":
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]

        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)

        return outputs, states


class RNN(_RNNLayer):
    r"""Applies a multi-layer Elman RNN with `tanh` or `ReLU` non-linearity to
    an input sequence: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Parameters
    ----------
    hidden_size: int
        The number of features in the hidden state h.
    num_layers: int, default 1
        Number of recurrent layers.
    activation: {'relu' or 'tanh'}, default 'relu'
    layout : str, default 'TNC'
        'TNC' (sequence length, batch size, feature) or 'NTC'.
    dropout: float, default 0
        Dropout on the outputs of each layer except the last one (training).
    bidirectional: bool, default False
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    input_size: int, default 0
        The number of expected features in the input x; 0 infers it from
        the first input.
    dtype : str, default 'float32'

    Inputs: ``data`` in ``layout`` and optionally ``states`` (a list of one
    ``(num_layers*num_directions, batch_size, hidden_size)`` array).
    Outputs: ``out`` ``(T, N, num_directions*hidden_size)`` in ``layout``,
    and ``out_states`` when ``states`` were given.
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu",
                 layout="TNC", dropout=0, bidirectional=False,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 input_size=0, dtype="float32", **kwargs):
        super(RNN, self).__init__(hidden_size, num_layers, layout,
                                  dropout, bidirectional, input_size,
                                  i2h_weight_initializer, h2h_weight_initializer,
                                  i2h_bias_initializer, h2h_bias_initializer,
                                  "rnn_" + activation, None, None, None, None, False,
                                  dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]


class LSTM(_RNNLayer):
    r"""Applies a multi-layer long short-term memory (LSTM) RNN to an input
    sequence (gates i, f, g, o; see ``LSTMCell``).

    Parameters
    ----------
    hidden_size: int
    num_layers: int, default 1
    layout : str, default 'TNC'
    dropout: float, default 0
    bidirectional: bool, default False
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    input_size: int, default 0 (inferred from the first input)
    projection_size: int, default None
        The number of features after projection (LSTMP).
    h2r_weight_initializer : str or Initializer, default None
    state_clip_min, state_clip_max : float or None
        Clip the cell state into [min, max] (both or neither).
    state_clip_nan : boolean, default False
        Whether to stop NaN from propagating in state by clipping it.
    dtype : str, default 'float32'

    Inputs: ``data`` in ``layout`` and optionally ``states`` ``[h, c]``.
    Outputs: ``out`` and, when ``states`` were given, ``[h_n, c_n]``.
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC",
                 dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None,
                 state_clip_min=None, state_clip_max=None, state_clip_nan=False,
                 dtype="float32", **kwargs):
        super(LSTM, self).__init__(hidden_size, num_layers, layout,
                                   dropout, bidirectional, input_size,
                                   i2h_weight_initializer, h2h_weight_initializer,
                                   i2h_bias_initializer, h2h_bias_initializer,
                                   "lstm", projection_size, h2r_weight_initializer,
                                   state_clip_min, state_clip_max, state_clip_nan,
                                   dtype, **kwargs)

    def state_info(self, batch_size=0):
        if self._projection_size is None:
            return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                     "__layout__": "LNC", "dtype": self._dtype},
                    {"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                     "__layout__": "LNC", "dtype": self._dtype}]
        else:
            return [{"shape": (self._num_layers * self._dir, batch_size, self._projection_size),
                     "__layout__": "LNC", "dtype": self._dtype},
                    {"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                     "__layout__": "LNC", "dtype": self._dtype}]


class GRU(_RNNLayer):
    r"""Applies a multi-layer gated recurrent unit (GRU) RNN to an input
    sequence (gates r, z, n; see ``GRUCell``).

    Parameters
    ----------
    hidden_size: int
    num_layers: int, default 1
    layout : str, default 'TNC'
    dropout: float, default 0
    bidirectional: bool, default False
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    input_size: int, default 0 (inferred from the first input)
    dtype : str, default 'float32'

    Inputs: ``data`` in ``layout`` and optionally ``states`` ``[h]``.
    Outputs: ``out`` and, when ``states`` were given, ``[h_n]``.
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC",
                 dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 dtype="float32", **kwargs):
        super(GRU, self).__init__(hidden_size, num_layers, layout,
                                  dropout, bidirectional, input_size,
                                  i2h_weight_initializer, h2h_weight_initializer,
                                  i2h_bias_initializer, h2h_bias_initializer,
                                  "gru", None, None, None, None, False,
                                  dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]
