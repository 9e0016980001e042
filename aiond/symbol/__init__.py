"""``mx.sym`` / ``mx.symbol``: symbolic graphs (MXNet 1.9.1's Symbol API).

    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=data, name='fc1', num_hidden=128)
    net.list_arguments()        # ['data', 'fc1_weight', 'fc1_bias']
    exe = net.simple_bind(mx.cpu(), data=(32, 100))
    exe.forward()               # returns at once; exe.outputs[0] is an NDArray

Every registry op is a function here (``mx.sym.<op>``, ``mx.sym._internal``,
``mx.sym.linalg``, ``mx.sym.contrib``, ``mx.sym.random``), built from the
registry entry with a real signature and docstring.
"""
from __future__ import annotations

import sys as _sys
import types as _types

from . import _namespace
from . import _contrib_tables  # noqa: F401,E402  (issue 31: contrib ops' symbol tables)
from . import executor  # noqa: F401
from .executor import Executor  # noqa: F401
from .symbol import (Group, NotImplementedForSymbol, Symbol, Variable, arange, eye,  # noqa: F401
                     full, hypot, linspace, load, load_json, maximum, minimum, ones, pow,
                     power, var, zeros)

_internal = _types.ModuleType("aiond.symbol._internal")
linalg = _types.ModuleType("aiond.symbol.linalg")
contrib = _types.ModuleType("aiond.symbol.contrib")
from . import random  # noqa: E402  (MXNet's helpers; registry ops added below)
sparse = _types.ModuleType("aiond.symbol.sparse")
image = _types.ModuleType("aiond.symbol.image")
_namespace.populate_lazily(globals(), _internal.__dict__,
                    {"_linalg_": linalg.__dict__, "_contrib_": contrib.__dict__,
                     "_sparse_": sparse.__dict__, "_image_": image.__dict__})


def _fill_random():
    from ..ndarray._namespace import populate_lazily

    def make(op, full, short):
        fn = _namespace.make_function(op, full)     # MXNet's hint: _random_uniform0
        fn.__name__ = short
        return fn
    populate_lazily(random.__dict__, None, prefix=("_random_", "_sample_"), make=make)


_fill_random()
from ._contrib import rand_zipfian as _rand_zipfian  # noqa: E402
contrib.rand_zipfian = _rand_zipfian
from ._contrib_adamw import adamw_update as _aw, mp_adamw_update as _mpaw  # noqa: E402
contrib.adamw_update, contrib.mp_adamw_update = _aw, _mpaw
from ._control_flow import cond as _cond, foreach as _foreach, while_loop as _while  # noqa: E402
contrib.cond, contrib.foreach, contrib.while_loop = _cond, _foreach, _while


def _fill_sparse():
    # mx.sym.sparse: the _sparse_* ops without their prefix, and (as MXNet's
    # _sparse_ aliases give) the storage-aware public ops
    from ..ndarray._namespace import populate_lazily
    populate_lazily(sparse.__dict__, None, prefix=("_sparse_", ""), make=_namespace._short)


_fill_sparse()
from ._functions import histogram, split_v2  # noqa: E402,F401
from . import _symbol_names  # noqa: E402,F401  (issue 31: symbol.symbol's histogram, split_v2)
from . import register  # noqa: E402,F401  (issue 31: mx.sym.register)
from . import _subgraph  # noqa: E402,F401  (issue 31: optimize_for, _CachedOp subgraphs)
from . import _c_api  # noqa: E402,F401  (mx.base._LIB: the symbol and partitioning calls)
for _m in (_internal, linalg, contrib, random, sparse, image):
    _sys.modules.setdefault(_m.__name__, _m)
# ``mx.executor.Executor`` and ``import aiond.executor``, as in MXNet
_sys.modules.setdefault("aiond.executor", executor)
from . import numpy  # noqa: E402  (mx.sym.np)
from . import numpy_extension  # noqa: E402  (mx.sym.npx)
np = numpy
npx = numpy_extension


def _namespace_fn(name):
    """The ``mx.sym`` function ``name`` (built from the registry if it was
    registered after import)."""
    fn = globals().get(name)
    if fn is None:
        fn = getattr(_internal, name, None)
    if fn is None:
        from ..ops import registry as _reg
        try:
            op = _reg.get(name)
        except Exception:  # noqa: BLE001
            raise AttributeError("mx.sym has no operator %r" % name) from None
        fn = globals()[name] = _namespace.make_function(op, name)
    return fn


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from ..ops import _lazy
    if _lazy.known(name):
        return _namespace_fn(name)
    raise AttributeError("module 'aiond.symbol' has no attribute %r" % name)
