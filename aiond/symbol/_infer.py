"""Shape and dtype inference over a Symbol's graph, as MXNet 1.9.1 (nnvm's
InferShape/InferType passes): ``Symbol.infer_shape``/``infer_type`` (and
their ``_partial`` forms) and ``infer``, which the executor uses to bind.

What a shape means follows ``mx.util.is_np_shape()``: off (MXNet 1.x), 0
marks an unknown dim and ``()`` an unknown shape; on, -1 marks an unknown
dim, 0 is a zero-size dim and None an unknown shape. Inside, shapes always
use the NumPy-shape encoding (``_partial``); the user's shapes and the
variables' ``__shape__`` attributes are converted on the way in and the
results on the way out, as MXNet's C API does.

Like nnvm's pass, inference sweeps the graph forward and backward until
nothing more is learnt: ops fill outputs from inputs and, where MXNet's
shape functions do (``_partial``), inputs from outputs.
"""
from __future__ import annotations

import ast
import math
import warnings

import numpy as np

from ..base import MXNetError
from .. import util as _util
from ..ops.dynamic import ValueShaped
from . import _namespace as _ns
from . import _partial
from ._partial import known as _full, merge as _pmerge
from ..graph.ir import DTYPE_MX_TO_NP, ArgumentError, entry_key as _key, unknown_argument as _mismatch

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
        np_shape = _util.is_np_shape()
        unknowns = ["%s: %s" % (n, s) for n, s in zip(sym.list_arguments(), arg_shapes)
                    if not _full(from_user(s, np_shape))][:10]
        # stacklevel 3: the warning names the caller of Symbol.infer_shape
        # (every argument known: an output's size is a value, nothing to ask for)
        if unknowns:
            warnings.warn("Cannot decide shape for the following arguments (0s in shape means "
                          "unknown dimensions). Consider providing them as input:\n\t"
                          + "\n\t".join(unknowns), stacklevel=3)
    return res


def shape_impl(sym, partial, args, kwargs):
    np_shape = _util.is_np_shape()
    shapes = {k: from_user(v, np_shape) for k, v in _known(sym, "shape", args, kwargs).items()}
    res = infer(sym, shapes, {}, need_dtypes=False)
    return res.shape_result(partial, np_shape)


def from_user(shape, np_shape=None):
    """A user's shape in the internal encoding (None: unknown): without
    NumPy-shape semantics 0 marks an unknown dim and ``()`` an unknown shape."""
    if np_shape is None:
        np_shape = _util.is_np_shape()
    if shape is None:
        return None
    shape = tuple(int(d) for d in shape)
    if np_shape:
        return shape
    if not shape:
        return None
    return tuple(d if d > 0 else -1 for d in shape)


def to_user(shape, np_shape):
    """An internal shape as the user's mode writes it."""
    if np_shape:
        return shape
    if shape is None:
        return ()
    return tuple(d if d >= 0 else 0 for d in shape)


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
                if known[n] is None:
                    del known[n]
    else:
        inputs = sym.list_inputs()
        bad = [k for k in kwargs if k not in inputs]
        if bad:
            raise _mismatch("Infer%s" % what.capitalize(), bad, inputs)
        for k, v in kwargs.items():
            if v is not None:
                known[k] = conv(v, "'%s'" % k)
                if known[k] is None:
                    del known[k]
    return known

def _print_args(what, args, kwargs):
    # MXNet prints the arguments before re-raising an inference error
    print("%s error. Arguments:" % what)
    for i, arg in enumerate(args):
        print("  #%d: %s" % (i, arg))
    for k, v in kwargs.items():
        print("  %s: %s" % (k, v))


def _as_shape(v, what):
    if v is None and _util.is_np_shape():
        return None
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


def _shape_str(s):
    if s is None:
        return "None"
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

    def shape_result(self, partial, np_shape=False):
        groups = self._entries()
        vals = [[self.shapes.get((id(n), i)) for n, i in g] for g in groups]
        if all(_full(s) for g in vals for s in g):
            return tuple(vals)
        if not partial:
            return (None, None, None)
        return tuple([to_user(s, np_shape) for s in g] for g in vals)

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


