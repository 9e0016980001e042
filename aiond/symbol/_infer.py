"""Shape and dtype inference over a Symbol's graph, as MXNet 1.9.1 (nnvm's
InferShape/InferType passes): ``Symbol.infer_shape``/``infer_type`` (and
their ``_partial`` forms) and ``infer``, which the executor uses to bind.

Shapes follow MXNet 1.x: 0 marks an unknown dim, ``()`` (partial results)
an unknown shape.
"""
from __future__ import annotations

import ast
import warnings

import numpy as np

from ..base import MXNetError
from ..util import is_np_shape
from . import _namespace as _ns
from .symbol import DTYPE_MX_TO_NP, ArgumentError, _key, _mismatch

__all__ = ["Inference", "infer"]


# ------------------------------------------------------------------ Symbol methods


def infer_shape(sym, args, kwargs):
    """``Symbol.infer_shape``: ``(arg_shapes, out_shapes, aux_shapes)`` from known
    argument shapes, or ``(None, None, None)`` when they do not determine every shape."""
    try:
        res = shape_impl(sym, False, args, kwargs)
    except MXNetError:
        _print_args("infer_shape", args, kwargs)
        raise
    if res[1] is None:
        arg_shapes, _, _ = shape_impl(sym, True, args, kwargs)
        unknowns = ["%s: %s" % (n, s) for n, s in zip(sym.list_arguments(), arg_shapes)
                    if not s or 0 in s][:10]
        # stacklevel 3: the warning names the caller of Symbol.infer_shape
        warnings.warn("Cannot decide shape for the following arguments (0s in shape means "
                      "unknown dimensions). Consider providing them as input:\n\t"
                      + "\n\t".join(unknowns), stacklevel=3)
    return res


def shape_impl(sym, partial, args, kwargs):
    shapes = _known(sym, "shape", args, kwargs)
    res = infer(sym, shapes, {}, need_dtypes=False)
    return res.shape_result(partial)


def infer_type(sym, args, kwargs):
    """``Symbol.infer_type``: ``(arg_types, out_types, aux_types)`` (numpy types)."""
    try:
        res = type_impl(sym, False, args, kwargs)
    except MXNetError:
        _print_args("infer_type", args, kwargs)
        raise
    if res[1] is None:
        arg_types, _, _ = type_impl(sym, True, args, kwargs)
        unknowns = ["%s: %s" % (n, t) for n, t in zip(sym.list_arguments(), arg_types)
                    if t is None][:10]
        warnings.warn("Cannot decide type for the following arguments. Consider providing "
                      "them as input:\n\t" + "\n\t".join(unknowns), stacklevel=3)
    return res


def type_impl(sym, partial, args, kwargs):
    dtypes = _known(sym, "dtype", args, kwargs)
    res = infer(sym, {}, dtypes, need_dtypes=True)
    return res.type_result(partial)


def _known(sym, what, args, kwargs):
    if args and kwargs:
        raise ValueError("Can only specify known argument %ss either by positional or "
                         "kwargs way." % what)
    conv = _as_shape if what == "shape" else _as_dtype
    known = {}
    if args:
        names = sym.list_arguments()
        if len(args) > len(names):
            raise ArgumentError("infer_%s: %d positional arguments for a symbol with %d "
                                "argument(s) %s" % (what, len(args), len(names), names))
        for i, (n, v) in enumerate(zip(names, args)):
            if v is not None:
                known[n] = conv(v, "argument %d" % i)
    else:
        inputs = sym.list_inputs()
        bad = [k for k in kwargs if k not in inputs]
        if bad:
            raise _mismatch("Infer%s" % what.capitalize(), bad, inputs)
        for k, v in kwargs.items():
            if v is not None:
                known[k] = conv(v, "'%s'" % k)
    return known

def _print_args(what, args, kwargs):
    # MXNet prints the arguments before re-raising an inference error
    print("%s error. Arguments:" % what)
    for i, arg in enumerate(args):
        print("  #%d: %s" % (i, arg))
    for k, v in kwargs.items():
        print("  %s: %s" % (k, v))


