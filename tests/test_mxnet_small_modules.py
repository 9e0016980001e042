"""MXNet 1.9.1's smaller modules in aiond: contrib.autograd, log, registry,
kvstore module paths, misc, util/ctypes helpers, error, library, libinfo,
notebook, contrib.tensorboard, model_store, LBSGD, profiler, symbol_doc.
Figures marked "MXNet" were computed with MXNet 1.9.1."""
import ctypes
import importlib
import logging
import os
import sys

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


# ---------------------------------------------------------------- contrib.autograd
def test_contrib_autograd_sections_and_gradients():
    ag = mx.contrib.autograd
    x = mx.nd.array([1., 2., 3.])
    dx = mx.nd.zeros_like(x)
    ag.mark_variables([x], [dx])
    with ag.train_section():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        y = x * x
        with ag.test_section():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
        assert mx.autograd.is_recording()
    assert not mx.autograd.is_recording()
    ag.compute_gradient([y])
    np.testing.assert_array_equal(dx.asnumpy(), [2., 4., 6.])
    # out_grads and 'add'
    z = mx.nd.array([1., -1.])
    dz = mx.nd.ones(2)
    ag.mark_variables([z], [dz], grad_reqs='add')
    with ag.train_section():
        w = z * 3
    ag.backward([w], [mx.nd.array([2., 5.])])
    np.testing.assert_array_equal(dz.asnumpy(), [7., 16.])
    grads, loss = ag.grad_and_loss(lambda a, b: a * b, argnum=[1])(mx.nd.array([2., 3.]),
                                                                    mx.nd.array([5., 7.]))
    np.testing.assert_array_equal(grads[0].asnumpy(), [2., 3.])
    np.testing.assert_array_equal(loss.asnumpy(), [10., 21.])
    g = ag.grad(lambda a: (a * a).sum())(mx.nd.array([1., -2.]))
    np.testing.assert_array_equal(g[0].asnumpy(), [2., -4.])
    prev = ag.set_is_training(True)
    assert prev is False and mx.autograd.is_recording()
    ag.set_is_training(False)
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()


def test_contrib_autograd_errors():
    ag = mx.contrib.autograd
    with pytest.raises(TypeError, match='list or tuple'):
        ag.backward(mx.nd.ones(1))
    with pytest.raises(ValueError, match='same length'):
        ag.backward([mx.nd.ones(1)], [mx.nd.ones(1), mx.nd.ones(1)])
    with pytest.raises(ValueError, match="grad_req"):
        ag.mark_variables([mx.nd.ones(1)], [mx.nd.ones(1)], grad_reqs='sum')
    with pytest.raises(TypeError, match='NDArray'):
        ag.grad(lambda a: a)(np.ones(2))


# ---------------------------------------------------------------- log
def test_log_levels_and_format(tmp_path):
    assert (mx.log.DEBUG, mx.log.INFO, mx.log.WARNING, mx.log.ERROR, mx.log.CRITICAL,
            mx.log.NOTSET) == (10, 20, 30, 40, 50, 0)
    path = str(tmp_path / 'a.log')
    logger = mx.log.get_logger('h1_test_file', filename=path, level=mx.log.INFO)
    assert logger is mx.log.get_logger('h1_test_file')       # configured once
    assert len(logger.handlers) == 1 and logger.level == logging.INFO
    logger.info('hello %d', 3)
    logger.debug('hidden')
    logger.handlers[0].flush()
    assert open(path).read() == 'hello 3\n'
    fmt = mx.log._Formatter()
    rec = logging.LogRecord('x', logging.WARNING, '/p/f.py', 7, 'msg', None, None, 'fn')
    out = fmt.format(rec)
    assert out.startswith('\x1b[31mW') and out.endswith('f.py:fn:7]\x1b[0m msg')
    rec = logging.LogRecord('x', logging.INFO, '/p/f.py', 7, 'm', None, None, 'fn')
    assert fmt.format(rec).startswith('\x1b[32mI')
    with pytest.warns(DeprecationWarning, match='get_logger'):
        assert mx.log.getLogger('h1_test_file') is logger
    assert mx.log.get_logger() is logging.getLogger()


