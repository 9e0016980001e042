"""Every registry op that runs on generic inputs, on a GPU context against the
CPU: on the CuPy test double always (``fake_gpu``), and on a real device under
``pytest -m gpu``. The double refuses what CuPy refuses (numpy arrays mixed
into device math, implicit conversions), so a kernel that would only work on
numpy fails here."""
import numpy as np
import pytest

import aiond as mx
from aiond.ndarray._invoke import invoke
from aiond.ops import registry as R


def _generic_ops():
    seen = {}
    for name, op in sorted(R.ops().items()):
        if id(op) in seen or op.variadic or op.invoke_hook is not None:
            continue
        seen[id(op)] = name
    return sorted(seen.values())


def _inputs(op, rs):
    return [rs.uniform(0.5, 1.5, (3, 4)).astype(np.float32) for _ in op.inputs]


def _attrs(op):
    if "shape" in op.pindex and not op.inputs:
        return op.parse({"shape": (3, 4)})
    return op.parse({})


def _on_cpu(name):
    op = R.get(name)
    rs = np.random.RandomState(0)
    ins = _inputs(op, rs)
    try:
        attrs = _attrs(op)
        with mx.cpu():
            out = invoke(op, [mx.nd.array(x, ctx=mx.cpu()) for x in ins], attrs, ctx=mx.cpu())
            outs = [y.asnumpy() for y in (out if isinstance(out, list) else [out])]
    except Exception:  # noqa: BLE001 - needs inputs or params this sweep does not make
        return None
    return op, ins, attrs, outs


# the ops that run on the sweep's generic inputs (the rest need particular
# shapes or parameters: their own test files cover them, and run on a GPU
# with AIOND_TEST_CTX=gpu)
_OPS = [n for n in _generic_ops() if _on_cpu(n) is not None]


def _check(name, ctx, rtol=1e-5, atol=1e-6):
    op, ins, attrs, want = _on_cpu(name)
    out = invoke(op, [mx.nd.array(x, ctx=ctx) for x in ins], attrs, ctx=ctx)
    outs = out if isinstance(out, list) else [out]
    assert all(y.context == ctx for y in outs)
    vals = [y.asnumpy() for y in outs]
    if op.needs_rng:
        for v, w in zip(vals, want):
            assert v.shape == w.shape and v.dtype == w.dtype
        return
    for v, w in zip(vals, want):
        np.testing.assert_allclose(v, w, rtol=rtol, atol=atol, equal_nan=True)


def test_the_sweep_covers_many_ops():
    assert len(_OPS) >= 200


@pytest.mark.parametrize("name", _OPS)
def test_op_on_the_cupy_double(fake_gpu, name):
    syncs = fake_gpu.syncs
    _check(name, mx.gpu(0))
    if R.get(name).host_kernel:
        return      # declared numpy-only: it brings its inputs to the host, by design
    # no kernel reads a device value back on the host (that stalls the stream)
    assert fake_gpu.syncs == syncs, fake_gpu.sync_where[-3:]


@pytest.mark.gpu
@pytest.mark.parametrize("name", _OPS)
def test_op_on_a_real_gpu(name):
    # CUDA's float32 transcendentals and reduction orders differ from numpy's
    _check(name, mx.gpu(0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("interp", [0, 1, 2, 3, 4])
def test_image_resizes_run_on_the_device(fake_gpu, interp):
    # cv::resize's weights are made on the host, applied on the image's device
    rs = np.random.RandomState(interp)
    img = rs.uniform(0, 255, (9, 7, 3)).astype(np.float32)
    batch = rs.randint(0, 256, (2, 9, 7, 3)).astype(np.uint8)
    for ctx in (mx.cpu(), mx.gpu(0)):
        a, b = mx.nd.array(img, ctx=ctx), mx.nd.array(batch, ctx=ctx, dtype="uint8")
        outs = [mx.nd._internal._cvimresize(a, w=5, h=4, interp=interp),
                mx.nd.image.resize(b, size=(4, 6), interp=interp)]
        if ctx == mx.cpu():
            want = [o.asnumpy() for o in outs]
        else:
            assert all(o.context == ctx for o in outs)
            np.testing.assert_allclose(outs[0].asnumpy(), want[0], rtol=1e-5, atol=1e-3)
            np.testing.assert_array_equal(outs[1].asnumpy(), want[1])
    assert want[0].shape == (4, 5, 3) and want[1].shape == (2, 6, 4, 3)