def _var_shape_attr(node, np_shape):
    s = node.attrs.get("__shape__")
    if s is None:
        return None
    try:
        v = ast.literal_eval(s)
        if v is None:
            return None
        return from_user(v if isinstance(v, (list, tuple)) else (v,), np_shape)
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
    """Shape/dtype inference over ``sym``.

    ``shapes``/``dtypes`` map input names to what is known (shapes in the
    internal encoding: -1 an unknown dim); variables also use their
    ``__shape__``/``__dtype__`` attributes. Forward and backward sweeps
    alternate until nothing more is learnt, as in nnvm: each op runs its
    registry rule once its inputs are known, its partial rule (``_partial``)
    before that and from its outputs back to its inputs; parameters a layer
    determines (a FullyConnected weight, a BatchNorm gamma) are filled from
    the tables in ``_namespace``. Inconsistencies raise MXNetError naming
    the node and both shapes."""
    inf = Inference(sym)
    S, D = inf.shapes, inf.dtypes
    np_shape = _util.is_np_shape()
    for n in inf.order:
        if n.op is not None:
            continue
        k = (id(n), 0)
        s = shapes.get(n.name)
        if s is None:
            s = _var_shape_attr(n, np_shape)
        if s is not None:
            S[k] = tuple(s)
        d = dtypes.get(n.name)
        if d is None:
            d = _var_dtype_attr(n)
        if d is None:
            d = default_dtype
        if d is not None:
            D[k] = np.dtype(d)
    ops = [n for n in inf.order if n.op is not None]
    done = set()
    before = None
    while len(done) < len(ops):
        for sweep in (ops, ops[::-1]):      # forward, then backward
            for n in sweep:
                if id(n) not in done and _infer_node(n, S, D, need_dtypes):
                    done.add(id(n))
        now = _progress(S, D)
        if now == before:
            break
        before = now
    return inf


def _progress(S, D):
    return (len(S) + len(D)
            + sum(sum(1 for d in s if d >= 0) for s in S.values() if s is not None))


def _assign(node, what, i, key, shape, S, rule):
    """Merge ``shape`` into entry ``key``; a conflict raises MXNet's error
    (``rule``: what inferred ``shape``, a string or a function making it)."""
    if shape is None:
        return
    old = S.get(key)
    merged = _pmerge(old, shape)
    if merged is False:
        if what == "input":
            names = node.input_names()
            e = node.inputs[i]
            which = "input %s (%s)" % (names[i] if i < len(names) else i,
                                       e[0].output_name(e[1]))
        else:
            which = "output %s" % node.output_name(i)
        if callable(rule):
            rule = rule()
        raise MXNetError("Error in operator %s: Shape inconsistent for %s, Provided = %s, "
                         "inferred shape = %s (%s)"
                         % (node.name, which, _shape_str(old), _shape_str(shape), rule))
    if merged != old:
        S[key] = merged


