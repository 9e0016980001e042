"""mx.init: dispatch by name, exact values, random statistics, registry and
JSON, checked against MXNet 1.9.1 (literals below come from it)."""
import json
import warnings

import numpy as np
import pytest

import aiond as mx
from aiond import initializer as init
from aiond.initializer import InitDesc

BILINEAR_4x4 = [[0.0625, 0.1875, 0.1875, 0.0625], [0.1875, 0.5625, 0.5625, 0.1875],
                [0.1875, 0.5625, 0.5625, 0.1875], [0.0625, 0.1875, 0.1875, 0.0625]]
BILINEAR_3x5 = [[0.1111111119389534, 0.2222222238779068, 0.3333333432674408,
                 0.2222222238779068, 0.1111111119389534],
                [0.2222222238779068, 0.4444444477558136, 0.6666666865348816,
                 0.4444444477558136, 0.2222222238779068],
                [0.3333333432674408, 0.6666666865348816, 1.0, 0.6666666865348816,
                 0.3333333432674408]]


def filled(initializer, name, shape=(2, 3), value=5.0):
    a = mx.nd.full(shape, value)
    initializer(name, a)
    return a.asnumpy()


@pytest.mark.parametrize("initializer,weight", [(init.Zero(), 0.0), (init.One(), 1.0),
                                                (init.Constant(0.7), 0.7)])
