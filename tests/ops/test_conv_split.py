"""The convolution plans of aiond.ops.conv_gemm give the same result
whatever range split the engine picks (uneven ranges, ranges cutting a
sample's output rows, chunks smaller than a sample), and the ops split over
the CPU workers stay exact against a direct numpy reference."""
from __future__ import annotations

import numpy as np
import pytest

import aiond as mx
from aiond.ops import conv_gemm

RNG = np.random.default_rng(11)


def ref_conv(x, w, stride, dilate, pad, groups):
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    F, Cg = w.shape[:2]
    k = w.shape[2:]
    nd = len(k)
    dk = [(ki - 1) * di + 1 for ki, di in zip(k, dilate)]
    o = [(xp.shape[2 + i] - dk[i]) // stride[i] + 1 for i in range(nd)]
    out = np.zeros((x.shape[0], F) + tuple(o))
    Fg = F // groups
    for f in range(F):
        c0 = (f // Fg) * Cg
        for pos in np.ndindex(*o):
            win = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + dk[i], dilate[i])
                        for i in range(nd))
            out[(slice(None), f) + pos] = np.tensordot(
                xp[(slice(None), slice(c0, c0 + Cg)) + win], w[f].astype(np.float64), axes=nd + 1)
    return out


def grads_ref(x, w, dy, stride, dilate, pad, groups):
    """dw[f, c, off] = sum over n and output positions o of
    dy[n, f, o] * xpad[n, c, o*stride + off*dilate] (c within f's group)."""
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    F, Cg = w.shape[:2]
    Fg = F // groups
    o = dy.shape[2:]
    dw = np.zeros(w.shape)
    for off in np.ndindex(*w.shape[2:]):
        win = (slice(None), slice(None)) + tuple(
            slice(off[i] * dilate[i], off[i] * dilate[i] + stride[i] * (o[i] - 1) + 1, stride[i])
            for i in range(len(o)))
        xs = xp[win]
        for f in range(F):
            c0 = (f // Fg) * Cg
            prod = dy[:, f:f + 1].astype(np.float64) * xs[:, c0:c0 + Cg]
            dw[(f, slice(None)) + off] = prod.sum(axis=(0,) + tuple(range(2, prod.ndim)))
    return dw


PARTITIONS = [None, 2, 3, 5]    # None: run(0, n); k: k uneven ranges


def _run(plan, parts):
    n, run = plan
    if parts is None or n <= 1:
        run(0, n)
        return
    cuts = sorted(set([0, n] + [max(1, (n * i) // parts - (i % 2)) for i in range(1, parts)]))
    # ranges in reverse order: a split may finish in any order
    for lo, hi in reversed(list(zip(cuts[:-1], cuts[1:]))):
        run(lo, hi)


CASES = [  # N, C, L, F, k, s, d, p, g
    (3, 4, (9, 8), 6, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (1, 3, (10, 7), 4, (3, 2), (2, 1), (1, 2), (1, 0), 1),
    (2, 4, (8, 8), 4, (1, 1), (1, 1), (1, 1), (0, 0), 2),
    (5, 6, (7, 9), 6, (3, 3), (2, 2), (1, 1), (2, 1), 3),
    (2, 2, (11,), 3, (4,), (3,), (1,), (1,), 1),
    (2, 2, (5, 4, 6), 2, (2, 3, 2), (1, 2, 1), (1, 1, 2), (1, 0, 1), 1),
    # many samples, short output rows: col2im with the batch innermost
    (12, 3, (5, 5), 4, (3, 3), (2, 2), (1, 1), (1, 1), 1),
    (16, 2, (6, 6), 8, (3, 3), (1, 1), (1, 1), (0, 0), 2),
    (9, 4, (4, 5), 6, (2, 2), (1, 2), (2, 1), (1, 1), 2),
    (7, 2, (6,), 3, (3,), (1,), (1,), (2,), 1),
    # many filters, few output positions: split over filters
    (1, 8, (3, 3), 40, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (2, 4, (2, 2), 24, (1, 1), (1, 1), (1, 1), (0, 0), 1),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("parts", PARTITIONS)
@pytest.mark.parametrize("chunk", [1 << 22, 64])     # 64 bytes: one row per chunk
def test_plans_exact_under_any_split(case, parts, chunk, monkeypatch):
    monkeypatch.setattr(conv_gemm, "_CHUNK_BYTES", chunk)
    N, C, L, F, k, s, d, p, g = case
    x = RNG.standard_normal((N, C) + L).astype(np.float32)
    w = RNG.standard_normal((F, C // g) + k).astype(np.float32)
    b = RNG.standard_normal(F).astype(np.float32)
    want = ref_conv(x, w, s, d, p, g)
    out = np.full(want.shape, np.nan, np.float32)
    _run(conv_gemm.fwd_plan(np, x, w, out, k, s, d, p, g, 1024, b), parts)
    np.testing.assert_allclose(out, want + b.reshape((1, -1) + (1,) * len(k)),
                               rtol=1e-4, atol=1e-4)
    dy = RNG.standard_normal(want.shape).astype(np.float32)
    # data gradient: <conv(x), dy> is linear in x, so dx = d/dx of it
    dx = np.full(x.shape, np.nan, np.float32)
    _run(conv_gemm.bwd_data_plan(np, dy, w, dx, k, s, d, p, g, 1024), parts)
    probe = RNG.standard_normal(x.shape)
    np.testing.assert_allclose((dx * probe).sum(), (ref_conv(probe, w, s, d, p, g) * dy).sum(),
                               rtol=1e-4, atol=1e-3)
    dw = np.full(w.shape, np.nan, np.float32)
    _run(conv_gemm.bwd_weight_plan(np, dy, x, dw, k, s, d, p, g, 1024), parts)
    np.testing.assert_allclose(dw, grads_ref(x, w, dy, s, d, p, g), rtol=1e-4, atol=1e-3)


def test_weight_gradient_does_not_depend_on_the_split():
    x = RNG.standard_normal((9, 3, 12, 12)).astype(np.float32)
    dy = RNG.standard_normal((9, 5, 12, 12)).astype(np.float32)
    args = ((3, 3), (1, 1), (1, 1), (1, 1), 1, 1024)
    got = []
    for parts in PARTITIONS:
        dw = np.empty((5, 3, 3, 3), np.float32)
        _run(conv_gemm.bwd_weight_plan(np, dy, x, dw, *args), parts)
        got.append(dw)
    for a in got[1:]:
        np.testing.assert_array_equal(a, got[0])


@pytest.mark.parametrize("parts", PARTITIONS)
@pytest.mark.parametrize("shape,F,k,g", [((16, 1, 14, 14), 6, (5, 5), 1),    # LeNet's first layer
                                         ((9, 4, 7, 6), 6, (3, 2), 2)])
def test_weight_gradient_batched_partials_are_the_per_sample_sum(shape, F, k, g, parts,
                                                                  monkeypatch):
    """Small weights take one batched product per block and an axis-0 sum:
    bit for bit the per-sample loop (partials added in sample order)."""
    x = RNG.standard_normal(shape).astype(np.float32)
    o = tuple(L - ki + 1 for L, ki in zip(shape[2:], k))
    dy = RNG.standard_normal((shape[0], F) + o).astype(np.float32)
    args = (k, (1,) * len(k), (1,) * len(k), (0,) * len(k), g, 1024)
    wshape = (F, shape[1] // g) + k
    batched = np.full(wshape, np.nan, np.float32)
    _run(conv_gemm.bwd_weight_plan(np, dy, x, batched, *args), parts)
    monkeypatch.setattr(conv_gemm, "_PARTIALS_BYTES", 0)
    loop = np.full(wshape, np.nan, np.float32)
    _run(conv_gemm.bwd_weight_plan(np, dy, x, loop, *args), parts)
    np.testing.assert_array_equal(batched, loop)
    np.testing.assert_allclose(batched, grads_ref(x, np.zeros(wshape, np.float32), dy,
                                                  args[1], args[2], args[3], g),
                               rtol=1e-4, atol=1e-3)


def test_empty_batch_weight_gradient_is_zero():
    dw = np.full((2, 1, 3, 3), np.nan, np.float32)
    conv_gemm.run_all(conv_gemm.bwd_weight_plan(
        np, np.zeros((0, 2, 4, 4), np.float32), np.zeros((0, 1, 6, 6), np.float32), dw,
        (3, 3), (1, 1), (1, 1), (0, 0), 1, 1024))
    assert (dw == 0).all()


def test_split_ops_through_the_engine_match_numpy():
    """Large enough (> ROWS_SPLIT_MIN MACs/8) to be split over the workers
    when they are idle."""
    x = RNG.standard_normal((8, 16, 32, 32)).astype(np.float32)
    w = RNG.standard_normal((16, 16, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(16).astype(np.float32)
    X, W, B = mx.nd.array(x), mx.nd.array(w), mx.nd.array(b)
    X.attach_grad()
    W.attach_grad()
    B.attach_grad()
    dy = RNG.standard_normal((8, 16, 16, 16)).astype(np.float32)
    with mx.autograd.record():
        y = mx.nd.Convolution(X, W, B, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=16)
    y.backward(mx.nd.array(dy))
    want = ref_conv(x, w, (2, 2), (1, 1), (1, 1), 1) + b.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(B.grad.asnumpy(), dy.sum(axis=(0, 2, 3)), rtol=1e-4, atol=1e-3)
    probe = RNG.standard_normal(x.shape)
    np.testing.assert_allclose((X.grad.asnumpy() * probe).sum(),
                               (ref_conv(probe, w, (2, 2), (1, 1), (1, 1), 1) * dy).sum(),
                               rtol=1e-4, atol=1e-2)
    # dw[f, c, i, j] = sum dy[n, f, o] * xpad[n, c, 2o + (i, j)]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    dw = np.zeros(w.shape)
    for i in range(3):
        for j in range(3):
            dw[:, :, i, j] = np.einsum("nfhw,nchw->fc", dy, xp[:, :, i:i + 32:2, j:j + 32:2])
    np.testing.assert_allclose(W.grad.asnumpy(), dw, rtol=1e-4, atol=1e-3)


def test_deconvolution_split_matches_the_convolution_adjoint():
    x = RNG.standard_normal((5, 6, 9, 9)).astype(np.float32)
    w = RNG.standard_normal((6, 4, 3, 3)).astype(np.float32)
    y = mx.nd.Deconvolution(mx.nd.array(x), mx.nd.array(w), kernel=(3, 3), stride=(2, 2),
                            pad=(1, 1), num_filter=4).asnumpy()
    # <deconv(x), probe> == <x, conv(probe)> with the same weight
    probe = RNG.standard_normal(y.shape)
    lhs = (y * probe).sum()
    rhs = (x * ref_conv(probe, w, (2, 2), (1, 1), (1, 1), 1)).sum()
    np.testing.assert_allclose(lhs, rhs, rtol=1e-4)


def ref_pool_bwd(x, dy, k, s, pool_type):
    """Gradient of valid, unpadded 2-D pooling: max to the first maximum of
    each window (row-major order), avg/sum spread over the window."""
    dx = np.zeros(x.shape)
    oh, ow = dy.shape[2:]
    for n, c, i, j in np.ndindex(x.shape[0], x.shape[1], oh, ow):
        win = x[n, c, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
        sl = (n, c, slice(i * s[0], i * s[0] + k[0]), slice(j * s[1], j * s[1] + k[1]))
        if pool_type == "max":
            a, b = np.unravel_index(np.argmax(win), win.shape)
            dx[n, c, i * s[0] + a, j * s[1] + b] += dy[n, c, i, j]
        else:
            dx[sl] += dy[n, c, i, j] / (k[0] * k[1] if pool_type == "avg" else 1)
    return dx


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
@pytest.mark.parametrize("shape,k,s", [((2, 3, 8, 8), (2, 2), (2, 2)),
                                       ((3, 2, 9, 7), (2, 3), (2, 3)),      # leftover cells
                                       ((2, 2, 10, 10), (2, 2), (3, 3)),    # gaps between windows
                                       ((8, 40, 24, 24), (2, 2), (2, 2))])  # split over planes
def test_disjoint_pooling_gradient(pool_type, shape, k, s):
    x = RNG.standard_normal(shape).astype(np.float32)
    x[0, 0] = 0                         # ties: the first maximum of a window takes it all
    X = mx.nd.array(x)
    X.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(X, kernel=k, stride=s, pool_type=pool_type)
    dy = RNG.standard_normal(y.shape).astype(np.float32)
    y.backward(mx.nd.array(dy))
    got = X.grad.asnumpy()
    np.testing.assert_allclose(got, ref_pool_bwd(x, dy, k, s, pool_type), rtol=1e-5, atol=1e-6)
    assert not np.signbit(got[got == 0]).any()      # +0.0 where no gradient goes, as MXNet


def test_pooling_forward_split_over_planes():
    x = RNG.standard_normal((8, 64, 30, 30)).astype(np.float32)
    y = mx.nd.Pooling(mx.nd.array(x), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                      pool_type="max").asnumpy()
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
    want = np.full(y.shape, -np.inf, np.float32)
    for a in range(3):
        for b in range(3):
            want = np.maximum(want, xp[:, :, a:a + 29:2, b:b + 29:2])
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("parts", [2, 3])
def test_pooling_rows_hook_any_split(parts):
    from aiond.ops import conv, registry
    x = RNG.standard_normal((3, 5, 12, 12)).astype(np.float32)
    op = registry.get("Pooling")
    attrs = op.parse({"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg"})
    whole = np.empty((3, 5, 6, 6), np.float32)
    op.kernel(np, x, out=whole, **attrs)
    got = np.full(whole.shape, np.nan, np.float32)
    _run(conv._pool_rows(np, [x], got, attrs), parts)
    np.testing.assert_array_equal(got, whole)
    bop = registry.get("_backward_Pooling")
    dy = RNG.standard_normal(whole.shape).astype(np.float32)
    want = np.empty(x.shape, np.float32)
    bop.kernel(np, dy, x, whole, out=want, **attrs)
    dx = np.full(x.shape, np.nan, np.float32)
    _run(conv._pool_rows(np, [dy, x, whole], dx, attrs), parts)
    np.testing.assert_array_equal(dx, want)


@pytest.mark.parametrize("shape,splits", [((64, 20, 24, 24), True),    # LeNet's first pooling
                                          ((64, 50, 8, 8), False)])    # and its second
def test_pooling_from_a_plain_thread_splits_large_layers_only(shape, splits, split_ranges):
    """A plain thread runs a ready Pooling (and its gradient) itself, sharing
    a large one with the idle workers by planes; a small one is not worth the
    hand-off. Either way the result is the unsplit kernel's, bit for bit."""
    from aiond.ops import registry
    x = np.maximum(RNG.standard_normal(shape), 0).astype(np.float32)  # ties at 0
    attrs = registry.get("Pooling").parse({"kernel": (2, 2), "stride": (2, 2)})
    want_y = np.empty(shape[:2] + (shape[2] // 2, shape[3] // 2), np.float32)
    registry.get("Pooling").kernel(np, x, out=want_y, **attrs)
    dy = RNG.standard_normal(want_y.shape).astype(np.float32)
    want_dx = np.empty(shape, np.float32)
    registry.get("_backward_Pooling").kernel(np, dy, x, want_y, out=want_dx, **attrs)
    X, DY = mx.nd.array(x, ctx=mx.cpu()), mx.nd.array(dy, ctx=mx.cpu())     # the CPU's workers
    mx.nd.waitall()
    ranges = split_ranges
    cpu = ranges.cpu
    # oneDNN's pooling (where it takes the case) splits by samples, numpy's by planes
    from aiond.ops import onednn
    units = shape[0] if onednn.pool_whole(attrs, shape) else shape[0] * shape[1]
    y = None
    for fn in (lambda: mx.nd.Pooling(X, kernel=(2, 2), stride=(2, 2)),
               lambda: mx.nd._internal._backward_Pooling(DY, X, y, kernel=(2, 2), stride=(2, 2))):
        ranges.idle()
        r = fn()
        r.wait_to_read()
        if cpu.nworkers > 1:
            assert (sum(ranges) == units) if splits else not ranges
        if y is None:
            y = r
    np.testing.assert_array_equal(y.asnumpy(), want_y)
    np.testing.assert_array_equal(r.asnumpy(), want_dx)