# ---------------------------------------------------------------- registry
def test_registry_functions():
    class Base(object):
        def __init__(self, a=0):
            self.a = a

    register = mx.registry.get_register_func(Base, 'thing')
    alias = mx.registry.get_alias_func(Base, 'thing')
    create = mx.registry.get_create_func(Base, 'thing')

    @alias('first', 'uno')
    class One(Base):
        pass
    register(One)
    assert sorted(mx.registry.get_registry(Base)) == ['first', 'one', 'uno']
    assert isinstance(create('UNO'), One)
    assert create('one', 5).a == 5
    assert create('["first", {"a": 3}]').a == 3
    assert create('{"thing": "one", "a": 4}').a == 4
    assert create({'thing': 'one', 'a': 6}).a == 6
    inst = One(1)
    assert create(inst) is inst
    with pytest.raises(ValueError, match='already an instance'):
        create(inst, 2)
    with pytest.raises(ValueError, match='two is not registered'):
        create('two')
    with pytest.raises(TypeError, match='subclass of Base'):
        register(int)
    with pytest.warns(UserWarning, match='overriding'):
        register(One, 'uno')


def test_registry_holds_initializers_and_metrics():
    inits = mx.registry.get_registry(mx.init.Initializer)
    assert inits['xavier'] is mx.init.Xavier and inits['zeros'] is mx.init.Zero
    create = mx.registry.get_create_func(mx.init.Initializer, 'initializer')
    assert isinstance(create('normal', sigma=0.5), mx.init.Normal)

    @mx.registry.get_register_func(mx.init.Initializer, 'initializer')
    class H1Twos(mx.init.Initializer):
        def _init_weight(self, name, arr):
            arr[:] = 2
    try:
        # registered through mx.registry, known to mx.init.create
        a = mx.nd.zeros(3)
        mx.init.create('h1twos')(mx.init.InitDesc('w_weight'), a)
        np.testing.assert_array_equal(a.asnumpy(), [2, 2, 2])
    finally:
        mx.initializer._REGISTRY.pop('h1twos')
    metric = mx.registry.get_create_func(mx.metric.EvalMetric, 'metric')('acc')
    assert isinstance(metric, mx.metric.Accuracy)
    assert mx.initializer.registry is mx.registry and mx.metric.registry is mx.registry
    assert mx.initializer.ndarray is mx.nd and mx.metric.ndarray is mx.nd
    assert mx.initializer.random is mx.random


# ---------------------------------------------------------------- kvstore
def test_kvstore_module_paths():
    from aiond.kvstore.kvstore import KVStore
    from aiond.kvstore.kvstore_server import KVStoreServer
    kv = mx.kv.create('local')
    assert isinstance(kv, KVStore) and kv.type == 'local'
    assert kv.rank == 0 and kv.num_workers == 1 and KVStore.is_capable('optimizer')
    kv.init(3, mx.nd.ones(2))
    out = mx.nd.zeros(2)
    kv.pushpull(3, mx.nd.ones(2) * 4, out=out)
    np.testing.assert_array_equal(out.asnumpy(), [4, 4])
    server = KVStoreServer(kv)
    with pytest.raises(MXNetError, match='no parameter-server processes'):
        server.run()
    # the controller applies a pickled optimizer (command 0), as MXNet's server does
    import pickle
    server._controller()(0, pickle.dumps(mx.optimizer.SGD(learning_rate=0.5)), None)
    kv.push(3, mx.nd.ones(2))
    kv.pull(3, out=out)
    np.testing.assert_allclose(out.asnumpy(), [3.5, 3.5])


def test_kvstore_refuses_mixed_key_types_like_mxnet():
    # MXNet 1.9.1: "Check failed: key_type_ == key_type (1 vs. 0) : Mixed key types
    # are not allowed" - on 'local' and 'device' stores alike
    kv = mx.kv.create('local')
    kv.init(0, mx.nd.ones(2))
    with pytest.raises(MXNetError, match='mix int and str keys'):
        kv.init('a', mx.nd.ones(3))


# ---------------------------------------------------------------- misc, util, error
def test_misc_factor_scheduler_matches_mxnet():
    f = mx.misc.FactorScheduler(step=3, factor=0.5)
    f.base_lr = 1.0
    assert [f(i) for i in range(8)] == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25]   # MXNet
    with pytest.raises(ValueError, match='step'):
        mx.misc.FactorScheduler(step=0)
    with pytest.raises(ValueError, match='Factor'):
        mx.misc.FactorScheduler(step=2, factor=1.5)
    with pytest.raises(NotImplementedError):
        mx.misc.LearningRateScheduler()(0)


