"""``mx.sym.<op>`` functions built from the op registry, and the per-op
tables Symbol needs beyond the registry entry: inputs that depend on
parameters (``no_bias``), the shapes a layer gives its parameters (for
shape inference), the dtypes of those parameters, and the attributes an op
sets on the variables it creates (BatchNorm's moving-state initialisers).

The tables are keyed by MXNet op name; an op missing from the registry is
simply never looked up.
"""
from __future__ import annotations

import inspect
import math

import numpy as np

from ..ops import _rules
from ..ops import registry as _reg
from ..ops.registry import Null
# op input naming and MXNet's ignored tuning parameters live with the graph IR
from ..graph.ir import IGNORED_PARAMS, NO_INPUT_NAMES, OPTIONAL_INPUTS, input_names  # noqa: F401
from ..graph.ir import no_bias as _no_bias  # noqa: F401  (_contrib_tables uses it)

__all__ = ["make_function", "populate", "input_names", "PARAM_SHAPES", "FLUENT"]


# ------------------------------------------------ attributes set on compose


def _bn_var_attrs(params, var, index):
    if "__init__" in var.attrs:
        return
    if index == 3:
        var.attrs["__init__"] = '["zero", {}]'
    elif index == 4:
        var.attrs["__init__"] = '["one", {}]'


def _prelu_var_attrs(params, var, index):
    if index == 1 and "__init__" not in var.attrs:
        var.attrs["__init__"] = '["Constant", {"value": 0.25}]'


SET_INPUT_VAR_ATTRS = {
    "BatchNorm": _bn_var_attrs,
    "BatchNorm_v1": _bn_var_attrs,
    "_contrib_SyncBatchNorm": _bn_var_attrs,
    "LeakyReLU": _prelu_var_attrs,
}


# ------------------------------------------------ shapes of layer parameters


def _fc(p, d):
    k = math.prod(d[1:]) if p.get("flatten", True) else d[-1]
    nh = p["num_hidden"]
    return {"weight": (nh, k), "bias": (nh,)}


def _channels_last(p):
    layout = p.get("layout")
    return isinstance(layout, str) and layout.endswith("C")


