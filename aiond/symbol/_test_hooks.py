"""Running a Symbol on given NDArrays for ``aiond.test_utils``
(``check_numeric_gradient``, ``check_symbolic_forward/backward``).

The arrays are used directly (no executor, no copies), so when the caller
records with autograd the graph's ops go on its tape and gradients reach
the arrays' ``.grad``.
"""
from __future__ import annotations

from .. import autograd
from ..base import MXNetError
from ..ndarray.ndarray import ones, zeros
from .executor import Plan
from .symbol import infer

__all__ = ["forward"]


def forward(sym, names, arrays, aux_states=None, is_train=False):
    """The outputs (NDArrays) of ``sym`` on ``arrays``.

    ``names`` gives the argument name of each array (``None``: the order of
    ``sym.list_arguments()``); ``aux_states`` is a list (in
    ``list_auxiliary_states()`` order), a dict, or None (moving means get
    zeros, moving variances ones)."""
    plan = Plan(sym)
    arrays = list(arrays)
    if names is None:
        names = plan.arg_names[:len(arrays)]
    given = dict(zip(names, arrays))
    missing = [n for n in plan.arg_names if n not in given]
    if missing:
        raise MXNetError("symbol needs argument(s) %s; got %s" % (missing, list(names)))
    unknown = [n for n in given if n not in plan.arg_names and n not in plan.aux_names]
    if unknown:
        raise MXNetError("%s are not arguments of the symbol (its arguments are %s)"
                         % (unknown, plan.arg_names))
    args = [given[n] for n in plan.arg_names]
    ctx = args[0].context if args else None
    auxs = _aux_arrays(sym, plan, given, args, aux_states, ctx)
    scope = autograd.train_mode() if is_train else autograd.predict_mode()
    with scope:
        return plan.run(args + auxs, ctx, scope=False)


def _aux_arrays(sym, plan, given, args, aux_states, ctx):
    if not plan.aux_names:
        return []
    if isinstance(aux_states, (list, tuple)):
        if len(aux_states) != len(plan.aux_names):
            raise MXNetError("aux_states has %d arrays for %d auxiliary states %s"
                             % (len(aux_states), len(plan.aux_names), plan.aux_names))
        return [_as_nd(a, ctx) for a in aux_states]
    aux_states = dict(aux_states or {})
    for n in plan.aux_names:
        if n in given:
            aux_states.setdefault(n, given[n])
    out = []
    inf = None
    for node in sym._arg_aux_nodes()[2]:
        a = aux_states.get(node.name)
        if a is None:
            if inf is None:
                inf = infer(sym, {n: x.shape for n, x in zip(plan.arg_names, args)},
                            {n: x.dtype for n, x in zip(plan.arg_names, args)})
            shape = inf.shapes.get((id(node), 0))
            if shape is None:
                raise MXNetError("cannot infer the shape of auxiliary state %s; pass "
                                 "aux_states" % node.name)
            dt = inf.dtypes.get((id(node), 0))
            make = ones if node.name.endswith("var") else zeros
            a = make(shape, ctx=ctx, dtype=dt)
        out.append(_as_nd(a, ctx))
    return out


def _as_nd(a, ctx):
    from ..ndarray import NDArray, array
    return a if isinstance(a, NDArray) else array(a, ctx=ctx)
