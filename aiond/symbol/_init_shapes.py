"""MXNet 1.x's 0-means-unknown shapes in hybridized graphs.

Without NumPy-shape semantics, an init op of a traced graph whose ``shape``
has 0 (or -1) dims -- ``cell.begin_state(func=F.zeros, batch_size=0)``
gives ``_zeros(shape=(0, H))`` -- has those dims filled in by shape
inference from the data the graph is called with, as MXNet's CachedOp does.
``InitShapes`` finds such steps of a CachedOp's program once and, per distinct input
shapes, gives the steps with the inferred ``shape`` (as a bound executor's
``_fix_init_shapes`` does for its one set of shapes)."""
from __future__ import annotations

from ..base import MXNetError

__all__ = ["InitShapes"]


class InitShapes:
    """The init steps of a CachedOp whose shapes come from inference."""

    def __init__(self, sym, order, steps):
        from ._partial import has_unknown_param_shape
        self._sym = sym
        self._steps = steps
        by_name = {}
        for n in order:
            if n.op is not None and has_unknown_param_shape(n.op, n.params):
                by_name[n.name] = n
        # (step index, graph node) of each init op left to inference
        self._todo = [(i, by_name[st.name]) for i, st in enumerate(steps)
                      if st.name in by_name and by_name[st.name].op is st.op]
        self._memo = {}

    def __bool__(self):
        return bool(self._todo)

    def steps_for(self, names, args):
        """The steps to replay for inputs ``args`` (named ``names``)."""
        from ..ndarray import NDArray
        shapes = {k: a.shape for k, a in zip(names, args) if isinstance(a, NDArray)}
        dtypes = {k: a.dtype for k, a in zip(names, args) if isinstance(a, NDArray)}
        key = tuple(sorted(shapes.items()))
        steps = self._memo.get(key)
        if steps is None:
            steps = self._memo[key] = self._resolve(shapes, dtypes)
        return steps

    def _resolve(self, shapes, dtypes):
        from ._infer import infer
        from ._partial import known
        inf = infer(self._sym, shapes, dtypes)
        steps = list(self._steps)
        for i, n in self._todo:
            shape = inf.shapes.get((id(n), 0))
            if not known(shape):
                raise MXNetError("Error in operator %s of the hybridized graph: cannot infer "
                                 "the unknown (0) dims of its shape %s from the inputs %s"
                                 % (n.name, n.params.get("shape"), shapes))
            st = steps[i]
            attrs = dict(st.attrs)
            attrs["shape"] = tuple(int(d) for d in shape)
            steps[i] = st.with_attrs(attrs)
        return steps
