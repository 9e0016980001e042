"""One rank of a multi-process kvstore test: ``mpiexec -n N python
dist_worker.py SCENARIO OUTDIR``. Each scenario asserts what it can see
from one rank and writes what needs comparing across ranks into OUTDIR
(``<scenario>-<rank>.npz``); test_dist.py compares. Importable (no MPI at
import) so the tests can run the single-process references."""
from __future__ import annotations

import os
import sys

import numpy as np


def _data(seed, n, din=6, nclass=3):
    rs = np.random.RandomState(seed)
    x = rs.uniform(-1, 1, (n, din)).astype(np.float32)
    y = rs.randint(0, nclass, n).astype(np.float32)
    return x, y


# ------------------------------------------------------------ kvstore sums
def sums(mx, kv, out):
    r, n = kv.rank, kv.num_workers
    tot = n * (n + 1) // 2                   # sum of (rank + 1)
    dtypes = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64"]
    shape = (3, 5)
    # init: rank 0's value wins on every rank
    for i, dt in enumerate(dtypes):
        kv.init(i, mx.nd.ones(shape, dtype=dt) * (r + 2))
    o = mx.nd.zeros(shape, dtype="int32")
    kv.pull(5, out=o)
    assert (o.asnumpy() == 2).all(), o.asnumpy()
    # push each dtype on its own, and every dtype in one call (several buckets)
    for i, dt in enumerate(dtypes):
        kv.push(i, mx.nd.ones(shape, dtype=dt) * (r + 1))
        o = mx.nd.zeros(shape, dtype=dt)
        kv.pull(i, out=o)
        got = o.asnumpy()
        assert got.dtype == np.dtype(dt) and (got == tot).all(), (dt, got)
    vals = [mx.nd.full(shape, r + 1, dtype=dt) for dt in dtypes]
    kv.pushpull(list(range(len(dtypes))), vals)
    for v, dt in zip(vals, dtypes):
        assert (v.asnumpy() == tot).all(), (dt, v.asnumpy())
    # several devices' values for one key are summed first
    kv.push(1, [mx.nd.ones(shape), mx.nd.ones(shape) * 2])
    o = mx.nd.zeros(shape)
    kv.pull(1, out=[o])
    assert (o.asnumpy() == 3 * n).all()
    # 100 small keys fused into buckets; a big key split into chunks
    keys = list(range(100, 200))
    kv.init(keys, [mx.nd.zeros((7,)) for _ in keys])
    vs = [mx.nd.full((7,), (r + 1) * (k - 99)) for k in keys]
    kv.pushpull(keys, vs)
    for k, v in zip(keys, vs):
        assert (v.asnumpy() == tot * (k - 99)).all()
    big = np.arange(300000, dtype=np.float64) * (r + 1)
    kv.init(300, mx.nd.zeros(big.shape, dtype="float64"))
    b = mx.nd.array(big, dtype="float64")
    kv.pushpull(300, b, out=b)
    assert np.array_equal(b.asnumpy(), np.arange(300000, dtype=np.float64) * tot)
    # an optimizer on the store: same summed gradient, same update everywhere
    kv.init(400, mx.nd.ones((4, 4)))
    kv.set_optimizer(mx.optimizer.create("adam", learning_rate=0.01, rescale_grad=0.5))
    w = mx.nd.zeros((4, 4))
    rs = np.random.RandomState(r)
    for _ in range(3):
        kv.pushpull(400, mx.nd.array(rs.randn(4, 4)), out=w)
    kv.save_optimizer_states(os.path.join(out, "sums-states-%d" % r))
    kv.load_optimizer_states(os.path.join(out, "sums-states-%d" % r))
    kv._barrier()
    np.savez(os.path.join(out, "sums-%d.npz" % r), w=w.asnumpy())


def sums_ref(mx, n):
    """The Adam weight of ``sums`` computed in one process from all ranks' gradients."""
    kv = mx.kv.create("local")
    kv.init(400, mx.nd.ones((4, 4)))
    kv.set_optimizer(mx.optimizer.create("adam", learning_rate=0.01, rescale_grad=0.5))
    rss = [np.random.RandomState(r) for r in range(n)]
    w = mx.nd.zeros((4, 4))
    for _ in range(3):
        g = sum(rs.randn(4, 4) for rs in rss)
        kv.pushpull(400, mx.nd.array(g), out=w)
    return w.asnumpy()


