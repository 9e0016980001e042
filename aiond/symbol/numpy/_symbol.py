"""``mx.sym.np``'s Symbol: a graph node with NumPy semantics (MXNet's
``_Symbol``), and the backend that builds graphs from the NumPy-interface
front functions (``aiond.numpy._front``).

``sym.as_np_ndarray()`` views a Symbol as an ``_Symbol`` (same graph, no
copy); operators, indexing and the array methods then follow NumPy (``a + 1``
promotes dtypes, ``a[0]`` drops the axis), through the same front functions
that ``mx.np`` runs on arrays.
"""
from __future__ import annotations

from numbers import Integral

import numpy as _np

from ...base import numeric_types
from ...numpy import _front
from ...ops import registry as _reg
from ..symbol import Group, Symbol, create

__all__ = ["_Symbol", "SYM"]


class _SymBackend:
    """Front functions on Symbols: each op call adds a node to the graph."""
    kind = "sym"
    # set by a graph tracer (gluon's hybridize) that knows its inputs' shapes
    # and dtypes: f(symbol) -> shape/dtype or None
    shape_hook = None
    dtype_hook = None

    def op(self, name, inputs, attrs=None, out=None):
        if out is not None:
            raise ValueError("%s: out= is not supported for symbols (a graph node makes its "
                             "own output); assign the result instead" % name)
        op = _reg.get(name)
        params = {k: v for k, v in (attrs or {}).items() if v is not None}
        for i, x in enumerate(inputs):
            if not isinstance(x, Symbol):
                raise TypeError("%s: input %d must be a Symbol, got %s"
                                % (name, i, type(x).__name__))
        if op.variadic:
            s = create(op, name.lower(), list(inputs), None, params)
        else:
            names = [n.lstrip("*") for n in op.inputs]
            s = create(op, name.lower(), None, dict(zip(names, inputs)), params)
        if len(s._outputs) == 1:
            return _Symbol._from(s._outputs)
        return [_Symbol._from([o]) for o in s._outputs]

    @staticmethod
    def isarr(x):
        return isinstance(x, Symbol)

    def arr(self, x, like=None, dtype=None):
        if isinstance(x, Symbol):
            x = x if isinstance(x, _Symbol) else _Symbol._from(x._outputs)
            if dtype is not None:
                x = self.op("_npi_cast" if "_npi_cast" in _reg.ops() else "Cast", [x],
                            {"dtype": dtype})
            return x
        raise TypeError("mx.sym.np: expected a Symbol here, got %s (%r); a graph takes "
                        "data as Symbols (mx.sym.var(...).as_np_ndarray())"
                        % (type(x).__name__, x))

    def shape(self, x):
        h = self.shape_hook
        return h(x) if h is not None and isinstance(x, Symbol) else None

    def dtype(self, x):
        h = self.dtype_hook
        return h(x) if h is not None and isinstance(x, Symbol) else None

    @staticmethod
    def ctx(x):
        return None

    def __repr__(self):
        return "<NumPy-interface backend: Symbol>"


SYM = _SymBackend()


def _call(name, *args, ns="np", **kwargs):
    impl = _front.table(ns).get(name)
    if impl is None:
        raise NotImplementedError("mx.sym.%s.%s is not available" % (ns, name))
    return impl(SYM, *args, **kwargs)


def _dunder(name, reflected=False):
    def method(self, other):
        if not isinstance(other, Symbol) and not isinstance(other, numeric_types):
            return NotImplemented
        from ...numpy._f_binary import binary
        return binary(SYM, name, other, self) if reflected else binary(SYM, name, self, other)
    return method


def _method(name, front_name=None, ns="np"):
    def method(self, *args, **kwargs):
        return _call(front_name or name, self, *args, ns=ns, **kwargs)
    method.__name__ = name
    method.__doc__ = "``mx.sym.np.%s`` of this symbol." % (front_name or name)
    return method


