"""The op registry: one entry per operator serves every layer and device.

An entry holds the op's MXNet name, its inputs, its parameters (parsed from
Python values or from the strings of symbol JSON), a shape/dtype rule that
runs at push time, one kernel body written against ``xp`` (numpy or CuPy)
and a gradient slot. ``mx.nd.<op>`` (and later ``mx.sym.<op>``) are real
Python functions built from these entries.

    @register("broadcast_add", inputs=("lhs", "rhs"), infer=broadcast_rule,
              elemwise=True)
    def broadcast_add(xp, lhs, rhs, out):
        xp.add(lhs, rhs, out=out)
"""
from __future__ import annotations

import ast
from typing import Callable

import numpy as np

from ..base import OpError, _Null, _NullType  # noqa: F401
from ..engine.scheduler import CALLER
from ._quiet import quiet_kernel

__all__ = ["Op", "Param", "register", "get", "ops", "alias", "Null", "parse_attrs", "host_kernels",
           "memo_rule", "set_rows", "set_invoke_hook"]


Null = _Null  # MXNet's ``_Null``: an argument the caller did not give

_DTYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16,
    "uint8": np.uint8, "int8": np.int8, "int32": np.int32, "int64": np.int64,
    "bool": np.bool_, "int16": np.int16, "uint16": np.uint16, "uint32": np.uint32,
    "uint64": np.uint64, "real_t": np.float32, "float": np.float32, "double": np.float64,
    "half": np.float16,
}


def to_dtype(x) -> np.dtype:
    """A numpy dtype from MXNet's spellings ('float32', np.float32, ...)."""
    if isinstance(x, np.dtype):
        return x
    if isinstance(x, str):
        t = _DTYPES.get(x)
        if t is None:
            raise TypeError("unknown dtype %r; expected one of %s" % (x, sorted(_DTYPES)))
        return np.dtype(t)
    try:
        return np.dtype(x)
    except TypeError:
        raise TypeError("unknown dtype %r" % (x,)) from None


def _lit(v):
    if isinstance(v, str):
        s = v.strip()
        if s in ("None", ""):
            return None
        if s.isidentifier() and s not in ("True", "False"):
            # a bare word ('NCHW', 'max') is never a literal: literal_eval
            # would raise after ~10 us, and leave a reference cycle behind
            return v
        try:
            return ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            # MemoryError/RecursionError: a file's "-----...1" nests past the parser
            return v
    return v


def p_int(v):
    v = _lit(v)
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    raise TypeError("expected an int, got %r" % (v,))


_NONFINITE = {"inf": np.inf, "+inf": np.inf, "-inf": -np.inf, "nan": np.nan}


def p_float(v):
    v = _lit(v)
    if isinstance(v, (int, float, np.number, np.bool_)):
        return float(v)
    if isinstance(v, str) and v.strip().lower() in _NONFINITE:
        # str(float('-inf')) as a graph attribute (MXNet's parser reads it too)
        return float(_NONFINITE[v.strip().lower()])
    raise TypeError("expected a number, got %r" % (v,))


def p_bool(v):
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "1"):
            return True
        if s in ("false", "0"):
            return False
        raise TypeError("expected a bool, got %r" % (v,))
    return bool(v)


def p_shape(v):
    v = _lit(v)
    if v is None:
        return None
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    try:
        return tuple(int(d) for d in v)
    except TypeError:
        raise TypeError("expected a shape (tuple of ints), got %r" % (v,)) from None


def p_axis(v):
    """An int, a tuple of ints, or None (all axes)."""
    v = _lit(v)
    if v is None or v == ():
        return None if v is None else ()
    if isinstance(v, (int, np.integer)):
        return int(v)
    try:
        return tuple(int(d) for d in v)
    except TypeError:
        raise TypeError("expected an axis (int or tuple of ints), got %r" % (v,)) from None


def p_str(v):
    return str(v)


def p_dtype(v):
    if v is None or v is Null:
        return None
    if isinstance(v, str) and v.strip() == "None":
        return None
    return to_dtype(v)


def p_any(v):
    return _lit(v)


class Param:
    """One operator parameter: name, parser, default and doc line."""
    __slots__ = ("name", "parse", "default", "doc", "choices")

    def __init__(self, name, parse=p_any, default=Null, doc="", choices=None):
        self.name, self.parse, self.default, self.doc, self.choices = name, parse, default, doc, choices