def test_dispatch_by_name_suffix(initializer, weight):
    expect = {"fc_weight": weight, "fc_bias": 0.0, "bn_gamma": 1.0, "bn_beta": 0.0,
              "q_min": 0.0, "q_max": 1.0}
    for name, v in expect.items():
        np.testing.assert_allclose(filled(initializer, InitDesc(name)), np.full((2, 3), v),
                                   rtol=1e-7, err_msg=name)
    # with an InitDesc, running stats are not special: they need an __init__ attr
    with pytest.raises(ValueError, match="Unknown initialization pattern for bn_moving_mean"):
        initializer(InitDesc("bn_moving_mean"), mx.nd.zeros((2,)))
    # the legacy str path knows them
    legacy = {"bn_moving_mean": 0.0, "bn_moving_var": 1.0, "bn_moving_inv_var": 0.0,
              "bn_moving_avg": 0.0, "up_weight": weight, "stn_loc_weight": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name, v in legacy.items():
            np.testing.assert_allclose(filled(initializer, name), np.full((2, 3), v),
                                       rtol=1e-7, err_msg=name)
        with pytest.raises(ValueError, match="Unknown initialization pattern"):
            initializer("data", mx.nd.zeros((2,)))
        with pytest.raises(TypeError):
            initializer(3, mx.nd.zeros((2,)))


def test_init_attr_overrides_and_global_init():
    desc = InitDesc("lstm_bias", attrs={"__init__": init.LSTMBias(2.5).dumps()})
    a = mx.nd.full((8,), 7.0)
    u = init.Uniform()
    u(desc, a)
    np.testing.assert_array_equal(a.asnumpy(), [0, 0, 2.5, 2.5, 0, 0, 0, 0])
    assert desc.global_init is u
    d2 = InitDesc("x_weight", attrs={"__init__": "one"})
    u(d2, a)
    assert d2.global_init is u and isinstance(d2, str) and d2 == "x_weight"
    np.testing.assert_array_equal(a.asnumpy(), np.ones(8))


def test_exact_values_bilinear_constant_legacy():
    a = mx.nd.zeros((2, 1, 4, 4))
    init.Bilinear()(InitDesc("up_weight"), a)
    np.testing.assert_array_equal(a.asnumpy(), np.float32([[BILINEAR_4x4]] * 2))
    a = mx.nd.zeros((1, 1, 3, 5))
    init.Bilinear()(InitDesc("up_weight"), a)
    np.testing.assert_array_equal(a.asnumpy(), np.float32([[BILINEAR_3x5]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        np.testing.assert_array_equal(filled(init.Zero(), "upsampling0_weight", (1, 1, 4, 4)),
                                      np.float32([[BILINEAR_4x4]]))
        np.testing.assert_array_equal(filled(init.Zero(), "stn_loc_bias", (6,)),
                                      [1, 0, 0, 0, 1, 0])
    c = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(filled(init.Constant(mx.nd.array(c)), InitDesc("w_weight")), c)
    np.testing.assert_array_equal(filled(init.Constant(c), InitDesc("w_weight")), c)
    a = mx.nd.zeros((2, 3), dtype="float16")
    init.One()(InitDesc("h_weight"), a)
    assert a.dtype == np.float16 and a.asnumpy().sum() == 6


def test_dumps_and_create():
    assert init.Normal(0.5).dumps() == '["normal", {"sigma": 0.5}]'
    assert init.Xavier(factor_type="in", magnitude=2.34).dumps() == \
        '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]'
    assert init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'
    assert init.Uniform().dumps() == '["uniform", {"scale": 0.07}]'
    assert init.Zero().dumps() == '["zero", {}]'
    assert init.Orthogonal().dumps() == \
        '["orthogonal", {"scale": 1.414, "rand_type": "uniform"}]'
    assert init.Constant(mx.nd.array([1., 2.])).dumps() == '["constant", {"value": [1.0, 2.0]}]'
    for text in [init.Xavier(factor_type="in", magnitude=2.34).dumps(), init.Normal(0.5).dumps()]:
        obj = init.create(text)
        assert obj.dumps() == text
    assert init.create("Xavier", magnitude=2) == init.Xavier(magnitude=2)
    assert init.create("zeros") == init.Zero() and init.create("ones") == init.One()
    assert init.create({"initializer": "normal", "sigma": 0.1}) == init.Normal(0.1)
    assert init.create('{"initializer": "uniform", "scale": 0.2}') == init.Uniform(0.2)
    u = init.Uniform()
    assert init.create(u) is u
    assert init.Normal(0.1) != init.Normal(0.2) and init.Zero() != init.One()
    with pytest.raises(AssertionError, match="not registered"):
        init.create("nosuchinit")
    assert json.loads(init.LSTMBias(1.5).dumps()) == ["lstmbias", {"forget_bias": 1.5}]


def test_register_custom():
    @init.register
    @init.alias("myinit_for_test")
    class CustomInitForTest(init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 0.1

        def _init_bias(self, _, arr):
            arr[:] = 1

    try:
        a = mx.nd.zeros((2,))
        init.create("myinit_for_test")(InitDesc("a_weight"), a)
        np.testing.assert_allclose(a.asnumpy(), [0.1, 0.1], rtol=1e-7)
        init.create("custominitfortest")(InitDesc("a_bias"), a)
        np.testing.assert_array_equal(a.asnumpy(), [1, 1])
        with pytest.warns(UserWarning, match="overriding"):
            init.register(CustomInitForTest)
    finally:
        init._REGISTRY.pop("myinit_for_test")
        init._REGISTRY.pop("custominitfortest")
    with pytest.raises(NotImplementedError):
        init.Initializer()(InitDesc("a_weight"), a)


@pytest.mark.parametrize("kw,shape,scale", [
    ({}, (64, 32, 3, 3), np.sqrt(3 / ((32 * 9 + 64 * 9) / 2))),
    ({"factor_type": "in"}, (64, 32, 3, 3), np.sqrt(3 / (32 * 9))),
    ({"factor_type": "out", "magnitude": 2}, (64, 32, 3, 3), np.sqrt(2 / (64 * 9))),
    ({"rnd_type": "gaussian"}, (300, 200), np.sqrt(3 / 250)),
])
def test_xavier_scale(kw, shape, scale):
    x = init.Xavier(**kw)
    assert x._scale("w", shape) == pytest.approx(scale, rel=1e-12)
    a = mx.nd.zeros(shape)
    x(InitDesc("c_weight"), a)
    v = a.asnumpy()
    if kw.get("rnd_type") == "gaussian":
        assert v.std() == pytest.approx(scale, rel=0.02) and abs(v.mean()) < 0.01 * scale * 10
    else:
        assert np.abs(v).max() <= scale and np.abs(v).max() > 0.99 * scale
        assert v.std() == pytest.approx(scale / np.sqrt(3), rel=0.03)
    with pytest.raises(ValueError, match="at least 2D"):
        x(InitDesc("v_weight"), mx.nd.zeros((5,)))


def test_random_statistics_and_seed():
    a = mx.nd.zeros((200, 300))
    init.MSRAPrelu()(InitDesc("c_weight"), a)
    assert a.asnumpy().std() == pytest.approx(np.sqrt(2 / 1.0625 / 250), rel=0.02)
    init.Normal(0.5)(InitDesc("n_weight"), a)
    v = a.asnumpy()
    assert v.std() == pytest.approx(0.5, rel=0.02) and abs(v.mean()) < 0.01
    init.Uniform(0.3)(InitDesc("u_weight"), a)
    v = a.asnumpy()
    assert v.max() <= 0.3 and v.min() >= -0.3 and v.std() == pytest.approx(0.3 / np.sqrt(3),
                                                                            rel=0.02)
    mx.random.seed(11)
    init.Xavier()(InitDesc("c_weight"), a)
    first = a.asnumpy()
    mx.random.seed(11)
    b = mx.nd.zeros((200, 300))
    init.Xavier()(InitDesc("c_weight"), b)
    np.testing.assert_array_equal(first, b.asnumpy())
    h = mx.nd.zeros((30, 40), dtype="float16")
    init.Xavier()(InitDesc("h_weight"), h)
    assert h.dtype == np.float16 and h.asnumpy().std() > 0


def test_orthogonal():
    a = mx.nd.zeros((40, 60))
    init.Orthogonal()(InitDesc("c_weight"), a)
    v = a.asnumpy()
    np.testing.assert_allclose(v @ v.T, 1.414 ** 2 * np.eye(40), atol=1e-5)
    a = mx.nd.zeros((60, 4, 5))
    init.Orthogonal(scale=2.0, rand_type="normal")(InitDesc("c_weight"), a)
    v = a.asnumpy().reshape(60, 20)
    np.testing.assert_allclose(v.T @ v, 4 * np.eye(20), atol=1e-5)


def test_mixed_and_load(tmp_path):
    m = init.Mixed(["bias", ".*"], [init.Zero(), init.Constant(3.0)])
    a = mx.nd.full((3,), 9.0)
    m("bias_fc_bias", a)
    np.testing.assert_array_equal(a.asnumpy(), [0, 0, 0])
    m(InitDesc("fc_weight"), a)
    np.testing.assert_array_equal(a.asnumpy(), [3, 3, 3])
    with pytest.raises(ValueError, match="did not match any pattern"):
        init.Mixed(["bias"], [init.Zero()])("w", a)

    params = {"arg:fc_weight": mx.nd.array([1., 2., 3.]), "aux:bn_moving_mean": mx.nd.ones((2,)),
              "plain": mx.nd.array([5.])}
    ld = init.Load(params, default_init=init.Constant(7.0))
    assert sorted(ld.param) == ["bn_moving_mean", "fc_weight", "plain"]
    ld("fc_weight", a)
    np.testing.assert_array_equal(a.asnumpy(), [1, 2, 3])
    ld(InitDesc("other_weight"), a)
    np.testing.assert_array_equal(a.asnumpy(), [7, 7, 7])
    with pytest.raises(AssertionError, match="Shape mismatch"):
        ld("fc_weight", mx.nd.zeros((2,)))
    with pytest.raises(AssertionError, match="no default Initializer"):
        init.Load(params)("missing", a)
    fname = str(tmp_path / "p.params")
    mx.nd.save(fname, {"arg:w": mx.nd.array([4., 5., 6.])})
    init.Load(fname)("w", a)
    np.testing.assert_array_equal(a.asnumpy(), [4, 5, 6])


def test_lstm_bias_and_verbosity(caplog):
    a = mx.nd.full((12,), 3.0)
    init.LSTMBias()(InitDesc("l_weight"), a)
    np.testing.assert_array_equal(a.asnumpy(), [0] * 3 + [1] * 3 + [0] * 6)
    import logging
    with caplog.at_level(logging.INFO):
        init.One().set_verbosity(True)(InitDesc("v_weight"), mx.nd.zeros((4,)))
    assert "Initialized v_weight as weight: 1.0" in caplog.text
