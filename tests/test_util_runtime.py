"""mx.util's NumPy-semantics switches, mx.runtime's feature list, mx.base helpers."""
import threading

import pytest

import aiond as mx
from aiond import base, runtime, util


def test_np_shape_scope_restores_and_is_per_thread():
    assert not mx.is_np_shape()
    with mx.np_shape(True):
        assert mx.is_np_shape()
        seen = []
        t = threading.Thread(target=lambda: seen.append(mx.is_np_shape()))
        t.start(); t.join()
        assert seen == [False]          # thread-local unless set globally
        with mx.np_shape(False):
            assert not mx.is_np_shape()
        assert mx.is_np_shape()
    assert not mx.is_np_shape()


def test_set_np_shape_global_reaches_other_threads():
    try:
        assert mx.set_np_shape(2) is False
        seen = []
        t = threading.Thread(target=lambda: seen.append(mx.is_np_shape()))
        t.start(); t.join()
        assert seen == [True]
    finally:
        assert mx.set_np_shape(0) is True
    assert not mx.is_np_shape()


def test_use_np_decorates_functions_and_classes():
    @mx.use_np
    def inside():
        return mx.is_np_shape(), mx.is_np_array()

    @mx.use_np_shape
    class C:
        def f(self):
            return mx.is_np_shape()

        @property
        def p(self):
            return mx.is_np_shape()

    assert inside() == (True, True)
    assert C().f() and C().p
    assert not mx.is_np_shape() and not mx.is_np_array()
    with pytest.raises(TypeError, match="use_np_shape can only decorate"):
        mx.use_np_shape(3)


def test_set_np_and_reset_np():
    with pytest.raises(ValueError, match="NumPy Shape semantics is required"):
        util.set_np(shape=False, array=True)
    util.set_np()
    try:
        assert mx.is_np_shape() and mx.is_np_array()
        with pytest.raises(ValueError, match="Deactivating NumPy shape"):
            mx.set_np_shape(False)
    finally:
        util.reset_np()
    assert not mx.is_np_shape() and not mx.is_np_array()


def test_features_report_what_aiond_has():
    f = runtime.Features()
    assert f is runtime.Features()
    assert len(f) >= 30 and "CUDA" in f
    assert f.is_enabled("cuda") == (mx.num_gpus() > 0)
    assert f.is_enabled("INT64_TENSOR_SIZE")
    with pytest.raises(RuntimeError, match="is unknown"):
        f.is_enabled("this girl is on fire")
    assert "CUDA" in repr(f)


def test_base_helpers():
    assert base.py_str(b"abc") == "abc" and base.py_str("x") == "x"
    assert base._as_list(1) == [1] and base._as_list((1, 2)) == (1, 2)
    import numpy
    assert base.mx_real_t is numpy.float32
    e = base.NotImplementedForSymbol(len, "len", 1)
    assert isinstance(e, mx.MXNetError)
    assert "Function len" in str(e) and "not implemented for Symbol" in str(e)
    assert not base._Null and repr(base._Null) == "_Null"


def test_test_utils_star_export_brings_mx_and_np():
    ns = {}
    exec("from aiond.test_utils import *", ns)
    assert ns["mx"] is mx
    import numpy
    assert ns["np"] is numpy
    assert "assert_almost_equal" in ns and "use_np" in ns