class Op:
    """A registry entry. See the module docstring."""
    __slots__ = ("name", "kernel", "infer", "grad", "inputs", "params", "pindex",
                 "num_outputs", "elemwise", "inline", "doc", "variadic", "attr_check",
                 "needs_rng", "aux", "output_names", "fgrad_inputs", "mutates", "train_aware",
                 "num_visible", "rows", "optional", "free_attrs", "host_kernel", "caller",
                 "graph_attrs")

    def __reduce_ex__(self, protocol):
        # a registered op pickles as its name (a block, graph or dataset holding
        # it goes to a DataLoader worker): its kernel is a wrapper that pickle
        # cannot find by its module path
        if _REGISTRY.get(self.name) is self:
            return (get, (self.name,))
        return super().__reduce_ex__(protocol)

    def __init__(self, name, kernel, infer, inputs, params, num_outputs=1, grad=None,
                 elemwise=False, inline=True, doc="", variadic=False, attr_check=None,
                 needs_rng=False, output_names=None, free_attrs=False):
        self.name = name
        self.kernel = kernel
        self.infer = infer
        self.grad = grad
        self.inputs = tuple(inputs)
        self.params = tuple(params)
        self.pindex = {p.name: p for p in self.params}
        self.num_outputs = num_outputs
        self.elemwise = elemwise
        self.inline = inline
        self.doc = doc
        self.variadic = variadic
        self.attr_check = attr_check
        self.needs_rng = needs_rng
        self.aux = ()
        self.output_names = output_names or ("output",)
        self.mutates = ()           # indices of inputs the kernel also writes (aux states)
        self.train_aware = False    # kernel gets _train=autograd.is_training() at push
        self.num_visible = None     # attrs -> how many outputs mx.nd returns (None: all)
        # rows(xp, inputs, out, attrs) -> (n, run(lo, hi)): the op computed by
        # ranges of output rows, so a large matmul can use every worker
        self.rows = None
        self.optional = frozenset()  # trailing inputs callers may leave out (see optional())
        # MXNet registered the op without an attribute parser, so it accepts and
        # ignores any keyword (zeros_like(x, dtype='int64') gives x's dtype)
        self.free_attrs = free_attrs
        # the kernel is numpy-only: on a GPU its inputs come to the host, it
        # runs there and its outputs go back (a host round trip; see host_kernels())
        self.host_kernel = False
        # the push flag for a call too big to run inline: CALLER lets a plain
        # pushing thread run it when it is ready; False (a kernel that waits
        # for other ops, like SyncBatchNorm's barrier) always a worker
        self.caller = CALLER
        # attrs a graph runner (a bound executor, a hybridized block's graph)
        # adds to this op's calls: MXNet's graph executors request only the
        # outputs a node's consumers need, which some kernels observe
        self.graph_attrs = None

    # invoke_hook(op, inputs, attrs, out, ctx): an entry kind that runs its own
    # push (Custom: user Python code; _CachedOp and control flow: subgraphs),
    # supplied by the layer above through set_invoke_hook; None for kernel ops.
    # A class attribute, so the push reads it as cheaply as a slot.
    invoke_hook = None

    def __repr__(self):
        return "<Op %s>" % self.name

    def mutated(self, n_inputs):
        """Indices of the inputs the kernel writes: ``mutates``, or every
        input when it is ``"all"`` (variadic in-place ops like reset_arrays), or
        what a callable ``mutates(n_inputs)`` returns (variadic ops that write
        some slots of each group, like multi_sgd_mom_update's momenta)."""
        m = self.mutates
        if m == "all":
            return range(n_inputs)
        if callable(m):
            return m(n_inputs)
        return m

    def parse(self, kwargs) -> dict:
        """Parse keyword parameters into an attrs dict, filling defaults."""
        return parse_attrs(self, kwargs)


_REGISTRY: dict = {}


