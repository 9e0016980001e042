"""gluon.Parameter, Constant and ParameterDict (MXNet 1.9.1 semantics)."""
import warnings

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.gluon import Constant, DeferredInitializationError, Parameter, ParameterDict


def test_parameter_initialize_data_grad():
    p = Parameter("fc_weight", shape=(3, 4), init=mx.init.One())
    assert p.shape == (3, 4) and p.dtype == np.float32 and p.grad_req == "write"
    p.initialize(ctx=mx.cpu())
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((3, 4)))
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((3, 4)))
    assert p.list_ctx() == [mx.cpu()]
    assert len(p.list_data()) == 1 and len(p.list_grad()) == 1
    assert repr(p) == "Parameter fc_weight (shape=(3, 4), dtype=<class 'numpy.float32'>)"
    with pytest.warns(UserWarning, match="already initialized"):
        p.initialize()
    p.initialize(init=mx.init.Zero(), force_reinit=True)
    assert p.data().asnumpy().sum() == 0


def test_parameter_grad_is_attached_with_autograd():
    p = Parameter("w", shape=(2,), init=mx.init.Constant(3.0))
    p.initialize()
    x = nd.array([1.0, 2.0])
    with autograd.record():
        y = (p.data() * x).sum()
    y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), [1.0, 2.0])
    p.zero_grad()
    assert p.grad().asnumpy().sum() == 0
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    p.grad_req = "add"
    for _ in range(2):
        with autograd.record():
            y = (p.data() * x).sum()
        y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), [2.0, 4.0])


def test_parameter_multi_context_and_set_data_reset_ctx():
    p = Parameter("w", shape=(2, 2), init=mx.init.Uniform())
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    assert p.data(mx.cpu(1)).context == mx.cpu(1)
    np.testing.assert_array_equal(p.data(mx.cpu(0)).asnumpy(), p.data(mx.cpu(1)).asnumpy())
    with pytest.raises(RuntimeError, match="was not initialized on context cpu\\(2\\)"):
        p.data(mx.cpu(2))
    p.set_data(nd.full((2, 2), 5.0))
    for d in p.list_data():
        np.testing.assert_array_equal(d.asnumpy(), np.full((2, 2), 5.0))
    p.reset_ctx(mx.cpu(2))
    assert p.list_ctx() == [mx.cpu(2)]
    np.testing.assert_array_equal(p.data().asnumpy(), np.full((2, 2), 5.0))


def test_parameter_deferred_init_and_errors():
    p = Parameter("w", shape=(3, 0), allow_deferred_init=True)
    p.initialize()
    with pytest.raises(DeferredInitializationError, match="Parameter 'w' has not been initialized"):
        p.data()
    p.shape = (3, 5)
    p._finish_deferred_init()
    assert p.data().shape == (3, 5)
    q = Parameter("q", shape=(0,))
    with pytest.raises(ValueError, match="invalid shape"):
        q.initialize()
    r = Parameter("r", shape=(2,))
    with pytest.raises(RuntimeError, match="has not been initialized"):
        r.data()
    with pytest.raises(AssertionError, match="incompatible"):
        p.shape = (4, 5)


def test_parameter_cast_and_var():
    p = Parameter("fc_weight", shape=(2, 3), lr_mult=2.0, init="zeros")
    p.initialize()
    p.cast("float64")
    assert p.data().dtype == np.float64 and p.grad().dtype == np.float64
    v = p.var()
    assert v.name == "fc_weight"
    attrs = v.list_attr()
    assert attrs["__shape__"] == "(2, 3)" and attrs["__lr_mult__"] == "2.0"
    assert attrs["__init__"] == "zeros" and attrs["__dtype__"] == "1"


def test_constant():
    c = Constant("const", [[1, 2], [3, 4]])
    assert c.grad_req == "null"
    c.initialize()
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    with pytest.warns(UserWarning):
        c.grad_req = "write"
    assert repr(c).startswith("Constant const (shape=(2, 2)")


def test_parameter_dict_get_shared_and_shape_merge():
    pd = ParameterDict("net_")
    w = pd.get("weight", shape=(3, 0), allow_deferred_init=True)
    assert w.name == "net_weight" and list(pd.keys()) == ["net_weight"]
    assert pd.get("weight", shape=(0, 4)) is w and w.shape == (3, 4)
    with pytest.raises(AssertionError, match="does not match"):
        pd.get("weight", shape=(5, 4))
    shared = ParameterDict("net_", shared=pd)
    assert shared.get("weight") is w
    c = pd.get_constant("c", [1.0, 2.0])
    assert isinstance(c, Constant) and pd.get_constant("c") is c
    with pytest.raises(KeyError):
        pd.get_constant("missing")
    other = ParameterDict("x_")
    other.get("weight", shape=(1,))
    bad = ParameterDict()
    bad._params["net_weight"] = Parameter("net_weight")
    with pytest.raises(AssertionError, match="different Parameters"):
        pd.update(bad)
    pd.update(other)
    assert "x_weight" in pd.keys()
    assert "net_weight" in repr(pd) and repr(pd).startswith("net_ (")