def test_ctypes_helpers():
    assert mx.util.c_str('héllo').value == 'héllo'.encode('utf-8')
    arr = mx.executor.c_str_array(['a', 'bc'])
    assert [arr[0], arr[1]] == [b'a', b'bc']
    assert list(mx.autograd.c_array(ctypes.c_int, [1, 2, 3])) == [1, 2, 3]
    import array
    buf = array.array('I', [4, 5])
    view = mx.autograd.c_array_buf(ctypes.c_uint, buf)
    buf[0] = 9
    assert list(view) == [9, 5]                  # shares the buffer's memory
    a = mx.nd.ones(2)
    handles = mx.autograd.c_handle_array([a])
    assert handles[0] is a.handle
    assert mx.util.check_call(0) is None
    with pytest.raises(MXNetError, match='error status -1'):
        mx.util.check_call(-1)
    cb = mx.autograd.MXCallbackList()
    assert cb.num_callbacks == 0
    assert mx.util.py_str(b'x') == 'x'


def test_np_ufunc_legal_option():
    f = mx.util.np_ufunc_legal_option
    assert f('where', None) and f('casting', 'same_kind') and not f('casting', 'bad')
    assert f('order', 'K') and not f('order', 1)
    assert f('dtype', np.float32) and f('dtype', 'int8') and not f('dtype', 'complex64')
    assert f('subok', True) and not f('subok', 1) and not f('out', None)


def test_error_register():
    @mx.error.register
    class H1Error(mx.base.MXNetError):
        pass
    assert mx.base.error_types['H1Error'] is H1Error
    assert mx.base.error_types['ValueError'] is ValueError
    e = mx.error.InternalError('boom')
    assert isinstance(e, MXNetError) and 'MXNet hint' in str(e)


def test_library_and_libinfo_say_what_aiond_cannot_do(tmp_path, monkeypatch):
    with pytest.raises(MXNetError, match='does NOT exist'):
        mx.library.load(str(tmp_path / 'none.so'))
    (tmp_path / 'x.txt').write_text('')
    with pytest.raises(MXNetError, match='NOT a library file'):
        mx.library.load(str(tmp_path / 'x.txt'))
    (tmp_path / 'lib.so').write_bytes(b'')
    with pytest.raises(MXNetError, match='cannot load compiled MXNet extension'):
        mx.library.load(str(tmp_path / 'lib.so'))
    with pytest.raises(MXNetError, match='not an absolute path'):
        monkeypatch.chdir(tmp_path)
        mx.library.load('lib.so')
    assert mx.libinfo.__version__ == '1.9.1'
    with pytest.raises(RuntimeError, match='Cannot find the MXNet library'):
        mx.libinfo.find_lib_path()
    assert mx.api.__all__ == [] and mx.cython.__name__ == 'aiond.cython'


# ---------------------------------------------------------------- optional packages
def _hide(monkeypatch, name):
    monkeypatch.setitem(sys.modules, name, None)       # import raises ImportError


def test_tensorboard_callback(monkeypatch):
    _hide(monkeypatch, 'mxboard')
    with pytest.raises(ImportError, match='pip install mxboard'):
        mx.contrib.tensorboard.LogMetricsCallback('logs')

    written = []

    class Writer(object):
        def __init__(self, d):
            self.d = d

        def add_scalar(self, name, value, global_step):
            written.append((self.d, name, value, global_step))

    fake = type(sys)('mxboard')
    fake.SummaryWriter = Writer
    monkeypatch.setitem(sys.modules, 'mxboard', fake)
    cb = mx.contrib.tensorboard.LogMetricsCallback('logs', prefix='train')
    m = mx.metric.Accuracy()
    m.update([mx.nd.array([1, 0])], [mx.nd.array([[0, 1], [0, 1]])])
    cb(mx.model.BatchEndParam(epoch=2, nbatch=0, eval_metric=m, locals=None))
    cb(mx.model.BatchEndParam(epoch=2, nbatch=0, eval_metric=None, locals=None))
    assert written == [('logs', 'train-accuracy', 0.5, 2)]


def test_notebook_without_bokeh_and_pandas(monkeypatch):
    _hide(monkeypatch, 'bokeh')
    _hide(monkeypatch, 'bokeh.io')
    _hide(monkeypatch, 'pandas')
    assert mx.notebook.bokeh is mx.notebook.Bokeh_Failed_To_Import
    cbmod = mx.notebook.callback
    with pytest.raises(ImportError, match='pandas'):
        cbmod.PandasLogger(batch_size=8)
    with pytest.raises(ImportError, match='bokeh'):
        cbmod.LiveLearningCurve('accuracy')

    class Cb(object):
        def __init__(self, d):
            self.d = d

        def callback_args(self):
            return self.d
    assert cbmod.args_wrapper(Cb({'a': 1}), Cb({'a': 2, 'b': 3})) == {'a': [1, 2], 'b': [3]}