def _as_shape(v, what):
    if isinstance(v, (list, tuple)):
        try:
            return tuple(int(d) for d in v)
        except (TypeError, ValueError):
            pass
    raise TypeError("Arguments need to be shapes (tuple), but %s is %s." % (what, type(v)))


def _as_dtype(v, what):
    try:
        return np.dtype(v)
    except TypeError:
        raise TypeError("Arguments need to be dtypes, but %s is %r." % (what, v)) from None


# ------------------------------------------------------------------ the pass


def _full(s):
    """A completely known shape (MXNet 1.x: 0 marks an unknown dim)."""
    return s is not None and 0 not in s


def _merge(old, new):
    """Unify two shapes where 0 is unknown; None when they conflict."""
    if old is None:
        return tuple(new)
    if len(old) != len(new):
        return None
    out = []
    for a, b in zip(old, new):
        if a and b and a != b:
            return None
        out.append(a or b)
    return tuple(out)


def _shape_str(s):
    return "(" + ", ".join(str(d) for d in s) + ("," if len(s) == 1 else "") + ")"


class Inference:
    """Shapes and dtypes of every entry of a graph (see ``infer``)."""

    def __init__(self, sym):
        self.sym = sym
        self.order, self.args, self.auxs = sym._arg_aux_nodes()
        self.shapes = {}
        self.dtypes = {}

    def shape_of(self, entry):
        return self.shapes.get(_key(entry))

    def dtype_of(self, entry):
        return self.dtypes.get(_key(entry))

    def _entries(self):
        return ([(n, 0) for n in self.args], [(e[0], e[1]) for e in self.sym._outputs],
                [(n, 0) for n in self.auxs])

    def shape_result(self, partial):
        groups = self._entries()
        vals = [[self.shapes.get((id(n), i)) for n, i in g] for g in groups]
        if all(_full(s) for g in vals for s in g):
            return tuple(vals)
        if not partial:
            return (None, None, None)
        if is_np_shape():       # NumPy shapes spell an unknown dim -1
            return tuple([None if s is None else tuple(d if d else -1 for d in s) for s in g]
                         for g in vals)
        return tuple([() if s is None else s for s in g] for g in vals)

    def type_result(self, partial):
        groups = self._entries()
        vals = [[self.dtypes.get((id(n), i)) for n, i in g] for g in groups]
        if all(d is not None for g in vals for d in g):
            return tuple([d.type for d in g] for g in vals)
        if not partial:
            return (None, None, None)
        return tuple([None if d is None else d.type for d in g] for g in vals)

    def unknown_args(self):
        return [n.name for n in self.args + self.auxs
                if not _full(self.shapes.get((id(n), 0)))]


def _var_shape_attr(node):
    s = node.attrs.get("__shape__")
    if s is None:
        return None
    try:
        v = ast.literal_eval(s)
        return tuple(int(d) for d in (v if isinstance(v, (list, tuple)) else (v,)))
    except (ValueError, SyntaxError, TypeError):
        return None


def _var_dtype_attr(node):
    s = node.attrs.get("__dtype__")
    if s is None:
        return None
    try:
        return np.dtype(DTYPE_MX_TO_NP[int(s)])
    except (ValueError, KeyError):
        return None