def parse_attrs(op, kwargs) -> dict:
    attrs = {}
    pindex = op.pindex
    for k, v in kwargs.items():
        p = pindex.get(k)
        if p is None:
            if op.free_attrs or (not pindex and not op.variadic):
                # MXNet: an op without a parameter struct (no attr_parser,
                # e.g. broadcast_maximum) ignores keyword attributes it has no
                # use for; only ops with parameters reject unknown ones
                continue
            raise OpError("%s got an unexpected argument %r; its arguments are %s"
                          % (op.name, k, ", ".join(list(op.inputs) + [q.name for q in op.params])))
        if v is Null:
            continue
        try:
            val = p.parse(v)
        except (TypeError, ValueError, ArithmeticError) as e:
            r = repr(v)
            if len(r) > 80:
                r = r[:60] + "...(%d characters)" % len(r)
            m = str(e)
            if len(m) > 200:
                m = m[:160] + "...(%d characters)" % len(m)
            raise OpError("%s: argument %s=%s is invalid: %s" % (op.name, k, r, m)) from None
        if p.choices is not None and val not in p.choices:
            raise OpError("%s: %s=%r is not supported; expected one of %s"
                          % (op.name, k, v, ", ".join(repr(c) for c in p.choices)))
        attrs[k] = val
    for p in op.params:
        if p.name not in attrs:
            if p.default is Null:
                raise OpError("%s: required argument %r is missing" % (op.name, p.name))
            attrs[p.name] = p.default
    if op.attr_check is not None:
        op.attr_check(op, attrs)
    return attrs


def memo_rule(rule, size=64):
    """``rule`` remembering up to ``size`` results by (shapes, dtypes, attrs)
    (all forgotten when full), for a shape rule of many small steps (a
    convolution's, a loss's) that a loop calls with the same arguments every
    step. Only a rule that reads nothing but its arguments may be wrapped;
    errors are never kept."""
    memo = {}

    def memoized(attrs, shapes, dtypes):
        try:
            key = (tuple(shapes), tuple(dtypes), tuple(attrs.items()))
            hit = memo.get(key)
        except TypeError:           # an attribute value that does not hash
            return rule(attrs, shapes, dtypes)
        if hit is not None:
            return hit
        res = rule(attrs, shapes, dtypes)
        if type(res) is tuple and all(type(r) is tuple for r in res):
            if len(memo) >= size:
                memo.clear()
            memo[key] = res
        return res
    memoized.rule = rule
    return memoized


class _Hooks:
    """What the layers above set for ops, which never import them: the
    thread's training flag (autograd's), for shape rules that depend on it."""
    is_training = staticmethod(lambda: False)
    # ndarray's invoke(op, inputs, attrs): grad rules that push an op with raw attrs
    invoke = None


hooks = _Hooks()


def register(name, *, inputs=("data",), params=(), infer=None, grad=None, num_outputs=1,
             elemwise=False, inline=True, aliases=(), variadic=False, attr_check=None,
             needs_rng=False, output_names=None, mutates=(), train_aware=False,
             num_visible=None, aux=(), waits=False, rows=None, free_attrs=False) -> Callable:
    """Decorator adding ``kernel(xp, *inputs, out, **attrs)`` as op ``name``.

    ``out`` is one array, or a list for ``num_outputs > 1``; ``infer`` is the
    shape/dtype rule; ``grad`` the gradient rule (see ``_grad.py``);
    ``inline`` is True (a ready op touching few elements runs on the pushing
    thread), False (always a worker), or ``cost(attrs, in_shapes, out_shapes)``
    estimating the work in elements for ops whose time is not their size
    (matmuls, convolutions; see ``matmul_cost``). ``needs_rng`` passes ``rng=`` (the context's generator, ordered by the
    engine); ``train_aware`` passes ``_train`` (autograd's training flag at
    push); ``mutates`` lists input indices the kernel updates in place (e.g.
    BatchNorm's moving mean/var; ``"all"``: every input; a callable: the
    indices for a number of inputs), which the engine
    then orders as writes;
    ``aux`` names those inputs for Symbol; ``num_visible(attrs)`` is how many
    outputs ``mx.nd`` returns; ``waits``: the kernel blocks until other ops
    run (a barrier across devices), so only a worker may run it (the entry's
    ``caller`` flag); ``rows(xp, inputs, out, attrs) -> (n, run(lo, hi))``
    computes the op by ranges of output rows, so a large product can use
    every worker (``(0, None)``: not this call); ``free_attrs``: as an op
    MXNet registered without an attribute parser, accept and ignore any
    keyword."""
    if rows is not None and not callable(rows):
        raise TypeError("register(%r): rows must be a function (xp, inputs, out, attrs) -> "
                        "(n, run), got %r" % (name, rows))

    def deco(kernel):
        doc = (kernel.__doc__ or "").strip()
        op = Op(name, quiet_kernel(kernel), infer, inputs, params, num_outputs, grad,
                elemwise, inline, doc, variadic, attr_check, needs_rng, output_names,
                free_attrs)
        op.rows = rows
        op.mutates = mutates if (mutates == "all" or callable(mutates)) else tuple(mutates)
        op.train_aware = train_aware
        op.num_visible = num_visible
        op.aux = tuple(aux)
        if waits:
            op.caller = False
        op.optional = getattr(kernel, "optional_inputs", frozenset())
        if name in _REGISTRY:
            raise RuntimeError("op %s registered twice" % name)
        _REGISTRY[name] = op
        for a in aliases:
            if _REGISTRY.get(a, op) is not op:
                raise RuntimeError("op alias %s of %s is already op %s" % (a, name, _REGISTRY[a].name))
            _REGISTRY[a] = op
        return kernel
    return deco