def compression(mx, kv, out):
    r, n = kv.rank, kv.num_workers
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(0, mx.nd.zeros((37,)))
    rs = np.random.RandomState(10 + r)
    got = []
    for _ in range(4):
        g = mx.nd.array(rs.uniform(-1, 1, 37))
        kv.push(0, g)
        o = mx.nd.zeros((37,))
        kv.pull(0, out=o)
        got.append(o.asnumpy())
    np.savez(os.path.join(out, "compression-%d.npz" % r), got=np.stack(got))


def compression_ref(n, steps=4, size=37, t=0.5):
    rss = [np.random.RandomState(10 + r) for r in range(n)]
    res = [np.zeros(size, np.float32) for _ in range(n)]
    out = []
    for _ in range(steps):
        acc = np.zeros(size, np.float32)
        for r in range(n):
            g = rss[r].uniform(-1, 1, size).astype(np.float32)
            res[r] += g
            q = np.where(res[r] >= t, t, np.where(res[r] <= -t, -t, 0)).astype(np.float32)
            res[r] -= q
            acc += q
        out.append(acc)
    return np.stack(out)


# ------------------------------------------------------------ bad input
def mismatch(mx, kv, out):
    from aiond.base import MXNetError
    r = kv.rank
    try:
        kv.push("nokey", mx.nd.ones((2,)))
    except MXNetError as e:
        assert "not been initialized" in str(e), e
    else:
        raise AssertionError("push of an uninitialized key did not raise")
    kv.init("a", mx.nd.ones((2, 2)))
    # init with a shape that differs on the last rank
    shape = (3, 3) if r == kv.num_workers - 1 else (2, 3)
    kv.init("w", mx.nd.ones(shape))
    try:
        mx.nd.waitall()
    except MXNetError as e:
        msg = str(e)
    else:
        raise AssertionError("init with different shapes did not fail")
    # pushing different keys (same shapes) in the same slot
    kv.init("b", mx.nd.ones((2, 2)))
    v = mx.nd.ones((2, 2))
    kv.pushpull("a" if r == 0 else "b", v)
    try:
        v.asnumpy()
    except MXNetError as e:
        msg2 = str(e)
    else:
        raise AssertionError("pushing different keys did not fail")
    # the store still works after agreed errors
    v = mx.nd.ones((2, 2))
    kv.pushpull("a", v)
    assert (v.asnumpy() == kv.num_workers).all()
    with open(os.path.join(out, "mismatch-%d.txt" % r), "w") as f:
        f.write(msg + "\n" + msg2 + "\n")


def poison(mx, kv, out):
    """The last rank's gradient comes from a failed op: every rank's result
    fails (none sums garbage), each saying why; the store works after."""
    from aiond.base import MXNetError
    r, n = kv.rank, kv.num_workers
    kv.init([0, 1], [mx.nd.zeros((4,)), mx.nd.zeros((300000,))])    # small: fused; big: direct
    msgs = []
    for key, shape in ((0, (4,)), (1, (300000,))):
        g = mx.nd.ones(shape)
        if r == n - 1:
            def boom():
                raise ValueError("kernel failed on purpose")
            try:
                mx.engine.push(boom, writes=[g])
            except MXNetError:
                pass            # the naive engine raises at push
        try:
            kv.pushpull(key, g)     # raises here under the naive engine
            g.asnumpy()
        except MXNetError as e:
            msgs.append(str(e))
        else:
            raise AssertionError("rank %d summed a failed input of key %d" % (r, key))
    v = mx.nd.ones((4,))
    kv.pushpull(0, v)
    assert (v.asnumpy() == n).all()
    with open(os.path.join(out, "poison-%d.txt" % r), "w") as f:
        f.write("\n".join(msgs) + "\n")


