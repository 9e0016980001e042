"""``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``: control flow run
as plain Python over NDArrays (MXNet 1.9.1's ndarray/contrib.py).

Each step calls the user's function on NDArrays, so every op it pushes is
recorded by autograd when recording is on and gradients flow through the
loop as through any Python code. ``while_loop`` and ``cond`` read their
condition (a one-element NDArray) on the calling thread to decide.
"""
from __future__ import annotations

from .ndarray import NDArray

__all__ = ["foreach", "while_loop", "cond", "flatten", "regroup", "LoopInputError"]


class LoopInputError(ValueError, AssertionError):
    """Inputs of a loop that are not what it takes (MXNet asserts these, so
    code written for MXNet catches AssertionError; it is a ValueError too)."""


def flatten(args, what):
    """``args`` (an NDArray or nested lists of them) as a flat list and its
    format (0 for a single NDArray, else a list of the members' formats)."""
    if isinstance(args, NDArray):
        return [args], 0
    if not isinstance(args, (list, tuple)):
        raise LoopInputError("%s must be an NDArray or a (nested) list of NDArrays, but got %r of "
                             "type %s" % (what, args, type(args).__name__))
    flat, fmts = [], []
    for a in args:
        f, fmt = flatten(a, what)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def regroup(args, fmt):
    """The inverse of ``flatten``: (``args`` in ``fmt``'s nesting, what is left)."""
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for f in fmt:
        r, args = regroup(args, f)
        ret.append(r)
    return ret, args


def _scalar(x, type_, what):
    if isinstance(x, NDArray):
        if x.size != 1:
            raise ValueError("%s must be a single value, got an NDArray of shape %s"
                             % (what, x.shape))
        x = x.asscalar()
    try:
        return type_(x)
    except (TypeError, ValueError):
        raise ValueError("Cannot convert %s to python %s" % (what, type_.__name__)) from None


def foreach(body, data, init_states):
    """Run ``out, states = body(data[i], states)`` for every slice ``i`` of
    ``data`` on axis 0; returns (the outputs of all steps stacked on axis 0,
    the states after the last step).

    ``data`` is an NDArray or a (nested) list of NDArrays of the same length;
    ``init_states`` an NDArray or a (nested) list of NDArrays.

    >>> step = lambda data, states: (data + states[0], [states[0] * 2])
    >>> outs, states = mx.nd.contrib.foreach(step, mx.nd.ones((2, 3)), [mx.nd.zeros(3)])
    """
    flat_data, _ = flatten(data, "foreach input")
    flatten(init_states, "foreach states")
    if not flat_data:
        raise ValueError("foreach: data must hold at least one NDArray")
    single = isinstance(data, NDArray)
    n = flat_data[0].shape[0] if flat_data[0].ndim else 0
    for d in flat_data:
        if d.ndim == 0 or d.shape[0] != n:
            raise ValueError("foreach: every data array must have the same length on axis 0; "
                             "got shapes %s" % ", ".join(str(x.shape) for x in flat_data))
    states = init_states
    outputs = []
    out_fmt = None
    for i in range(n):
        eles = data[i] if single else [d[i] for d in data]
        outs, states = body(eles, states)
        outs, out_fmt = flatten(outs, "foreach output")
        if outputs and len(outs) != len(outputs[0]):
            raise ValueError("foreach: the body returned %d outputs in step %d but %d before"
                             % (len(outs), i, len(outputs[0])))
        outputs.append(outs)
    if out_fmt is None:
        return [], states
    from .. import ndarray as nd
    stacked = [nd.stack(*items) for items in zip(*outputs)]
    stacked, _ = regroup(stacked, out_fmt)
    return stacked, states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run ``step_output, loop_vars = func(*loop_vars)`` while
    ``cond(*loop_vars)`` is true, at most ``max_iterations`` times; returns
    (each step output stacked on axis 0 and padded to ``max_iterations``
    rows, the final loop variables). When no step runs the outputs are
    ``[]`` (their shapes cannot be known).

    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> loop_vars = (mx.nd.array([0], dtype="int64"), mx.nd.array([1], dtype="int64"))
    >>> outputs, states = mx.nd.contrib.while_loop(cond, func, loop_vars, max_iterations=10)
    """
    from .. import ndarray as nd

    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _scalar(max_iterations, int, "max_iterations")
    if max_iterations < 0:
        raise ValueError("max_iterations must be >= 0, got %d" % max_iterations)
    single = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if single else list(loop_vars)
    if not loop_vars:
        raise ValueError("loop_vars should contain at least one element")
    flatten(loop_vars, "while loop_vars")
    steps = 0
    outputs = []
    out_fmt = None
    while steps < max_iterations and _scalar(cond(*loop_vars), bool, "Return value of cond"):
        step_output, new_vars = func(*loop_vars)
        step_output = [] if step_output is None else step_output
        new_vars = [] if new_vars is None else new_vars
        if isinstance(step_output, tuple):
            step_output = list(step_output)
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars)
        if len(new_vars) != len(loop_vars):
            raise ValueError("The length of loop_vars should be consistent during the loop: "
                             "%d given, func returned %d" % (len(loop_vars), len(new_vars)))
        loop_vars = new_vars
        step_output, out_fmt = flatten(step_output, "while output")
        if outputs and len(step_output) != len(outputs[0]):
            raise ValueError("Number of elements in step_output should be the same in each step")
        outputs.append(step_output)
        steps += 1
    concat, zeros = nd.concat, nd.zeros
    stacked = []
    for i_th, items in enumerate(zip(*outputs), 1):
        items = [x.expand_dims(0) for x in items]
        for k, x in enumerate(items[1:], 1):
            if x.shape != items[0].shape:
                raise ValueError("\n".join(
                    ["Shapes of %d-th elements in step_outputs are inconsistent, which are:"
                     % i_th] + ["  Step %d, shape is %s" % (s, str(y.shape))
                                for s, y in enumerate(items)]))
        if steps != max_iterations:
            # the rows after the last step: MXNet leaves them undefined; zeros here
            items.append(zeros((max_iterations - steps,) + items[0].shape[1:],
                               ctx=items[0].context, dtype=items[0].dtype))
        stacked.append(concat(*items, dim=0))
    if out_fmt is not None:
        stacked, _ = regroup(stacked, out_fmt)
    return stacked, (loop_vars[0] if single else loop_vars)


def cond(pred, then_func, else_func):
    """``then_func()`` if ``pred`` (a one-element NDArray or a Python value)
    is true, else ``else_func()``.

    >>> a, b = mx.nd.array([1]), mx.nd.array([2])
    >>> mx.nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    """
    if _scalar(pred, bool, "pred"):
        return then_func()
    return else_func()