def test_model_store(tmp_path):
    from aiond.gluon.model_zoo import model_store
    assert model_store.short_hash('resnet18_v1') == model_store._model_sha1['resnet18_v1'][:8]
    with pytest.raises(ValueError, match='not available'):
        model_store.short_hash('nonet')
    (tmp_path / 'a.params').write_bytes(b'1')
    (tmp_path / 'keep.txt').write_bytes(b'1')
    model_store.purge(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ['keep.txt']
    with pytest.raises(MXNetError, match='cannot download'):
        model_store.get_model_file('resnet18_v1', root=str(tmp_path))


# ---------------------------------------------------------------- LBSGD
def test_lbsgd_matches_mxnet():
    o = mx.optimizer.create('lbsgd', learning_rate=0.1, momentum=0.9, batch_scale=2,
                            warmup_epochs=1, updates_per_epoch=4, wd=0.01)
    assert isinstance(o, mx.optimizer.optimizer.LBSGD)
    w = mx.nd.array([1.0, -2.0, 3.0])
    st = o.create_state(0, w)
    got = []
    for g in ([0.5, 0.5, 0.5], [0.1, -0.2, 0.3], [1.0, 1.0, -1.0], [0.0, 0.5, 0.5],
              [0.2, 0.2, 0.2], [0.3, 0.3, 0.3]):
        o.update(0, w, mx.nd.array(g), st)
        got.append(w.asnumpy().tolist())
    expected = [[1.0, -2.0, 3.0],                                                   # MXNet
                [0.953499972820282, -2.0195000171661377, 2.935499906539917],
                [0.953499972820282, -2.0195000171661377, 2.935499906539917],
                [0.8097429871559143, -2.183011054992676, 2.921578884124756],
                [0.8097429871559143, -2.183011054992676, 2.921578884124756],
                [0.6287422180175781, -2.375804901123047, 2.8532068729400635]]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    o = mx.optimizer.create('lbsgd', learning_rate=0.1, warmup_strategy='lars')
    w = mx.nd.array([1.0, -2.0, 3.0])
    o.update(0, w, mx.nd.array([0.5, 0.1, -0.2]), o.create_state(0, w))
    np.testing.assert_allclose(w.asnumpy(), [0.6584349870681763, -2.0683131217956543,
                                             3.1366260051727295], rtol=1e-6)      # MXNet


# ---------------------------------------------------------------- the rest
def test_small_names():
    mx.profiler.set_kvstore_handle('h')
    assert mx.profiler.profiler_kvstore_handle == 'h'
    mx.profiler.set_kvstore_handle(None)
    assert mx.model.sym is mx.sym
    assert mx.model.SKLEARN_INSTALLED == (importlib.util.find_spec('sklearn') is not None)

    class A(object):
        @mx.name.classproperty
        def who(cls):
            return cls.__name__
    assert A.who == 'A'
    Meta = type('Meta', (type,), {})
    assert type(mx.name.with_metaclass(Meta, object)) is Meta
    fc = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=5, name='fc')
    assert mx.symbol_doc.SymbolDoc.get_output_shape(fc, data=(2, 3)) == {'fc_output': (2, 5)}
    assert issubclass(mx.symbol_doc.ConcatDoc, mx.symbol_doc.SymbolDoc)
    assert 'Examples' in mx.ndarray_doc.StackDoc.__doc__
    assert mx.mon is mx.monitor


def test_backend_plugin_modules_are_empty_as_in_a_standard_mxnet_build():
    # MXNet 1.9.1 without USE_TVM_OP / USE_TORCH: the modules exist and hold no functions
    assert not mx.runtime.Features().is_enabled('TVM_OP')
    assert mx.th is mx.torch
    for m in (mx.tvmop, mx.torch):
        assert not [n for n in vars(m) if not n.startswith('_')]


def test_operator_module_names_as_mxnet():
    import ctypes
    buf = (ctypes.c_float * 6)(*range(6))
    a = mx.operator.ctypes2numpy_shared(ctypes.cast(buf, ctypes.POINTER(ctypes.c_float)), (2, 3))
    a[0, 0] = 9
    assert buf[0] == 9.0 and a.shape == (2, 3)      # shares the memory
    with pytest.raises(RuntimeError):
        mx.operator.ctypes2numpy_shared(3, (1,))
    assert mx.operator.context.Context is mx.Context
    assert mx.operator.symbol.Symbol is mx.sym.Symbol
