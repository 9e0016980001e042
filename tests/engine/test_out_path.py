"""An op written into a whole array that is not one of its inputs
(``y[:] = x``, ``x.copyto(y)``, ``nd.op(..., out=y)``) takes a short push
path in invoke. It must order, poison, record and check exactly as the
general path does; anything it does not cover (a view, an input as out, a
mismatch) goes the general way."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd
from aiond.ndarray import _invoke
from aiond.ndarray._invoke import SPLIT_MIN

from .gates import Gate, clean_engine  # noqa: F401

RS = np.random.RandomState(5)


CASES = [
    ("copyto", lambda x, w, y: x.copyto(y), lambda x, w: x),
    ("setitem", lambda x, w, y: y.__setitem__(slice(None), x), lambda x, w: x),
    ("unary out", lambda x, w, y: mx.nd.relu(x, out=y), lambda x, w: np.maximum(x, 0)),
    ("same input twice", lambda x, w, y: mx.nd.elemwise_add(w, w, out=y), lambda x, w: w + w),
    ("no input", lambda x, w, y: y.__setitem__(slice(None), 2.5),
     lambda x, w: np.full(x.shape, 2.5, np.float32)),
    ("binary out", lambda x, w, y: mx.nd.elemwise_mul(x, w, out=y), lambda x, w: x * w),
    ("broadcast out", lambda x, w, y: mx.nd.broadcast_sub(x, w[:1], out=y),
     lambda x, w: x - w[:1]),
]


@pytest.mark.parametrize("n", [12, SPLIT_MIN + 7])   # inline and split sizes
@pytest.mark.parametrize("name,fn,ref", CASES)
def test_results_are_numpys_and_take_the_short_path(name, fn, ref, n, monkeypatch):
    calls = []
    real = _invoke._invoke_general
    monkeypatch.setattr(_invoke, "_invoke_general",
                        lambda *a: calls.append(a[0].name) or real(*a))
    shape = (n // 4 + 1, 4)
    xv = RS.randn(*shape).astype(np.float32)
    wv = RS.randn(*shape).astype(np.float32)
    with mx.cpu():      # the CPU push path (a device has its own)
        x, w = mx.nd.array(xv), mx.nd.array(wv)
        y = mx.nd.full(shape, 7.0)
        r = fn(x, w, y)
    assert r is None or r is y
    got = y.asnumpy()
    assert calls == []
    np.testing.assert_array_equal(got, ref(xv, wv))


def test_a_write_waits_for_earlier_reads_of_its_output():
    y = mx.nd.full((6,), 3.0)
    x = mx.nd.full((6,), 9.0)
    g = Gate("reader")
    try:
        g.push(reads=[y])
        before = y * 1            # reads y: queued behind nothing, sees 3
        x.copyto(y)               # must wait for the gate and for `before`
        g.wait_started()
        assert not g.passed.is_set()
    finally:
        g.open()
    np.testing.assert_array_equal(before.asnumpy(), np.full(6, 3.0, np.float32))
    np.testing.assert_array_equal(y.asnumpy(), np.full(6, 9.0, np.float32))


def test_a_write_waits_for_its_input_and_later_reads_see_it():
    x = mx.nd.zeros((5,))
    y = mx.nd.full((5,), 1.0)
    g = Gate("writer", body=lambda: _invoke.data_of(x).__setitem__(slice(None), 4.0))
    try:
        g.push(writes=[x])
        y[:] = x
        after = y + 1
        g.wait_started()
    finally:
        g.open()
    np.testing.assert_array_equal(after.asnumpy(), np.full(5, 5.0, np.float32))


def test_a_failed_input_poisons_the_output_and_names_the_op():
    x = mx.nd.zeros((3,))

    def boom():
        raise ValueError("kernel failed on purpose")
    mx.engine.push(boom, writes=[x], name="boom")
    y = mx.nd.ones((3,))
    x.copyto(y)
    with pytest.raises(mx.base.MXNetError, match="boom"):
        y.asnumpy()


@pytest.mark.parametrize("bad,match", [
    (lambda: mx.nd.ones((3,)).copyto(mx.nd.zeros((4,))), "shape"),
    (lambda: mx.nd.relu(mx.nd.ones((3,)), out=mx.nd.zeros((3,), dtype="float64")), "dtype"),
    (lambda: mx.nd.elemwise_add(mx.nd.ones((3,)), mx.nd.ones((3,)), out=mx.nd.zeros((2, 3))),
     "shape"),
])
def test_mismatches_still_raise_clearly(bad, match):
    with pytest.raises(mx.base.MXNetError, match=match):
        bad()


def test_views_and_inputs_as_out_take_the_general_path(monkeypatch):
    calls = []
    real = _invoke._invoke_general
    monkeypatch.setattr(_invoke, "_invoke_general",
                        lambda *a: calls.append(a[0].name) or real(*a))
    with mx.cpu():      # the CPU push path (a device has its own)
        _views_and_inputs(calls)


def _views_and_inputs(calls):
    base = mx.nd.zeros((4, 3))
    row = base[1]
    mx.nd.relu(mx.nd.full((3,), -2.0) * -1, out=row)        # a view: read-modify-write
    a = mx.nd.full((3,), 2.0)
    mx.nd.elemwise_add(mx.nd.ones((3,)), a, out=a)          # out is an input
    assert len(calls) == 2
    np.testing.assert_array_equal(base.asnumpy()[1], [2, 2, 2])
    np.testing.assert_array_equal(base.asnumpy()[[0, 2, 3]], 0)
    np.testing.assert_array_equal(a.asnumpy(), [3, 3, 3])
    calls.clear()
    mx.nd.ones((3,)).copyto(mx.nd.zeros((3,)))
    assert calls == []


def test_recorded_out_calls_differentiate():
    x = mx.nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    y = mx.nd.zeros((3,))
    with autograd.record():
        mx.nd.elemwise_mul(x, x, out=y)
        z = y * 2
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [4.0, -8.0, 12.0])