class _Symbol(Symbol):
    """A Symbol with NumPy semantics (``mxnet.symbol.numpy._Symbol``)."""
    __slots__ = ()

    def as_np_ndarray(self):
        return self

    def as_nd_ndarray(self):
        """The same graph as a legacy Symbol."""
        return Symbol._from(self._outputs)

    @property
    def num_outputs(self):
        return len(self._outputs)

    def __getitem__(self, key):
        n = len(self._outputs)
        if n > 1:
            if isinstance(key, Integral):
                key = int(key)
                if key < -n or key >= n:
                    raise IndexError("list index out of range")
                return _Symbol._from([self._outputs[key % n]])
            if isinstance(key, slice):
                start, stop, step = key.indices(n)
                return Group([self[i] for i in range(start, stop, step)], _Symbol)
            raise TypeError("indices of symbol group must be integers or slices, not {}"
                            .format(type(key).__name__))
        return _index(self, key)

    def __setitem__(self, key, value):
        raise NotImplementedError("a Symbol cannot be assigned to in place")

    __add__ = _dunder("add")
    __radd__ = _dunder("add", True)
    __sub__ = _dunder("subtract")
    __rsub__ = _dunder("subtract", True)
    __mul__ = _dunder("multiply")
    __rmul__ = _dunder("multiply", True)
    __truediv__ = _dunder("true_divide")
    __rtruediv__ = _dunder("true_divide", True)
    __div__ = __truediv__
    __rdiv__ = __rtruediv__
    __mod__ = _dunder("mod")
    __rmod__ = _dunder("mod", True)
    __pow__ = _dunder("power")
    __rpow__ = _dunder("power", True)
    __eq__ = _dunder("equal")
    __ne__ = _dunder("not_equal")
    __gt__ = _dunder("greater")
    __ge__ = _dunder("greater_equal")
    __lt__ = _dunder("less")
    __le__ = _dunder("less_equal")
    __hash__ = Symbol.__hash__

    def __neg__(self):
        return _call("negative", self)

    def __abs__(self):
        return _call("absolute", self)

    def __matmul__(self, other):
        return _call("matmul", self, other)

    def __rmatmul__(self, other):
        return _call("matmul", other, self)

    def __invert__(self):
        return _call("invert", self)

    def __and__(self, other):
        return _call("bitwise_and", self, other)

    def __or__(self, other):
        return _call("bitwise_or", self, other)

    def __xor__(self, other):
        return _call("bitwise_xor", self, other)

    @property
    def T(self):  # noqa: N802 - NumPy's name
        return _call("transpose", self)

    def reshape(self, *args, **kwargs):
        order = kwargs.pop("order", "C")
        if "newshape" in kwargs:
            shape = kwargs.pop("newshape")
        elif len(args) == 1 and not isinstance(args[0], Integral):
            shape = args[0]
        else:
            shape = args
        if kwargs:
            raise TypeError("reshape() got unexpected keyword argument(s) %s" % sorted(kwargs))
        return _call("reshape", self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], Integral)):
            axes = axes[0]
        return _call("transpose", self, axes if axes != () else None)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """This symbol's values as ``dtype`` (a graph node; ``copy`` is moot)."""
        if order != "K" or casting != "unsafe" or not subok:
            raise NotImplementedError("astype: only order='K', casting='unsafe' and "
                                      "subok=True are supported")
        return SYM.op("Cast", [self], {"dtype": _np.dtype(dtype).name})

    def dot(self, b, out=None):
        return _call("dot", self, b, out=out)

    def flatten(self, order="C"):
        return _call("ravel", self, order=order)


# array methods that are the same-named mx.np function on the symbol
for _name in ("sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "all",
              "any", "cumsum", "nonzero", "squeeze", "swapaxes", "clip", "sort", "argsort",
              "take", "repeat", "tile", "round", "ravel", "flip", "diag", "trace", "nansum",
              "nanprod", "expand_dims", "broadcast_to", "split", "copy", "zeros_like",
              "ones_like", "abs", "sign", "sqrt", "cbrt", "square", "reciprocal", "exp",
              "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos",
              "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "degrees",
              "radians", "floor", "ceil", "trunc", "rint", "fix", "pad"):
    setattr(_Symbol, _name, _method(_name))
_Symbol.norm = _method("norm", ns="np.linalg")
del _name


_SymBackend.native = _Symbol


def _index(sym, key):
    """NumPy basic indexing of a single-output Symbol: ints, slices, None,
    Ellipsis (and tuples of them)."""
    impl = _front.table("np").get("_getitem")
    if impl is None:
        raise NotImplementedError("indexing a Symbol needs mx.np's _getitem front function")
    return impl(SYM, sym, key)