def dead(mx, kv, out):
    """The last rank stops taking part (exits, or hangs until released by
    a file the others write once they have failed)."""
    from aiond.base import MXNetError
    r, n = kv.rank, kv.num_workers
    kv.init(0, mx.nd.ones((8,)))
    kv._barrier()
    # a short limit only now: a slow start of one rank must not trip init
    kv._ct.timeout = float(os.environ.get("DEAD_TIMEOUT", "2"))
    gate = os.path.join(out, "release")
    if r == n - 1:
        if os.environ.get("DEAD_MODE") == "kill":
            import signal
            os.kill(os.getpid(), signal.SIGKILL)
        if os.environ.get("DEAD_MODE") == "exit":
            sys.exit(0)
        _wait_files([gate])         # hung: released once the others have failed
        os._exit(0)
    v = mx.nd.ones((8,))
    kv.pushpull(0, v)
    try:
        v.asnumpy()
    except MXNetError as e:
        msg = str(e)
    else:
        raise AssertionError("a collective with a missing rank completed")
    # later collectives fail at once with the cause
    v2 = mx.nd.ones((8,))
    kv.pushpull(0, v2)
    try:
        v2.asnumpy()
    except MXNetError as e:
        msg2 = str(e)
    with open(os.path.join(out, "dead-%d.tmp" % r), "w") as f:
        f.write(msg + "\n" + msg2 + "\n")
    os.rename(os.path.join(out, "dead-%d.tmp" % r), os.path.join(out, "dead-%d.txt" % r))
    _say("rank %d: dead ok" % r)
    _wait_files([os.path.join(out, "dead-%d.txt" % i) for i in range(n - 1)])
    open(gate, "w").close()
    os._exit(0)


def _say(line):
    # one write per line: the ranks share mpiexec's stdout
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())


def _wait_files(paths):
    # every rank stays until all have reported: a launcher may end the job at
    # the first exit of a process that never finalised MPI
    import time
    while not all(os.path.exists(p) for p in paths):
        time.sleep(0.05)


# ------------------------------------------------------------ dist_async
def async_progress(mx, kv, out):
    """Rank 1 pushes and pulls while rank 0's user thread and the other ranks
    are parked on a gate only rank 1 opens: it must progress alone."""
    from aiond.base import MXNetError
    r, n = kv.rank, kv.num_workers
    assert kv.type == "dist_async"
    try:
        kv.push(0, mx.nd.ones((4,)))
    except MXNetError as e:
        assert "set_optimizer" in str(e)
    else:
        raise AssertionError("a push without an optimizer did not raise")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=1.0))
    kv.init(0, mx.nd.zeros((4,)))
    gate = os.path.join(out, "async-gate")
    seen = []
    if r == 1:
        o = mx.nd.zeros((4,))
        for i in range(5):
            kv.push(0, mx.nd.ones((4,)))
            kv.pull(0, out=o)
            seen.append(float(o.asnumpy()[0]))
        open(gate, "w").close()
    else:
        _wait_files([gate])
        for i in range(5):
            kv.push(0, mx.nd.ones((4,)))
    kv._barrier()
    o = mx.nd.zeros((4,))
    kv.pull(0, out=o)
    np.savez(os.path.join(out, "async-%d.npz" % r), final=o.asnumpy(), seen=np.array(seen))


# ------------------------------------------------------------ training
def _mlp(mx, seed=1):
    from aiond import gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu"), gluon.nn.Dense(3))
    mx.random.seed(seed)
    net.initialize(mx.init.Xavier())
    return net


def train_gluon(mx, kvstore, xs, ys, steps, batch, opt="sgd", **kw):
    """Train the MLP on ``xs``/``ys`` (this rank's rows); returns the params."""
    from aiond import autograd, gluon
    net = _mlp(mx)
    net(mx.nd.array(xs[:1]))
    trainer = gluon.Trainer(net.collect_params(), opt,
                            {"learning_rate": 0.1, **({"momentum": 0.9} if opt == "sgd" else {})},
                            kvstore=kvstore, **kw)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    per = len(xs) // steps
    for s in range(steps):
        x = mx.nd.array(xs[s * per:(s + 1) * per])
        y = mx.nd.array(ys[s * per:(s + 1) * per])
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
    return {k: v.data().asnumpy() for k, v in net.collect_params().items()}


