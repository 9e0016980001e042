"""The ONNX operators of exported detectors through mx.contrib.onnx:
NonMaxSuppression (its output's row count is a value, so the importer's
shapes and aiond's symbol inference carry an unknown axis past it),
ScatterND and RoiAlign; each against onnxruntime, bound as a Symbol and as a
SymbolBlock."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

import aiond as mx  # noqa: E402
from aiond.ops.onnx_nms import select  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_cases import F32, I64, check, make, ort_run  # noqa: E402

N = helper.make_node


def _boxes(rs, B, n, center=False):
    xy = rs.rand(B, n, 2).astype(np.float32) * 10
    wh = 1 + rs.rand(B, n, 2).astype(np.float32) * 4
    if center:
        return np.concatenate([xy, wh], -1)
    # (y1, x1, y2, x2), some boxes given by their other two corners
    b = np.concatenate([xy, xy + wh], -1)
    flip = rs.rand(B, n) < 0.3
    b[flip] = b[flip][:, [2, 3, 0, 1]]
    return b


def _nms_model(B, C, n, limit=None, iou=None, score=None, center=0, opset=13):
    inits, ins = [], ["boxes", "scores"]
    for name, v, dt in (("limit", limit, np.int64), ("iou", iou, np.float32),
                        ("score", score, np.float32)):
        if v is None:
            ins.append("")
        else:
            inits.append((name, np.array([v], dt)))
            ins.append(name)
    while ins[-1] == "":
        ins.pop()
    return make([N("NonMaxSuppression", ins, ["sel"], center_point_box=center)],
                [("boxes", [B, n, 4]), ("scores", [B, C, n])], [("sel", None, I64)],
                inits=inits, opset=opset)


NMS_CASES = {
    "corners": dict(B=2, C=3, n=30, limit=5, iou=0.3, score=0.2),
    "center": dict(B=1, C=2, n=40, limit=10, iou=0.5, score=0.1, center=1),
    "no_score_threshold": dict(B=1, C=1, n=25, limit=100, iou=0.4),
    "no_iou_threshold": dict(B=2, C=1, n=12, limit=4),
    "limit_0_selects_nothing": dict(B=1, C=2, n=10, limit=0, iou=0.5),
    "no_limit_selects_nothing": dict(B=1, C=2, n=10),
    "opset_11": dict(B=2, C=2, n=20, limit=3, iou=0.6, score=0.05, opset=11),
}


@pytest.mark.parametrize("name", sorted(NMS_CASES))
def test_non_max_suppression_matches_onnxruntime(name):
    kw = dict(NMS_CASES[name])
    rs = np.random.RandomState(len(name))
    B, C, n = kw["B"], kw["C"], kw["n"]
    feeds = {"boxes": _boxes(rs, B, n, kw.get("center", 0)),
             "scores": rs.rand(B, C, n).astype(np.float32)}
    ref = check(_nms_model(**kw), feeds, rtol=0, atol=0)
    # the shared host function is what the op runs
    np.testing.assert_array_equal(select(feeds["boxes"], feeds["scores"], kw.get("limit") or 0,
                                         kw.get("iou") or 0.0, kw.get("score"),
                                         kw.get("center", 0)), ref[0])


def test_nms_equal_scores_keep_box_order_and_degenerate_boxes_never_suppress():
    boxes = np.array([[[0, 0, 2, 2], [0, 0, 2, 2], [5, 5, 5, 9], [5, 5, 5, 9],
                       [0, 0, 2, 2.2]]], np.float32)     # box 2 and 3 have no width
    scores = np.array([[[0.5, 0.5, 0.9, 0.9, 0.7]]], np.float32)
    got = select(boxes, scores, 10, 0.5, 0.0)
    # 2 and 3 (no area) both kept; 4 beats 0 and 1; 0, 1 suppressed by 4
    np.testing.assert_array_equal(got[:, 2], [2, 3, 4])
    ref = ort_run(_nms_model(1, 1, 5, 10, 0.5, 0.0), {"boxes": boxes, "scores": scores})[0]
    np.testing.assert_array_equal(got, ref)


def test_rows_after_nms_are_sliced_gathered_and_scattered_back():
    """The pattern aiond's exporter writes after NonMaxSuppression: the kept
    rows gathered (GatherND) and scattered into a fixed-shape result
    (ScatterND), through Slice and Concat of the value-sized rows."""
    B, n = 2, 16
    nodes = [
        N("NonMaxSuppression", ["boxes", "scores", "limit", "iou", "score"], ["sel"]),
        N("Slice", ["sel", "s0", "s1", "ax1"], ["bi"]),
        N("Slice", ["sel", "s2", "s3", "ax1"], ["box"]),
        N("Concat", ["bi", "box"], ["where"], axis=1),
        N("GatherND", ["boxes", "where"], ["rows"]),
        N("ScatterND", ["fill", "where", "rows"], ["out"]),
    ]
    inits = [("limit", np.array([n], np.int64)), ("iou", np.array([0.3], np.float32)),
             ("score", np.array([0.25], np.float32)), ("s0", np.array([0], np.int64)),
             ("s1", np.array([1], np.int64)), ("s2", np.array([2], np.int64)),
             ("s3", np.array([3], np.int64)), ("ax1", np.array([1], np.int64)),
             ("fill", np.full((B, n, 4), -1, np.float32))]
    model = make(nodes, [("boxes", [B, n, 4]), ("scores", [B, 1, n])], [("out", [B, n, 4])],
                 inits=inits, opset=13)
    rs = np.random.RandomState(3)
    for _ in range(2):      # other values, other row counts, one imported graph each
        feeds = {"boxes": _boxes(rs, B, n), "scores": rs.rand(B, 1, n).astype(np.float32)}
        ref = check(model, feeds, rtol=0, atol=0)
        assert (ref[0] == -1).any() and (ref[0] != -1).any()


def test_nms_symbol_infers_an_unknown_row_count():
    sym, _, _ = mx.contrib.onnx.import_model(
        _nms_model(1, 2, 10, 5, 0.5, 0.1).SerializeToString())
    _, outs, _ = sym.infer_shape_partial(boxes=(1, 10, 4), scores=(1, 2, 10))
    assert outs == [(0, 3)]
    assert sym.infer_type(boxes="float32", scores="float32")[1] == [np.int64]
    with pytest.raises(mx.MXNetError, match="scores must be"):
        sym.infer_shape_partial(boxes=(1, 10, 4), scores=(1, 2, 11))


SCATTER = {
    "none": dict(reduction=None, opset=13),
    "add": dict(reduction="add", opset=16),
}


@pytest.mark.parametrize("name", sorted(SCATTER))
def test_scatter_nd(name):
    kw = SCATTER[name]
    at = {} if kw["reduction"] is None else {"reduction": kw["reduction"]}
    data = np.random.RandomState(1).randn(4, 3, 5).astype(np.float32)
    data[0, 0, 0] = np.nan      # overwritten: a NaN must not leak into the result
    idx = np.array([[0, 0], [2, 1], [3, 2], [2, 1 if name == "add" else 0]], np.int64)
    upd = np.random.RandomState(2).randn(4, 5).astype(np.float32)
    model = make([N("ScatterND", ["data", "idx", "upd"], ["y"], **at)],
                 [("data", [4, 3, 5]), ("idx", [4, 2], I64), ("upd", [4, 5])],
                 [("y", [4, 3, 5])], opset=kw["opset"])
    if name == "add":
        data[0, 0, 0] = 1.0
    check(model, {"data": data, "idx": idx, "upd": upd})


def test_scatter_nd_other_reductions_are_refused():
    model = make([N("ScatterND", ["data", "idx", "upd"], ["y"], reduction="mul")],
                 [("data", [4, 3]), ("idx", [2, 1], I64), ("upd", [2, 3])], [("y", [4, 3])],
                 opset=16)
    with pytest.raises(mx.contrib.onnx.UnsupportedOnnxOperator, match="reduction='mul'.*ScatterND"):
        mx.contrib.onnx.import_model(model.SerializeToString())


@pytest.mark.parametrize("opset,ctm", [(13, None), (16, "half_pixel"),
                                       (16, "output_half_pixel")])
def test_roi_align(opset, ctm):
    rs = np.random.RandomState(5)
    x = rs.randn(2, 3, 12, 14).astype(np.float32)
    rois = np.array([[1, 1, 9, 7], [0.5, 2, 12, 11], [3, 3, 4.5, 4], [0, 0, 13, 11]],
                    np.float32)
    bi = np.array([0, 1, 1, 0], np.int64)
    at = dict(output_height=3, output_width=4, sampling_ratio=2, spatial_scale=0.8)
    if ctm is not None:
        at["coordinate_transformation_mode"] = ctm
    model = make([N("RoiAlign", ["x", "rois", "bi"], ["y"], **at)],
                 [("x", [2, 3, 12, 14]), ("rois", [4, 4]), ("bi", [4], I64)],
                 [("y", None)], opset=opset)
    check(model, {"x": x, "rois": rois, "bi": bi})
    # adaptive sampling (sampling_ratio 0: MXNet's -1)
    at["sampling_ratio"] = 0
    model = make([N("RoiAlign", ["x", "rois", "bi"], ["y"], **at)],
                 [("x", [2, 3, 12, 14]), ("rois", [4, 4]), ("bi", [4], I64)],
                 [("y", None)], opset=opset)
    check(model, {"x": x, "rois": rois, "bi": bi})


def test_roi_align_max_mode_is_refused():
    model = make([N("RoiAlign", ["x", "rois", "bi"], ["y"], mode="max")],
                 [("x", [1, 3, 8, 8]), ("rois", [2, 4]), ("bi", [2], I64)], [("y", None)],
                 opset=16)
    with pytest.raises(mx.contrib.onnx.UnsupportedOnnxOperator, match="mode='max'"):
        mx.contrib.onnx.import_model(model.SerializeToString())


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_nonzero(rank):
    x = np.random.RandomState(rank).randint(-1, 2, (4, 3, 2)[:rank]).astype(np.float32)
    model = make([N("NonZero", ["x"], ["y"]), N("Cast", ["y"], ["z"], to=1),
                  N("Mul", ["z", "two"], ["w"])],
                 [("x", list(x.shape))], [("w", None)], inits=[("two", np.float32(2))])
    ref = check(model, {"x": x})
    assert ref[0].shape == (rank, np.count_nonzero(x))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress(axis):
    x = np.random.RandomState(4).randn(4, 5).astype(np.float32)
    n = 20 if axis is None else x.shape[axis]
    cond = (np.arange(n) % 3 != 1)
    if axis == 1:
        cond = cond[:3]         # shorter than the axis: the rest is dropped
    at = {} if axis is None else {"axis": axis}
    model = make([N("Compress", ["x", "c"], ["y"], **at)],
                 [("x", [4, 5]), ("c", [len(cond)], onnx.TensorProto.BOOL)], [("y", None)])
    check(model, {"x": x, "c": cond})
