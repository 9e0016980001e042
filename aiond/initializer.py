"""``mx.init`` / ``mx.initializer``: weight initializers, as in MXNet 1.9.1.

An initializer is called as ``init(desc, arr)`` and fills ``arr`` in place.
With an ``InitDesc`` (what Gluon and Module pass) the name's suffix picks the
rule: ``weight`` -> ``_init_weight``, ``bias`` -> 0, ``gamma`` -> 1,
``beta`` -> 0, ``min`` -> 0, ``max`` -> 1, and an ``__init__`` attribute
names another initializer to use instead; any other name is an error. A
plain ``str`` name takes MXNet's legacy path, which also knows
``moving_mean``/``moving_avg``/``moving_inv_var`` (0), ``moving_var`` (1),
``upsampling*`` (bilinear) and ``stn_loc*``.

Random fills are engine ops on the array's context generator
(``mx.nd.random.uniform/normal(..., out=arr)``), so ``mx.random.seed(s)``
makes them reproducible.
"""
from __future__ import annotations

import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

from .base import string_types
from .ndarray import NDArray, load
from .ndarray import random as _random

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero",
           "One", "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu",
           "Bilinear", "LSTMBias", "FusedRNN"]


class InitDesc(str):
    """A parameter name (``str``) carrying the variable's ``attrs`` and the
    ``global_init`` to fall back to."""
    def __new__(cls, name, attrs=None, global_init=None):
        ret = super(InitDesc, cls).__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


def _uniform(low, high, arr):
    _random.uniform(low, high, shape=arr.shape, dtype=arr.dtype, out=arr)


def _normal(loc, scale, arr):
    _random.normal(loc, scale, shape=arr.shape, dtype=arr.dtype, out=arr)


class Initializer(object):
    """The base class of an initializer."""
    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log each initialized array with ``print_func(arr)`` (default: its norm
        over sqrt(size))."""
        self._verbose = verbose
        if print_func is None:
            def asum_stat(x):
                """|x|/sqrt(size(x))."""
                return str((x.norm() / sqrt(x.size)).asscalar())
            print_func = asum_stat
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info('Initialized %s as %s: %s', desc, init, self._print_func(arr))

    def dumps(self):
        """The initializer as JSON: ``'["normal", {"sigma": 0.5}]'``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Initializes ``arr`` (an NDArray) according to ``desc`` (an ``InitDesc``)."""
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get('__init__', "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
        elif desc.endswith('weight'):
            self._init_weight(desc, arr)
            self._verbose_print(desc, 'weight', arr)
        elif desc.endswith('bias'):
            self._init_bias(desc, arr)
            self._verbose_print(desc, 'bias', arr)
        elif desc.endswith('gamma'):
            self._init_gamma(desc, arr)
            self._verbose_print(desc, 'gamma', arr)
        elif desc.endswith('beta'):
            self._init_beta(desc, arr)
            self._verbose_print(desc, 'beta', arr)
        elif desc.endswith('min'):
            self._init_zero(desc, arr)
            self._verbose_print(desc, 'min', arr)
        elif desc.endswith('max'):
            self._init_one(desc, arr)
            self._verbose_print(desc, 'max', arr)
        elif desc.endswith('weight_quantize'):
            self._init_quantized_weight(desc, arr)
            self._verbose_print(desc, 'weight_quantize', arr)
        elif desc.endswith('bias_quantize'):
            self._init_quantized_bias(desc, arr)
            self._verbose_print(desc, 'bias_quantize', arr)
        else:
            self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        """MXNet's deprecated ``init(str, arr)`` dispatch."""
        warnings.warn(
            "\033[91mCalling initializer with init(str, NDArray) has been deprecated."
            "please use init(mx.init.InitDesc(...), NDArray) instead.\033[0m",
            DeprecationWarning, stacklevel=3)
        if not isinstance(name, string_types):
            raise TypeError('name must be string')
        if not isinstance(arr, NDArray):
            raise TypeError('arr must be NDArray')
        if name.startswith('upsampling'):
            self._init_bilinear(name, arr)
        elif name.startswith('stn_loc') and name.endswith('weight'):
            self._init_zero(name, arr)
        elif name.startswith('stn_loc') and name.endswith('bias'):
            self._init_loc_bias(name, arr)
        elif name.endswith('bias'):
            self._init_bias(name, arr)
        elif name.endswith('gamma'):
            self._init_gamma(name, arr)
        elif name.endswith('beta'):
            self._init_beta(name, arr)
        elif name.endswith('weight'):
            self._init_weight(name, arr)
        elif name.endswith("moving_mean"):
            self._init_zero(name, arr)
        elif name.endswith("moving_var"):
            self._init_one(name, arr)
        elif name.endswith("moving_inv_var"):
            self._init_zero(name, arr)
        elif name.endswith("moving_avg"):
            self._init_zero(name, arr)
        elif name.endswith('min'):
            self._init_zero(name, arr)
        elif name.endswith('max'):
            self._init_one(name, arr)
        else:
            self._init_default(name, arr)

    def _init_bilinear(self, _, arr):
        arr[:] = _bilinear(arr.shape)

    def _init_loc_bias(self, _, arr):
        shape = arr.shape
        assert shape[0] == 6
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_quantized_bias(self, _, arr):
        arr[:] = 0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        """Abstract method to Initialize weight."""
        raise NotImplementedError("Must override it")

    def _init_quantized_weight(self, _, arr):
        _arr = _random.randint(-127, 127, dtype='int32').asnumpy()
        arr[:] = np.int8(_arr)

    def _init_default(self, name, _):
        raise ValueError(
            'Unknown initialization pattern for %s. '
            'Default initialization is now limited to '
            '"weight", "bias", "gamma" (1.0), and "beta" (0.0).'
            'Please use mx.sym.Variable(init=mx.init.*) to set initialization pattern' % name)

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__