def test_parameter_dict_initialize_zero_grad_setattr_select():
    net = gluon.nn.Dense(2, in_units=3, prefix="d_")
    params = net.collect_params()
    params.initialize(mx.init.One())
    params.setattr("lr_mult", 0.5)
    assert all(p.lr_mult == 0.5 for p in params.values())
    x = nd.ones((1, 3))
    with autograd.record():
        y = net(x).sum()
    y.backward()
    assert net.weight.grad().asnumpy().sum() != 0
    params.zero_grad()
    assert net.weight.grad().asnumpy().sum() == 0
    assert list(net.collect_params(".*bias").keys()) == ["d_bias"]
    assert params.list_ctx() == [mx.cpu()]


def test_parameter_dict_save_load_prefix_rules(tmp_path):
    net = gluon.nn.Dense(2, in_units=3, prefix="model_")
    net.initialize()
    f = str(tmp_path / "p.params")
    net.collect_params().save(f, strip_prefix="model_")
    assert sorted(nd.load(f).keys()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="does not start with"):
        net.collect_params().save(f, strip_prefix="other_")
    net2 = gluon.nn.Dense(2, in_units=3, prefix="model_")
    net2.collect_params().load(f, restore_prefix="model_")
    np.testing.assert_array_equal(net2.weight.data().asnumpy(), net.weight.data().asnumpy())
    # arg:/aux: prefixes (export format) are dropped on load
    nd.save(f, {"arg:model_weight": nd.ones((2, 3)), "aux:model_bias": nd.zeros((2,))})
    net2.collect_params().load(f)
    np.testing.assert_array_equal(net2.weight.data().asnumpy(), np.ones((2, 3)))
    # missing and extra names are named in the error
    nd.save(f, {"model_weight": nd.ones((2, 3))})
    with pytest.raises(AssertionError, match="'model_bias' is missing"):
        net2.collect_params().load(f)
    net2.collect_params().load(f, allow_missing=True)
    nd.save(f, {"model_weight": nd.ones((2, 3)), "model_bias": nd.ones((2,)),
                "model_extra": nd.ones((1,))})
    with pytest.raises(AssertionError, match="'model_extra' loaded from file"):
        net2.collect_params().load(f)
    net2.collect_params().load(f, ignore_extra=True)
    # dtype check and cast_dtype
    nd.save(f, {"model_weight": nd.ones((2, 3), dtype="float64"), "model_bias": nd.ones((2,))})
    with pytest.raises(AssertionError, match="dtype incompatible"):
        net2.collect_params().load(f)
    net2.collect_params().load(f, cast_dtype=True)
    assert net2.weight.data().dtype == np.float32


def test_parameter_load_into_deferred_shape(tmp_path):
    f = str(tmp_path / "p.params")
    nd.save(f, {"w": nd.ones((3, 4))})
    pd = ParameterDict()
    w = pd.get("w", shape=(3, 0), allow_deferred_init=True)
    pd.initialize()
    pd.load(f)
    assert w.shape == (3, 4) and w.data().shape == (3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pd.list_ctx() == [mx.cpu()]


def test_zero_grad_resets_every_gradient_buffer():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(3, in_units=2), gluon.nn.Dense(1, in_units=3))
    net.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    for ctx in (mx.cpu(0), mx.cpu(1)):
        with mx.autograd.record():
            y = net(mx.nd.ones((4, 2), ctx=ctx))
        y.backward()
    params = net.collect_params()
    assert any(g.asnumpy().any() for p in params.values() for g in p.list_grad())
    params.zero_grad()
    assert not any(g.asnumpy().any() for p in params.values() for g in p.list_grad())


def test_parameters_under_numpy_shape_semantics():
    # MXNet's test_np_shape_parameters: an unknown dimension reads -1 and the
    # first forward infers it
    with mx.np_shape(True):
        dense = gluon.nn.Dense(16)
        assert dense.weight.shape == (16, -1)
        dense.initialize()
        assert dense(mx.nd.zeros((2, 2016))).shape == (2, 16)
        assert dense.weight.shape == (16, 2016)
    assert gluon.utils.shape_is_known((2, 3))
    assert not gluon.utils.shape_is_known((2, 0)) and not gluon.utils.shape_is_known(())
    with mx.np_shape(True):
        assert gluon.utils.shape_is_known((2, 0)) and gluon.utils.shape_is_known(())
        assert not gluon.utils.shape_is_known((2, -1))
