"""aiond's extension of MXNet's checks: ``check_numeric_gradient``,
``check_symbolic_forward`` and ``check_symbolic_backward`` also take any
Python callable over NDArrays (checked through autograd), not only Symbols.
"""
from __future__ import annotations

import numpy as np

from ._compare import assert_almost_equal, default_numeric_eps


def _is_symbol(obj):
    return type(obj).__name__ == "Symbol" and hasattr(obj, "list_arguments")


def _as_np(v):
    return v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)


def _locations(fn, location):
    if isinstance(location, dict):
        return list(location.keys()), [_as_np(v) for v in location.values()]
    if _is_symbol(fn):
        names = fn.list_arguments()
        return names, [_as_np(v) for v in location]
    return None, [_as_np(v) for v in location]


def _evaluate(fn, names, arrays, aux_states, is_train):
    """Run fn (callable or Symbol) on NDArrays; returns the output NDArray list."""
    from .. import ndarray as nd
    if _is_symbol(fn):
        from ..symbol import _test_hooks
        return _test_hooks.forward(fn, names, arrays, aux_states, is_train)
    outs = fn(**dict(zip(names, arrays))) if names is not None else fn(*arrays)
    if isinstance(outs, nd.NDArray):
        outs = [outs]
    return list(outs)


def numeric_grad_callable(fn, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=np.float64, names=None):
    """Central finite differences of ``sum(out_i * proj_i)`` w.r.t. each input."""
    from .. import autograd, ndarray as nd
    # C order: the perturbation loop edits the flat view in place
    arrays = [np.array(v, dtype=dtype, order="C", copy=True) for v in location]
    projs = None
    grads = []

    def f(vals):
        with autograd.predict_mode() if not use_forward_train else autograd.train_mode():
            xs = [nd.array(v, dtype=dtype) for v in vals]
            outs = _evaluate(fn, names, xs, aux_states, use_forward_train)
        return [o.asnumpy().astype(np.float64) for o in outs]

    base = f(arrays)
    projs = _PROJ.get(id(fn)) or [np.random.normal(0, 1, b.shape) for b in base]
    for k, a in enumerate(arrays):
        g = np.zeros(a.shape, dtype=np.float64)
        flat = a.reshape(-1)
        gf = g.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps / 2
            up = sum(float((o * p).sum()) for o, p in zip(f(arrays), projs))
            flat[i] = old - eps / 2
            down = sum(float((o * p).sum()) for o, p in zip(f(arrays), projs))
            flat[i] = old
            gf[i] = (up - down) / eps
        grads.append(g)
    return grads, projs


_PROJ: dict = {}


def check_numeric_gradient_callable(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float64):
    """Check the analytic gradient of ``sym`` against finite differences.

    ``sym`` is a Symbol or a callable taking NDArrays (positionally, or by
    name when ``location`` is a dict) and returning an NDArray or a list;
    ``location`` gives the input values. The check uses a random projection
    of the outputs, as MXNet does. ``grad_nodes`` limits the inputs checked
    (names, or indices for a callable).
    """
    from .. import autograd, ndarray as nd
    names, arrays = _locations(sym, location)
    dtype = np.dtype(dtype)
    eps = numeric_eps if numeric_eps is not None else default_numeric_eps().get(dtype, 1e-4)
    xs = [nd.array(a, dtype=dtype, ctx=ctx) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record(train_mode=use_forward_train):
        outs = _evaluate(sym, names, xs, aux_states, use_forward_train)
    projs = [np.random.normal(0, 1, o.shape) for o in outs]
    autograd.backward(outs, [nd.array(p, dtype=o.dtype, ctx=o.context) for o, p in zip(outs, projs)])
    analytic = [x.grad.asnumpy().astype(np.float64) for x in xs]
    _PROJ[id(sym)] = projs
    try:
        numeric, _ = numeric_grad_callable(sym, arrays, aux_states, eps, use_forward_train, dtype, names)
    finally:
        _PROJ.pop(id(sym), None)
    check = range(len(xs))
    if grad_nodes is not None:
        keys = names if names is not None else list(range(len(xs)))
        check = [keys.index(g) for g in grad_nodes]
    rtol = 1e-2 if rtol is None else rtol
    atol = 1e-4 if atol is None else atol
    for i in check:
        label = names[i] if names is not None else "input %d" % i
        assert_almost_equal(numeric[i], analytic[i], rtol=rtol, atol=atol,
                            names=("NUMERICAL_%s" % label, "BACKWARD_%s" % label))


def check_symbolic_forward_callable(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """Check ``sym``'s forward outputs (a Symbol, or a callable over NDArrays)."""
    from .. import ndarray as nd
    names, arrays = _locations(sym, location)
    xs = [nd.array(a, dtype=dtype, ctx=ctx) for a in arrays]
    outs = _evaluate(sym, names, xs, aux_states, False)
    if isinstance(expected, dict):
        expected = list(expected.values())
    for i, (o, e) in enumerate(zip(outs, expected)):
        assert_almost_equal(o, e, rtol, atol, ("FORWARD_%d" % i, "EXPECTED_%d" % i), equal_nan)
    return [o.asnumpy() for o in outs]


def check_symbolic_backward_callable(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """Check the gradients of ``sym`` for head gradients ``out_grads``."""
    from .. import autograd, ndarray as nd
    names, arrays = _locations(sym, location)
    xs = [nd.array(a, dtype=dtype, ctx=ctx) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        outs = _evaluate(sym, names, xs, aux_states, True)
    heads = [nd.array(g, dtype=o.dtype) for g, o in zip(out_grads, outs)]
    autograd.backward(outs, heads)
    grads = [x.grad.asnumpy() for x in xs]
    if isinstance(expected, dict):
        keys = names if names is not None else list(range(len(xs)))
        pairs = [(grads[keys.index(k)], v, k) for k, v in expected.items()]
    else:
        pairs = [(g, e, i) for i, (g, e) in enumerate(zip(grads, expected))]
    for g, e, k in pairs:
        if e is None:
            continue
        assert_almost_equal(g, e, rtol, atol, ("BACKWARD_%s" % k, "EXPECTED_%s" % k), equal_nan)
    return grads