def infer(sym, shapes, dtypes, need_dtypes=True, default_dtype=None):
    """Forward shape/dtype inference over ``sym``.

    ``shapes``/``dtypes`` map input names to what is known; variables also
    use their ``__shape__``/``__dtype__`` attributes. Each op runs its
    registry rule once its inputs are known; parameters a layer determines
    (a FullyConnected weight, a BatchNorm gamma, an elementwise partner)
    are filled from the tables in ``_namespace``. Inconsistencies raise
    MXNetError naming the node and both shapes."""
    inf = Inference(sym)
    S, D = inf.shapes, inf.dtypes
    for n in inf.order:
        if n.op is not None:
            continue
        k = (id(n), 0)
        s = shapes.get(n.name)
        if s is None:
            s = _var_shape_attr(n)
        if s is not None:
            S[k] = tuple(max(int(x), 0) for x in s)    # -1 (NumPy shapes): unknown
        d = dtypes.get(n.name)
        if d is None:
            d = _var_dtype_attr(n)
        if d is None:
            d = default_dtype
        if d is not None:
            D[k] = np.dtype(d)
    pending = [n for n in inf.order if n.op is not None]
    while pending:
        before = _progress(S, D)
        rest = []
        for n in pending:
            if not _infer_node(n, S, D, need_dtypes):
                rest.append(n)
        pending = rest
        if _progress(S, D) == before:
            break
    return inf


def _progress(S, D):
    return len(S) + len(D) + sum(1 for s in S.values() if _full(s))


def _set_input_shape(node, i, shape, S, rule):
    e = node.inputs[i]
    k = _key(e)
    old = S.get(k)
    merged = _merge(old, shape)
    if merged is None:
        names = node.input_names()
        raise MXNetError("Error in operator %s: Shape inconsistent for input %s (%s), "
                         "Provided = %s, inferred shape = %s (%s)"
                         % (node.name, names[i] if i < len(names) else i,
                            e[0].output_name(e[1]), _shape_str(old), _shape_str(shape), rule))
    S[k] = merged


def _infer_node(n, S, D, need_dtypes):
    """Try to infer node ``n``; True once all its outputs are known."""
    op = n.op
    ins = n.inputs
    keys = [_key(e) for e in ins]
    in_shapes = [S.get(k) for k in keys]
    if not all(_full(s) for s in in_shapes):
        _fill_inputs(n, in_shapes, S)
        in_shapes = [S.get(k) for k in keys]
    in_dtypes = [D.get(k) for k in keys]
    if not all(d is not None for d in in_dtypes):
        _fill_dtypes(n, in_dtypes, D)
        in_dtypes = [D.get(k) for k in keys]
    nout = n.num_outputs()
    out_keys = [(id(n), i) for i in range(nout)]
    back = _ns.BACKWARD_SHAPES.get(op.name)
    if back is not None and not all(_full(s) for s in in_shapes) \
            and all(_full(S.get(k)) for k in out_keys):
        # shapes flow backward: an op's inputs from its known outputs
        for i, s in enumerate(back(n.params, [S[k] for k in out_keys], len(ins))):
            if s is not None:
                _set_input_shape(n, i, tuple(s), S, "from the output shape")
        in_shapes = [S.get(k) for k in keys]
    if _done(out_keys, S, D, need_dtypes):
        return True
    unknown = _ns.unknown_init_shape(op, n.params)
    if unknown is not None:
        # an init op given -1 (unknown) dims: the graph determines them
        m = _merge(S.get(out_keys[0]), unknown)
        if m is not None:
            S[out_keys[0]] = m
        if need_dtypes and out_keys[0] not in D:
            D[out_keys[0]] = np.dtype(n.params.get("dtype") or np.float32)
        return _done(out_keys, S, D, need_dtypes)
    dt_known = all(d is not None for d in in_dtypes)
    call_dtypes = in_dtypes if dt_known else [
        d if d is not None else np.dtype(np.float32) for d in in_dtypes]
    if all(s is not None for s in in_shapes) and not all(_full(s) for s in in_shapes):
        # partly known shapes: what the rule gives for any value of the unknown dims
        part = _partial_outputs(op, n.params, in_shapes, call_dtypes)
        for k, s in zip(out_keys, part or ()):
            m = _merge(S.get(k), s)
            if m is not None:
                S[k] = m
    elif all(_full(s) for s in in_shapes):
        try:
            oshapes, odtypes = op.infer(n.params, tuple(in_shapes), tuple(call_dtypes))
        except MXNetError as e:
            raise MXNetError("Error in operator %s: %s%s" % (n.name, e, _inputs_str(n, S)))\
                from None
        except (TypeError, ValueError, IndexError, KeyError) as e:
            raise MXNetError("Error in operator %s (%s): %s: %s%s"
                             % (n.name, op.name, type(e).__name__, e, _inputs_str(n, S))) \
                from None
        for k, s in zip(out_keys, oshapes):
            S[k] = tuple(int(d) for d in s)
        if dt_known:
            for k, d in zip(out_keys, odtypes):
                D[k] = np.dtype(d)
    if need_dtypes and not all(k in D for k in out_keys) and dt_known:
        try:
            d = _ns.fallback_out_dtype(op, n.params, in_dtypes)
        except MXNetError as e:
            raise MXNetError("Error in operator %s: %s" % (n.name, e)) from None
        if d is not None:
            for k in out_keys:
                D.setdefault(k, d)
    return _done(out_keys, S, D, need_dtypes)


