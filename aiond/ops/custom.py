"""MXNet's ``Custom`` operator: operators written in Python.

The registry entry holds what every layer needs to know about a Custom node
without running it: its inputs, outputs and auxiliary states (from the
registered ``CustomOpProp``'s ``list_arguments`` / ``list_outputs`` /
``list_auxiliary_states``) and its shape/dtype rule (the prop's
``infer_shape`` / ``infer_type``). The props are registered here by
``mx.operator.register``; running the user's ``CustomOp`` (an engine op
whose body pushes more engine ops) is installed by ``aiond.operator``,
which lives above ``ndarray`` and ``autograd``.

As in MXNet, every parameter other than ``op_type`` reaches the prop's
constructor as a string.
"""
from __future__ import annotations

import threading

import numpy as np

from ..base import OpError
from .registry import _REGISTRY, Null, Op, Param, p_str

__all__ = ["CustomEntry", "register_prop", "get_prop_class", "registered", "prop_of"]

_PROPS: dict = {}           # reg_name -> CustomOpProp subclass
_INSTANCES: dict = {}       # (op_type, kwargs) -> prop instance
_lock = threading.Lock()


def register_prop(reg_name, prop_cls):
    """``mx.operator.register(reg_name)(prop_cls)``'s registry side."""
    with _lock:
        _PROPS[str(reg_name)] = prop_cls
        for k in [k for k in _INSTANCES if k[0] == reg_name]:
            del _INSTANCES[k]


def get_prop_class(reg_name):
    try:
        return _PROPS[reg_name]
    except KeyError:
        raise OpError("Custom: op_type %r is not registered; register a CustomOpProp subclass "
                      "with @mx.operator.register(%r)" % (reg_name, reg_name)) from None


def registered():
    return sorted(_PROPS)


def _kwargs_key(attrs):
    return tuple(sorted((k, v) for k, v in attrs.items()
                        if k != "op_type" and not k.startswith("_")))


def prop_of(attrs):
    """The prop instance for a node's attrs (one per op_type and parameters,
    as MXNet makes one per parsed node)."""
    op_type = attrs.get("op_type")
    if op_type is None:
        raise OpError("Custom: required argument 'op_type' is missing")
    key = (op_type, _kwargs_key(attrs))
    p = _INSTANCES.get(key)
    if p is None:
        cls = get_prop_class(op_type)
        p = cls(**dict(key[1]))
        with _lock:
            _INSTANCES[key] = p
    return p


def counts(prop):
    return (len(prop.list_arguments()), len(prop.list_outputs()),
            len(prop.list_auxiliary_states()))


def _split3(ret, what):
    if len(ret) == 2:
        return ret[0], ret[1], []
    if len(ret) == 3:
        return ret
    raise OpError("%s must return 2 or 3 lists" % what)


def infer_shapes(prop, in_shapes):
    """Run ``prop.infer_shape`` on the argument shapes; (args, outs, auxs)
    as tuples, with MXNet's checks on the counts."""
    n_in, n_out, n_aux = counts(prop)
    ish, osh, ash = _split3(prop.infer_shape([list(s) for s in in_shapes[:n_in]]),
                            "infer_shape")
    if len(osh) != n_out:
        raise OpError("InferShape Error: expecting %d entries in returned output shapes, "
                      "got %d." % (n_out, len(osh)))
    if len(ish) != n_in:
        raise OpError("InferShape Error: expecting %d entries in returned input shapes, "
                      "got %d." % (n_in, len(ish)))
    if len(ash) != n_aux:
        raise OpError("InferShape Error: expecting %d entries in returned aux state shapes, "
                      "got %d." % (n_aux, len(ash)))
    tup = lambda ss: [tuple(int(d) for d in s) for s in ss]  # noqa: E731
    return tup(ish), tup(osh), tup(ash)


def infer_types(prop, in_dtypes):
    n_in, n_out, n_aux = counts(prop)
    ity, oty, aty = _split3(prop.infer_type([np.dtype(d).type for d in in_dtypes[:n_in]]),
                            "infer_type")
    if len(oty) != n_out:
        raise OpError("InferType Error: expecting %d entries in returned output types, "
                      "got %d." % (n_out, len(oty)))
    if len(ity) != n_in:
        raise OpError("InferType Error: expecting %d entries in returned input types, "
                      "got %d." % (n_in, len(ity)))
    if len(aty) != n_aux:
        raise OpError("InferType Error: expecting %d entries in returned aux state types, "
                      "got %d." % (n_aux, len(aty)))
    dt = lambda ts: [np.dtype(t) for t in ts]  # noqa: E731
    return dt(ity), dt(oty), dt(aty)


def _infer(attrs, shapes, dtypes):
    prop = prop_of(attrs)
    n_in, n_out, n_aux = counts(prop)
    if len(shapes) != n_in + n_aux:
        raise OpError("Custom %s takes %d inputs (%s), got %d"
                      % (attrs.get("op_type"), n_in + n_aux,
                         ", ".join(prop.list_arguments() + prop.list_auxiliary_states()),
                         len(shapes)))
    ish, osh, ash = infer_shapes(prop, shapes)
    for i, (given, want) in enumerate(zip(shapes, ish + ash)):
        if tuple(given) != tuple(want):
            raise OpError("Custom %s: shape of input %d is %s but infer_shape requires %s"
                          % (attrs.get("op_type"), i, tuple(given), tuple(want)))
    dtypes = [np.dtype(np.float32) if d is None else d for d in dtypes]
    _, oty, _ = infer_types(prop, dtypes)
    return osh, oty


def _num_outputs(attrs):
    return len(prop_of(attrs).list_outputs())


class CustomEntry(Op):
    """The ``Custom`` registry entry: its inputs, outputs and parameters
    come from the registered prop, so they depend on the node's attrs."""
    __slots__ = ()
    open_params = True      # any keyword is a parameter (passed to the prop as a string)

    def parse(self, kwargs):
        attrs = {}
        for k, v in kwargs.items():
            if v is Null or v is None and k != "op_type":
                continue
            attrs[k] = str(v)
        if "op_type" not in attrs:
            raise OpError("Custom: required argument 'op_type' is missing")
        get_prop_class(attrs["op_type"])
        return attrs

    def input_names_for(self, attrs):
        p = prop_of(attrs)
        return list(p.list_arguments()) + list(p.list_auxiliary_states())

    def aux_names_for(self, attrs):
        return list(prop_of(attrs).list_auxiliary_states())

    def output_names_for(self, attrs):
        return list(prop_of(attrs).list_outputs())

    def fill_inputs(self, attrs, in_shapes):
        """Input shapes the prop's ``infer_shape`` determines from what is
        known (None where it cannot say), for symbolic shape inference."""
        prop = prop_of(attrs)
        n_in, _, n_aux = counts(prop)
        if any(s is None or 0 in s for s in in_shapes[:n_in]):
            return None
        ish, _, ash = infer_shapes(prop, [tuple(s) for s in in_shapes[:n_in]])
        return list(ish) + list(ash)


def _unrun(*args, **kwargs):
    raise OpError("Custom operators run through aiond.operator (import aiond.operator)")


_custom = CustomEntry("Custom", _unrun, _infer, ("*data",),
                      (Param("op_type", p_str, Null, "the registered name of the operator"),),
                      num_outputs=_num_outputs, inline=False, variadic=True,
                      doc="Apply a custom operator implemented in Python (mx.operator).")
_REGISTRY["Custom"] = _custom
