"""Optimizer-state files (``.states``, ``Updater.get_states``/``set_states``)
that never run code from the file.

Two formats are read:

* aiond's own, written by ``dumps``: ``MAGIC``, a little-endian u64 length,
  a JSON document describing the structure, then an MXNet NDArray list file
  (``nd.save``'s format) holding the arrays. The JSON has tagged values only
  (tuples, dicts with any keys, non-finite floats, arrays by index, and
  optimizer / learning-rate-scheduler objects by class name and attributes);
  classes are looked up among aiond's registered optimizers and schedulers,
  never imported by name.
* MXNet 1.9.1's pickles (``pickle.dumps((states, optimizer))``): read by an
  unpickler that resolves exactly the globals such files contain -
  ``mxnet.ndarray.ndarray.NDArray`` (its state is the raw ``NDArray::Save``
  bytes), ``builtins.bytearray`` (how those bytes are pickled), MXNet's
  optimizer classes and ``mxnet.lr_scheduler`` classes (mapped to aiond's of
  the same name) - plus, for files aiond wrote before it had its own format,
  ``aiond.ndarray.ndarray._rebuild`` with numpy's array reconstruction. Any
  other global is refused with ``MXNetError`` before anything is called.

Every failure to read is an ``MXNetError`` saying what was wrong.
"""
from __future__ import annotations

import io
import json
import math
import pickle
import struct

import numpy as np

from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.ndarray import array

__all__ = ["dumps", "loads", "MAGIC"]

MAGIC = b"AIOND-OPTIMIZER-STATES\x00v1\n"
_MAX_DEPTH = 64


# ----------------------------------------------------------------- classes
def _optimizer_class(name):
    from .optimizer import Optimizer
    for cls in Optimizer.opt_registry.values():
        if cls.__name__ == name:
            return cls
    if name == "Optimizer":
        return Optimizer
    return None


def _scheduler_class(name):
    from .. import lr_scheduler
    cls = getattr(lr_scheduler, name, None)
    if isinstance(cls, type) and issubclass(cls, lr_scheduler.LRScheduler):
        return cls
    return None


def _kind_of(obj):
    from .. import lr_scheduler
    from .optimizer import Optimizer
    if isinstance(obj, Optimizer) and _optimizer_class(type(obj).__name__) is type(obj):
        return "optimizer"
    if isinstance(obj, lr_scheduler.LRScheduler) \
            and _scheduler_class(type(obj).__name__) is type(obj):
        return "lr_scheduler"
    return None


def _new(kind, name):
    cls = _optimizer_class(name) if kind == "optimizer" else \
        _scheduler_class(name) if kind == "lr_scheduler" else None
    if cls is None:
        raise MXNetError("optimizer states: unknown %s class %r" % (kind, name))
    return cls.__new__(cls)


# ------------------------------------------------------------ aiond format
def dumps(obj) -> bytes:
    """aiond's states bytes for ``obj`` (states, or ``(states, optimizer)``)."""
    arrays = []
    doc = _enc(obj, arrays, 0)
    from ..ndarray import io as ndio
    head = json.dumps(doc, allow_nan=False, separators=(",", ":")).encode("utf-8")
    return MAGIC + struct.pack("<Q", len(head)) + head + ndio.dumps(arrays)


def _enc(x, arrays, depth):
    if depth > _MAX_DEPTH:
        raise MXNetError("optimizer states nest deeper than %d levels" % _MAX_DEPTH)
    d = depth + 1
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return x if math.isfinite(x) else {"$f": repr(x)}
    if isinstance(x, NDArray):
        arrays.append(x.asnumpy())
        return {"$a": len(arrays) - 1}
    if isinstance(x, np.generic):
        v = x.item()
        return {"$n": x.dtype.str, "v": v if not isinstance(v, float) or math.isfinite(v)
                else {"$f": repr(v)}}
    if isinstance(x, list):
        return [_enc(v, arrays, d) for v in x]
    if isinstance(x, tuple):
        return {"$t": [_enc(v, arrays, d) for v in x]}
    if isinstance(x, dict):
        return {"$d": [[_enc(k, arrays, d), _enc(v, arrays, d)] for k, v in x.items()]}
    if isinstance(x, bytes):
        return {"$b": x.hex()}
    kind = _kind_of(x)
    if kind is not None:
        state = x.__getstate__() if hasattr(x, "__getstate__") else x.__dict__
        if not isinstance(state, dict):
            state = x.__dict__
        return {"$o": kind, "cls": type(x).__name__, "state": _enc(dict(state), arrays, d)}
    raise MXNetError("cannot save a %s in optimizer states (aiond saves numbers, strings, "
                     "containers, NDArrays, optimizers and learning-rate schedulers)"
                     % type(x).__name__)


