"""A hybridized block's nested inputs and outputs flattened and rebuilt
(``_flatten``/``_regroup``), and the array kind (legacy NDArray or
``mx.np.ndarray``) of its results."""
from __future__ import annotations

from ..ndarray import NDArray

__all__ = ["_flatten", "_regroup", "_np_symbols", "_np_outs", "_np_views"]


def _is_symbol(x):
    from ..symbol import Symbol
    return isinstance(x, Symbol)


def _np_symbols(outs):
    """Whether a traced graph's outputs are NumPy-semantics symbols (then its
    calls return mx.np.ndarrays); a mix of both kinds is refused, as in MXNet."""
    from ..symbol.numpy import _Symbol
    kinds = {isinstance(o, _Symbol) for o in outs if o is not None}
    if len(kinds) > 1:
        raise TypeError("Found both classic symbol (mx.sym.Symbol) and numpy symbol "
                        "(mx.sym.np._Symbol) in outputs: convert them to one kind, with "
                        "as_np_ndarray() or as_nd_ndarray() on each")
    return kinds == {True}


def _np_outs(outs):
    """A graph traced under NumPy semantics returns ``mx.np.ndarray``s."""
    from ..numpy.multiarray import _as_np
    return [_as_np(o) if isinstance(o, NDArray) else o for o in outs]


def _np_views(out):
    """Under NumPy semantics a block's results are ``mx.np.ndarray``s (MXNet's
    layers compute with ``F.npx``): legacy results become np views (same
    buffer and autograd link). Results of both kinds at once are refused, as
    MXNet refuses them (a block that means to return legacy arrays returns
    only those)."""
    _check_one_kind(out)
    return _to_np_views(out)


def _check_one_kind(out):
    from ..numpy.multiarray import ndarray as _np_ndarray
    flat = [o for o in (out if isinstance(out, (list, tuple)) else [out])
            if isinstance(o, NDArray)]
    if len({isinstance(o, _np_ndarray) for o in flat}) > 1:
        raise TypeError("Block's output ndarrays must be all of type `mxnet.numpy.ndarray` "
                        "or all legacy `mxnet.ndarray.NDArray`, got both: convert them with "
                        "as_np_ndarray() or as_nd_ndarray()")


def _to_np_views(out):
    if isinstance(out, NDArray):
        from ..numpy.multiarray import ndarray as _np_ndarray
        return out if isinstance(out, _np_ndarray) else out.as_np_ndarray()
    if isinstance(out, (list, tuple)):
        return type(out)(_to_np_views(o) for o in out)
    return out


def _flatten(args, inout_str):
    """A flat list of NDArrays/Symbols and the format to rebuild the nesting."""
    if isinstance(args, NDArray):
        return [args], int(0)
    if _is_symbol(args):
        length = len(args.list_outputs())
        length = length if length > 1 else 0
        return [args], int(length)
    if args is None:
        return [None], int(-1)
    if not isinstance(args, (list, tuple)):
        raise ValueError("When hybridized, the input of HybridBlock {}"
                         " must be (nested) list of Symbol"
                         " or NDArray, "
                         "but got {} of type {}".format(inout_str, str(args), str(type(args))))
    flat = []
    fmts = []
    for i in args:
        arg, fmt = _flatten(i, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    """Rebuild the nested structure ``fmt`` from the flat ``args``."""
    return _merger(args, fmt)[0]


def _merger(args, fmt):
    # a module function, not a closure: a recursive closure refers to itself
    # (a reference cycle at every call of a hybridized block)
    if isinstance(fmt, int):
        if fmt < -1:
            raise ValueError("Unsupported encoded format {}.".format(fmt))
        if fmt == 0:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError("We do not support passing types that are not None"
                                 " when the initial HybridBlock has received NoneType and"
                                 " has been hybridized."
                                 " Received arg = {}, fmt = {}.".format(args[0], fmt))
            return None, args[1:]
        return args[:fmt], args[fmt:]
    if not isinstance(args, (list, tuple)):
        raise ValueError("When hybridized, the output of HybridBlock must be (nested)"
                         " list of Symbol or NDArray, "
                         "but got {} of type {}".format(args, type(args)))
    ret = []
    for i in fmt:
        res, args = _merger(args, i)
        ret.append(res)
    return ret, args