def gluon_dist(mx, kv, out, update_on_kvstore=None):
    r, n = kv.rank, kv.num_workers
    steps, per = 4, 8
    xs, ys = _data(0, steps * per * n)
    # each step's global batch is rows [s*per*n, (s+1)*per*n); this rank takes its part
    mine = np.concatenate([np.arange(s * per * n + r * per, s * per * n + (r + 1) * per)
                           for s in range(steps)])
    params = train_gluon(mx, kv, xs[mine], ys[mine], steps, per * n,
                         update_on_kvstore=update_on_kvstore)
    tag = "gluon" if update_on_kvstore is None else "gluon-uok%d" % int(update_on_kvstore)
    np.savez(os.path.join(out, "%s-%d.npz" % (tag, r)), **params)


def gluon_noupd(mx, kv, out):
    gluon_dist(mx, kv, out, update_on_kvstore=False)


def gluon_ref(mx, n):
    steps, per = 4, 8
    xs, ys = _data(0, steps * per * n)
    return train_gluon(mx, "local", xs, ys, steps, per * n)


def module_dist(mx, kv, out):
    r, n = kv.rank, kv.num_workers
    params = train_module(mx, kv, n, r, out)
    np.savez(os.path.join(out, "module-%d.npz" % r), **params)


def module_noupd(mx, kv, out):
    """Module.fit with the update outside the store (MXNET_UPDATE_ON_KVSTORE=0)."""
    os.environ["MXNET_UPDATE_ON_KVSTORE"] = "0"
    try:
        params = train_module(mx, kv, kv.num_workers, kv.rank, out)
    finally:
        del os.environ["MXNET_UPDATE_ON_KVSTORE"]
    np.savez(os.path.join(out, "module-noupd-%d.npz" % kv.rank), **params)


def write_mnist(path, n, seed=3):
    """A small file pair in MNIST's idx format (8x8 images, 3 classes)."""
    import struct
    rs = np.random.RandomState(seed)
    img = rs.randint(0, 256, (n, 8, 8)).astype(np.uint8)
    lab = rs.randint(0, 3, n).astype(np.uint8)
    with open(path + "-img.tmp", "wb") as f:
        f.write(struct.pack(">iiii", 2051, n, 8, 8) + img.tobytes())
    with open(path + "-lab.tmp", "wb") as f:
        f.write(struct.pack(">ii", 2049, n) + lab.tobytes())
    os.replace(path + "-img.tmp", path + "-img")
    os.replace(path + "-lab.tmp", path + "-lab")
    return img.reshape(n, 64).astype(np.float32) / 256, lab.astype(np.float32)


def train_module(mx, kv, n, part, out):
    """Module.fit on MNISTIter's part ``part`` of ``n`` (kvstore 'dist_sync'),
    or, with kv='local', on the batches all parts make together."""
    per, steps = 8, 4
    path = os.path.join(out, "mnist-%s" % ("local" if kv == "local" else part))
    xs, ys = write_mnist(path, steps * per * n)
    if kv != "local":
        it = mx.io.MNISTIter(image=path + "-img", label=path + "-lab", batch_size=per,
                             flat=True, shuffle=False, num_parts=n, part_index=part, silent=True)
    else:
        # global batch s = batch s of every part, in part order
        shard = steps * per
        rows = np.concatenate([np.arange(p * shard + s * per, p * shard + (s + 1) * per)
                               for s in range(steps) for p in range(n)])
        it = mx.io.NDArrayIter(xs[rows], ys[rows], batch_size=per * n,
                               label_name="softmax_label")
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net)
    mx.random.seed(7)
    mod.fit(it, num_epoch=1, kvstore=kv, optimizer="sgd",
            optimizer_params={"learning_rate": 0.5}, initializer=mx.init.Xavier())
    args, _ = mod.get_params()
    return {k: v.asnumpy() for k, v in args.items()}


