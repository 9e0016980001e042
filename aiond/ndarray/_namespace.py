"""Builds ``mx.nd.<op>`` functions from the op registry: real Python
functions with a signature and docstring (no code strings passed to exec)."""
from __future__ import annotations

import inspect

from ..base import MXNetError as _MXNetError
from ..ops import registry as _reg
from ..ops.registry import Null
from . import _invoke as _inv
from ._invoke import invoke

__all__ = ["make_function", "populate", "MissingInputError"]


class MissingInputError(_MXNetError, TypeError):
    """A call that leaves out an input the op needs: MXNet reports it as an
    MXNetError (the op got fewer inputs than it expects); it is also a
    TypeError, as a Python call missing an argument is."""


def make_function(op, public_name=None):
    """A function ``name(*inputs, **params, out=None, name=None)`` for ``op``."""
    variadic = op.variadic
    in_names = [n.lstrip("*") for n in op.inputs]
    fixed = [n for n in op.inputs if not n.startswith("*")]
    pnames = [p.name for p in op.params]
    fname = public_name or op.name
    # trailing inputs an op lets callers leave out or pass as None (FullyConnected's
    # bias with no_bias=True); the op's shape rule checks the count against its attrs
    optional = op.optional
    # output storage type set by attrs (sparse_grad): the storage-aware path
    from ..ops.sparse import ATTR_STYPE_OPS
    attr_stype = op.name in ATTR_STYPE_OPS

    def fn(*args, **kwargs):
        # set once ndarray.py has loaded; an import here cost 0.6 us a call
        NDArray = _inv._NDArray
        out = kwargs.pop("out", None)
        kwargs.pop("name", None)
        ctx = kwargs.pop("ctx", None) if "ctx" not in op.pindex else kwargs.get("ctx")
        inputs = []
        args = list(args)
        if variadic:
            while args and isinstance(args[0], NDArray):
                inputs.append(args.pop(0))
            for n in in_names:
                if n in kwargs:
                    v = kwargs.pop(n)
                    inputs.extend(v if isinstance(v, (list, tuple)) else [v])
            kwargs.pop("num_args", None)
        else:
            for n in fixed:
                if args:
                    v = args.pop(0)
                    if v is not None or n not in optional:
                        inputs.append(v)
                elif n in kwargs:
                    v = kwargs.pop(n)
                    if v is not None or n not in optional:
                        inputs.append(v)
                elif n not in optional:
                    raise MissingInputError(
                        "%s() missing input %r: operator %s expects %d inputs, got %d"
                        % (fname, n, op.name, len(fixed), len(inputs)))
        for i, x in enumerate(inputs):
            if not isinstance(x, NDArray):
                raise TypeError("%s(): input %s must be an NDArray, got %s"
                                % (fname, in_names[min(i, len(in_names) - 1)], type(x).__name__))
        for p, v in zip(pnames, args):
            if p in kwargs:
                raise TypeError("%s() got multiple values for %r" % (fname, p))
            kwargs[p] = v
        extra = args[len(pnames):]
        if extra and not variadic and len(extra) <= 2 and out is None:
            out = extra[0]      # MXNet's generated signature: (inputs, params, out, name)
        elif extra:
            raise TypeError("%s() takes at most %d positional arguments"
                            % (fname, len(fixed) + len(pnames) + (0 if variadic else 2)))
        attrs = op.parse(kwargs)
        if "ctx" in attrs:
            ctx = attrs.pop("ctx")
            attrs["ctx"] = None
        if ctx is not None and not inputs:
            from .ndarray import _ctx_arg
            ctx = _ctx_arg(ctx)
        if attr_stype:
            from ._sparse_invoke import sparse_invoke
            return sparse_invoke(op, inputs, attrs, out, ctx)
        return invoke(op, inputs, attrs, out, ctx)

    params = []
    for n in op.inputs:
        if n.startswith("*"):
            params.append(inspect.Parameter(n[1:], inspect.Parameter.VAR_POSITIONAL))
        else:
            params.append(inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None))
    kind = inspect.Parameter.KEYWORD_ONLY if variadic else inspect.Parameter.POSITIONAL_OR_KEYWORD
    for p in op.params:
        d = p.default
        params.append(inspect.Parameter(p.name, kind, default=None if d is Null else d))
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
    fn.__signature__ = inspect.Signature(params)
    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = _doc(op)
    fn.__module__ = "aiond.ndarray"
    return fn


