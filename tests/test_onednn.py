"""oneDNN kernels give the numpy kernels' results (forward and gradients),
and the numpy kernels run when oneDNN is off or absent."""
import os
import subprocess
import sys

import numpy as np
import pytest

import aiond as mx
from aiond.ops import onednn

# skipped without the library (or with AIOND_ONEDNN=0); a library that is
# there but fails to load is an error the tests must show, not a skip
pytestmark = pytest.mark.skipif(not onednn.active() and onednn._lib._state["error"] is None,
                                reason="oneDNN library not installed or turned off")


def _run(fn, args, dnn):
    """fn(*NDArrays) forward + gradients of every input, oneDNN on or off."""
    old = os.environ.get("AIOND_ONEDNN")
    os.environ["AIOND_ONEDNN"] = "1" if dnn else "0"
    try:
        xs = [mx.nd.array(a) for a in args]
        for x in xs:
            x.attach_grad()
        with mx.autograd.record():
            y = fn(*xs)
        rng = np.random.RandomState(7)
        og = mx.nd.array(rng.standard_normal(y.shape).astype("f4"))
        y.backward(og)
        return [y.asnumpy()] + [x.grad.asnumpy() for x in xs]
    finally:
        if old is None:
            os.environ.pop("AIOND_ONEDNN", None)
        else:
            os.environ["AIOND_ONEDNN"] = old


def _calls():
    from aiond.ops.onednn import _cache
    return _cache.stats["hits"] + _cache.stats["misses"]


def _same(fn, args, rtol=1e-4, atol=1e-4, on_dnn=True):
    before = _calls()
    got = _run(fn, args, True)
    assert (_calls() > before) == on_dnn, "oneDNN %s" % ("not used" if on_dnn else "used")
    before = _calls()
    want = _run(fn, args, False)
    assert _calls() == before, "AIOND_ONEDNN=0 still ran oneDNN"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale, err_msg="output %d" % i)
    return got


def _rand(*shape, seed=0):
    return np.random.RandomState(seed + sum(shape)).standard_normal(shape).astype("f4")


CONV_CASES = [
    # (data shape, num_filter, kernel, stride, dilate, pad, groups, no_bias); oneDNN
    # takes channel counts in multiples of 8 (a first layer of <= 4 channels forward)
    ((2, 3, 9, 9), 8, (3, 3), (1, 1), (1, 1), (1, 1), 1, False),
    ((2, 3, 20, 20), 16, (7, 7), (2, 2), (1, 1), (3, 3), 1, True),     # ResNet's first layer
    ((1, 16, 11, 7), 24, (3, 2), (2, 1), (1, 1), (0, 1), 2, True),
    ((3, 16, 10, 10), 16, (3, 3), (2, 2), (2, 2), (2, 1), 16, False),   # depthwise, dilated
    ((2, 16, 8, 8), 32, (1, 1), (1, 1), (1, 1), (0, 0), 1, False),      # 1x1: numpy
    ((2, 8, 13, 13), 16, (5, 5), (3, 3), (1, 1), (2, 2), 4, True),
    ((2, 8, 17), 16, (4,), (2,), (2,), (1,), 1, False),                 # 1-D
    ((1, 8, 5, 6, 7), 8, (3, 3, 2), (1, 2, 1), (1, 1, 2), (1, 0, 1), 2, False),   # 3-D
    ((2, 3, 9, 9), 5, (3, 3), (1, 1), (1, 1), (1, 1), 1, False),         # numpy
    ((1, 4, 11, 7), 6, (3, 2), (2, 1), (1, 1), (0, 1), 2, True),         # numpy
]


def _conv_on_dnn(dshape, F, k):
    return F % 8 == 0 and (dshape[1] % 8 == 0 or dshape[1] <= 4) and any(ki > 1 for ki in k)


