"""``reset_arrays``: MXNet 1.9.1's op that sets many arrays to zero in place
(src/operator/contrib/reset_arrays.cc; what Gluon's ``zero_grad`` runs). It
has no outputs: every input is written (``mutates="all"``), so the engine
orders it after earlier reads and writes of each array."""
from __future__ import annotations

from ..base import OpError
from .registry import Param, p_int, register


def _reset_rule(attrs, shapes, dtypes):
    if len(shapes) != attrs["num_arrays"]:
        raise OpError("got %d arrays but num_arrays=%d" % (len(shapes), attrs["num_arrays"]))
    return (), ()


@register("reset_arrays", inputs=("*data",), variadic=True, num_outputs=0, mutates="all",
          params=[Param("num_arrays", p_int, doc="number of arrays to set to zero")],
          infer=_reset_rule)
def reset_arrays(xp, *arrays, out, num_arrays):
    """reset_arrays(*data, num_arrays): set every array to zero in place (one
    engine op for many arrays; what Gluon's zero_grad runs). No outputs."""
    for a in arrays:
        a.fill(0)