def _loads_aiond(data):
    from ..ndarray import io as ndio
    n0 = len(MAGIC)
    if len(data) < n0 + 8:
        raise MXNetError("optimizer states: the file ends inside its header")
    (n,) = struct.unpack_from("<Q", data, n0)
    if n > len(data) - n0 - 8:
        raise MXNetError("optimizer states: header of %d bytes but only %d follow"
                         % (n, len(data) - n0 - 8))
    try:
        doc = json.loads(bytes(data[n0 + 8:n0 + 8 + n]).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise MXNetError("optimizer states: the header is not valid JSON (%s)"
                         % type(e).__name__) from None
    arrays, _ = ndio.loads(memoryview(data)[n0 + 8 + n:])
    return _dec(doc, arrays, 0)


def _dec(x, arrays, depth):
    if depth > _MAX_DEPTH:
        raise MXNetError("optimizer states nest deeper than %d levels" % _MAX_DEPTH)
    d = depth + 1
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [_dec(v, arrays, d) for v in x]
    if not isinstance(x, dict) or len(x) < 1:
        raise MXNetError("optimizer states: unexpected value %r in the header" % (x,))
    if "$a" in x:
        i = x["$a"]
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(arrays) \
                or arrays[i] is None:
            raise MXNetError("optimizer states: array index %r out of the %d saved"
                             % (i, len(arrays)))
        return array(arrays[i], dtype=arrays[i].dtype)
    if "$t" in x and isinstance(x["$t"], list):
        return tuple(_dec(v, arrays, d) for v in x["$t"])
    if "$d" in x and isinstance(x["$d"], list):
        out = {}
        for item in x["$d"]:
            if not isinstance(item, list) or len(item) != 2:
                raise MXNetError("optimizer states: a dict entry is not a [key, value] pair")
            k = _dec(item[0], arrays, d)
            try:
                out[k] = _dec(item[1], arrays, d)
            except TypeError:
                raise MXNetError("optimizer states: unhashable dict key %r" % (k,)) from None
        return out
    if "$f" in x:
        if x["$f"] not in ("inf", "-inf", "nan"):
            raise MXNetError("optimizer states: bad float %r" % (x["$f"],))
        return float(x["$f"])
    if "$n" in x:
        try:
            dt = np.dtype(x["$n"])
            if dt.kind not in "biuf":
                raise TypeError
            return dt.type(_dec(x.get("v"), arrays, d))
        except (TypeError, ValueError, OverflowError):
            raise MXNetError("optimizer states: bad numpy scalar %r" % (x,)) from None
    if "$b" in x:
        try:
            return bytes.fromhex(x["$b"])
        except (TypeError, ValueError):
            raise MXNetError("optimizer states: bad bytes value") from None
    if "$o" in x:
        obj = _new(x["$o"], x.get("cls"))
        state = _dec(x.get("state"), arrays, d)
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            raise MXNetError("optimizer states: the attributes of %s are not a dict of names"
                             % x.get("cls"))
        _restore(obj, state)
        return obj
    raise MXNetError("optimizer states: unexpected value %r in the header" % (x,))


def _restore(obj, state):
    if hasattr(type(obj), "__setstate__") and "__setstate__" in _own_attrs(type(obj)):
        obj.__setstate__(dict(state))
    else:
        obj.__dict__.update(state)


def _own_attrs(cls):
    names = set()
    for c in cls.__mro__:
        if c is object:
            break
        names.update(vars(c))
    return names


# ---------------------------------------------------------- MXNet pickles
class _MXNetNDArray(object):
    """Stands in for ``mxnet.ndarray.ndarray.NDArray`` while unpickling: MXNet
    pickles ``{'handle': raw NDArray::Save bytes}``."""
    def __init__(self, *args):
        self.value = None

    def __setstate__(self, state):
        from ..ndarray.io import _Parser
        if not isinstance(state, dict) or set(state) != {"handle"}:
            raise MXNetError("an MXNet NDArray's pickled state is {'handle': bytes}")
        handle = state["handle"]
        if handle is None:
            return
        if not isinstance(handle, (bytes, bytearray)):
            raise MXNetError("an MXNet NDArray's pickled handle must be bytes, got %s"
                             % type(handle).__name__)
        p = _Parser(memoryview(bytes(handle)).cast("B"), scalar_data=True)
        self.value = p.array(0)


def _bytearray(*args):
    if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
        return bytearray(args[0])
    if len(args) == 0:
        return bytearray()
    if len(args) == 2 and isinstance(args[0], str) and args[1] == "latin-1":
        return bytearray(args[0], "latin-1")      # protocol 2
    raise MXNetError("unexpected bytearray arguments in an MXNet pickle")


_OPT_MODULES = ("mxnet.optimizer.optimizer", "mxnet.optimizer", "mxnet.optimizer.contrib")


class _StrictUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in (("mxnet.ndarray.ndarray", "NDArray"),
                              ("mxnet.ndarray.sparse", "RowSparseNDArray"),
                              ("mxnet.ndarray.sparse", "CSRNDArray")):
            return _MXNetNDArray
        if (module, name) == ("builtins", "bytearray"):
            return _bytearray
        if module in _OPT_MODULES or module.startswith("aiond.optimizer"):
            cls = _optimizer_class(name)
            if cls is not None and (module in _OPT_MODULES or cls.__module__ == module):
                return cls
        if module in ("mxnet.lr_scheduler", "aiond.lr_scheduler"):
            cls = _scheduler_class(name)
            if cls is not None:
                return cls
        if (module, name) == ("aiond.ndarray.ndarray", "_rebuild"):
            return _rebuild
        if (module, name) in (("numpy.core.multiarray", "_reconstruct"),
                              ("numpy._core.multiarray", "_reconstruct")):
            return _np_reconstruct
        if (module, name) == ("numpy", "ndarray"):
            return np.ndarray
        if (module, name) == ("numpy", "dtype"):
            return _np_dtype
        raise MXNetError("optimizer states: refusing %s.%s - an optimizer-state file holds "
                         "only NDArrays, optimizers and learning-rate schedulers"
                         % (module, name))


def _np_reconstruct(cls, shape, dtype):
    if cls is not np.ndarray:
        raise MXNetError("optimizer states: only numpy.ndarray may be reconstructed")
    return np.ndarray.__new__(np.ndarray, shape, _np_dtype(dtype))


def _np_dtype(spec, align=False, copy=False):
    dt = np.dtype(spec)
    if dt.kind not in "biufc":
        raise MXNetError("optimizer states: numpy dtype %s is not a number type" % dt)
    return dt


def _rebuild(value, dev_type=None, dev_id=None):
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biufc":
        raise MXNetError("optimizer states: an array's value must be a numeric numpy array")
    return array(value, dtype=value.dtype)


def _convert(obj, depth=0):
    if depth > _MAX_DEPTH:
        raise MXNetError("optimizer states nest deeper than %d levels" % _MAX_DEPTH)
    if isinstance(obj, _MXNetNDArray):
        v = obj.value
        from ..ndarray.io import SparseRecord, from_record
        if isinstance(v, SparseRecord):
            return from_record(v)
        return None if v is None else array(v, dtype=v.dtype)
    if isinstance(obj, tuple):
        return tuple(_convert(x, depth + 1) for x in obj)
    if isinstance(obj, list):
        return [_convert(x, depth + 1) for x in obj]
    if isinstance(obj, dict):
        return {k: _convert(v, depth + 1) for k, v in obj.items()}
    return obj


def _loads_pickle(data):
    try:
        obj = _StrictUnpickler(io.BytesIO(bytes(data))).load()
    except MXNetError:
        raise
    except RecursionError:
        raise MXNetError("optimizer states: the pickle nests too deep") from None
    except Exception as e:  # noqa: BLE001 - a corrupt pickle fails in many ways
        raise MXNetError("optimizer states: not a readable MXNet states pickle (%s: %s)"
                         % (type(e).__name__, e)) from None
    return _convert(obj)


# ------------------------------------------------------------------ both
def loads(data):
    """States (or ``(states, optimizer)``) from aiond's or MXNet's bytes."""
    if isinstance(data, str):
        raise MXNetError("optimizer states must be bytes, not str")
    try:
        data = memoryview(data).cast("B")
    except TypeError:
        raise MXNetError("optimizer states must be bytes, got %s" % type(data).__name__) \
            from None
    if bytes(data[:len(MAGIC)]) == MAGIC:
        obj = _loads_aiond(data)
    elif len(data):
        obj = _loads_pickle(data)       # MXNet's (any pickle protocol), strictly
    else:
        raise MXNetError("optimizer states: the data is empty")
    return _check(obj)


def _check(obj):
    from .optimizer import Optimizer
    states = obj
    if isinstance(obj, tuple):
        if len(obj) != 2 or not isinstance(obj[1], Optimizer):
            raise MXNetError("optimizer states: expected states or (states, optimizer), got "
                             "a tuple of %s" % ", ".join(type(x).__name__ for x in obj))
        states = obj[0]
    if not isinstance(states, dict):
        raise MXNetError("optimizer states: expected a dict of states by index, got %s"
                         % type(states).__name__)
    for k, v in states.items():
        if not isinstance(k, (int, str)) or isinstance(k, bool):
            raise MXNetError("optimizer states: index %r is neither an int nor a str" % (k,))
        _check_state(k, v, 0)
    return obj


def _check_state(k, v, depth):
    if v is None or isinstance(v, (NDArray, bool, int, float, str, np.generic)):
        return
    if isinstance(v, (tuple, list)) and depth < _MAX_DEPTH:
        for x in v:
            _check_state(k, x, depth + 1)
        return
    raise MXNetError("optimizer states: the state of index %r holds a %s" % (k, type(v).__name__))