@pytest.mark.parametrize("case", CONV_CASES)
def test_convolution_matches_numpy(case):
    dshape, F, k, s, d, p, g, nb = case
    C = dshape[1]
    args = [_rand(*dshape), _rand(F, C // g, *k, seed=1)] + ([] if nb else [_rand(F, seed=2)])

    def fn(x, w, b=None):
        return mx.nd.Convolution(x, w, b, kernel=k, stride=s, dilate=d, pad=p, num_filter=F,
                                 num_group=g, no_bias=nb)
    _same(fn, args, on_dnn=_conv_on_dnn(dshape, F, k))


@pytest.mark.parametrize("kind", ["fwd", "bwd_data", "bwd_weight"])
@pytest.mark.parametrize("case", [((1, 24, 9, 9), 40, 1), ((3, 16, 7, 8), 24, 1),
                                  ((1, 8, 9, 9), 16, 2), ((4, 24, 5, 5), 24, 3)])
def test_convolution_ranges_as_the_engine_splits_them(kind, case):
    """Every split the engine may make of a oneDNN plan (by samples, or by
    8-channel blocks at batch 1) gives the whole call's result, which is
    the numpy kernel's."""
    from aiond.ops import conv_gemm as cg
    dshape, F, g = case
    x = _rand(*dshape)
    w = _rand(F, dshape[1] // g, 3, 3, seed=1)
    b = _rand(F, seed=2)
    y = _rand(dshape[0], F, dshape[2], dshape[3], seed=3)
    geo = ((3, 3), (1, 1), (1, 1), (1, 1), g, 1024)

    def plan(out):
        if kind == "fwd":
            return cg.fwd_plan(np, x, w, out, *geo, bias=b)
        if kind == "bwd_data":      # Deconvolution's bias: one per data-gradient channel
            return cg.bwd_data_plan(np, y, w, out, *geo, bias=_rand(dshape[1], seed=4))
        return cg.bwd_weight_plan(np, y, x, out, *geo)
    shape = {"fwd": y.shape, "bwd_data": x.shape, "bwd_weight": w.shape}[kind]
    os.environ["AIOND_ONEDNN"] = "0"
    try:
        want = np.empty(shape, np.float32)
        cg.run_all(plan(want))
    finally:
        os.environ.pop("AIOND_ONEDNN")
    before = _calls()
    n, run = plan(np.empty(shape, np.float32))
    assert _calls() > before
    for cut in sorted({1, n // 2, n - 1}):
        got = np.full(shape, np.nan, np.float32)
        n, run = plan(got)
        for lo, hi in ((0, cut), (cut, n)):
            if lo < hi:
                run(lo, hi)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1, np.abs(want).max()))


DECONV_CASES = [
    # (data shape, num_filter, kernel, stride, dilate, pad, adj, target, groups, no_bias)
    ((2, 8, 5, 5), 16, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), (), 2, False),
    ((1, 8, 4, 7), 8, (4, 3), (2, 3), (1, 1), (1, 0), (0, 0), (), 1, True),
    ((2, 16, 6, 6), 8, (3, 3), (2, 2), (2, 1), (0, 0), (0, 0), (14, 13), 2, True),
    ((2, 8, 9), 16, (3,), (1,), (1,), (1,), (0,), (), 1, False),
    ((2, 3, 9), 2, (3,), (1,), (1,), (1,), (0,), (), 1, False),          # numpy
]


@pytest.mark.parametrize("case", DECONV_CASES)
def test_deconvolution_matches_numpy(case):
    dshape, F, k, s, d, p, adj, ts, g, nb = case
    C = dshape[1]
    args = [_rand(*dshape), _rand(C, F // g, *k, seed=1)] + ([] if nb else [_rand(F, seed=2)])

    def fn(x, w, b=None):
        kw = dict(kernel=k, stride=s, dilate=d, pad=p, adj=adj, num_filter=F, num_group=g,
                  no_bias=nb)
        if ts:
            kw["target_shape"] = ts
        return mx.nd.Deconvolution(x, w, b, **kw)
    _same(fn, args, on_dnn=dshape[1] % 8 == 0 and F % 8 == 0)


POOL_CASES = [
    # (data shape, kwargs); oneDNN takes 8 channels or more (whole 8-blocks in a
    # blocked layout, other counts channels-last), not global pooling
    ((2, 8, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")),
    ((2, 16, 10, 7), dict(kernel=(2, 3), stride=(2, 2), pool_type="max",
                          pooling_convention="full")),
    ((2, 8, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ((2, 8, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        count_include_pad=False)),
    ((1, 8, 11, 8), dict(kernel=(3, 2), stride=(2, 3), pad=(1, 0), pool_type="avg",
                         pooling_convention="full", count_include_pad=False)),
    ((1, 8, 10, 8), dict(kernel=(3, 2), stride=(2, 3), pad=(1, 0), pool_type="avg",
                         pooling_convention="full")),   # the last window overruns: numpy
    ((3, 2, 7, 6), dict(kernel=(1, 1), global_pool=True, pool_type="avg")),     # numpy
    ((3, 8, 7, 6), dict(kernel=(1, 1), global_pool=True, pool_type="max")),     # numpy
    ((2, 8, 13), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="max")),     # 1-D
    ((1, 8, 5, 6, 7), dict(kernel=(2, 2, 3), stride=(2, 1, 2), pool_type="avg")),  # 3-D
    ((2, 5, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")),  # numpy
    ((2, 8, 8, 8), dict(kernel=(2, 2), stride=(2, 2), pool_type="sum")),          # numpy
    ((2, 3, 6, 8), dict(kernel=(3, 3), stride=(1, 1), pool_type="max", layout="NHWC")),
    # channels off the 8-block: oneDNN in channels-last
    ((3, 20, 12, 12), dict(kernel=(2, 2), stride=(2, 2), pool_type="max")),     # LeNet's
    ((2, 50, 8, 8), dict(kernel=(2, 2), stride=(2, 2), pool_type="max")),
    ((2, 12, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")),
    ((2, 20, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                         count_include_pad=False)),
    ((2, 10, 11, 8), dict(kernel=(3, 2), stride=(2, 3), pad=(1, 0), pool_type="max",
                          pooling_convention="full")),
    ((2, 9, 13), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="avg")),     # 1-D
    ((1, 12, 5, 6, 7), dict(kernel=(2, 2, 3), stride=(2, 1, 2), pool_type="max")),  # 3-D
]


def _numpy_pool(dshape, kw):
    """The cases oneDNN leaves to numpy (see onednn/pool.py)."""
    return (kw.get("global_pool") or dshape[1] < 8 or kw.get("layout") == "NHWC"
            or kw["pool_type"] == "sum"
            or (kw["pool_type"] == "avg" and kw.get("pooling_convention") == "full"
                and kw.get("count_include_pad", True)))


@pytest.mark.parametrize("case", POOL_CASES)
def test_pooling_matches_numpy(case):
    dshape, kw = case
    x = _rand(*dshape)
    _same(lambda a: mx.nd.Pooling(a, **kw), [x], on_dnn=not _numpy_pool(dshape, kw))


@pytest.mark.parametrize("channels", [8, 16, 20, 50])   # blocked, blocked, channels-last x2
@pytest.mark.parametrize("kernel", [(3, 3), (2, 2)])     # overlapping, disjoint windows
def test_max_pooling_gradient_goes_to_the_first_maximum(channels, kernel):
    """After a ReLU many windows are all zeros: MXNet sends the gradient to
    the first cell of each tied window, and so must oneDNN's path."""
    x = np.maximum(_rand(2, channels, 8, 8), 0)
    x[:, :, :4, :4] = 0
    x[:, ::3, 4:, 4:] = 1.5             # ties at a nonzero maximum too
    kw = dict(kernel=kernel, stride=(2, 2), pad=(1, 1) if kernel == (3, 3) else (0, 0),
              pool_type="max")
    got = _same(lambda a: mx.nd.Pooling(a, **kw), [x], atol=1e-6, rtol=1e-6)
    if kernel == (2, 2):        # disjoint windows: each gradient lands on its first cell
        og = np.random.RandomState(7).standard_normal(got[0].shape).astype("f4")
        want = np.zeros_like(x)
        want[:, :, 0::2, 0::2][x[:, :, 0::2, 0::2] == got[0]] = og[x[:, :, 0::2, 0::2] == got[0]]
        np.testing.assert_array_equal(got[1][:, :, :4, :4], want[:, :, :4, :4])
        np.testing.assert_array_equal(got[1][:, ::3, 4:, 4:], want[:, ::3, 4:, 4:])


def _bn_run(shape, kw, train, dnn):
    old = os.environ.get("AIOND_ONEDNN")
    os.environ["AIOND_ONEDNN"] = "1" if dnn else "0"
    try:
        C = shape[1]
        x = mx.nd.array(_rand(*shape))
        gamma = mx.nd.array(_rand(C, seed=3))
        beta = mx.nd.array(_rand(C, seed=4))
        mm = mx.nd.array(_rand(C, seed=5))
        mv = mx.nd.array(np.abs(_rand(C, seed=6)) + 0.5)
        for a in (x, gamma, beta):
            a.attach_grad()
        with mx.autograd.record(train_mode=train):
            y, mean, var = mx.nd.BatchNorm(x, gamma, beta, mm, mv, output_mean_var=True, **kw)
        og = mx.nd.array(_rand(*shape, seed=8))
        y.backward(og, train_mode=train)
        return [a.asnumpy() for a in (y, mean, var, x.grad, gamma.grad, beta.grad, mm, mv)]
    finally:
        if old is None:
            os.environ.pop("AIOND_ONEDNN", None)
        else:
            os.environ["AIOND_ONEDNN"] = old


@pytest.mark.parametrize("shape", [(4, 8, 5, 5), (3, 5, 7), (6, 4), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("fix_gamma", [True, False])
def test_batchnorm_matches_numpy(shape, train, fix_gamma, monkeypatch):
    from aiond.ops.onednn import bnorm
    monkeypatch.setattr(bnorm, "BWD_MIN", 0)    # small shapes through oneDNN too
    kw = dict(eps=1e-3, momentum=0.9, fix_gamma=fix_gamma)
    before = _calls()
    got = _bn_run(shape, kw, train, True)
    assert _calls() > before                # the backward ran on oneDNN
    want = _bn_run(shape, kw, train, False)
    names = ("y", "mean", "invstd", "dx", "dgamma", "dbeta", "moving_mean", "moving_var")
    for n, g, w in zip(names, got, want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4, err_msg=n)


@pytest.mark.parametrize("shape", [(2, 8, 20, 20), (4, 16, 64, 64)])
@pytest.mark.parametrize("fix_gamma", [True, False])
def test_batchnorm_gradient_finished_in_one_pass_matches_numpy(shape, fix_gamma):
    """The numpy backward's sums, then dx in one oneDNN binary pass by
    samples (``onednn/binary.py``): planes of 256 elements and more, below
    oneDNN's own BatchNorm threshold; the larger shape is shared out
    between the engine's workers (by channels, then by samples)."""
    kw = dict(eps=1e-3, momentum=0.9, fix_gamma=fix_gamma)
    before = _calls()
    got = _bn_run(shape, kw, True, True)
    assert _calls() > before
    want = _bn_run(shape, kw, True, False)
    names = ("y", "mean", "invstd", "dx", "dgamma", "dbeta", "moving_mean", "moving_var")
    for n, g, w in zip(names, got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=n)


def test_batchnorm_use_global_stats_matches_numpy(monkeypatch):
    from aiond.ops.onednn import bnorm
    monkeypatch.setattr(bnorm, "BWD_MIN", 0)
    kw = dict(eps=1e-5, fix_gamma=False, use_global_stats=True)
    got = _bn_run((4, 8, 3, 3), kw, True, True)
    want = _bn_run((4, 8, 3, 3), kw, True, False)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)


def test_numpy_kernels_when_turned_off():
    """AIOND_ONEDNN=0 in a fresh process: the library is never loaded."""
    code = ("import aiond as mx, numpy as np, sys\n"
            "x = mx.nd.ones((1, 2, 5, 5)); w = mx.nd.ones((3, 2, 3, 3))\n"
            "y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=3, no_bias=True)\n"
            "assert float(y.asnumpy()[0, 0, 0, 0]) == 18.0\n"
            "from aiond.ops.onednn import _lib\n"
            "print(_lib._state['lib'] is None, any('dnnl' in l for l in open('/proc/self/maps')))\n")
    env = dict(os.environ, AIOND_ONEDNN="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]


def test_import_does_not_load_library():
    code = ("import aiond\n"
            "print(any('dnnl' in l for l in open('/proc/self/maps')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False"]


def test_absent_library_falls_back_quietly():
    code = ("import aiond as mx\n"
            "x = mx.nd.ones((1, 2, 5, 5)); w = mx.nd.ones((3, 2, 3, 3))\n"
            "y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=3, no_bias=True)\n"
            "print(float(y.asnumpy()[0, 0, 0, 0]))\n")
    env = dict(os.environ, AIOND_ONEDNN_LIB="/nonexistent/libdnnl.so.3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["18.0"]
    assert out.stderr == ""


def test_strided_views_are_read_and_written_in_place():
    """Plans get numpy views (a channel slice of a bigger buffer): oneDNN
    reads and writes them through their strides, zero-copy, and leaves the
    rest of the buffer alone."""
    from aiond.ops import conv_gemm as cg
    big = _rand(2, 32, 9, 9)
    x = big[:, 8:24]                                 # (2, 16, 9, 9), not contiguous
    w = _rand(16, 16, 3, 3, seed=1)
    outbuf = np.full((2, 40, 9, 9), 7.0, np.float32)
    y = outbuf[:, 8:24]
    geo = ((3, 3), (1, 1), (1, 1), (1, 1), 1, 1024)
    before = _calls()
    cg.run_all(cg.fwd_plan(np, x, w, y, *geo))
    assert _calls() > before
    want = np.empty((2, 16, 9, 9), np.float32)
    os.environ["AIOND_ONEDNN"] = "0"
    try:
        cg.run_all(cg.fwd_plan(np, np.ascontiguousarray(x), w, want, *geo))
    finally:
        os.environ.pop("AIOND_ONEDNN")
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-3)
    assert (outbuf[:, :8] == 7).all() and (outbuf[:, 24:] == 7).all()


def test_kept_weight_refilled_in_its_own_buffer_after_an_update():
    """A weight whose version moved (a training step) is reordered again
    into the buffer its entry had, not into fresh memory; the new stamp is
    what a later lookup finds."""
    from aiond.ops.onednn import _wcache

    class Var:
        pass
    v = Var()
    fills = []

    def fill(buf):
        fills.append(buf)
        buf[:] = len(fills)
    key = ("test-refill", 1)
    a = _wcache.get(key, (v, 1), 256, fill)
    b = _wcache.get(key, (v, 1), 256, fill)
    c = _wcache.get(key, (v, 2), 256, fill)
    assert len(fills) == 2 and a is b
    assert c.ctypes.data == a.ctypes.data and (c == 2).all()
    other = _wcache.get(key, (Var(), 1), 512, fill)      # another size: its own memory
    assert other.size == 512 and (other == 3).all()
    _wcache.clear()


def test_ranges_missing_together_fill_the_weight_once():
    """The ranges of one split op miss the same key together: one fills,
    the other waits for it (a gate holds the fill) and gets that buffer."""
    import threading
    from aiond.ops.onednn import _wcache

    class Var:
        pass
    v = Var()
    started, release = threading.Event(), threading.Event()
    fills = []

    def fill(buf):
        fills.append(buf)
        started.set()
        assert release.wait(10)
        buf[:] = 7
    key = ("test-once", 2)
    got = {}
    t1 = threading.Thread(target=lambda: got.setdefault(1, _wcache.get(key, (v, 5), 64, fill)))
    t1.start()
    assert started.wait(10)
    t2 = threading.Thread(target=lambda: got.setdefault(2, _wcache.get(key, (v, 5), 64, fill)))
    t2.start()
    t2.join(0.2)
    assert t2.is_alive()            # waiting on the first fill, not filling its own
    release.set()
    t1.join(10)
    t2.join(10)
    assert len(fills) == 1
    assert got[1] is got[2] and (got[2] == 7).all()
    _wcache.clear()
