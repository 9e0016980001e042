"""``npx`` operators: MXNet's deep-learning ops (one registry entry each, as
``mx.nd`` uses) returning ``mx.np.ndarray``."""
from __future__ import annotations

import functools

from ..ndarray import _namespace
from ..ndarray.ndarray import waitall  # noqa: F401
from ..numpy.multiarray import _as_np
from ..ops import registry as _reg
from .utils import load, save  # noqa: F401  (npx.save / npx.load)

# npx names MXNet's numpy_extension lacks, kept on arrays (MXNet's own npx
# operators are front functions: aiond/numpy/_f_npx.py)
_OPS = {
    "instance_norm": "InstanceNorm", "sequence_last": "SequenceLast",
    "sequence_reverse": "SequenceReverse", "slice_axis": "slice_axis",
    "stop_gradient": "BlockGrad", "scatter_nd": "scatter_nd", "broadcast_like": "broadcast_like",
    "softmax_cross_entropy": "softmax_cross_entropy", "hard_sigmoid": "hard_sigmoid",
    "softsign": "softsign",
}

__all__ = sorted(_OPS) + ["reshape", "load", "save", "waitall"]


def _wrap(npx_name, op_name):
    fn = _namespace.make_function(_reg.get(op_name), op_name)

    @functools.wraps(fn)
    def npx_fn(*args, **kwargs):
        out = kwargs.get("out")
        res = fn(*args, **kwargs)
        return res if out is not None else _as_np(res)
    npx_fn.__name__ = npx_fn.__qualname__ = npx_name
    return npx_fn


for _name, _op in _OPS.items():
    globals()[_name] = _wrap(_name, _op)


def reshape(a, newshape, reverse=False, order="C"):
    """MXNet's reshape with its special codes (-1 infer, -2 copy the rest,
    -3 merge two, -4 split one, -5/-6 as MXNet's npx.reshape)."""
    from ..ops.matrix import infer_reshape
    codes = tuple(newshape) if not isinstance(newshape, int) else (newshape,)
    # npx.reshape: -2 copies one dim, -3 drops a size-1 dim, -4 copies the rest,
    # -5 merges two, -6 splits one (MXNet 1.9.1 numpy_extension); map onto the legacy codes
    shape = list(a.shape)
    out, i, j = [], 0, 0
    while j < len(codes):
        c = codes[j]
        if c == -2:
            out.append(shape[i]); i += 1
        elif c == -3:
            if shape[i] != 1:
                raise ValueError("npx.reshape: -3 needs a dimension of size 1, got %d" % shape[i])
            i += 1
        elif c == -4:
            out.extend(shape[i:]); i = len(shape)
        elif c == -5:
            out.append(shape[i] * shape[i + 1]); i += 2
        elif c == -6:
            d1, d2 = codes[j + 1], codes[j + 2]
            if d1 == -1:
                d1 = shape[i] // d2
            if d2 == -1:
                d2 = shape[i] // d1
            out.extend([d1, d2]); i += 1; j += 2
        elif c == -1:
            out.append(-1); i += 1
        else:
            out.append(int(c)); i += 1
        j += 1
    from ..numpy.multiarray import _reshape
    if reverse:
        return _reshape(a, tuple(infer_reshape(a.shape, codes, True)))
    return _reshape(a, tuple(out))


from ..numpy import _front as _front  # noqa: E402
_front.populate(_front.ND, "npx", globals(), __name__)