def _doc(op):
    lines = [op.doc or op.name, "", "Parameters", "----------"]
    for n in op.inputs:
        lines.append("%s : NDArray" % n.lstrip("*"))
    for p in op.params:
        d = "required" if p.default is Null else "default %r" % (p.default,)
        lines.append("%s : %s" % (p.name, d))
        if p.doc:
            lines.append("    " + p.doc)
    lines.append("out : NDArray, optional\n    The output array.")
    return "\n".join(lines)


def populate(namespace: dict, internal: dict):
    """Fill the ``nd`` and ``nd._internal`` namespaces from the registry."""
    for name, op in _reg.ops().items():
        fn = make_function(op, name)
        if name.startswith("_"):
            internal[name] = fn
        elif name not in namespace:
            namespace[name] = fn


def populate_lazily(namespace: dict, internal: dict, attrs=None, prefix="", exclude=(),
                    module=None, make=None, aliases=None, own_getattr=False):
    """Like ``populate``, but each function is built the first time it is
    looked up (PEP 562 ``__getattr__``), so a program pays only for the op
    modules it uses. ``dir()``, ``hasattr``/``getattr`` and star imports
    (``__all__``) see every op, loaded or not.

    ``attrs`` maps further lazy names to ``(module, attribute or None)``,
    relative to ``namespace``'s package (submodules, re-exported helpers).
    ``prefix`` (a string or a tuple tried in order) selects the ops: the
    namespace's ``name`` is op ``prefix + name``, where ``""`` stands for the
    public (not ``_``) names; ops in ``exclude`` are left out. ``internal``
    (a dict, or None) receives the ``_``-names when ``prefix`` is ``""``,
    and ``aliases`` (name -> op name) there. ``module`` is the functions'
    ``__module__`` (default: make_function's); ``make(op, full_name, name)``
    builds a function (default: this module's ``make_function(op, name)``).
    With ``own_getattr`` the namespace keeps its own ``__getattr__`` (only
    ``__dir__`` is installed)."""
    from ..ops import _lazy
    attrs = dict(attrs or {})
    prefixes = (prefix,) if isinstance(prefix, str) else tuple(prefix)
    modname = namespace["__name__"]
    package = namespace.get("__package__") or modname.rpartition(".")[0]
    if make is None:
        def make(op, full, name):
            return make_function(op, name)

    def op_name(name):
        for p in prefixes:
            if p or not name.startswith("_"):
                full = p + name
                if full not in exclude and _lazy.known(full):
                    return full
        return None

    def public_names():
        names = {n for n in namespace if not n.startswith("_")} | set(attrs)
        for n in _lazy.names():
            if n in exclude:
                continue
            for p in prefixes:
                if (n.startswith(p) and len(n) > len(p)) if p else not n.startswith("_"):
                    names.add(n[len(p):])
        return names

    def __getattr__(name):
        entry = attrs.get(name)
        if entry is not None:
            import importlib
            mod = importlib.import_module(entry[0], package)
            value = mod if entry[1] is None else getattr(mod, entry[1])
            namespace[name] = value
            return value
        if name == "__all__":
            return sorted(public_names())
        full = op_name(name) if not name.startswith("__") else None
        if full is None:
            raise AttributeError("module %r has no attribute %r" % (modname, name))
        fn = make(_reg.get(full), full, name)
        if module:
            fn.__module__ = module
        namespace[name] = fn
        return fn

    def __dir__():
        return sorted(set(namespace) | public_names())

    if not own_getattr:
        namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
    if internal is not None and prefixes == ("",):
        _lazy_internal(internal, make, aliases or {})


def _lazy_internal(internal: dict, make, aliases):
    """``_internal``: the ``_``-named ops (and ``aliases``), built on first lookup."""
    from ..ops import _lazy

    def __getattr__(name):
        full = aliases.get(name)
        if full is not None:
            full = full if _lazy.known(full) else None
        elif name.startswith("_") and not name.startswith("__") and _lazy.known(name):
            full = name
        if full is not None:
            fn = internal[name] = make(_reg.get(full), full, name)
            return fn
        raise AttributeError("module %r has no attribute %r" % (internal["__name__"], name))

    def __dir__():
        return sorted(set(internal) | set(aliases)
                      | {n for n in _lazy.names() if n.startswith("_")})

    internal["__getattr__"] = __getattr__
    internal["__dir__"] = __dir__
