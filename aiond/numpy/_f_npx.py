"""``npx`` and ``npx.image`` as front functions (see ``_front``): MXNet's
deep-learning ops (the registry's legacy entries: ``Convolution``,
``BatchNorm``, ``softmax``, ``_image_resize``, ...) under their NumPy-interface
names, for ``mx.npx``, ``mx.nd.npx`` and ``mx.sym.npx`` alike.

Each takes MXNet's generated signature: the op's inputs (positionally or by
name), then its parameters, ``out=`` (arrays only) and ``name=`` (ignored),
and returns ``mx.np.ndarray``s or ``_Symbol``s."""
from __future__ import annotations

import inspect

from ..ops import registry as _reg
from ._front import front

# npx name -> registry op (MXNet 1.9.1's mxnet.numpy_extension operators)
_NPX = {
    "activation": "Activation", "arange_like": "_contrib_arange_like",
    "batch_dot": "batch_dot", "batch_flatten": "Flatten", "batch_norm": "BatchNorm",
    "cast": "Cast", "convolution": "Convolution", "deconvolution": "Deconvolution",
    "dropout": "Dropout", "embedding": "Embedding", "erf": "erf", "erfinv": "erfinv",
    "fully_connected": "FullyConnected", "gamma": "gamma", "gammaln": "gammaln",
    "gather_nd": "gather_nd", "layer_norm": "LayerNorm", "leaky_relu": "LeakyReLU",
    "log_softmax": "log_softmax", "one_hot": "one_hot", "pick": "pick", "pooling": "Pooling",
    "relu": "relu", "reshape_like": "reshape_like", "rnn": "RNN", "roi_pooling": "ROIPooling",
    "sequence_mask": "SequenceMask", "shape_array": "shape_array", "sigmoid": "sigmoid",
    "slice": "slice", "smooth_l1": "smooth_l1", "softmax": "softmax", "topk": "topk",
    "multibox_prior": "_contrib_MultiBoxPrior", "multibox_target": "_contrib_MultiBoxTarget",
    "multibox_detection": "_contrib_MultiBoxDetection",
}

# npx.image name -> registry op (MXNet's _image_* operators)
_IMAGE = {n: "_image_" + n for n in (
    "to_tensor", "normalize", "flip_left_right", "flip_top_bottom", "random_flip_left_right",
    "random_flip_top_bottom", "resize", "crop", "random_brightness", "random_contrast",
    "random_saturation", "random_hue", "random_color_jitter", "adjust_lighting",
    "random_lighting")}


def call_op(F, op_name, args, kwargs, public):
    """Run registry op ``op_name`` with MXNet's generated-function arguments:
    inputs (positional, then by name), then parameters."""
    op = _reg.get(op_name)
    out = kwargs.pop("out", None)
    kwargs.pop("name", None)
    fixed = [n for n in op.inputs if not n.startswith("*")]
    args = list(args)
    inputs = []
    if op.variadic:
        while args and F.isarr(args[0]):
            inputs.append(args.pop(0))
    else:
        for n in fixed:
            v = args.pop(0) if args else kwargs.pop(n, None)
            if v is None:
                if n in op.optional:
                    continue
                raise TypeError("%s() missing input %r (%s takes %s)"
                                % (public, n, op.name, ", ".join(fixed)))
            inputs.append(v)
    for i, x in enumerate(inputs):
        if not F.isarr(x):
            raise TypeError("%s(): input %d must be an array%s, got %s"
                            % (public, i, "" if F.kind == "nd" else " (a Symbol)",
                               type(x).__name__))
    pnames = [p.name for p in op.params]
    if len(args) > len(pnames):
        raise TypeError("%s() takes at most %d positional arguments"
                        % (public, len(fixed) + len(pnames)))
    for p, v in zip(pnames, args):
        if p in kwargs:
            raise TypeError("%s() got multiple values for %r" % (public, p))
        kwargs[p] = v
    if F.kind != "nd":
        return F.op(op_name, inputs, kwargs)
    from ..ndarray._invoke import invoke as _invoke
    from .multiarray import _as_np, _ctx
    ctx = kwargs.pop("ctx", None) if "ctx" not in op.pindex else None
    attrs = op.parse({k: v for k, v in kwargs.items() if v is not _reg.Null})
    if "ctx" in attrs and attrs["ctx"] not in (None, ""):
        ctx, attrs["ctx"] = attrs["ctx"], None
    where = _ctx(ctx) if not inputs and ctx is not None else None
    inputs = [F.arr(x) for x in inputs]
    res = _invoke(op, inputs, attrs, out, where)
    return res if out is not None else _as_np(res)


def _signature(op):
    """MXNet's generated signature: (F, inputs..., params..., out=None, name=None)."""
    P = inspect.Parameter
    params = [P("F", P.POSITIONAL_ONLY)]
    params += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in op.inputs
               if not n.startswith("*")]
    params += [P(p.name, P.POSITIONAL_OR_KEYWORD,
                 default=None if p.default is _reg.Null else p.default) for p in op.params]
    params += [P("out", P.KEYWORD_ONLY, default=None), P("name", P.KEYWORD_ONLY, default=None)]
    return inspect.Signature(params)


def _make(public, op_name):
    def impl(F, *args, **kwargs):
        return call_op(F, op_name, args, kwargs, public)
    impl.__name__ = impl.__qualname__ = public
    if op_name in _reg.ops() and not _reg.get(op_name).variadic:
        impl.__signature__ = _signature(_reg.get(op_name))
    impl.__doc__ = "MXNet's ``%s`` operator as ``npx.%s``.\n\n%s" % (
        op_name, public, _reg.get(op_name).doc if op_name in _reg.ops() else "")
    return impl


for _name, _op in _NPX.items():
    if _op in _reg.ops():
        front(_name, ns="npx")(_make(_name, _op))
for _name, _op in _IMAGE.items():
    if _op in _reg.ops():
        front(_name, ns="npx.image")(_make(_name, _op))


@front("constraint_check", ns="npx")
def constraint_check(F, x, msg="Constraint violated."):
    """True (a 0-d bool array) when every element of the boolean ``x`` is True;
    otherwise a ValueError carrying ``msg``, raised when the result is read
    (multiply a value by the result to keep the check in a graph)."""
    return F.op("_npx_constraint_check", [F.arr(x)], {"msg": str(msg)})


