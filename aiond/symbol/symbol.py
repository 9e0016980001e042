"""``mx.sym.Symbol``: a graph of operator nodes, built, inspected, composed,
shape-inferred, saved and bound as in MXNet 1.9.1 (nnvm's Symbol).

A node is a variable (``op is None``) or one registry op with its attributes
kept as MXNet keeps them: a dict of strings (``{'num_hidden': '128'}``),
parsed by the op's parameter parsers when needed. A Symbol is a list of
output entries ``(node, index, version)``; nodes are shared between symbols
(``sym[0]``, composition) and copied by ``copy.copy``/``deepcopy``/``__call__``.
Graph order is nnvm's: a post-order depth-first walk from the outputs, so
``list_arguments()`` and the JSON node order match MXNet.
"""
from __future__ import annotations

import numpy as np

from .. import attribute as _attribute
from .. import name as _name
from ..base import MXNetError, NotImplementedForSymbol, OpError, numeric_types
from ..ops import registry as _reg
from ..ops.registry import Null
from ..graph.ir import (DTYPE_MX_TO_NP, DTYPE_NP_TO_MX, HIDDEN_KEYS,  # noqa: F401
                        ArgumentError, Node, UnknownArgumentError, aux_ids, copy_graph, dfs,
                        entry_key, parse_params, without_amp_casts)
from ..graph.ir import HIDDEN_DUNDER as _HIDDEN_DUNDER, STYPES as _STYPES
from ..graph.ir import attr_str as _attr_str, hidden_key as _hidden, plain as _plain  # noqa: F401
from ..graph.ir import unknown_argument as _mismatch  # noqa: F401
from . import _namespace as _ns

# the graph IR's names as this module has always had them (other modules import them from here)
_Node, _key, _aux_ids, _copy_graph = Node, entry_key, aux_ids, copy_graph
_without_amp_casts = without_amp_casts

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "pow", "power",
           "maximum", "minimum", "hypot", "zeros", "ones", "full", "arange", "linspace",
           "eye", "NotImplementedForSymbol"]


# ---------------------------------------------------------------- creating


def create(op, hint, sym_args=None, sym_kwargs=None, params=None, name=None, attr=None):
    """A Symbol applying registry ``op``: MXNet's ``_symbol_creator`` plus nnvm's
    atomic compose. ``sym_args`` are positional inputs of a variadic op;
    ``sym_kwargs`` inputs by name; ``params`` the op's parameters (Python
    values, turned into MXNet's attribute strings); missing inputs become
    variables ``<name>_<input>`` carrying the node's attributes."""
    kwargs = dict(params or {})
    kwargs.update(_attribute.current().get(attr))
    name = _name.current().get(name, hint)
    attrs = {}
    for k, v in kwargs.items():
        if v is Null:
            continue
        if isinstance(v, Symbol):
            raise TypeError("%s: argument %s is a Symbol but %s is not an input of %s"
                            % (name, k, k, op.name))
        attrs[_hidden(k)] = _attr_str(k, v)
    sym_args = list(sym_args or ())
    sym_kwargs = dict(sym_kwargs or {})
    if op.variadic and "num_args" in op.pindex and "num_args" not in attrs:
        attrs["num_args"] = str(len(sym_args))
    node = _Node(op, name, attrs)
    node._params = parse_params(op, attrs, name, strict=True)
    if getattr(op, "input_names_for", None) is not None:
        # Custom: inputs named by the prop, given by position or by name
        names = op.input_names_for(node._params)
        extra = [k for k in sym_kwargs if k not in names]
        if extra or len(sym_args) > len(names):
            raise _mismatch("Symbol.Compose", extra or ["argument %d" % len(names)], names)
        for i, nm in enumerate(names):
            s = sym_args[i] if i < len(sym_args) else sym_kwargs.get(nm)
            if s is None:
                v = _Node(None, "%s_%s" % (name, nm) if name else nm, dict(attrs))
                node.inputs.append((v, 0, 0))
            else:
                node.inputs.append(_single(s, "Keyword argument %s" % nm, name))
    elif op.variadic:
        if sym_kwargs:
            raise UnknownArgumentError("%s: variable length function do not accept kwargs "
                                       "(got %s); pass the inputs positionally"
                                       % (op.name, ", ".join(sym_kwargs)))
        for i, s in enumerate(sym_args):
            node.inputs.append(_single(s, "Argument %d" % i, name))
    else:
        names = _ns.input_names(op, node._params)
        extra = [k for k in sym_kwargs if k not in names]
        # nnvm's Compose matches keywords only when the positional count falls
        # short of the op's inputs, so an op with none ignores them (MXNet's
        # test_random passes ``data=`` to ``_random_normal``)
        if extra and names:
            raise _mismatch("Symbol.Compose", extra, names)
        for nm in names:
            s = sym_kwargs.get(nm)
            if s is None:
                v = _Node(None, "%s_%s" % (name, nm) if name else nm, dict(attrs))
                node.inputs.append((v, 0, 0))
            else:
                node.inputs.append(_single(s, "Keyword argument %s" % nm, name))
    _on_compose(node)
    # an op on NumPy-semantics symbols (mx.sym.np's _Symbol) gives one too, as
    # ops on mx.np arrays give mx.np arrays
    cls = Symbol
    for x in sym_args:
        if type(x) is not Symbol and isinstance(x, Symbol):
            cls = type(x)
    for x in sym_kwargs.values():
        if type(x) is not Symbol and isinstance(x, Symbol):
            cls = type(x)
    return cls._from([(node, i, 0) for i in range(node.num_visible())])