def _infer_node(n, S, D, need_dtypes):
    """One inference step for node ``n``; True once all its entries are known."""
    op = n.op
    if not n.inputs and _partial.has_unknown_param_shape(op, n.params):
        return _infer_init(n, S, D)
    keys = [_key(e) for e in n.inputs]
    nout = n.num_outputs()
    out_keys = [(id(n), i) for i in range(nout)]
    in_shapes = [S.get(k) for k in keys]
    if not all(_full(s) for s in in_shapes):
        _fill_inputs(n, in_shapes, S)
    rule = _partial.rule_for(op)
    if rule is not None:
        ins = [S.get(k) for k in keys]
        outs = [S.get(k) for k in out_keys]
        try:
            new_ins, new_outs = rule(n.params, ins, outs)
        except (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError):
            new_ins, new_outs = ins, outs   # the registry rule reports bad inputs
        for i, (k, s) in enumerate(zip(keys, new_ins)):
            _assign(n, "input", i, k, s, S, "from %s's shape rule" % op.name)
        for i, (k, s) in enumerate(zip(out_keys, new_outs)):
            _assign(n, "output", i, k, s, S, "from %s's shape rule" % op.name)
    in_shapes = [S.get(k) for k in keys]
    in_dtypes = [D.get(k) for k in keys]
    if not all(d is not None for d in in_dtypes):
        _fill_dtypes(n, in_dtypes, D)
        in_dtypes = [D.get(k) for k in keys]
    dt_known = all(d is not None for d in in_dtypes)
    # unknown input dtypes (shape inference alone): assume the dtype of the
    # known ones, so a float64 weight with a not-yet-typed input is no clash
    fill = next((d for d in in_dtypes if d is not None), np.dtype(np.float32))
    call_dtypes = in_dtypes if dt_known else [d if d is not None else fill for d in in_dtypes]
    if all(_full(s) for s in in_shapes):
        try:
            oshapes, odtypes = op.infer(n.params, tuple(in_shapes), tuple(call_dtypes))
        except ValueShaped as e:
            # the output's size is a value (an NMS's kept boxes): what is known of it
            oshapes, odtypes = e.shapes, e.dtypes
        except MXNetError as e:
            raise MXNetError("Error in operator %s: %s%s" % (n.name, e, _inputs_str(n, S)))\
                from None
        except (TypeError, ValueError, IndexError, KeyError) as e:
            raise MXNetError("Error in operator %s (%s): %s: %s%s"
                             % (n.name, op.name, type(e).__name__, e, _inputs_str(n, S))) \
                from None
        legacy_init = not n.inputs and not _util.is_np_shape()
        for i, (k, s) in enumerate(zip(out_keys, oshapes)):
            s = tuple(int(d) for d in s)
            if legacy_init:
                # MXNet 1.x: an init op's 0 dims (zeros(shape=(0, H))) are unknown,
                # filled in from what its consumers determine
                s = tuple(-1 if d == 0 else d for d in s)
            _assign(n, "output", i, k, s, S,
                    lambda: "from its inputs %s" % ", ".join(_shape_str(x) for x in in_shapes))
        if dt_known:
            for k, d in zip(out_keys, odtypes):
                D[k] = np.dtype(d)
    elif rule is None and all(s is not None for s in in_shapes):
        # partly known shapes: what the rule gives for any value of the unknown dims
        part = _partial.partial_forward(op, n.params, in_shapes, call_dtypes)
        for k, s in zip(out_keys, part or ()):
            m = _pmerge(S.get(k), s)
            if m is not False and m != S.get(k):
                S[k] = m
    per_output = getattr(op, "infer_types", None)
    if need_dtypes and per_output is not None and not all(k in D for k in out_keys):
        # ops whose outputs each have their own dtype (control flow: its body's)
        for k, d in zip(out_keys, per_output(n.params, in_dtypes)):
            if d is not None:
                D.setdefault(k, np.dtype(d))
    if need_dtypes and not all(k in D for k in out_keys):
        d = None
        if per_output is not None:
            pass
        elif dt_known:
            probed = _probe_dtypes(n, in_dtypes, S)
            if probed is not None:
                for k, pd in zip(out_keys, probed):
                    D.setdefault(k, pd)
                return _done(keys, out_keys, S, D, need_dtypes)
            try:
                d = _ns.fallback_out_dtype(op, n.params, in_dtypes)
            except MXNetError as e:
                raise MXNetError("Error in operator %s: %s" % (n.name, e)) from None
        elif op.name not in _ns.EMBEDDINGS and "dtype" in op.pindex \
                and n.params.get("dtype") is not None:
            d = np.dtype(n.params["dtype"])   # Cast & co: the output dtype is the parameter
        if d is not None:
            for k in out_keys:
                D.setdefault(k, d)
    if need_dtypes and not dt_known and _partial.same_dtype(op):
        # ElemwiseType: an elementwise op's inputs have its output's dtype
        d = D.get(out_keys[0])
        if d is not None:
            for k in keys:
                D.setdefault(k, d)
    return _done(keys, out_keys, S, D, need_dtypes)


# stand-in data shapes for _probe_dtypes, most ranks first (convolutions,
# then matrices, vectors, 3-D sequences)
_PROBE_SHAPES = ((4, 4, 4, 4), (4, 4), (4,), (4, 4, 4))


