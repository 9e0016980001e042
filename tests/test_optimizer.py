"""mx.optimizer: update rules checked step for step against MXNet 1.9.1.

The EXPECTED numbers were produced by MXNet 1.9.1 running ``run_steps`` below
(3 updater steps on one (2, 3) weight); aiond matches them to the last bit
for float32, so the 1e-6 tolerance is slack.
"""
import base64
import warnings

import numpy as np
import pytest

import aiond as mx
import aiond.lr_scheduler  # noqa: F401
import aiond.optimizer  # noqa: F401
from aiond import optimizer as opt
from aiond.ndarray import _invoke

if not hasattr(mx.nd, "sgd_update"):    # until aiond.ops imports optimizer_ops itself
    from aiond.ndarray import _namespace
    _namespace.populate(mx.nd.__dict__, mx.nd._internal.__dict__)

W0 = np.array([[0.5, -0.3, 0.8], [-0.9, 0.1, 0.45]])


def grad(k):
    return np.sin(np.arange(6).reshape(2, 3) * 1.3 + k) * 0.8


def run_steps(name, kw, dtype="float32", steps=3, w0=W0):
    o = opt.create(name, **kw)
    upd = opt.get_updater(o)
    w = mx.nd.array(w0, dtype=dtype)
    for k in range(steps):
        upd(0, mx.nd.array(grad(k), dtype=dtype), w)
    return w, upd