def _conv(p, d):
    kernel = tuple(p["kernel"])
    nf = p["num_filter"]
    g = p.get("num_group") or 1
    if _channels_last(p):
        w = (nf,) + kernel + (d[-1] // g,)
    else:
        w = (nf, d[1] // g) + kernel
    return {"weight": w, "bias": (nf,)}


def _deconv(p, d):
    kernel = tuple(p["kernel"])
    nf = p["num_filter"]
    g = p.get("num_group") or 1
    c = d[-1] if _channels_last(p) else d[1]
    return {"weight": (c, nf // g) + kernel, "bias": (nf,)}


def _bn(p, d):
    axis = p.get("axis", 1)
    c = (d[axis % len(d)],)
    return {"gamma": c, "beta": c, "moving_mean": c, "moving_var": c}


def _ln(p, d):
    axis = p.get("axis", -1)
    c = (d[axis % len(d)],)
    return {"gamma": c, "beta": c}


def _inorm(p, d):
    return {"gamma": (d[1],), "beta": (d[1],)}


def _gn(p, d):
    g = (p.get("num_groups", 1),)
    return {"gamma": g, "beta": g}


def _emb(p, d):
    return {"weight": (p["input_dim"], p["output_dim"])}


def _prelu(p, d):
    return {"gamma": (d[1] if len(d) > 1 else 1,)} if p.get("act_type") == "prelu" else {}


def _softmax_label(p, d):
    if len(d) < 2:
        return {}
    if p.get("multi_output"):
        return {"label": (d[0], math.prod(d) // d[0] // d[1])}
    return {"label": tuple(d[:-1])}


def _same_label(p, d):
    # MXNet's RegressionOpShape: (n, 1) data takes a (n,) label by default
    if len(d) == 2 and d[1] == 1:
        return {"label": (d[0],)}
    return {"label": tuple(d)}


def _svm_label(p, d):
    return {"label": (d[0],)}


def _upsampling(p, d):
    # UpSamplingShape: the bilinear kernel is (channels, 1, k, k), k = 2 scale - scale % 2
    if p.get("sample_type") != "bilinear" or len(d) != 4:
        return {}
    scale = int(p.get("scale", 1))
    k = 2 * scale - scale % 2
    return {"weight": (d[1], 1, k, k)}


# op name -> (params, data shape) -> {input name: shape}
PARAM_SHAPES = {
    "UpSampling": _upsampling,
    "FullyConnected": _fc,
    "Convolution": _conv,
    "Deconvolution": _deconv,
    "BatchNorm": _bn,
    "BatchNorm_v1": _bn,
    "_contrib_SyncBatchNorm": _bn,
    "LayerNorm": _ln,
    "InstanceNorm": _inorm,
    "GroupNorm": _gn,
    "Embedding": _emb,
    "_contrib_SparseEmbedding": _emb,
    "LeakyReLU": _prelu,
    "SoftmaxOutput": _softmax_label,
    "Softmax": _softmax_label,
    "LinearRegressionOutput": _same_label,
    "LogisticRegressionOutput": _same_label,
    "MAERegressionOutput": _same_label,
    "SVMOutput": _svm_label,
}


def _rnn(p, d):
    from ..ops.rnn import param_shapes
    return param_shapes(p, d)


PARAM_SHAPES["RNN"] = _rnn


def _upsampling(p, d):
    if p.get("sample_type") != "bilinear":
        return {}
    from ..ops.upsampling import bilinear_param_shapes
    return bilinear_param_shapes(p, d)


PARAM_SHAPES["UpSampling"] = _upsampling


def _deformable(p, d):
    k = tuple(p["kernel"])
    nf, g = p["num_filter"], p.get("num_group") or 1
    s = tuple(p.get("stride") or (1,) * len(k))
    dl = tuple(p.get("dilate") or (1,) * len(k))
    pd = tuple(p.get("pad") or (0,) * len(k))
    out = tuple((n + 2 * q - (e * (kk - 1) + 1)) // t + 1
                for n, kk, t, e, q in zip(d[2:], k, s, dl, pd))
    dg = p.get("num_deformable_group") or 1
    return {"offset": (d[0], dg * 2 * math.prod(k)) + out, "weight": (nf, d[1] // g) + k,
            "bias": (nf,)}


PARAM_SHAPES["_contrib_DeformableConvolution"] = _deformable

# inputs a rule fills only when unknown: the op itself accepts other shapes
# (SoftmaxOutput takes probability labels shaped like data, regression
# outputs take (n,) labels for (n, 1) data, PReLU takes a (1,) gamma)
SOFT_INPUTS = frozenset((("SoftmaxOutput", "label"), ("Softmax", "label"),
                         ("LeakyReLU", "gamma"), ("LinearRegressionOutput", "label"),
                         ("LogisticRegressionOutput", "label"),
                         ("MAERegressionOutput", "label")))


def is_same_shape(op):
    """Elementwise ops whose inputs all share one shape (an unknown one takes the other's)."""
    return op.infer is _rules.elemwise_same


# ------------------------------------------------------------ dtypes

_F32 = np.dtype(np.float32)
# ops whose dtype parameter names the weight's dtype, not the output's
EMBEDDINGS = ("Embedding", "_contrib_SparseEmbedding")
_NORMS = ("BatchNorm", "BatchNorm_v1", "_contrib_SyncBatchNorm", "LayerNorm", "InstanceNorm",
          "GroupNorm")


def param_dtypes(op, params, in_dtypes):
    """Dtypes for unknown inputs of ``op`` given the known ones: {index: dtype}."""
    if not in_dtypes:
        return {}
    names = input_names(op, params, len(in_dtypes))
    d0 = in_dtypes[0]
    if op.name in EMBEDDINGS:
        w = params.get("dtype")
        return {i: np.dtype(w) if w is not None else _F32
                for i, n in enumerate(names) if n == "weight" and in_dtypes[i] is None}
    if d0 is None:
        known = next((d for d in in_dtypes if d is not None), None)
        if known is None or op.name in PARAM_SHAPES:
            return {}
        return {i: known for i, d in enumerate(in_dtypes) if d is None}
    pd = _F32 if (op.name in _NORMS and d0 == np.float16) else d0
    return {i: pd for i, d in enumerate(in_dtypes) if d is None and i > 0}


def fallback_out_dtype(op, params, in_dtypes):
    """The output dtype when the registry rule cannot run (shapes unknown);
    raises OpError where the op needs equal input dtypes and they differ."""
    if op.infer is _rules.elemwise_same or op.infer is _rules.broadcast:
        _rules.same_dtype(in_dtypes)
    dt = params.get("dtype")
    if dt is not None and "dtype" in op.pindex:
        try:
            return np.dtype(dt)
        except TypeError:
            pass
    if op.name in EMBEDDINGS:
        return in_dtypes[1] if len(in_dtypes) > 1 else _F32
    return in_dtypes[0] if in_dtypes else _F32


# ------------------------------------------------------------ functions

FLUENT = (
    "reshape reshape_like zeros_like ones_like broadcast_axes repeat pad swapaxes split "
    "slice slice_axis slice_like take one_hot pick sort topk argsort argmax argmax_channel "
    "argmin clip abs sign shape_array size_array broadcast_to broadcast_like tile "
    "transpose flip depth_to_space space_to_depth sum nansum prod nanprod mean max min norm "
    "round rint fix floor ceil trunc sin cos tan arcsin arccos arctan degrees radians sinh "
    "cosh tanh arcsinh arccosh arctanh exp expm1 log log10 log2 log1p sqrt rsqrt cbrt rcbrt "
    "square reciprocal relu sigmoid softmax log_softmax softmin"
).split()

# the symbol operators' internal functions (hint = their lower-cased name)
ARITH = {
    "_Plus": "elemwise_add", "_Minus": "elemwise_sub", "_Mul": "elemwise_mul",
    "_Div": "elemwise_div", "_Mod": "_mod", "_Power": "_power", "_Maximum": "_maximum",
    "_Minimum": "_minimum", "_Hypot": "_hypot", "_PlusScalar": "_plus_scalar",
    "_MinusScalar": "_minus_scalar", "_RMinusScalar": "_rminus_scalar",
    "_MulScalar": "_mul_scalar", "_DivScalar": "_div_scalar", "_RDivScalar": "_rdiv_scalar",
    "_ModScalar": "_mod_scalar", "_RModScalar": "_rmod_scalar",
    "_PowerScalar": "_power_scalar", "_RPowerScalar": "_rpower_scalar",
    "_MaximumScalar": "_maximum_scalar", "_MinimumScalar": "_minimum_scalar",
    "_HypotScalar": "_hypot_scalar",
}


def make_function(op, public_name=None):
    """``mx.sym.<name>``: positional inputs, then parameters; ``name=``,
    ``attr=``; missing inputs become variables named ``<name>_<input>``."""
    from .symbol import Symbol, create
    fname = public_name or op.name
    hint = fname.lower()
    variadic = op.variadic
    fixed = [n for n in op.inputs if not n.startswith("*")]
    var_name = next((n[1:] for n in op.inputs if n.startswith("*")), None)
    pnames = [p.name for p in op.params]

    def fn(*args, **kwargs):
        name = kwargs.pop("name", None)
        attr = kwargs.pop("attr", None)
        kwargs.pop("out", None)
        sym_kwargs = {}
        sym_args = []
        if variadic:
            for i, a in enumerate(args):
                if isinstance(a, (list, tuple)) and len(args) == 1:
                    sym_args.extend(a)
                    continue
                if not isinstance(a, Symbol):
                    raise TypeError("Positional arguments must be Symbol instances, but got %s"
                                    % str(a))
                sym_args.append(a)
            if var_name in kwargs and isinstance(kwargs[var_name], (list, tuple)):
                sym_args.extend(kwargs.pop(var_name))
        else:
            for i, a in enumerate(args):
                if i < len(fixed):
                    if a is None:
                        continue
                    if not isinstance(a, Symbol):
                        raise TypeError("Argument %s must be Symbol instances, but got %s"
                                        % (fixed[i], str(a)))
                    sym_kwargs[fixed[i]] = a
                else:
                    j = i - len(fixed)
                    if j >= len(pnames):
                        raise TypeError("%s() takes at most %d positional arguments"
                                        % (fname, len(fixed) + len(pnames)))
                    if pnames[j] in kwargs:
                        raise TypeError("%s() got multiple values for %r" % (fname, pnames[j]))
                    kwargs[pnames[j]] = a
        for k in list(kwargs):
            v = kwargs[k]
            if isinstance(v, Symbol):
                sym_kwargs[k] = kwargs.pop(k)
            elif v is None and k in fixed:
                kwargs.pop(k)
        if "ctx" in kwargs and "ctx" in op.pindex:
            kwargs.pop("ctx")
        return create(op, hint, sym_args, sym_kwargs, kwargs, name, attr)

    params = []
    if variadic:
        params.append(inspect.Parameter(var_name or "args", inspect.Parameter.VAR_POSITIONAL))
        kind = inspect.Parameter.KEYWORD_ONLY
    else:
        for n in fixed:
            params.append(inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=None))
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    for p in op.params:
        params.append(inspect.Parameter(p.name, kind, default=Null if p.default is Null
                                        else p.default))
    for extra in ("name", "attr", "out"):
        params.append(inspect.Parameter(extra, inspect.Parameter.KEYWORD_ONLY, default=None))
    params.append(inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD))
    fn.__signature__ = inspect.Signature(params)
    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = _doc(op, fname)
    fn.__module__ = "aiond.symbol"
    return fn


def _doc(op, fname):
    lines = [op.doc or op.name, "", "Parameters", "----------"]
    for n in op.inputs:
        lines.append("%s : Symbol%s" % (n.lstrip("*"), "s (positional)" if n[0] == "*" else ""))
    for p in op.params:
        d = "required" if p.default is Null else "optional, default %r" % (p.default,)
        lines.append("%s : %s" % (p.name, d))
        if p.doc:
            lines.append("    " + p.doc)
    lines += ["name : str, optional", "    Name of the resulting symbol (default: %s<N>)."
              % fname.lower(), "attr : dict of str to str, optional",
              "    Attributes of the resulting symbol.", "", "Returns", "-------",
              "Symbol"]
    return "\n".join(lines)


def populate(namespace: dict, internal: dict, submodules: dict):
    """Fill ``mx.sym``, ``mx.sym._internal`` and the prefixed submodules
    (``linalg``, ``contrib``, ``random``...) from the registry."""
    for name, op in _reg.ops().items():
        for prefix, mod in submodules.items():
            if name.startswith(prefix):
                short = name[len(prefix):]
                mod.setdefault(short, make_function(op, short))
        if name.startswith("_"):
            internal[name] = make_function(op, name)
        elif name not in namespace:
            namespace[name] = make_function(op, name)
    for name, target in ARITH.items():
        try:
            internal.setdefault(name, make_function(_reg.get(target), name))
        except Exception:  # noqa: BLE001 - an op not registered (yet)
            pass


def _short(op, full, name):
    return make_function(op, name)


def populate_lazily(namespace: dict, internal: dict, submodules: dict):
    """``populate``, each function made on first lookup (see
    ``ndarray._namespace.populate_lazily``); ``namespace`` keeps its own
    ``__getattr__``."""
    from ..ndarray._namespace import populate_lazily as lazily
    lazily(namespace, internal, make=_short, aliases=ARITH, own_getattr=True)
    for prefix, mod in submodules.items():
        lazily(mod, None, prefix=prefix, make=_short)