def _single(s, what, name):
    if not isinstance(s, Symbol):
        raise TypeError("%s of %s must be a Symbol, got %s" % (what, name, type(s).__name__))
    if len(s._outputs) != 1:
        raise ArgumentError("%s of %s is a tuple (%d outputs), single value is required"
                        % (what, name, len(s._outputs)))
    return s._outputs[0]


def _on_compose(node, set_var_attrs=True):
    """nnvm's FSetInputVarAttrOnCompose (new nodes only) and UpdateNodeVersion."""
    fset = _ns.SET_INPUT_VAR_ATTRS.get(node.op.name) if set_var_attrs else None
    aux = node.aux_positions()
    for i, (src, idx, ver) in enumerate(node.inputs):
        if src.op is None:
            if fset is not None:
                fset(node.params, src, i)
            if i in aux:
                src.version += 1
            node.inputs[i] = (src, idx, src.version)
        elif i in aux:
            raise MXNetError("%s: input %s is an auxiliary state the op updates; it must be "
                             "a Variable, got the output of %s"
                             % (node.name, node.input_names()[i], src.name))


def apply(op_name, hint, inputs, params=None, name=None):
    """Helper for operators: ``inputs`` bound positionally to the op's input names."""
    op = _reg.get(op_name)
    names = [n.lstrip("*") for n in op.inputs]
    return create(op, hint, None, dict(zip(names, inputs)), params, name)


# ------------------------------------------------------------------ Symbol


def _ufunc(lhs, rhs, sym_op, sym_hint, scalar_op, scalar_hint):
    if isinstance(rhs, Symbol):
        return apply(sym_op, sym_hint, [lhs, rhs])
    if isinstance(rhs, numeric_types) and not isinstance(rhs, np.ndarray):
        return apply(scalar_op, scalar_hint, [lhs], {"scalar": rhs})
    raise TypeError("type %s not supported" % str(type(rhs)))