EXPECTED = [
    ('sgd', {'learning_rate': 0.1}, 'float32',
     [0.35993853211402893, -0.4241214394569397, 0.8736568689346313, -0.7364723086357117,
         0.11383010447025299, 0.2938714027404785]),
    ('sgd', {'learning_rate': 0.1, 'wd': 0.01, 'rescale_grad': 0.5, 'clip_gradient': 0.3},
        'float32',
     [0.4385315179824829, -0.35252952575683594, 0.8247066736221313, -0.8249219655990601,
         0.10296058654785156, 0.3800937235355377]),
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9}, 'float32',
     [0.29935264587402344, -0.6096270084381104, 0.8349977135658264, -0.5716493725776672,
         0.2406691312789917, 0.19690701365470886]),
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01, 'rescale_grad': 2.0,
        'clip_gradient': 0.5}, 'float32',
     [0.352247416973114, -0.5033391714096069, 0.8051557540893555, -0.6146952509880066,
         0.20999541878700256, 0.20938237011432648]),
    ('nag', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01, 'rescale_grad': 0.5}, 'float32',
     [0.3358362913131714, -0.4982959032058716, 0.8463481068611145, -0.6638351678848267,
         0.1689060926437378, 0.2547428607940674]),
    ('nag', {'learning_rate': 0.1, 'momentum': 0.9, 'clip_gradient': 0.2}, 'float32',
     [0.40780001878738403, -0.39900264143943787, 0.823419988155365, -0.7390199899673462,
         0.1487938016653061, 0.2986161708831787]),
    ('adam', {}, 'float32',
     [0.4983963072299957, -0.30265870690345764, 0.7994937896728516, -0.897082507610321,
         0.10173507779836655, 0.44719642400741577]),
    ('adam', {'learning_rate': 0.01, 'beta1': 0.8, 'beta2': 0.99, 'epsilon': 1e-06, 'wd': 0.05,
        'rescale_grad': 0.5, 'clip_gradient': 0.4}, 'float32',
     [0.47250837087631226, -0.3255562484264374, 0.7931698560714722, -0.8706225156784058,
         0.11574002355337143, 0.4211341440677643]),
    ('adagrad', {'learning_rate': 0.1}, 'float32',
     [0.3266049921512604, -0.4483634829521179, 0.847685694694519, -0.6883160471916199,
         0.1426972895860672, 0.1886761635541916]),
    ('adagrad', {'learning_rate': 0.1, 'eps': 1e-05, 'wd': 0.05, 'rescale_grad': 0.5,
        'clip_gradient': 0.4}, 'float32',
     [0.31964829564094543, -0.4425780773162842, 0.836422860622406, -0.6762993931770325,
         0.14015761017799377, 0.18351587653160095]),
    ('adadelta', {}, 'float32',
     [0.47937461733818054, -0.3166450262069702, 0.8136457800865173, -0.8724766373634338,
         0.10163133591413498, 0.4133547842502594]),
    ('adadelta', {'rho': 0.8, 'epsilon': 0.0001, 'wd': 0.05, 'rescale_grad': 0.5,
        'clip_gradient': 0.4}, 'float32',
     [0.38318508863449097, -0.2914171814918518, 0.7185270190238953, -0.7125310897827148,
         0.08657485246658325, 0.308471143245697]),
    ('rmsprop', {}, 'float32',
     [0.494461327791214, -0.30471983551979065, 0.8016354441642761, -0.8932011723518372,
         0.1012456938624382, 0.4416629374027252]),
    ('rmsprop', {'learning_rate': 0.01, 'gamma1': 0.8, 'epsilon': 1e-06, 'wd': 0.05,
        'rescale_grad': 0.5, 'clip_gradient': 0.4, 'clip_weights': 0.85}, 'float32',
     [0.43825414776802063, -0.33235979080200195, 0.8082743287086487, -0.8229077458381653,
         0.10738154500722885, 0.3906957507133484]),
    ('rmsprop', {'learning_rate': 0.01, 'centered': True}, 'float32',
     [0.4102666676044464, -0.42771852016448975, 0.7777135372161865, -0.742774486541748,
         0.1743263304233551, 0.272714227437973]),
    ('rmsprop', {'learning_rate': 0.01, 'centered': True, 'gamma1': 0.8, 'gamma2': 0.7, 'wd': 0.05,
        'clip_gradient': 0.4}, 'float32',
     [0.3812052607536316, -0.38318827748298645, 0.7864330410957336, -0.7917883396148682,
         0.14446744322776794, 0.3311196565628052]),
    ('ftrl', {}, 'float32',
     [-0.07616976648569107, -0.19740024209022522, 0.26711487770080566, -0.22826647758483887,
         0.05360012501478195, -0.02279539220035076]),
    ('ftrl', {'learning_rate': 0.2, 'lamda1': 0.02, 'beta': 0.5, 'wd': 0.05, 'rescale_grad': 0.5,
        'clip_gradient': 0.4}, 'float32',
     [-0.14713288843631744, -0.25796380639076233, 0.29262232780456543, -0.13123446702957153,
         0.061460286378860474, -0.10876428335905075]),
    ('signum', {}, 'float32',
     [0.48000001907348633, -0.32999998331069946, 0.7900000214576721, -0.8700000047683716,
         0.10999999940395355, 0.42000001668930054]),
    ('signum', {'learning_rate': 0.02, 'momentum': 0.8, 'wd': 0.01, 'wd_lh': 0.03,
        'clip_gradient': 0.4}, 'float32',
     [0.4391365349292755, -0.3594243824481964, 0.8185728788375854, -0.8384170532226562,
         0.11978411674499512, 0.389226496219635]),
    ('signum', {'momentum': 0.0, 'wd': 0.01}, 'float32',
     [0.47985100746154785, -0.3099069893360138, 0.8097610473632812, -0.8697330355644226,
         0.10996699333190918, 0.41986802220344543]),
    ('adamax', {'wd': 0.05, 'clip_gradient': 0.4}, 'float32',
     [0.49544858932495117, -0.3050021231174469, 0.7985409498214722, -0.894101619720459,
         0.1030716672539711, 0.4447934329509735]),
    ('nadam', {'wd': 0.05, 'rescale_grad': 0.5}, 'float32',
     [0.4970182180404663, -0.30165019631385803, 0.8002700209617615, -0.8975892066955566,
         0.10049044340848923, 0.4471305012702942]),
    ('ftml', {'learning_rate': 0.01, 'wd': 0.05, 'clip_gradient': 0.4}, 'float32',
     [0.4749394953250885, -0.31409788131713867, 0.8009249567985535, -0.8791652321815491,
         0.105119489133358, 0.42614519596099854]),
    ('lamb', {'learning_rate': 0.01, 'wd': 0.05}, 'float32',
     [0.48756980895996094, -0.3180694878101349, 0.7967775464057922, -0.8786753416061401,
         0.1113051176071167, 0.429951012134552]),
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01, 'multi_precision': True},
        'float16',
     [0.296630859375, -0.60791015625, 0.83056640625, -0.56689453125, 0.23974609375,
         0.1944580078125]),
    ('adam', {'learning_rate': 0.01, 'multi_precision': True}, 'float16',
     [0.48388671875, -0.32666015625, 0.794921875, -0.87060546875, 0.1173095703125, 0.421875]),
]
# MXNet 1.9.1: sgd(learning_rate=0.1, momentum=0.9, wd=0.01, lr_scheduler=FactorScheduler(
# step=2, factor=0.5, base_lr=0.1)), updater(0, grad(k), w) for k in 0..2 from W0, then
# get_states(dump_optimizer=True) (MX_STATES, weight MX_W3); steps k = 3, 4 gave MX_W5.
MX_STATES = (
    'gASV5gIAAAAAAAB9lEsAjBVteG5ldC5uZGFycmF5Lm5kYXJyYXmUjAdOREFycmF5lJOUToWUUpR9lIwGaGFuZGxl'
    'lIwIYnVpbHRpbnOUjAlieXRlYXJyYXmUk5RDQMn6k/kAAAAAAgAAAAIAAAAAAAAAAwAAAAAAAAABAAAAAAAAAAAA'
    'AADkwsi9cDPfvfd9FT12Rgc+zAH/PMAq6r2UhZRSlHNic4wZbXhuZXQub3B0aW1pemVyLm9wdGltaXplcpSMA1NH'
    'RJSTlCmBlH2UKIwMcmVzY2FsZV9ncmFklEc/8AAAAAAAAIwMbHJfc2NoZWR1bGVylIwSbXhuZXQubHJfc2NoZWR1'
    'bGVylIwPRmFjdG9yU2NoZWR1bGVylJOUKYGUfZQojAdiYXNlX2xylEc/qZmZmZmZmowMd2FybXVwX3N0ZXBzlEsA'
    'jA93YXJtdXBfZmluYWxfbHKURz+5mZmZmZmajA93YXJtdXBfYmVnaW5fbHKUSwCMC3dhcm11cF9tb2RllIwGbGlu'
    'ZWFylIwEc3RlcJRLAowGZmFjdG9ylEc/4AAAAAAAAIwOc3RvcF9mYWN0b3JfbHKURz5FeY7iMIw6jAVjb3VudJRL'
    'AnVijAJscpRHP7mZmZmZmZqMAndklEc/hHrhR64Ue4wHbHJfbXVsdJR9lIwHd2RfbXVsdJR9lIwQYmVnaW5fbnVt'
    'X3VwZGF0ZZRLAIwKbnVtX3VwZGF0ZZRLA4wYX2FsbF9pbmRleF91cGRhdGVfY291bnRzlH2USwB9lEsASwNzc4wT'
    'X2luZGV4X3VwZGF0ZV9jb3VudJRoLowNY2xpcF9ncmFkaWVudJROjA9tdWx0aV9wcmVjaXNpb26UiYwNYWdncmVn'
    'YXRlX251bZRLBIwIaWR4Mm5hbWWUfZSMCHN5bV9pbmZvlCmMDmFsbG93X25wX2FycmF5lImMCG1vbWVudHVtlEc/'
    '7MzMzMzMzYwLbGF6eV91cGRhdGWUiHVihpQu')
