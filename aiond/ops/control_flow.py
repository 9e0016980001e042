"""MXNet 1.9.1's control-flow operators ``_foreach``, ``_while_loop`` and
``_cond`` (src/operator/control_flow.cc): nodes that hold their loop body or
branches as subgraphs.

The registry entries carry what every layer needs without running a body:
the parameters as MXNet writes them in graph JSON (``in_data_locs``,
``cond_input_locs``, ...) and the number of outputs. A node's bodies reach
the op as ``params['subgraphs']`` (lists of Symbol output entries), so
running one and inferring its shapes needs the symbol layer:
``aiond.symbol._control_flow`` installs both (the invoke hook through
``registry.set_invoke_hook``, and ``infer``).
"""
from __future__ import annotations

from ..base import OpError
from .registry import _REGISTRY, Null, Op, Param, p_int, p_shape

__all__ = ["ControlFlowEntry", "FOREACH", "WHILE_LOOP", "COND"]


def _locs(v):
    return () if v is None else p_shape(v)


class ControlFlowEntry(Op):
    """A control-flow op: variadic inputs, ``num_outputs`` outputs."""
    __slots__ = ("n_subgraphs", "infer_types")

    def parse(self, kwargs):
        attrs = super().parse({k: v for k, v in kwargs.items() if k != "subgraphs"})
        if "subgraphs" in kwargs:
            attrs["subgraphs"] = kwargs["subgraphs"]
        return attrs


def _unrun(*args, **kwargs):
    raise OpError("control-flow operators run their subgraphs through aiond.symbol")


def _no_rule(attrs, shapes, dtypes):
    raise OpError("control-flow operators infer shapes through aiond.symbol")


def _num_outputs(attrs):
    return attrs["num_outputs"]


def _entry(name, params, n_subgraphs, doc):
    params = (Param("num_args", p_int, 0, "number of inputs, subgraphs included"),
              Param("num_outputs", p_int, Null, "number of outputs"),) + params
    op = ControlFlowEntry(name, _unrun, _no_rule, ("*data",), params,
                          num_outputs=_num_outputs, inline=False, variadic=True, doc=doc)
    op.n_subgraphs = n_subgraphs
    op.infer_types = None       # (params, input dtypes) -> output dtypes, set with infer
    if name in _REGISTRY:
        raise RuntimeError("op %s registered twice" % name)
    _REGISTRY[name] = op
    return op


FOREACH = _entry("_foreach", (
    Param("num_out_data", p_int, Null, "how many outputs are per-step data (stacked)"),
    Param("in_state_locs", _locs, Null, "positions of the loop states among the body's inputs"),
    Param("in_data_locs", _locs, Null, "positions of the data slices among the body's inputs"),
    Param("remain_locs", _locs, Null, "positions of the other inputs among the body's inputs"),
), 1, "Run a loop body over the slices of its data on axis 0 (mx.sym.contrib.foreach).")

WHILE_LOOP = _entry("_while_loop", (
    Param("num_out_data", p_int, Null, "how many outputs are per-step data (stacked)"),
    Param("max_iterations", p_int, Null, "the most steps the loop runs"),
    Param("cond_input_locs", _locs, Null, "the op inputs the condition graph reads"),
    Param("func_input_locs", _locs, Null, "the op inputs the body graph reads"),
    Param("func_var_locs", _locs, Null, "positions of the loop variables among the body's "
                                        "inputs"),
), 2, "Run a loop body while a condition holds (mx.sym.contrib.while_loop).")

COND = _entry("_cond", (
    Param("cond_input_locs", _locs, Null, "the op inputs the condition graph reads"),
    Param("then_input_locs", _locs, Null, "the op inputs the then-branch reads"),
    Param("else_input_locs", _locs, Null, "the op inputs the else-branch reads"),
), 3, "Run one of two branches as a condition says (mx.sym.contrib.cond).")