# ----------------------------------------------------------------- registry

_REGISTRY: dict = {}


def register(klass, name=None):
    """Registers an ``Initializer`` subclass under its lower-cased name, for
    ``create`` (and ``InitDesc`` attrs ``__init__``)."""
    assert issubclass(klass, Initializer), "Can only register subclass of Initializer"
    name = (klass.__name__ if name is None else name).lower()
    if name in _REGISTRY:
        warnings.warn(
            "\033[91mNew initializer %s.%s registered with name %s is"
            "overriding existing initializer %s.%s\033[0m" % (
                klass.__module__, klass.__name__, name,
                _REGISTRY[name].__module__, _REGISTRY[name].__name__),
            UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Class decorator registering extra names."""
    def reg(klass):
        for name in aliases:
            register(klass, name)
        return klass
    return reg


def create(*args, **kwargs):
    """An initializer from a name (``'xavier'``), JSON (``dumps()`` output), a dict,
    or an instance (returned as is)."""
    if args:
        name, args = args[0], args[1:]
    else:
        name = kwargs.pop('initializer')
    if isinstance(name, Initializer):
        assert not args and not kwargs, \
            "initializer is already an instance. Additional arguments are invalid"
        return name
    if isinstance(name, dict):
        return create(**name)
    assert isinstance(name, string_types), "initializer must be of string type"
    if name.startswith('['):
        assert not args and not kwargs
        name, kwargs = json.loads(name)
        return create(name, **kwargs)
    if name.startswith('{'):
        assert not args and not kwargs
        kwargs = json.loads(name)
        return create(**kwargs)
    name = name.lower()
    assert name in _REGISTRY, \
        "%s is not registered. Please register with initializer.register first" % str(name)
    return _REGISTRY[name](*args, **kwargs)


# --------------------------------------------------------------- initializers

class Load(object):
    """Initializes from a parameter file or a dict of name -> NDArray (``arg:``
    and ``aux:`` prefixes dropped), else with ``default_init``."""
    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = load(param)
        assert isinstance(param, dict)
        self.param = {}
        for name, arr in param.items():
            if name.startswith('arg:') or name.startswith('aux:'):
                self.param[name[4:]] = arr
            else:
                self.param[name] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            assert arr.shape == self.param[name].shape, \
                'Parameter %s cannot be initialized from loading. ' % name + \
                'Shape mismatch, target %s vs loaded %s' % (str(arr.shape),
                                                            self.param[name].shape)
            arr[:] = self.param[name]
            if self.verbose:
                logging.info('Initialized %s by loading', name)
        else:
            assert self.default_init is not None, \
                "Cannot Initialize %s. Not found in loaded param " % name + \
                "and no default Initializer is provided."
            self.default_init(name, arr)
            if self.verbose:
                logging.info('Initialized %s by default', name)


class Mixed(object):
    """Picks the initializer of the first regular expression (``re.match``) in
    ``patterns`` matching the name."""
    def __init__(self, patterns, initializers):
        assert len(patterns) == len(initializers)
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError('Parameter name %s did not match any pattern. Consider '
                         'add a ".*" pattern at the and with default Initializer.' % name)


@register
@alias("zeros")
class Zero(Initializer):
    """Initializes weights to zero."""
    def __init__(self):
        super(Zero, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Initializes weights to one."""
    def __init__(self):
        super(One, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Initializes weights to ``value`` (a scalar, or an array of the shape)."""
    def __init__(self, value):
        super(Constant, self).__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        val = self._kwargs['value']
        if not np.isscalar(val):
            self._kwargs['value'] = val.tolist() if isinstance(val, np.ndarray) \
                else val.asnumpy().tolist()
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Initializes weights uniformly from ``[-scale, scale]``."""
    def __init__(self, scale=0.07):
        super(Uniform, self).__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _uniform(-self.scale, self.scale, arr)


@register
class Normal(Initializer):
    """Initializes weights from N(0, sigma**2)."""
    def __init__(self, sigma=0.01):
        super(Normal, self).__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _normal(0, self.sigma, arr)


@register
class Orthogonal(Initializer):
    """Initializes weights as an orthogonal matrix (from the SVD of a random one)
    times ``scale``; ``rand_type`` is ``'uniform'`` or ``'normal'``."""
    def __init__(self, scale=1.414, rand_type="uniform"):
        super(Orthogonal, self).__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = _random.uniform(-1.0, 1.0, shape=(nout, nin), ctx=arr.context).asnumpy()
        elif self.rand_type == "normal":
            tmp = _random.normal(0.0, 1.0, shape=(nout, nin), ctx=arr.context).asnumpy()
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


@register
class Xavier(Initializer):
    """"Xavier" initialization: uniform in ``[-c, c]`` (``rnd_type='uniform'``) or
    normal with std ``c`` (``'gaussian'``), ``c = sqrt(magnitude / factor)``,
    factor being ``(fan_in + fan_out) / 2`` (``'avg'``), ``fan_in`` or
    ``fan_out``; fans are ``shape[1]``/``shape[0]`` times the product of the
    remaining dimensions."""
    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super(Xavier, self).__init__(rnd_type=rnd_type, factor_type=factor_type,
                                     magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _scale(self, name, shape):
        hw_scale = 1.
        if len(shape) < 2:
            raise ValueError('Xavier initializer cannot be applied to vector {0}. It requires at'
                             ' least 2D.'.format(name))
        if len(shape) > 2:
            hw_scale = np.prod(shape[2:])
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        if self.factor_type == "avg":
            factor = (fan_in + fan_out) / 2.0
        elif self.factor_type == "in":
            factor = fan_in
        elif self.factor_type == "out":
            factor = fan_out
        else:
            raise ValueError("Incorrect factor type")
        return np.sqrt(self.magnitude / factor)

    def _init_weight(self, name, arr):
        scale = self._scale(name, arr.shape)
        if self.rnd_type == "uniform":
            _uniform(-scale, scale, arr)
        elif self.rnd_type == "gaussian":
            _normal(0, scale, arr)
        else:
            raise ValueError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """MSRA (He) initialization: gaussian Xavier with magnitude ``2/(1 + slope**2)``."""
    def __init__(self, factor_type="avg", slope=0.25):
        magnitude = 2. / (1 + slope ** 2)
        super(MSRAPrelu, self).__init__("gaussian", factor_type, magnitude)
        self._kwargs = {'factor_type': factor_type, 'slope': slope}


def _bilinear(shape):
    """MXNet's bilinear upsampling kernel for a 4-d ``shape`` (float32)."""
    f = np.ceil(shape[3] / 2.)
    c = (2 * f - 1 - f % 2) / (2. * f)
    i = np.arange(int(np.prod(shape)))
    x = i % shape[3]
    y = (i // shape[3]) % shape[2]
    weight = (1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))
    return weight.astype(np.float32).reshape(shape)


@register
class Bilinear(Initializer):
    """Initializes weights for upsampling layers (a bilinear kernel)."""
    def __init__(self):
        super(Bilinear, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = _bilinear(arr.shape)


@register
class LSTMBias(Initializer):
    """LSTM biases: 0 except the forget gate (the second quarter), ``forget_bias``."""
    def __init__(self, forget_bias=1.0):
        super(LSTMBias, self).__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias


@register
class FusedRNN(Initializer):
    """Initializes the packed parameters of fused RNN layers (needs
    ``mx.rnn.FusedRNNCell``)."""
    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, string_types):
            klass, kwargs = json.loads(init)
            init = _REGISTRY[klass.lower()](**kwargs)
        super(FusedRNN, self).__init__(init=init.dumps() if init is not None else None,
                                       num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                                       bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):  # pylint: disable=arguments-differ
        # the fused RNN op's layout (mx.rnn.FusedRNNCell's names, prefix '')
        from .ops import rnn as _fused
        layout = (self._mode, self._num_layers, self._bidirectional)
        num_input = _fused.fused_num_input(arr.size, *layout, self._num_hidden)
        args = {name: a.copy() for name, a in
                _fused.fused_weight_views(arr, *layout, num_input, self._num_hidden).items()}
        for name in args:
            arg_desc = InitDesc(name, global_init=desc.global_init)
            if self._mode == 'lstm' and name.endswith("_f_bias"):
                args[name][:] = self._forget_bias
            elif self._init is None:
                desc.global_init(arg_desc, args[name])
            else:
                self._init(arg_desc, args[name])
        packed = ndarray.zeros(arr.shape, ctx=arr.context, dtype=arr.dtype)
        for name, a in _fused.fused_weight_views(packed, *layout, num_input,
                                                 self._num_hidden).items():
            a[:] = args[name]
        arr[:] = packed

# MXNet keeps the initializer table in mx.registry; share it (and the module names MXNet has)
from . import ndarray, random, registry  # noqa: E402,F401
registry._share(Initializer, _REGISTRY)