def set_rows(name, rows, inline=None):
    """Give op ``name`` the row splitter ``rows`` (``register``'s argument)
    and, when given, its ``inline`` cost rule, for a module that writes its
    splitters below the ops they split."""
    if not callable(rows):
        raise TypeError("set_rows(%r): rows must be a function (xp, inputs, out, attrs) -> "
                        "(n, run), got %r" % (name, rows))
    op = get(name)
    op.rows = rows
    if inline is not None:
        op.inline = inline


def set_invoke_hook(kind, hook):
    """Run every op of entry class ``kind`` (an Op subclass such as
    CustomEntry) through ``hook(op, inputs, attrs, out, ctx)`` instead of a
    kernel push. The layer that gives those ops meaning sits above the ops
    (symbol runs subgraphs and loop bodies, mx.operator runs user Python
    code) and supplies the hook when it is imported. ``hook=None`` removes it."""
    if not (isinstance(kind, type) and issubclass(kind, Op)) or kind is Op:
        raise TypeError("set_invoke_hook: kind must be a subclass of Op (an entry kind such as "
                        "CustomEntry), got %r" % (kind,))
    if hook is not None and not callable(hook):
        raise TypeError("set_invoke_hook(%s): hook must be a function (op, inputs, attrs, out, "
                        "ctx), got %r" % (kind.__name__, hook))
    kind.invoke_hook = None if hook is None else staticmethod(hook)


def matmul_cost(attrs, shapes, oshapes):
    """Work of a matmul-like op in 'elementwise element' units: the output
    size times the contracted length, over 8 (BLAS does several MACs in the
    time an elementwise ufunc handles one element)."""
    n = 1
    for d in oshapes[0]:
        n *= d
    k = shapes[0][-1] if shapes and shapes[0] else 1
    return n * k // 8


def window_cost(attrs, shapes, oshapes):
    """Work of a convolution or pooling: output size times window size
    (times input channels per group for convolutions), over 8."""
    n = 1
    for d in oshapes[0]:
        n *= d
    kernel = attrs.get("kernel") or ()
    win = 1
    for d in kernel:
        win *= d
    if attrs.get("global_pool") and shapes:
        win = 1
        for d in shapes[0][2:]:
            win *= d
    if len(shapes) > 1 and len(shapes[1]) > 2:     # weight (out, in/groups, *kernel)
        win *= shapes[1][1]
    return n * max(win, 1) // 8


def optional(*names):
    """Decorator (below ``@register``): trailing inputs that ``mx.nd`` callers
    may leave out or pass as None, such as bias with ``no_bias=True``; the
    op's shape rule checks the count against its attrs."""
    def deco(kernel):
        kernel.optional_inputs = frozenset(names)
        return kernel
    return deco


def host_kernels(*names):
    """Mark ops whose kernels run on numpy only (host-side algorithms, or
    draws from the context's host generator with per-element parameters):
    on a GPU, their inputs are copied to the host for the kernel."""
    for n in names:
        get(n).host_kernel = True


def alias(name, *names):
    op = get(name)
    for n in names:
        _REGISTRY[n] = op


def get(name) -> Op:
    try:
        return _REGISTRY[name]
    except KeyError:
        pass
    from . import _lazy         # op modules load on first use of one of their ops
    _lazy.load(name)
    op = _REGISTRY.get(name)
    if op is not None:
        return op
    raise OpError("operator %r is not registered in aiond" % name) from None


def ops() -> dict:
    """name -> Op, aliases included (loads every op module)."""
    from . import _lazy
    _lazy.load_all()
    return dict(_REGISTRY)
