"""mx.onnx.export_model, per operator: the exported graph passes the ONNX checker
and onnxruntime gives aiond's forward results (opsets 12, 13 and the newest)."""
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
rt = pytest.importorskip("onnxruntime")

import aiond as mx  # noqa: E402
from aiond.base import MXNetError  # noqa: E402

NEWEST = onnx.defs.onnx_opset_version()
OPSETS = sorted({12, 13, NEWEST})


def _run(path, feeds):
    sess = rt.InferenceSession(path, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _export(tmp_path, sym, arrays, params=None, opset=None, **kw):
    path = str(tmp_path / ("m%s.onnx" % opset))
    names = [n for n in sym.list_inputs() if n not in (params or {})]
    mx.onnx.export_model(sym, dict(params or {}), [arrays[n].shape for n in names],
                         [arrays[n].dtype for n in names], path, opset_version=opset, **kw)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    return path, names, model


def check(tmp_path, sym, arrays, params=None, opsets=OPSETS, rtol=1e-4, atol=1e-5):
    """Export ``sym`` at each opset and compare onnxruntime with aiond's forward."""
    args = {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
    args.update({k: mx.nd.array(v, dtype=v.dtype) for k, v in (params or {}).items()})
    aux_names = sym.list_auxiliary_states()
    aux = {k: v for k, v in args.items() if k in aux_names}
    args = {k: v for k, v in args.items() if k not in aux_names}
    ex = sym.bind(mx.cpu(), args, aux_states=aux)
    want = [o.asnumpy() for o in ex.forward(is_train=False)]
    for opset in opsets:
        path, names, model = _export(tmp_path, sym, arrays, params, opset)
        assert model.opset_import[0].version == opset
        got = _run(path, {n: arrays[n] for n in names})
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (opset, g.shape, w.shape)
            assert g.dtype == w.dtype, (opset, g.dtype, w.dtype)
            if np.issubdtype(w.dtype, np.floating):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
            else:
                np.testing.assert_array_equal(g, w)


rng = np.random.default_rng(0)


def f32(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


x = mx.sym.var("x")
y = mx.sym.var("y")


UNARY = ["abs", "ceil", "floor", "exp", "sqrt", "sin", "cos", "tan", "arcsin", "arccos",
         "arctan", "sigmoid", "tanh", "relu", "negative", "square", "reciprocal", "sign",
         "log", "log2", "log10", "log1p", "expm1", "rsqrt", "sinh", "cosh", "arcsinh", "erf"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(tmp_path, op):
    positive = op in ("sqrt", "log", "log2", "log10", "log1p", "rsqrt", "reciprocal")
    data = f32(2, 3, lo=0.1 if positive else -0.9, hi=0.9)
    check(tmp_path, getattr(mx.sym, op)(x), {"x": data})


@pytest.mark.parametrize("op", ["broadcast_add", "broadcast_sub", "broadcast_mul",
                                "broadcast_div", "broadcast_maximum", "broadcast_minimum",
                                "broadcast_power", "broadcast_mod", "broadcast_equal",
                                "broadcast_not_equal", "broadcast_greater",
                                "broadcast_lesser_equal", "broadcast_logical_and",
                                "broadcast_logical_xor"])
def test_broadcast_binary(tmp_path, op):
    a = f32(2, 3, 4, lo=0.5, hi=2.0)
    c = f32(1, 3, 1, lo=0.5, hi=2.0)
    if op in ("broadcast_equal", "broadcast_not_equal"):
        c = np.round(c)
        a = np.round(a)
    check(tmp_path, getattr(mx.sym, op)(x, y), {"x": a, "y": c})


def test_int_mod_and_compare(tmp_path):
    a = np.array([[-7, 5, 3], [9, -2, 0]], dtype=np.int32)
    c = np.array([[3, -4, 3], [2, 5, 7]], dtype=np.int32)
    check(tmp_path, mx.sym.Group([mx.sym.broadcast_mod(x, y), mx.sym.broadcast_greater(x, y)]),
          {"x": a, "y": c})


@pytest.mark.parametrize("expr", [lambda s: s + 2.5, lambda s: 3 - s, lambda s: s * -2,
                                  lambda s: s / 4, lambda s: 2 / s, lambda s: s ** 2,
                                  lambda s: mx.sym.maximum(s, 0.3), lambda s: s % 0.7,
                                  lambda s: s > 0.2, lambda s: s == 0.5])
def test_scalar_ops(tmp_path, expr):
    check(tmp_path, expr(x), {"x": f32(3, 4, lo=0.1, hi=1.0)})


@pytest.mark.parametrize("op,kw", [("sum", {}), ("sum", {"axis": 1}),
                                   ("mean", {"axis": (0, 2), "keepdims": True}),
                                   ("max", {"axis": -1}), ("min", {"axis": 0}),
                                   ("prod", {"axis": 2}), ("sum", {"axis": 1, "exclude": True}),
                                   ("norm", {"ord": 2, "axis": 1}), ("norm", {"ord": 1}),
                                   ("argmax", {"axis": 1}), ("argmin", {"axis": 2, "keepdims": True})])
def test_reductions(tmp_path, op, kw):
    check(tmp_path, getattr(mx.sym, op)(x, **kw), {"x": f32(2, 3, 4)})


def test_conv_bn_pool_fc(tmp_path):
    w, bvec = mx.sym.var("w"), mx.sym.var("b")
    c = mx.sym.Convolution(x, weight=w, bias=bvec, kernel=(3, 3), num_filter=4, pad=(1, 1),
                           stride=(2, 2), name="conv")
    bn = mx.sym.BatchNorm(c, fix_gamma=False, name="bn")
    a = mx.sym.Activation(bn, act_type="relu")
    p = mx.sym.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max")
    q = mx.sym.Pooling(a, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                       pooling_convention="full")
    g = mx.sym.Pooling(a, global_pool=True, pool_type="avg", kernel=(1, 1))
    fc = mx.sym.FullyConnected(p, num_hidden=5, name="fc")
    params = {"w": f32(4, 3, 3, 3), "b": f32(4), "bn_gamma": f32(4, lo=0.5), "bn_beta": f32(4),
              "bn_moving_mean": f32(4), "bn_moving_var": f32(4, lo=0.5, hi=1.5),
              "fc_weight": f32(5, 64), "fc_bias": f32(5)}
    check(tmp_path, mx.sym.Group([fc, q, g]), {"x": f32(2, 3, 16, 16)}, params)


@pytest.mark.parametrize("kw", [dict(num_group=2), dict(dilate=(2, 2), no_bias=True)])
def test_convolution_variants(tmp_path, kw):
    c = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, name="c", **kw)
    params = {"c_weight": f32(4, 4 // kw.get("num_group", 1), 3, 3)}
    if not kw.get("no_bias"):
        params["c_bias"] = f32(4)
    check(tmp_path, c, {"x": f32(1, 4, 9, 9)}, params)


def test_deconvolution(tmp_path):
    d = mx.sym.Deconvolution(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1),
                             num_filter=2, name="d")
    check(tmp_path, d, {"x": f32(1, 3, 5, 5)}, {"d_weight": f32(3, 2, 3, 3)})


@pytest.mark.parametrize("act", ["leaky", "elu", "selu", "gelu", "prelu"])
def test_leaky_relu(tmp_path, act):
    if act == "prelu":
        s = mx.sym.LeakyReLU(x, gamma=mx.sym.var("g"), act_type=act)
        check(tmp_path, s, {"x": f32(2, 3, 4, 4)}, {"g": f32(3, lo=0, hi=0.5)})
    else:
        check(tmp_path, mx.sym.LeakyReLU(x, act_type=act, slope=0.2), {"x": f32(2, 3, 4)})


@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_softmax_axes(tmp_path, axis):
    s = mx.sym.Group([mx.sym.softmax(x, axis=axis), mx.sym.log_softmax(x, axis=axis),
                      mx.sym.softmax(x, axis=axis, temperature=2.0)])
    check(tmp_path, s, {"x": f32(2, 3, 4)})


def test_softmax_use_length(tmp_path):
    s = mx.sym.softmax(x, y, axis=-1, use_length=True)
    check(tmp_path, s, {"x": f32(2, 5), "y": np.array([2, 5], dtype=np.int32)})


def test_norms(tmp_path):
    g, bt = mx.sym.var("g"), mx.sym.var("bt")
    s = mx.sym.Group([mx.sym.LayerNorm(x, g, bt, axis=-1),
                      mx.sym.L2Normalization(x, mode="channel"),
                      mx.sym.LRN(x, nsize=3), mx.sym.InstanceNorm(x, mx.sym.var("g3"),
                                                                  mx.sym.var("b3"))])
    check(tmp_path, s, {"x": f32(2, 3, 4, 4)},
          {"g": f32(4), "bt": f32(4), "g3": f32(3), "b3": f32(3)})


@pytest.mark.parametrize("shape", [(0, -1), (-1, 4), (2, -3, 1), (0, -4, 1, -1, 0), (-3, -2)])
def test_reshape(tmp_path, shape):
    check(tmp_path, mx.sym.reshape(x, shape=shape), {"x": f32(2, 3, 4)})


def test_shape_ops(tmp_path):
    s = mx.sym.Group([
        mx.sym.transpose(x, axes=(2, 0, 1)), mx.sym.expand_dims(x, axis=1),
        mx.sym.slice(x, begin=(None, 1), end=(None, None), step=(1, -1)),
        mx.sym.slice_axis(x, axis=2, begin=1, end=3), mx.sym.flip(x, axis=1),
        mx.sym.tile(x, reps=(1, 2)), mx.sym.repeat(x, repeats=2, axis=0),
        mx.sym.SwapAxis(x, dim1=0, dim2=2), mx.sym.Flatten(x),
        mx.sym.concat(x, x, dim=1), mx.sym.stack(x, x, axis=0),
        mx.sym.broadcast_to(mx.sym.slice_axis(x, axis=0, begin=0, end=1), shape=(3, 0, 0)),
        mx.sym.squeeze(mx.sym.slice_axis(x, axis=1, begin=0, end=1), axis=1),
        mx.sym.pad(mx.sym.expand_dims(x, axis=0), mode="constant",
                   pad_width=(0, 0, 0, 0, 1, 1, 2, 0), constant_value=3.0),
        mx.sym.zeros_like(x), mx.sym.ones_like(x), mx.sym.shape_array(x),
        mx.sym.size_array(x),
    ])
    check(tmp_path, s, {"x": f32(2, 3, 4)})


def test_split(tmp_path):
    s = mx.sym.split(x, num_outputs=3, axis=1, squeeze_axis=True)
    check(tmp_path, s, {"x": f32(2, 3, 4)})


@pytest.mark.parametrize("kw,like", [(dict(h_w=(3, 4), offset=(1, 2)), None),
                                     (dict(h_w=(2, 2), center_crop=True), None),
                                     (dict(offset=(2, 1)), (1, 1, 4, 3)),
                                     (dict(center_crop=True), (2, 2, 3, 5))])
def test_crop_and_rnn_param_concat(tmp_path, kw, like):
    """The legacy Crop (to h_w or to a second input's height and width, at an
    offset or centred) and the fused RNN layers' _rnn_param_concat."""
    d = mx.sym.var("d")
    ins = {"d": f32(2, 3, 7, 6)}
    if like:
        ins["l"] = f32(*like)
        sym = mx.sym.Crop(d, mx.sym.var("l"), num_args=2, **kw)
    else:
        sym = mx.sym.Crop(d, num_args=1, **kw)
    check(tmp_path, sym, ins)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    check(tmp_path, mx.sym._internal._rnn_param_concat(a, b, dim=0, num_args=2),
          {"a": f32(5), "b": f32(3)})


def test_crop_like_dynamic(tmp_path):
    """Exported with dynamic axes, Crop reads the second input's height and
    width at run time."""
    sym = mx.sym.Crop(mx.sym.var("d"), mx.sym.var("l"), num_args=2, offset=(1, 0))
    ins = {"d": f32(2, 3, 7, 6), "l": f32(2, 1, 4, 3)}
    path, names, _ = _export(tmp_path, sym, ins, dynamic=True,
                             dynamic_input_shapes=[(None, 3, None, None), (None, 1, None, None)])
    for dshape, lshape in [((2, 3, 7, 6), (2, 1, 4, 3)), ((1, 3, 9, 9), (1, 1, 5, 8))]:
        d, l = f32(*dshape), f32(*lshape)
        want = mx.nd.Crop(mx.nd.array(d), mx.nd.array(l), num_args=2, offset=(1, 0)).asnumpy()
        np.testing.assert_array_equal(_run(path, {"d": d, "l": l})[0], want)


def test_int64_shape_arithmetic(tmp_path):
    """GluonCV CenterNet's decoding: int64 top-k indices divided by H * W taken
    from shape_array. shape_array is int64 in infer_type without shapes too
    (as in MXNet), so the exporter's dtype pass sees int64 / int64."""
    assert mx.sym.shape_array(x).infer_type(x=np.float32)[1] == [np.int64]
    assert mx.sym.size_array(x).infer_type(x=np.float32)[1] == [np.int64]
    _, h, w = mx.sym.split(mx.sym.shape_array(x), num_outputs=3, axis=0)
    idx = mx.sym.cast(mx.sym.topk(mx.sym.reshape(x, (0, -1)), k=5), "int64")
    s = mx.sym.Group([mx.sym.broadcast_div(idx, h * w), mx.sym.broadcast_mod(idx, w)])
    check(tmp_path, s, {"x": f32(2, 3, 4)})


def test_indexing(tmp_path):
    idx = mx.sym.var("i")
    s = mx.sym.Group([mx.sym.take(x, idx, axis=1), mx.sym.take(x, idx, mode="wrap"),
                      mx.sym.one_hot(idx, depth=4), mx.sym.Embedding(idx, x, input_dim=2,
                                                                     output_dim=4)])
    check(tmp_path, s, {"x": f32(2, 4), "i": np.array([[0, 3], [-1, 5]], dtype=np.float32)})


def test_gather_nd_where_clip(tmp_path):
    ind = mx.sym.var("ind")
    s = mx.sym.Group([mx.sym.gather_nd(x, ind), mx.sym.where(y > 0, x, y),
                      mx.sym.clip(x, -0.3, 0.4), mx.sym.add_n(x, y, x)])
    check(tmp_path, s, {"x": f32(3, 4), "y": f32(3, 4),
                        "ind": np.array([[0, 2, 1], [1, 3, 0]], dtype=np.int64)})


@pytest.mark.parametrize("ret", ["value", "indices", "both", "mask"])
def test_topk(tmp_path, ret):
    data = rng.permutation(24).reshape(2, 3, 4).astype(np.float32)
    check(tmp_path, mx.sym.topk(x, k=2, axis=1, ret_typ=ret), {"x": data})


def test_sort_argsort(tmp_path):
    data = rng.permutation(12).reshape(3, 4).astype(np.float32)
    check(tmp_path, mx.sym.Group([mx.sym.argsort(x, axis=0), mx.sym.sort(x, is_ascend=False)]),
          {"x": data})


def test_dot_family(tmp_path):
    s = mx.sym.Group([mx.sym.dot(x, y), mx.sym.dot(x, y, transpose_a=True, transpose_b=True)])
    check(tmp_path, s, {"x": f32(3, 3), "y": f32(3, 3)})
    b3 = mx.sym.batch_dot(x, y, transpose_b=True)
    check(tmp_path, b3, {"x": f32(2, 3, 4), "y": f32(2, 5, 4)})
    check(tmp_path, mx.sym.linalg.gemm2(x, y, alpha=2.0), {"x": f32(2, 3, 4), "y": f32(2, 4, 5)})


def test_sequence_ops(tmp_path):
    ln = mx.sym.var("len")
    s = mx.sym.Group([mx.sym.SequenceMask(x, ln, use_sequence_length=True, value=-1.0),
                      mx.sym.SequenceReverse(x, ln, use_sequence_length=True),
                      mx.sym.SequenceReverse(x)])
    check(tmp_path, s, {"x": f32(4, 2, 3), "len": np.array([2, 4], dtype=np.float32)})


def test_resize_and_adaptive_pool(tmp_path):
    s = mx.sym.Group([mx.sym.UpSampling(x, scale=2, sample_type="nearest"),
                      mx.sym.contrib.BilinearResize2D(x, height=7, width=5),
                      mx.sym.contrib.AdaptiveAvgPooling2D(x, output_size=(2, 3)),
                      mx.sym.contrib.AdaptiveAvgPooling2D(x, output_size=1),
                      mx.sym.depth_to_space(x, block_size=2)])
    check(tmp_path, s, {"x": f32(1, 4, 4, 6)}, opsets=[13, NEWEST])


def test_cast_and_constants(tmp_path):
    s = mx.sym.Group([mx.sym.Cast(x, dtype="int32"), mx.sym.Cast(x, dtype="float16"),
                      mx.sym.arange(start=1, stop=7, step=2, repeat=2) + 0,
                      mx.sym.contrib.arange_like(x, axis=1)])
    check(tmp_path, s, {"x": f32(2, 3, lo=-5, hi=5)})


def test_attention_ops(tmp_path):
    s = mx.sym.contrib.interleaved_matmul_selfatt_qk(x, heads=2)
    check(tmp_path, s, {"x": f32(3, 2, 2 * 3 * 4)})
    v = mx.sym.contrib.interleaved_matmul_selfatt_valatt(x, y, heads=2)
    check(tmp_path, v, {"x": f32(3, 2, 2 * 3 * 4), "y": f32(4, 3, 3)})


def test_box_decode(tmp_path):
    s = mx.sym.contrib.box_decode(x, y, format="corner", clip=0.5, std0=0.3)
    check(tmp_path, s, {"x": f32(2, 3, 4), "y": np.sort(f32(1, 3, 4), axis=-1)})


# ---- the API --------------------------------------------------------------

def _detections(B, N, classes, seed):
    """Rows [class id, score, x1, y1, x2, y2]: crowded boxes (so many overlap),
    distinct scores (so the kept order is defined), some ids -1, and some boxes
    with a negative width or height (area 0 to MXNet: they suppress nothing)."""
    rs = np.random.RandomState(seed)
    ids = rs.randint(-1, classes, (B, N, 1))
    scores = rs.permutation(B * N).reshape(B, N, 1) / float(B * N)
    xy = rs.uniform(0, 10, (B, N, 2))
    wh = rs.uniform(-1.5, 6, (B, N, 2))
    return np.concatenate([ids, scores, xy, xy + wh], axis=-1).astype(np.float32)


@pytest.mark.parametrize("kw", [
    dict(overlap_thresh=0.3, valid_thresh=0.1),
    dict(overlap_thresh=0.5, id_index=0, force_suppress=True),
    dict(overlap_thresh=0.4, id_index=0, valid_thresh=0.05),                 # per class
    dict(overlap_thresh=0.4, id_index=0, topk=12, valid_thresh=0.01),      # GluonCV's form
    dict(overlap_thresh=0.45, id_index=0, background_id=0, topk=20),
    dict(overlap_thresh=0.5, id_index=0, in_format="center", out_format="center"),
])
def test_box_nms(tmp_path, kw):
    """box_nms as MXNet defines it: per-class suppression, background rows and
    invalid scores dropped, suppression among the topk best only."""
    s = mx.sym.contrib.box_nms(mx.sym.var("d"), coord_start=2, score_index=1, **kw)
    check(tmp_path, s, {"d": _detections(2, 40, 3, 0)})


def test_dynamic_batch(tmp_path):
    fc = mx.sym.FullyConnected(mx.sym.reshape(x, shape=(0, -1)), num_hidden=3, name="fc")
    params = {"fc_weight": f32(3, 12), "fc_bias": f32(3)}
    path = str(tmp_path / "d.onnx")
    mx.onnx.export_model(fc, params, [(2, 3, 4)], np.float32, path, dynamic=True,
                         dynamic_input_shapes=[(None, 3, 4)])
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    dim0 = model.graph.input[0].type.tensor_type.shape.dim[0]
    assert not dim0.HasField("dim_value")
    for batch in (1, 5):
        data = f32(batch, 3, 4)
        got = _run(path, {"x": data})[0]
        want = data.reshape(batch, -1) @ params["fc_weight"].T + params["fc_bias"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_files_and_param_forms(tmp_path):
    s = mx.sym.FullyConnected(x, num_hidden=2, name="fc")
    params = {"fc_weight": mx.nd.array(f32(2, 3)), "fc_bias": mx.nd.array(f32(2))}
    s.save(str(tmp_path / "m-symbol.json"))
    mx.nd.save(str(tmp_path / "m.params"), {"arg:" + k: v for k, v in params.items()})
    data = f32(4, 3)
    want = data @ params["fc_weight"].asnumpy().T + params["fc_bias"].asnumpy()
    outs = [
        mx.onnx.export_model(str(tmp_path / "m-symbol.json"), str(tmp_path / "m.params"),
                             [(4, 3)], np.float32, str(tmp_path / "a.onnx")),
        mx.onnx.export_model(s, [params, {}], input_shape=[(4, 3)], input_type=np.float32,
                             onnx_file_path=str(tmp_path / "b.onnx")),
        mx.onnx.export_model(s, params, [(4, 3)], onnx_file_path=str(tmp_path / "c.onnx"),
                             large_model=True, run_shape_inference=True),
    ]
    for path in outs:
        np.testing.assert_allclose(_run(path, {"x": data})[0], want, rtol=1e-4, atol=1e-6)
    assert (tmp_path / "c.onnx.data").exists()


def test_operator_support():
    ops = mx.onnx.get_operator_support()
    for name in ("Convolution", "BatchNorm", "Pooling", "FullyConnected", "softmax", "Reshape"):
        assert name in ops
    assert ops == sorted(ops)
    assert "LayerNorm" in mx.onnx.get_operator_support(12)


def test_unsupported_operator_names_node(tmp_path):
    s = mx.sym.linalg.potrf(x, name="chol")
    with pytest.raises(MXNetError, match=r"_linalg_potrf.*'chol'"):
        mx.onnx.export_model(s, {}, [(3, 3)], np.float32, str(tmp_path / "u.onnx"))


def test_bad_arguments(tmp_path):
    s = mx.sym.relu(x)
    with pytest.raises(MXNetError, match="in_shapes"):
        mx.onnx.export_model(s, {}, [(2,), (3,)], np.float32, str(tmp_path / "b.onnx"))
    with pytest.raises(ValueError, match="files or objects"):
        mx.onnx.export_model(s, 3, [(2,)], np.float32, str(tmp_path / "b.onnx"))
    with pytest.raises(MXNetError, match="dynamic=True"):
        mx.onnx.export_model(s, {}, [(2,)], np.float32, str(tmp_path / "b.onnx"),
                             dynamic_input_shapes=[(None,)])
    with pytest.raises(MXNetError, match="opset_version 11"):
        mx.onnx.export_model(s, {}, [(2,)], np.float32, str(tmp_path / "b.onnx"),
                             opset_version=11)


def test_import_aiond_does_not_import_onnx():
    code = "import sys, aiond; aiond.onnx; print('onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_float64_transposed_products(tmp_path):
    a = rng.uniform(-1, 1, (2, 4, 3))
    c = rng.uniform(-1, 1, (2, 5, 4))
    s = mx.sym.Group([mx.sym.batch_dot(x, y, transpose_a=True, transpose_b=True),
                      mx.sym.linalg.gemm2(x, y, transpose_a=True, transpose_b=True, alpha=1.5)])
    check(tmp_path, s, {"x": a, "y": c}, rtol=1e-10, atol=1e-12)
    check(tmp_path, mx.sym.dot(x, y, transpose_a=True), {"x": rng.uniform(size=(3, 2)),
                                                         "y": rng.uniform(size=(3, 4))},
          rtol=1e-10, atol=1e-12)


def test_mod_by_zero_is_zero(tmp_path):
    a = np.array([[7, -5, 3]], dtype=np.int32)
    c = np.array([[0, 3, 0]], dtype=np.int32)
    check(tmp_path, mx.sym.broadcast_mod(x, y), {"x": a, "y": c})
    check(tmp_path, mx.sym.broadcast_mod(x, y), {"x": a.astype(np.float32),
                                                  "y": c.astype(np.float32)})