class Symbol:
    """A symbolic graph: one or more outputs of operator nodes and variables."""

    __slots__ = ("_outputs", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, handle=None):
        # MXNet builds Symbols from C handles; here from output entries (or
        # nothing, for pickling)
        self._outputs = list(handle) if handle is not None else []

    @classmethod
    def _from(cls, outputs):
        s = cls.__new__(cls)
        s._outputs = list(outputs)
        return s

    # ---------------------------------------------------------- basics
    def __repr__(self):
        name = self.name
        if name is None:
            return "<%s group [%s]>" % (type(self).__name__, ", ".join(s.name for s in self))
        return "<%s %s>" % (type(self).__name__, name)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __len__(self):
        return len(self._outputs)

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    __nonzero__ = __bool__

    def __hash__(self):
        return id(self)

    def __getitem__(self, index):
        n = len(self._outputs)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            return Group([self[i] for i in range(start, stop, step)])
        if isinstance(index, str):
            idx = None
            for i, nm in enumerate(self.list_outputs()):
                if nm == index:
                    if idx is not None:
                        raise ValueError('There are multiple outputs with name "%s"' % index)
                    idx = i
            if idx is None:
                raise ValueError('Cannot find output that matches name "%s"' % index)
            index = idx
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise TypeError("Symbol only support integer index to fetch i-th output")
        if index < 0:
            index += n
        if index >= n or index < 0:
            raise IndexError("output index %d out of range for a symbol with %d output(s)"
                             % (index, n))
        return Symbol._from([self._outputs[index]])

    @property
    def name(self):
        """The node name, or None for a group of several nodes."""
        node = self._single_node()
        return None if node is None else node.name

    def _single_node(self):
        if not self._outputs:
            return None
        node = self._outputs[0][0]
        for e in self._outputs:
            if e[0] is not node:
                return None
        return node

    # ---------------------------------------------------------- attributes
    def attr(self, key):
        """The attribute ``key`` of this (non-grouped) symbol, or None."""
        node = self._single_node()
        if node is None:
            return None
        if key == "name":
            return node.name
        v = node.attrs.get(key)
        if v is None and key in HIDDEN_KEYS:
            v = node.attrs.get("__%s__" % key)
        return v

    def list_attr(self, recursive=False):
        """This node's attributes (hidden keys also under their plain name)."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        node = self._single_node()
        if node is None:
            return {}
        return _with_plain(node.attrs)

    def attr_dict(self):
        """``{node name: attributes}`` for every node with attributes."""
        ret = {}
        for n in dfs(self._outputs):
            if n.attrs:
                ret.setdefault(n.name, {}).update(_with_plain(n.attrs))
        return ret

    def _set_attr(self, **kwargs):
        """Set attributes (string values) on this node."""
        node = self._single_node()
        if node is None:
            raise MXNetError("Symbol.SetAttrs only works for non-grouped symbol")
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError("Set Attr only accepts string values")
            if key == "name":
                node.name = value
                continue
            key = _hidden(key) if key in HIDDEN_KEYS or not key.startswith("__") else key
            node.attrs[key] = value
        if node.op is not None:
            node._params = None
            node._params = parse_params(node.op, node.attrs, node.name, strict=False)

    # ---------------------------------------------------------- structure
    def get_internals(self):
        """A group of every node's (visible) outputs, in graph order."""
        outs = []
        for n in dfs(self._outputs):
            if n.op is None:
                outs.append((n, 0, n.version))
            else:
                outs.extend((n, i, 0) for i in range(n.num_visible()))
        return Symbol._from(outs)

    def _gen_atomic_symbol(self):
        """A new symbol applying this symbol's head op with the same
        attributes to fresh inputs: variables named after the op's inputs
        (``data``, ``weight``...), to be composed by name (``s(data=x)``)."""
        if not self._outputs:
            raise MXNetError("Input symbol does not have outputs.")
        node = self._outputs[0][0]
        if any(e[0] is not node for e in self._outputs):
            raise MXNetError("Generating atomic symbol from other symbol is not supported!")
        if node.op is None:
            raise MXNetError("Cannot generate atomic symbol from variable.")
        names = _ns.input_names(node.op, node.params, len(node.inputs))
        inputs = [(_Node(None, nm), 0, 0) for nm in names]
        atom = _Node(node.op, node.name, dict(node.attrs), inputs)
        atom._params = node._params
        atom.subgraphs = node.subgraphs
        return Symbol._from([(atom, i, 0) for i in range(atom.num_visible())])

    def get_children(self):
        """A group of the inputs of the output node(s), or None for a variable."""
        outs, seen = [], set()
        for e in self._outputs:
            if id(e[0]) in seen:
                continue
            seen.add(id(e[0]))
            outs.extend(e[0].inputs)
        return Symbol._from(outs) if outs else None

    def list_arguments(self):
        order = dfs(self._outputs)
        aux = _aux_ids(order)
        return [n.name for n in order if n.op is None and id(n) not in aux]

    def list_outputs(self):
        return [e[0].output_name(e[1]) for e in self._outputs]

    def list_auxiliary_states(self):
        order = dfs(self._outputs)
        aux = _aux_ids(order)
        return [n.name for n in order if n.op is None and id(n) in aux]

    def list_inputs(self):
        return [n.name for n in dfs(self._outputs) if n.op is None]

    def _arg_aux_nodes(self):
        order = dfs(self._outputs)
        aux = _aux_ids(order)
        args = [n for n in order if n.op is None and id(n) not in aux]
        auxs = [n for n in order if n.op is None and id(n) in aux]
        return order, args, auxs

    # ---------------------------------------------------------- composition
    def __call__(self, *args, **kwargs):
        """A copy of this symbol with variables replaced by the given symbols."""
        s = self.__copy__()
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, **kwargs):
        """Replace variables (by name) with symbols, in place; ``name=`` renames the head."""
        name = kwargs.pop("name", None)
        if args and kwargs:
            raise TypeError("compose only accept input Symbols either as positional or "
                            "keyword arguments, not both")
        for a in list(args) + list(kwargs.values()):
            if not isinstance(a, Symbol):
                raise TypeError("Compose expect `Symbol` as arguments")
        if args:
            raise MXNetError("General composition only support kwargs for now: pass the "
                             "inputs by name, e.g. net(data=other)")
        for k, v in kwargs.items():
            if len(v._outputs) != 1:
                raise ArgumentError("Keyword Argument %s is a tuple, single value is required" % k)
        if name and self._outputs:
            self._outputs[0][0].name = name
        if not kwargs:
            return
        order = dfs(self._outputs)
        replace = {}
        for n in order:
            if n.op is None and n.name in kwargs:
                replace[id(n)] = kwargs[n.name]._outputs[0]
        matched = {n.name for n in order if id(n) in replace}
        if len(matched) != len(kwargs):
            raise _mismatch("Symbol.Compose", list(kwargs), self.list_inputs())
        for n in order:
            hit = False
            for i, e in enumerate(n.inputs):
                r = replace.get(id(e[0]))
                if r is not None:
                    n.inputs[i] = r
                    hit = True
            if hit and n.op is not None:
                _on_compose(n, set_var_attrs=False)

    def __copy__(self):
        return Symbol._from(_copy_graph(self._outputs))

    def __deepcopy__(self, memo):
        return self.__copy__()

    def copy(self):
        """A deep copy (MXNet 1.9.1 raises here; copying is the obvious meaning)."""
        return self.__copy__()

    def __getstate__(self):
        return {"handle": self.tojson(remove_amp_cast=False) if self._outputs else None}

    def __setstate__(self, state):
        handle = state["handle"]
        self._outputs = [] if handle is None else load_json(handle)._outputs

    def __reduce__(self):
        return (Symbol, (None,), self.__getstate__())

    # ---------------------------------------------------------- arithmetic
    def __add__(self, other):
        return _ufunc(self, other, "elemwise_add", "_plus", "_plus_scalar", "_plusscalar")

    __iadd__ = __add__

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        return _ufunc(self, other, "elemwise_sub", "_minus", "_minus_scalar", "_minusscalar")

    __isub__ = __sub__

    def __rsub__(self, other):
        if isinstance(other, numeric_types):
            return apply("_rminus_scalar", "_rminusscalar", [self], {"scalar": other})
        raise TypeError("type %s not supported" % str(type(other)))

    def __mul__(self, other):
        return _ufunc(self, other, "elemwise_mul", "_mul", "_mul_scalar", "_mulscalar")

    __imul__ = __mul__

    def __rmul__(self, other):
        return self.__mul__(other)

    def __truediv__(self, other):
        return _ufunc(self, other, "elemwise_div", "_div", "_div_scalar", "_divscalar")

    __div__ = __itruediv__ = __idiv__ = __truediv__

    def __rtruediv__(self, other):
        if isinstance(other, numeric_types):
            return apply("_rdiv_scalar", "_rdivscalar", [self], {"scalar": other})
        raise TypeError("type %s not supported" % str(type(other)))

    __rdiv__ = __rtruediv__

    def __mod__(self, other):
        return _ufunc(self, other, "_mod", "_mod", "_mod_scalar", "_modscalar")

    def __rmod__(self, other):
        if isinstance(other, numeric_types):
            return apply("_rmod_scalar", "_rmodscalar", [self], {"scalar": other})
        raise TypeError("type %s not supported" % str(type(other)))

    def __pow__(self, other):
        return _ufunc(self, other, "_power", "_power", "_power_scalar", "_powerscalar")

    def __rpow__(self, other):
        if isinstance(other, numeric_types):
            return apply("_rpower_scalar", "_rpower_scalar", [self], {"scalar": other})
        raise TypeError("type %s not supported" % str(type(other)))

    def __neg__(self):
        return self.__mul__(-1.0)

    def __abs__(self):
        return self.abs()

    def __eq__(self, other):
        return _ufunc(self, other, "_equal", "_equal", "_equal_scalar", "_equal_scalar")

    def __ne__(self, other):
        return _ufunc(self, other, "_not_equal", "_not_equal", "_not_equal_scalar",
                      "_not_equal_scalar")

    def __gt__(self, other):
        return _ufunc(self, other, "_greater", "_greater", "_greater_scalar", "_greater_scalar")

    def __ge__(self, other):
        return _ufunc(self, other, "_greater_equal", "_greater_equal", "_greater_equal_scalar",
                      "_greater_equal_scalar")

    def __lt__(self, other):
        return _ufunc(self, other, "_lesser", "_lesser", "_lesser_scalar", "_lesser_scalar")

    def __le__(self, other):
        return _ufunc(self, other, "_lesser_equal", "_lesser_equal", "_lesser_equal_scalar",
                      "_lesser_equal_scalar")

    # ---------------------------------------------------------- inference (see _infer)
    def infer_shape(self, *args, **kwargs):
        """``(arg_shapes, out_shapes, aux_shapes)`` from known argument shapes,
        or ``(None, None, None)`` when they do not determine every shape."""
        return _infer.infer_shape(self, args, kwargs)

    def infer_shape_partial(self, *args, **kwargs):
        """As ``infer_shape``, with ``()`` (or 0 dims) for what is unknown."""
        return _infer.shape_impl(self, True, args, kwargs)

    def infer_type(self, *args, **kwargs):
        """``(arg_types, out_types, aux_types)`` (numpy types) from known ones."""
        return _infer.infer_type(self, args, kwargs)

    def infer_type_partial(self, *args, **kwargs):
        return _infer.type_impl(self, True, args, kwargs)

    # ---------------------------------------------------------- files
    def tojson(self, remove_amp_cast=True):
        """MXNet 1.x graph JSON, as ``mx.sym.load_json`` and MXNet read it
        (without AMP's ``amp_cast``/``amp_multicast`` nodes unless
        ``remove_amp_cast=False``, as MXNet writes it)."""
        from ._json import dumps
        outputs = self._outputs
        if remove_amp_cast:
            outputs = _without_amp_casts(outputs)
        return dumps(outputs)

    def save(self, fname, remove_amp_cast=True):
        """Write ``tojson()`` to ``fname`` (MXNet's ``prefix-symbol.json``)."""
        if not isinstance(fname, str):
            raise TypeError("fname need to be string")
        with open(fname, "w") as f:
            f.write(self.tojson(remove_amp_cast))

    def debug_str(self):
        """A readable listing of the graph (MXNet's ``MXSymbolPrint``)."""
        lines = ["Symbol Outputs:"]
        order = dfs(self._outputs)
        for i, e in enumerate(self._outputs):
            lines.append("\toutput[%d]=%s(%d)" % (i, e[0].name, e[1]))
        for n in order:
            if n.op is None:
                lines.append("Variable:%s" % n.name)
                continue
            lines.append("--------------------")
            lines.append("Op:%s, Name=%s" % (n.op.name, n.name))
            lines.append("Inputs:")
            for i, (src, idx, ver) in enumerate(n.inputs):
                lines.append("\targ[%d]=%s(%d)%s" % (i, src.name, idx,
                                                   " version=%d" % ver if src.op is None else ""))
            if n.attrs:
                lines.append("Attrs:")
                for k, v in n.attrs.items():
                    lines.append("\t%s=%s" % (k, v))
        return "\n".join(lines) + "\n"

    # ---------------------------------------------------------- binding
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """An Executor running this graph on the given arrays (used in place)."""
        from .executor import bind
        return bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """An Executor with every array allocated from the given input shapes."""
        from .executor import simple_bind
        return simple_bind(self, ctx, grad_req, type_dict, stype_dict, group2ctx,
                           shared_arg_names, shared_exec, shared_buffer, **kwargs)

    def eval(self, ctx=None, **kwargs):
        """Bind to ``kwargs`` and run forward; returns the list of outputs."""
        from ..context import current_context
        if ctx is None:
            ctx = current_context()
        return self.bind(ctx, kwargs).forward()

    @staticmethod
    def _get_ndarray_inputs(arg_key, args, arg_names, allow_missing):
        from .executor import ndarray_inputs
        arrays = ndarray_inputs(arg_key, args, arg_names, allow_missing)
        return list(arrays), arrays     # MXNet: (C handles, arrays); here both the arrays

    def gradient(self, wrt):
        raise NotImplementedError("Symbol.gradient is not implemented (as in MXNet 1.9.1); "
                                  "use bind(...).backward()")

    def _init_shape_steps(self, order, steps):
        """For a CachedOp's program (``steps`` of the graph ``order``): the
        init ops whose 0 dims shape inference fills in per call (falsy when
        there are none)."""
        from ._init_shapes import InitShapes
        return InitShapes(self, order, steps)

    def get_backend_symbol(self, backend):
        """This graph partitioned by every subgraph property of ``backend``
        (MXNet's ``MXGenBackendSubgraph``; see ``_subgraph``)."""
        from ._subgraph import backend_symbol
        return backend_symbol(self, backend)

    def optimize_for(self, backend, args=None, aux=None, ctx=None, shape_dict=None,
                     type_dict=None, stype_dict=None, skip_infer=False, **kwargs):
        """This graph partitioned for subgraph ``backend`` (see ``_subgraph``)."""
        from ._subgraph import optimize_for
        return optimize_for(self, backend, args, aux, ctx, shape_dict, type_dict, stype_dict,
                            skip_infer, **kwargs)

    def as_np_ndarray(self):
        """This graph as an ``mx.sym.np`` symbol (NumPy semantics; no copy)."""
        from .numpy._symbol import _Symbol  # the NumPy front end, built on this class
        return _Symbol._from(self._outputs)

    def as_nd_ndarray(self):
        return self

    # NDArray-only methods
    def wait_to_read(self):
        raise NotImplementedForSymbol(self.wait_to_read, None)

    def asnumpy(self):
        raise NotImplementedForSymbol(self.asnumpy, None)

    def asscalar(self):
        raise NotImplementedForSymbol(self.asscalar, None)

    def as_in_context(self, *args, **kwargs):
        raise NotImplementedForSymbol(self.as_in_context, None)

    def detach(self):
        raise NotImplementedForSymbol(self.detach, None)

    def backward(self, *args, **kwargs):
        raise NotImplementedForSymbol(self.backward, None)