def _probe_dtypes(n, in_dtypes, S):
    """The output dtypes of ``n`` from its registry rule run on stand-in
    shapes, when the dtypes of its inputs are known and their shapes are
    not (``infer_type`` alone): MXNet's type functions need no shapes, and
    a rule's dtypes (``shape_array`` -> int64, ``where``'s branches,
    ``topk``'s values, a weight-typed ``Embedding``) do not depend on them.
    Known dims are kept; parameter inputs (weights) get the shapes the data
    implies. None when no stand-in satisfies the rule."""
    op = n.op
    keys = [_key(e) for e in n.inputs]
    known = [S.get(k) for k in keys]
    rule = _ns.PARAM_SHAPES.get(op.name)
    names = n.input_names()
    for cand in _PROBE_SHAPES:
        shapes = []
        for s in known:
            if s is None:
                shapes.append(cand)
            else:
                shapes.append(tuple(d if d > 0 else 4 for d in s))
        if rule is not None and shapes:
            try:
                derived = rule(n.params, shapes[0])
            except Exception:  # noqa: BLE001 - this stand-in does not fit the op
                continue
            for i, nm in enumerate(names[1:len(shapes)], 1):
                if known[i] is None and derived.get(nm) is not None:
                    shapes[i] = tuple(derived[nm])
        try:
            _, odtypes = op.infer(n.params, tuple(shapes), tuple(in_dtypes))
        except ValueShaped as e:
            odtypes = e.dtypes
        except Exception:  # noqa: BLE001 - as above
            continue
        return [np.dtype(d) for d in odtypes]
    return None


def _infer_init(n, S, D):
    """``_zeros(shape=(-1, 3))`` & co: the shape parameter gives what it
    knows, the rest comes from the graph around (the backward sweep)."""
    k = (id(n), 0)
    _, outs = _partial.init_rule(n.params, [], [S.get(k)])
    _assign(n, "output", 0, k, outs[0], S, "from its shape parameter")
    d = n.params.get("dtype")
    D.setdefault(k, np.dtype(d if d is not None else np.float32))
    return _full(S.get(k))


def _done(in_keys, out_keys, S, D, need_dtypes):
    return all(_full(S.get(k)) for k in list(in_keys) + out_keys) and (
        not need_dtypes or all(k in D for k in list(in_keys) + out_keys))


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
    fill = getattr(op, "fill_inputs", None)
    if fill is not None:        # Custom: what the prop's infer_shape says of its inputs
        try:
            derived = fill(n.params, in_shapes)
        except Exception:  # noqa: BLE001 - not enough known yet; the op's rule reports errors
            derived = None
        for i, shape in enumerate(derived or ()):
            if i < len(n.inputs) and shape is not None:
                _assign(n, "input", i, _key(n.inputs[i]), tuple(shape), S,
                        "from infer_shape of %s" % n.name)
        return
    rule = _ns.PARAM_SHAPES.get(op.name)
    if rule is not None and in_shapes and in_shapes[0] is not None and in_shapes[0]:
        # data's shape may be partial (-1 = unknown dim): what it determines is used
        names = n.input_names()
        try:
            derived = _partial.derive_partial(rule, n.params, in_shapes[0])
        except (IndexError, ValueError, TypeError, ZeroDivisionError, KeyError):
            derived = {}
        for i, nm in enumerate(names):
            if i == 0 or nm not in derived:
                continue
            shape = derived[nm]
            if shape is None:
                continue
            if (op.name, nm) in _ns.SOFT_INPUTS and S.get(_key(n.inputs[i])) is not None:
                continue
            _assign(n, "input", i, _key(n.inputs[i]), tuple(shape), S,
                    lambda: "from %s %s" % (names[0], _shape_str(in_shapes[0])))


def _fill_dtypes(n, in_dtypes, D):
    fill = _ns.param_dtypes(n.op, n.params, in_dtypes)
    if not fill:
        return
    for i, d in fill.items():
        k = _key(n.inputs[i])
        if k not in D and d is not None:
            D[k] = np.dtype(d)