# ------------------------------------------------------------ GPU values
# Run with the CuPy test double installed as ``cupy`` in every rank (two
# devices per rank): see main().
def gpu_sums(mx, kv, out):
    """dist_device_sync with values and outs on gpu(0) and gpu(1): exact sums
    for every dtype, results on the outs' own devices, no host sync."""
    import fakecupy
    r, n = kv.rank, kv.num_workers
    tot = n * (n + 1) // 2
    g0, g1 = mx.gpu(0), mx.gpu(1)
    dtypes = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64"]
    shape = (3, 5)

    def check(a, want, ctx, dt):
        assert a.context == ctx, (a.context, ctx)
        got = a.asnumpy()
        assert got.dtype == np.dtype(dt) and (got == want).all(), (dt, want, got)

    for i, dt in enumerate(dtypes):
        kv.init(i, mx.nd.ones(shape, ctx=g0, dtype=dt) * (r + 2))
    for i, dt in enumerate(dtypes):
        o = mx.nd.zeros(shape, ctx=g1, dtype=dt)
        kv.pull(i, out=o)
        check(o, 2, g1, dt)
    # one value on gpu(0); pulled into outs on both GPUs and the host
    for i, dt in enumerate(dtypes):
        kv.push(i, mx.nd.ones(shape, ctx=g0, dtype=dt) * (r + 1))
        outs = [mx.nd.zeros(shape, ctx=c, dtype=dt) for c in (g0, g1, mx.cpu())]
        kv.pull(i, out=outs)
        for o, c in zip(outs, (g0, g1, mx.cpu())):
            check(o, tot, c, dt)
    # a list over gpu(0) and gpu(1): summed on gpu(0) first
    for i, dt in enumerate(dtypes):
        kv.push(i, [mx.nd.ones(shape, ctx=g0, dtype=dt) * (r + 1),
                    mx.nd.ones(shape, ctx=g1, dtype=dt) * 2 * (r + 1)])
        o = mx.nd.zeros(shape, ctx=g1, dtype=dt)
        kv.pull(i, out=o)
        check(o, 3 * tot, g1, dt)
    # pushpull in place over every key at once (the fused path), on gpu(1)
    vals = [mx.nd.full(shape, r + 1, ctx=g1, dtype=dt) for dt in dtypes]
    kv.pushpull(list(range(len(dtypes))), vals)
    for v, dt in zip(vals, dtypes):
        check(v, tot, g1, dt)
    # pushpull of a two-GPU list into outs on both GPUs
    for i, dt in enumerate(dtypes):
        vs = [mx.nd.full(shape, r + 1, ctx=g0, dtype=dt), mx.nd.full(shape, r + 1, ctx=g1,
                                                                     dtype=dt)]
        os_ = [mx.nd.zeros(shape, ctx=g1, dtype=dt), mx.nd.zeros(shape, ctx=g0, dtype=dt)]
        kv.pushpull(i, vs, out=os_)
        check(os_[0], 2 * tot, g1, dt)
        check(os_[1], 2 * tot, g0, dt)
    # a big key (allreduced on its own, in chunks) from a computed GPU value
    big = mx.nd.arange(300000, ctx=g0, dtype="float64") * (r + 1)
    kv.init(300, mx.nd.zeros((300000,), ctx=g0, dtype="float64"))
    kv.pushpull(300, big)
    check(big, np.arange(300000, dtype=np.float64) * tot, g0, "float64")
    # broadcast: rank 0's value into outs on both GPUs
    bo = [mx.nd.zeros(shape, ctx=g0), mx.nd.zeros(shape, ctx=g1)]
    kv.broadcast(400, mx.nd.full(shape, r + 5, ctx=g1), out=bo)
    check(bo[0], 5, g0, "float32")
    check(bo[1], 5, g1, "float32")
    mx.nd.waitall()
    st = fakecupy.S
    assert not st.races, st.races[:3]
    assert st.syncs == 0, st.sync_where[:5]
    _check_nccl_use(kv)
    np.savez(os.path.join(out, "gpu_sums-%d.npz" % r), big=big.asnumpy(),
             **{dt: v.asnumpy() for dt, v in zip(dtypes, vals)})


def _check_nccl_use(kv):
    """Under FAKE_NCCL=1 every rank agreed on NCCL and reduced with it;
    with NCCL on rank 0 only (FAKE_NCCL=rank0) no rank uses it."""
    if os.environ.get("FAKE_NCCL") == "1" and kv.num_workers > 1:
        import fakenccl
        assert kv._nccl is not None and kv._nccl.reductions > 0 and fakenccl.calls
    else:
        assert kv._nccl is None