def _with_plain(attrs):
    out = dict(attrs)
    for k, v in attrs.items():
        plain = _HIDDEN_DUNDER.get(k)
        if plain is not None:
            out[plain] = v
    return out


# ------------------------------------------------------------------ module API


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, **kwargs):
    """A variable (graph input) named ``name``; the keywords become MXNet's
    hidden attributes (``__shape__``, ``__lr_mult__``, ``__dtype__``, ...)."""
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    node = _Node(None, name)
    attr = _attribute.current().get(attr)
    attr = {} if attr is None else dict(attr)
    if shape is not None:
        attr["__shape__"] = str(shape)
    if lr_mult is not None:
        attr["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attr["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        t = np.dtype(dtype).type
        if t not in DTYPE_NP_TO_MX:
            raise TypeError("dtype %r is not supported by MXNet symbols" % (dtype,))
        attr["__dtype__"] = str(DTYPE_NP_TO_MX[t])
    if init is not None:
        if not isinstance(init, str):
            init = init.dumps()
        attr["__init__"] = init
    if stype is not None:
        attr["__storage_type__"] = str(_STYPES[stype])
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attr[k] = str(v)
        else:
            raise ValueError("Attribute name=%s is not supported. Additional attributes must "
                             "start and end with double underscores, e.g, __yourattr__" % k)
    ret = Symbol._from([(node, 0, 0)])
    ret._set_attr(**{k: v if isinstance(v, str) else str(v) for k, v in attr.items()})
    return ret


Variable = var


def Group(symbols, create_fn=Symbol):  # noqa: N802 - MXNet's name
    """One symbol whose outputs are the outputs of ``symbols``, in order."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    outs = []
    for s in symbols:
        outs.extend(s._outputs)
    return create_fn._from(outs) if hasattr(create_fn, "_from") else Symbol._from(outs)


def load(fname):
    """Load a symbol from a JSON file written by ``Symbol.save`` or MXNet."""
    if not isinstance(fname, str):
        raise TypeError("fname need to be string")
    with open(fname, "rb") as f:
        raw = f.read()
    try:
        return load_json(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise MXNetError("%s: symbol JSON is not UTF-8 text (byte %d)" % (fname, e.start)) \
            from None
    except MXNetError as e:
        raise MXNetError("%s: %s" % (fname, e)) from None


def load_json(json_str):
    """Load a symbol from MXNet graph JSON (any MXNet 0.8-1.9 version)."""
    if not isinstance(json_str, str):
        raise TypeError("fname required to be string")
    from ._json import loads
    return Symbol._from(loads(json_str))


def _binary(left, right, sym_op, sym_hint, scalar_op, scalar_hint, rscalar_op, rscalar_hint,
            py):
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return apply(sym_op, sym_hint, [left, right])
    if isinstance(left, Symbol) and isinstance(right, numeric_types):
        return apply(scalar_op, scalar_hint, [left], {"scalar": right})
    if isinstance(left, numeric_types) and isinstance(right, Symbol):
        return apply(rscalar_op, rscalar_hint, [right], {"scalar": left})
    if isinstance(left, numeric_types) and isinstance(right, numeric_types):
        return py(left, right)
    raise TypeError("types (%s, %s) not supported" % (str(type(left)), str(type(right))))


def pow(base, exp):  # noqa: A001 - MXNet's name
    """``base ** exp`` elementwise; either may be a number."""
    return _binary(base, exp, "_power", "_power", "_power_scalar", "_powerscalar",
                   "_rpower_scalar", "_rpowerscalar", lambda a, b: a ** b)


power = pow


def maximum(left, right):
    return _binary(left, right, "_maximum", "_maximum", "_maximum_scalar", "_maximumscalar",
                   "_maximum_scalar", "_maximumscalar", lambda a, b: a if a > b else b)


def minimum(left, right):
    return _binary(left, right, "_minimum", "_minimum", "_minimum_scalar", "_minimumscalar",
                   "_minimum_scalar", "_minimumscalar", lambda a, b: a if a < b else b)


def hypot(left, right):
    return _binary(left, right, "_hypot", "_hypot", "_hypot_scalar", "_hypotscalar",
                   "_hypot_scalar", "_hypotscalar", lambda a, b: float(np.hypot(a, b)))


def _dtype_name(dtype):
    return np.dtype(np.float32 if dtype is None else dtype).name


def zeros(shape, dtype=None, **kwargs):
    """A symbol of zeros."""
    return _creator("_zeros", dict(shape=shape, dtype=_dtype_name(dtype)), kwargs)


def ones(shape, dtype=None, **kwargs):
    """A symbol of ones."""
    return _creator("_ones", dict(shape=shape, dtype=_dtype_name(dtype)), kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A symbol filled with ``val``."""
    return _creator("_full", dict(shape=shape, dtype=_dtype_name(dtype), value=float(val)),
                    kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """Evenly spaced values in [start, stop)."""
    return _creator("_arange", dict(start=start, stop=stop, step=step, repeat=repeat,
                                    infer_range=infer_range, dtype=_dtype_name(dtype)),
                    {"name": name})


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    """``num`` evenly spaced values from start to stop."""
    return _creator("_linspace", dict(start=start, stop=stop, num=num, endpoint=endpoint,
                                      dtype=_dtype_name(dtype)), {"name": name})


def eye(N, M=0, k=0, dtype=None, **kwargs):  # noqa: N803
    """A 2-D identity-like symbol."""
    return _creator("_eye", dict(N=N, M=M, k=k, dtype=_dtype_name(dtype)), kwargs)


def _creator(op_name, params, kwargs):
    op = _reg.get(op_name)
    kwargs = dict(kwargs)
    name = kwargs.pop("name", None)
    attr = kwargs.pop("attr", None)
    kwargs.pop("ctx", None)
    params = {k: v for k, v in params.items() if k in op.pindex}
    params.update(kwargs)
    return create(op, op_name, None, None, params, name, attr)


# fluent methods: sym.reshape(...), sym.sum(axis=1), ...
def _install_fluent():
    def make(func_name, fixed=None):
        def method(self, *args, **kwargs):
            from . import _namespace_fn
            if fixed is not None:
                kwargs.update(fixed(*args, **kwargs) or {})
                args = ()
            return _namespace_fn(func_name)(self, *args, **kwargs)
        method.__name__ = func_name
        method.__doc__ = "Fluent method for ``mx.sym.%s`` with this symbol as data." % func_name
        return method

    for fname in _ns.FLUENT:
        if not hasattr(Symbol, fname):
            setattr(Symbol, fname, make(fname))
    Symbol.astype = make("cast")

    def flatten(self, inplace=False, **kwargs):
        from . import _namespace_fn
        return _namespace_fn("flatten")(self, **kwargs)

    def expand_dims(self, axis, inplace=False, **kwargs):
        from . import _namespace_fn
        return _namespace_fn("expand_dims")(self, axis=axis, **kwargs)

    def squeeze(self, axis=None, inplace=False, **kwargs):
        from . import _namespace_fn
        return _namespace_fn("squeeze")(self, axis=axis, **kwargs)

    def diag(self, k=0, **kwargs):
        from . import _namespace_fn
        return _namespace_fn("diag")(self, k, **kwargs)

    Symbol.flatten, Symbol.expand_dims, Symbol.squeeze, Symbol.diag = (
        flatten, expand_dims, squeeze, diag)


_install_fluent()


# _infer imports names from this module, so it comes last; ``infer``,
# ``Inference`` and ``_shape_str`` stay importable from here
from . import _infer  # noqa: E402
from ._infer import Inference, _shape_str, infer  # noqa: E402,F401