MX_W3 = [0.33320483565330505, -0.6141553521156311, 0.791264533996582, -0.5822044610977173,
    0.27170050144195557, 0.22663503885269165]
MX_W5 = [0.1696116030216217, -0.7134931683540344, 0.8944560289382935, -0.41957101225852966,
    0.24865379929542542, 0.05417318642139435]
MX_NUM_UPDATE = 5


@pytest.mark.parametrize("name,kw,dtype,expected", EXPECTED,
                         ids=["%s-%d" % (c[0], i) for i, c in enumerate(EXPECTED)])
def test_updates_match_mxnet(name, kw, dtype, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w, _ = run_steps(name, dict(kw), dtype)
    assert w.dtype == np.dtype(dtype)
    np.testing.assert_allclose(w.asnumpy().ravel(), np.array(expected, dtype=dtype),
                               rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------ the update ops

def test_update_ops_as_mx_nd_functions():
    g = mx.nd.array([0.2, -0.7, 0.4])
    w = mx.nd.array([0.5, -0.3, 0.8])
    r = mx.nd.sgd_update(w, g, lr=0.1, wd=0.01, rescale_grad=2.0, clip_gradient=0.5)
    np.testing.assert_allclose(r.asnumpy(), [0.4595000147819519, -0.24970002472400665,
                                             0.7491999864578247], rtol=1e-6)
    np.testing.assert_array_equal(w.asnumpy(), np.float32([0.5, -0.3, 0.8]))   # not in place
    m = mx.nd.array([0.1, 0.0, -0.2])
    mx.nd.sgd_mom_update(w, g, m, out=w, lr=0.1, momentum=0.9, wd=0.01)
    np.testing.assert_allclose(w.asnumpy(), [0.5694999694824219, -0.2297000139951706,
                                             0.579200029373169], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [0.06949999183416367, 0.07029999792575836,
                                             -0.2207999974489212], rtol=1e-6)
    w = mx.nd.array([0.5, -0.3, 0.8])
    mean, var = mx.nd.zeros(3), mx.nd.zeros(3)
    for _ in range(2):
        mx.nd.adam_update(w, g, mean, var, out=w, lr=0.01, wd=0.1)
    np.testing.assert_allclose(w.asnumpy(), [0.4258958399295807, -0.2258857637643814,
                                             0.7258884310722351], rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), [0.00012336476356722414, 0.0010606464929878712,
                                               0.0004575379425659776], rtol=1e-6)
    w, n = mx.nd.array([0.5, -0.3, 0.8]), mx.nd.zeros(3)
    out = mx.nd.rmsprop_update(w, g, n, lr=0.01, gamma1=0.9)
    np.testing.assert_allclose(out.asnumpy(), [0.4683772623538971, -0.26837724447250366,
                                               0.7683772444725037], rtol=1e-6)
    np.testing.assert_allclose(n.asnumpy(), [0.004, 0.049, 0.016], rtol=1e-6)
    # NAG with out=weight: MXNet's kernel reads the new weight for mom's wd term
    w, m = mx.nd.array([0.5, -0.3, 0.8]), mx.nd.array([0.1, 0.0, -0.2])
    mx.nd.nag_mom_update(w, g, m, out=w, lr=0.1, momentum=0.9, wd=0.1)
    np.testing.assert_allclose(w.asnumpy(), [0.5335000157356262, -0.16130000352859497,
                                             0.5468000173568726], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [0.06466498970985413, 0.07161300629377365,
                                             -0.2254679948091507], rtol=1e-6)
    w16 = mx.nd.array([0.5, -0.3, 0.8], dtype="float16")
    w32 = w16.astype("float32")
    mx.nd.mp_sgd_update(w16, g.astype("float16"), w32, out=w16, lr=0.1, wd=0.01)
    assert w16.dtype == np.float16
    np.testing.assert_array_equal(w16.asnumpy(), np.float16([0.4794921875, -0.229736328125,
                                                             0.7587890625]))
    np.testing.assert_allclose(w32.asnumpy(), [0.47950488328933716, -0.22972923517227173,
                                               0.7590146660804749], rtol=1e-6)


def test_update_op_errors():
    w, g = mx.nd.zeros((2, 3)), mx.nd.zeros((3, 2))
    with pytest.raises(mx.base.MXNetError, match="same shape"):
        mx.nd.sgd_update(w, g, lr=0.1)
    with pytest.raises(mx.base.MXNetError, match="lr"):
        mx.nd.sgd_update(w, w)
    with pytest.raises(mx.base.MXNetError, match="float32"):
        mx.nd.mp_sgd_update(w, w, mx.nd.zeros((2, 3), dtype="float16"), lr=0.1)


def test_one_engine_op_per_weight_update(monkeypatch):
    pushed = []
    real = _invoke._push

    def counting(call, *args, **kwargs):
        pushed.append(args[2])
        return real(call, *args, **kwargs)

    for name, kw in [("sgd", dict(momentum=0.9, wd=0.1)), ("adam", dict(wd=0.1)),
                     ("rmsprop", dict(centered=True)), ("adagrad", {}), ("nadam", {}),
                     ("adadelta", {}), ("ftrl", {}), ("signum", {}), ("nag", dict(momentum=.9))]:
        o = opt.create(name, clip_gradient=1.0, rescale_grad=0.5, **kw)
        upd = opt.get_updater(o)
        w, g = mx.nd.ones((8, 8)), mx.nd.ones((8, 8))
        upd(0, g, w)                      # creates the states
        monkeypatch.setattr(_invoke, "_push", counting)
        del pushed[:]
        upd(0, g, w)
        monkeypatch.setattr(_invoke, "_push", real)
        assert len(pushed) == 1, (name, pushed)
        w.wait_to_read()


# ------------------------------------------------------------- the updater

def test_states_saved_by_mxnet_load_and_continue():
    upd = opt.get_updater(opt.create("sgd"))
    upd.set_states(base64.b64decode(MX_STATES))
    o = upd.optimizer
    assert type(o) is opt.SGD and o.momentum == 0.9 and o.num_update == 3
    assert isinstance(o.lr_scheduler, mx.lr_scheduler.FactorScheduler)
    assert isinstance(upd.states[0], mx.nd.NDArray) and upd.states[0].shape == (2, 3)
    w = mx.nd.array(np.array(MX_W3).reshape(2, 3))
    for k in range(3, 5):
        upd(0, mx.nd.array(grad(k)), w)
    np.testing.assert_allclose(w.asnumpy().ravel(), MX_W5, rtol=1e-6, atol=1e-7)
    assert o.num_update == MX_NUM_UPDATE


@pytest.mark.parametrize("dump_optimizer", [False, True])
def test_states_round_trip(dump_optimizer):
    kw = dict(learning_rate=0.01, wd=0.01, lr_scheduler=mx.lr_scheduler.FactorScheduler(2, 0.5))
    ref, _ = run_steps("adam", dict(kw, lr_scheduler=mx.lr_scheduler.FactorScheduler(2, 0.5)),
                       steps=5)
    w, upd = run_steps("adam", kw, steps=3)
    blob = upd.get_states(dump_optimizer=dump_optimizer)
    # aiond's own format: no pickle, so nothing in it can run code
    assert blob.startswith(b"AIOND-OPTIMIZER-STATES") and b"\x80\x04" not in blob[:64]
    assert isinstance(opt.updater.loads(blob), tuple if dump_optimizer else dict)
    fresh = opt.get_updater(upd.optimizer if not dump_optimizer else opt.create("sgd"))
    fresh.set_states(blob)
    assert fresh.states_synced == {0: False}
    if dump_optimizer:
        assert type(fresh.optimizer) is opt.Adam and fresh.optimizer.num_update == 3
        assert fresh.optimizer.param_dict == {}
    for k in range(3, 5):
        fresh(0, mx.nd.array(grad(k)), w)
    np.testing.assert_array_equal(w.asnumpy(), ref.asnumpy())


def test_updater_lists_and_aggregation():
    # SGD aggregates (aggregate_num 4): a list call equals one call per index
    ws1 = [mx.nd.array(W0 * (i + 1)) for i in range(6)]
    ws2 = [w.copy() for w in ws1]
    u1 = opt.get_updater(opt.create("sgd", learning_rate=0.1, momentum=0.9, wd=0.01))
    u2 = opt.get_updater(opt.create("sgd", learning_rate=0.1, momentum=0.9, wd=0.01))
    assert u1.aggregate_updates and opt.create("adam").aggregate_num == 0
    for k in range(2):
        gs = [mx.nd.array(grad(k + i)) for i in range(6)]
        u1(list(range(6)), gs, ws1)
        for i in range(6):
            u2(i, gs[i], ws2[i])
    for a, b in zip(ws1, ws2):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert u1.optimizer.num_update == 2 and u1.optimizer._index_update_count[5] == 2
    # byte indices (from kvstore) become str
    u3 = opt.get_updater(opt.create("test"))
    w = mx.nd.zeros((2,))
    u3(b"w0", mx.nd.ones((2,)), w)
    assert list(u3.states) == ["w0"]
    np.testing.assert_array_equal(u3.states["w0"].asnumpy(), [1, 1])


def test_sync_state_context():
    upd = opt.get_updater(opt.create("sgd"))
    s = (mx.nd.ones((2,)), [mx.nd.zeros((1,)), None], None)
    out = upd.sync_state_context(s, mx.cpu(0))
    assert isinstance(out, tuple) and isinstance(out[1], list) and out[2] is None
    np.testing.assert_array_equal(out[0].asnumpy(), [1, 1])


# ------------------------------------------------------- the Optimizer base

def test_create_and_register():
    assert type(opt.create("SGD")) is opt.SGD
    assert type(opt.create("adam", learning_rate=0.1)) is opt.Adam
    assert type(opt.Optimizer.create_optimizer("RmsProp")) is opt.RMSProp
    assert opt.create("adam").lr == 0.001 and opt.create("sgd").lr == 0.01
    assert opt.create("ftrl").lr == 0.1 and opt.create("signum").momentum == 0.9
    with pytest.raises(ValueError, match="Cannot find optimizer"):
        opt.create("nosuchopt")

    @opt.register
    class MyOptimizerForTest(opt.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] -= grad

    try:
        assert type(opt.create("myoptimizerfortest")) is MyOptimizerForTest
        with pytest.warns(UserWarning, match="overriding"):
            opt.Optimizer.register(MyOptimizerForTest)
    finally:
        del opt.Optimizer.opt_registry["myoptimizerfortest"]
    assert opt.Optimizer.opt_registry["ccsgd"] is opt.ccSGD


def test_lr_and_wd_multipliers():
    o = opt.create("sgd", learning_rate=0.5, wd=0.1,
                   param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta"})
    assert o.wd_mult == {"fc_bias": 0.0, "bn_beta": 0.0}
    assert [o._get_wd(i) for i in range(5)] == [0.1, 0.0, 0.1, 0.0, 0.1]
    o.set_lr_mult({"fc_weight": 0.5, 3: 4.0})
    assert [o._get_lr(i) for i in range(4)] == [0.25, 0.5, 0.5, 2.0]
    o.set_wd_mult({"bn_gamma": 3.0})
    assert o._get_wd(2) == pytest.approx(0.3) and o._get_wd(1) == 0.0

    class Sym:      # what Optimizer reads of a Symbol
        def attr_dict(self):
            return {"a_weight": {"__lr_mult__": "2", "__wd_mult__": "0.5"}, "b": {"x": "1"}}

        def list_arguments(self):
            return ["a_weight", "b", "data"]

    o = opt.create("sgd", sym=Sym(), param_idx2name={0: "a_weight", 1: "b"}, wd=1.0)
    assert o.lr_mult == {"a_weight": 2.0}
    assert o.wd_mult == {"b": 0.0, "a_weight": 0.5}
    assert o._get_lr(0) == 0.02 and o._get_wd(0) == 0.5 and o._get_wd(1) == 0.0

    class P:
        lr_mult, wd_mult = 3.0, 0.0

    o = opt.create("sgd", learning_rate=0.1, wd=0.2, param_dict={0: P()})
    assert o._get_lr(0) == pytest.approx(0.3) and o._get_wd(0) == 0.0 and o._get_wd(1) == 0.2
    assert "param_dict" not in o.__getstate__()


def test_update_counts_and_learning_rate(capsys):
    o = opt.create("sgd", begin_num_update=10, learning_rate=0.1)
    o._update_count(0)
    o._update_count([0, 1])
    assert o._index_update_count == {0: 12, 1: 11} and o.num_update == 12
    o._set_current_context(1)
    o._update_count(0)
    assert o._index_update_count == {0: 11} and o.num_update == 12
    assert o.learning_rate == 0.1
    o.set_learning_rate(0.2)
    assert o.lr == 0.2 and o.learning_rate == 0.2

    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    o = opt.create("sgd", lr_scheduler=sched)
    assert o.lr is None and o.learning_rate == 1.0
    with pytest.raises(UserWarning):
        o.set_learning_rate(0.3)
    o.num_update = 5
    assert o.learning_rate == 0.25 and o._get_lr(0) == 0.25
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt.create("sgd", lr_scheduler=sched, learning_rate=0.4)
    assert sched.base_lr == 0.4 and "overwritten" in capsys.readouterr().out


def test_multi_precision_states_and_warning():
    w16 = mx.nd.array(W0, dtype="float16")
    s = opt.create("sgd", momentum=0.9, multi_precision=True).create_state_multi_precision(0, w16)
    assert [a.dtype for a in s] == [np.float32, np.float32]      # (mom, weight32)
    np.testing.assert_array_equal(s[1].asnumpy(), W0.astype(np.float16).astype(np.float32))
    s = opt.create("adam", multi_precision=True).create_state_multi_precision(0, w16)
    assert s[0].dtype == np.float32 and [a.dtype for a in s[1]] == [np.float32] * 2
    with pytest.warns(UserWarning, match="float16"):
        opt.create("adam").create_state_multi_precision(0, w16)
    # a generic optimizer updates its float32 master copy and casts it back
    w, _ = run_steps("rmsprop", dict(multi_precision=True, learning_rate=0.01), "float16")
    ref, _ = run_steps("rmsprop", dict(learning_rate=0.01), "float32",
                       w0=W0.astype(np.float16).astype(np.float32))
    assert w.dtype == np.float16
    np.testing.assert_allclose(w.asnumpy(), ref.asnumpy(), atol=1e-3)


def test_adadelta_rescales_grad_in_place_like_mxnet():
    o = opt.create("adadelta", rescale_grad=0.5)
    w, g = mx.nd.array(W0), mx.nd.array(grad(0))
    o.update(0, w, g, o.create_state(0, w))
    np.testing.assert_allclose(g.asnumpy(), (grad(0) * 0.5).astype(np.float32), rtol=1e-6)


def test_sgld_and_dcasgd_run():
    mx.random.seed(3)
    w, _ = run_steps("sgld", dict(learning_rate=0.01))
    assert np.all(np.isfinite(w.asnumpy())) and not np.allclose(w.asnumpy(), W0)
    w, _ = run_steps("dcasgd", dict(learning_rate=0.1, wd=0.01))
    assert np.all(np.isfinite(w.asnumpy()))