def _done(out_keys, S, D, need_dtypes):
    return all(_full(S.get(k)) for k in out_keys) and (
        not need_dtypes or all(k in D for k in out_keys))


def _partial_outputs(op, params, in_shapes, dtypes):
    """Output shapes with 0 where they depend on the inputs' unknown (0) dims:
    the rule runs twice with different stand-ins for those dims."""
    runs = []
    for fill in (7, 11):
        shapes = tuple(tuple(d if d else fill for d in s) for s in in_shapes)
        try:
            runs.append(op.infer(params, shapes, tuple(dtypes))[0])
        except Exception:  # noqa: BLE001 - the stand-ins may not fit the op: no information
            return None
    out = []
    for a, b in zip(*runs):
        if len(a) != len(b):
            return None
        out.append(tuple(int(x) if x == y else 0 for x, y in zip(a, b)))
    if op.name in _ns.UNKNOWN_DIMS_STAY and out and len(out[0]) == len(in_shapes[0]):
        # MXNet leaves an output dim unknown wherever the input dim is
        out[0] = tuple(o if i else 0 for o, i in zip(out[0], in_shapes[0]))
    return out


def _inputs_str(n, S):
    names = n.input_names()
    parts = []
    for i, e in enumerate(n.inputs):
        s = S.get(_key(e))
        parts.append("%s=%s%s" % (names[i] if i < len(names) else "input%d" % i,
                                  e[0].output_name(e[1]),
                                  " %s" % _shape_str(s) if s is not None else ""))
    return " [inputs: %s]" % ", ".join(parts) if parts else ""


def _fill_inputs(n, in_shapes, S):
    op = n.op
    rule = _ns.PARAM_SHAPES.get(op.name)
    if rule is not None and in_shapes and in_shapes[0]:
        # data's shape may be partial (0 = unknown dim): what it determines is used
        names = n.input_names()
        try:
            derived = rule(n.params, in_shapes[0])
        except (IndexError, ValueError, TypeError, ZeroDivisionError):
            derived = {}
        for i, nm in enumerate(names):
            if i == 0 or nm not in derived:
                continue
            shape = derived[nm]
            if shape is None:
                continue
            if (op.name, nm) in _ns.SOFT_INPUTS and S.get(_key(n.inputs[i])) is not None:
                continue
            _set_input_shape(n, i, tuple(shape), S, "from %s %s" % (names[0],
                                                                   _shape_str(in_shapes[0])))
        return
    if _ns.is_same_shape(op) and len(in_shapes) > 1:
        # every input has one shape: unify what is known of it (0 = unknown dim)
        known = None
        for s in in_shapes:
            if s is not None:
                m = _merge(known, s)
                if m is None:
                    return          # inconsistent: the op's rule reports it
                known = m
        if known is None:
            return
        for i, s in enumerate(in_shapes):
            if s != known:
                S[_key(n.inputs[i])] = known


def _fill_dtypes(n, in_dtypes, D):
    fill = _ns.param_dtypes(n.op, n.params, in_dtypes)
    if not fill:
        return
    for i, d in fill.items():
        k = _key(n.inputs[i])
        if k not in D and d is not None:
            D[k] = np.dtype(d)