def train_gluon_gpu(mx, kvstore, xs, ys, steps, batch, ctxs):
    """``train_gluon`` with the net on ``ctxs`` (each step's rows split over them)."""
    from aiond import autograd, gluon
    net = _mlp(mx)
    net(mx.nd.array(xs[:1]))            # initialised on the host: the same weights as the reference
    net.collect_params().reset_ctx(ctxs)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9},
                            kvstore=kvstore)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    per = len(xs) // steps
    for s in range(steps):
        if s == 1 and trainer._kvstore is not None:
            _check_nccl_use(trainer._kvstore)
        rows = np.array_split(np.arange(s * per, (s + 1) * per), len(ctxs))
        with autograd.record():
            losses = [loss_fn(net(mx.nd.array(xs[i], ctx=c)), mx.nd.array(ys[i], ctx=c))
                      for i, c in zip(rows, ctxs)]
        for loss in losses:
            loss.backward()
        trainer.step(batch)
    params = {}
    for k, v in net.collect_params().items():
        datas = v.list_data()
        assert [d.context for d in datas] == list(ctxs)
        for d in datas[1:]:
            assert d.asnumpy().tobytes() == datas[0].asnumpy().tobytes(), k
        params[k] = datas[0].asnumpy()
    return params


def gpu_trainer(mx, kv, out):
    """Trainer(kvstore='dist_device_sync') on a net on gpu(0), then on gpu(0)+gpu(1)."""
    import fakecupy
    r, n = kv.rank, kv.num_workers
    steps, per = 4, 8
    xs, ys = _data(0, steps * per * n)
    mine = np.concatenate([np.arange(s * per * n + r * per, s * per * n + (r + 1) * per)
                           for s in range(steps)])
    for tag, ctxs in (("one", [mx.gpu(0)]), ("two", [mx.gpu(0), mx.gpu(1)])):
        params = train_gluon_gpu(mx, "dist_device_sync", xs[mine], ys[mine], steps, per * n,
                                 ctxs)
        np.savez(os.path.join(out, "gpu_trainer_%s-%d.npz" % (tag, r)), **params)
    assert not fakecupy.S.races, fakecupy.S.races[:3]


def nccl_sums(mx, kv, out):
    """Real GPUs and NCCL (no double): rank r on gpu(r); exact sums, through NCCL."""
    from aiond.engine import gpu as _gpu
    r, n = kv.rank, kv.num_workers
    tot = n * (n + 1) // 2
    ctx = mx.gpu(r % _gpu.device_count())
    for i, dt in enumerate(["float16", "float32", "float64", "int8", "int32", "int64"]):
        kv.init(i, mx.nd.zeros((1000,), ctx=ctx, dtype=dt))
        v = mx.nd.ones((1000,), ctx=ctx, dtype=dt) * (r + 1)
        kv.pushpull(i, v)
        assert v.context == ctx and (v.asnumpy() == tot).all(), (dt, v.asnumpy()[:4])
        kv.push(i, v)
        o = mx.nd.zeros((1000,), dtype=dt)
        kv.pull(i, out=o)
        assert (o.asnumpy() == tot * n).all(), (dt, o.asnumpy()[:4])
    assert kv._nccl is not None and kv._nccl.reductions >= 12, "NCCL was not used"
    np.savez(os.path.join(out, "nccl_sums-%d.npz" % r), ok=np.ones(1))


SCENARIOS = {f.__name__: f for f in (sums, compression, mismatch, poison, dead, gluon_dist,
                                     gluon_noupd, module_dist, module_noupd, async_progress,
                                     gpu_sums, gpu_trainer, nccl_sums)}
GPU_SCENARIOS = ("gpu_sums", "gpu_trainer")


def main():
    name, out = sys.argv[1], sys.argv[2]
    if any(one in GPU_SCENARIOS for one in name.split(",")):
        # the CuPy double as ``cupy``, two devices, as the suite installs it
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import fakecupy
        fakecupy.install(2)
        fake = os.environ.get("FAKE_NCCL")
        if fake == "1" or (fake == "rank0" and os.environ.get("PMI_RANK") == "0"):
            import fakenccl         # 'dist_device_sync' then reduces through "NCCL"
            fakenccl.install()
    import aiond as mx
    for one in name.split(","):
        kv = mx.kv.create(os.environ.get("KV_TYPE", "dist_sync"))
        SCENARIOS[one](mx, kv, out)
        _say("rank %d: %s ok" % (kv.rank, one))


if __name__ == "__main__":
    main()
