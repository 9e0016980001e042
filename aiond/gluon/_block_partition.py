"""Subgraph backends for hybridized blocks, as MXNet 1.9.1's HybridBlock
has them: ``hybridize(backend=...)`` partitions the traced graph when the
cache is built, ``optimize_for(x, backend=...)`` does it without running
the graph. The partitioning itself is the symbol layer's
(``aiond.symbol._subgraph``); here the block's arrays are handed to it."""
from __future__ import annotations

from ..ndarray import NDArray
from ..symbol import Symbol

__all__ = ["partition_cached_graph", "optimize_for"]


def _shape_attr(s):
    shape = s.list_attr().get("__shape__")
    if shape is None:
        return None
    return tuple(int(d) for d in shape.strip("()").split(",") if d.strip())


def partition_cached_graph(block, data, out, args):
    """The traced graph ``out`` partitioned for ``block._backend``, given
    the call's ``args`` and the block's parameters (the shapes and dtypes
    the backend's pass sees); it becomes the block's cached graph."""
    params = block.collect_params()
    data_names = {d.name: i for i, d in enumerate(data)}
    arg_dict, aux_dict, input_shapes = {}, {}, {}
    ctx = None
    for a in args:
        if isinstance(a, NDArray):
            ctx = a.context
            break
    for names, target in ((out.list_arguments(), arg_dict),
                          (out.list_auxiliary_states(), aux_dict)):
        for name in names:
            if name in data_names and data_names[name] < len(args):
                a = args[data_names[name]]
                if isinstance(a, NDArray):
                    target[name] = a
                elif isinstance(a, Symbol) and _shape_attr(a) is not None:
                    input_shapes[name] = _shape_attr(a)
            elif name in params:
                target[name] = params[name].data(ctx) if ctx is not None else params[name].data()
    out = out.optimize_for(block._backend, arg_dict, aux_dict, ctx, shape_dict=input_shapes,
                           **block._backend_opts)
    from ..util import is_np_array
    if is_np_array():
        out = out.as_np_ndarray()
    block._cached_graph = data, out
    return out


_HYBRIDIZE_KEYS = ("clear", "static_alloc", "static_shape", "inline_limit",
                   "forward_bulk_size", "backward_bulk_size")


def optimize_for(block, x, args, backend, kwargs):
    """``HybridBlock.optimize_for``: hybridize ``block`` with ``backend`` and
    build (and partition) its graph for inputs ``x, *args`` without running it."""
    from .block import _gather_type_ctx_info
    flags = {k: kwargs.pop(k) for k in _HYBRIDIZE_KEYS if k in kwargs}
    flags.setdefault("clear", False)
    if kwargs:
        block._backend_opts = kwargs
    if not backend:
        raise ValueError('Must specify "backend" to optimize_for')
    block.hybridize(True, backend, **flags)
    has_symbol, has_ndarray, ctx_set, _ = _gather_type_ctx_info([x] + list(args))
    if not has_symbol and not has_ndarray:
        raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the input."
                         " Please check the type of the args.\n")
    if len(ctx_set) > 1:
        raise ValueError("Found multiple contexts in the input, After hybridized, the "
                         "HybridBlock only supports one input context. You can print the "
                         "ele.ctx in the input arguments to inspect their contexts. Find all "
                         "contexts = {}".format(ctx_set))
    block._build_cache(x, *args)
    assert block._cached_op, "Gluon failed to build the cache."
