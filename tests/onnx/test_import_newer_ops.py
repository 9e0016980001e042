"""Newer ONNX operators through mx.contrib.onnx, each against onnxruntime
(bound as a Symbol and as a SymbolBlock): ScatterElements, EyeLike,
ReverseSequence, CumProd, Unique, the QDQ operators, bitwise ops, BitShift,
RMSNormalization, Swish, GridSample and Det."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP, helper  # noqa: E402

import aiond as mx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_cases import F32, I64, check, make  # noqa: E402

N = helper.make_node
R = np.random.RandomState(11)


def rnd(*shape):
    return R.randn(*shape).astype(np.float32)


def _runs(opset):
    """Whether this onnxruntime runs models of ``opset``."""
    import onnxruntime
    try:
        onnxruntime.InferenceSession(make([N("Identity", ["x"], ["y"])], [("x", [1])],
                                          [("y", [1])], opset=opset).SerializeToString())
        return True
    except Exception:  # noqa: BLE001
        return False


X = rnd(4, 3, 5)
IDX = np.array([[[0, 3, 1, 2, 0]] * 3, [[1, 1, 2, 3, -1]] * 3], np.int64).transpose(1, 0, 2)
CASES = {
    "ScatterElements_axis0": (
        make([N("ScatterElements", ["d", "i", "u"], ["y"], axis=0)],
             [("d", [4, 3, 5]), ("i", [3, 2, 5], I64), ("u", [3, 2, 5])], [("y", None)],
             opset=13),
        {"d": X, "i": np.array([[[0, 1, 2, 3, 0], [3, 2, 1, 0, -1]]] * 3, np.int64),
         "u": rnd(3, 2, 5)}),
    "ScatterElements_axis_last_add": (
        make([N("ScatterElements", ["d", "i", "u"], ["y"], axis=-1, reduction="add")],
             [("d", [4, 3, 5]), ("i", [4, 3, 2], I64), ("u", [4, 3, 2])], [("y", None)],
             opset=16),
        {"d": X, "i": np.tile(np.array([1, 1], np.int64), (4, 3, 1)), "u": rnd(4, 3, 2)}),
    "Scatter_opset10": (
        make([N("Scatter", ["d", "i", "u"], ["y"], axis=1)],
             [("d", [4, 3, 5]), ("i", [4, 1, 5], I64), ("u", [4, 1, 5])], [("y", None)],
             opset=10),
        {"d": X, "i": np.full((4, 1, 5), 2, np.int64), "u": rnd(4, 1, 5)}),
    "EyeLike": (make([N("EyeLike", ["x"], ["y"], k=1)], [("x", [3, 5])], [("y", None)]),
                {"x": rnd(3, 5)}),
    "EyeLike_dtype": (make([N("EyeLike", ["x"], ["y"], k=-1, dtype=TP.INT64)],
                           [("x", [4, 4])], [("y", None, I64)]), {"x": rnd(4, 4)}),
    "ReverseSequence_time0": (
        make([N("ReverseSequence", ["x", "l"], ["y"], time_axis=0, batch_axis=1)],
             [("x", [4, 3, 5]), ("l", [3], I64)], [("y", None)]),
        {"x": X, "l": np.array([4, 1, 2], np.int64)}),
    "ReverseSequence_batch0": (
        make([N("ReverseSequence", ["x", "l"], ["y"], time_axis=1, batch_axis=0)],
             [("x", [4, 3, 5]), ("l", [4], I64)], [("y", None)]),
        {"x": X, "l": np.array([3, 1, 2, 3], np.int64)}),
    "CumProd": (make([N("CumProd", ["x", "a"], ["y"])], [("x", [4, 3, 5])], [("y", None)],
                     inits=[("a", np.array(2, np.int64))], opset=26), {"x": X}),
    "CumProd_exclusive_reverse": (
        make([N("CumProd", ["x", "a"], ["y"], exclusive=1, reverse=1)], [("x", [4, 3, 5])],
             [("y", None)], inits=[("a", np.array(0, np.int64))], opset=26), {"x": X}),
    "QuantizeLinear_uint8": (
        make([N("QuantizeLinear", ["x", "s", "z"], ["y"])], [("x", [4, 3, 5])],
             [("y", None, TP.UINT8)],
             inits=[("s", np.float32(0.02)), ("z", np.uint8(128))], opset=13),
        {"x": np.concatenate([X, np.array([0.01, 0.03, -0.01, 9, -9], np.float32)
                              .reshape(1, 1, 5).repeat(3, 1)])[:4]}),
    "QuantizeLinear_per_axis_int8": (
        make([N("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)], [("x", [4, 3, 5])],
             [("y", None, TP.INT8)],
             inits=[("s", np.array([0.01, 0.05, 0.1], np.float32)),
                    ("z", np.array([0, -3, 4], np.int8))], opset=13), {"x": X}),
    "DequantizeLinear_per_axis": (
        make([N("DequantizeLinear", ["q", "s", "z"], ["y"], axis=0)], [("q", [4, 5], TP.INT8)],
             [("y", None)], inits=[("s", np.array([0.1, 0.2, 0.5, 1.0], np.float32)),
                                   ("z", np.array([0, 1, -2, 3], np.int8))], opset=13),
        {"q": R.randint(-128, 128, (4, 5)).astype(np.int8)}),
    "QDQ_pair": (
        make([N("QuantizeLinear", ["x", "s", "z"], ["q"]),
              N("DequantizeLinear", ["q", "s", "z"], ["y"])], [("x", [4, 3, 5])],
             [("y", None)], inits=[("s", np.float32(0.05)), ("z", np.uint8(100))], opset=13),
        {"x": X}),
    "DynamicQuantizeLinear": (
        make([N("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], [("x", [4, 3, 5])],
             [("y", None, TP.UINT8), ("s", None), ("z", None, TP.UINT8)], opset=13), {"x": X}),
    "BitwiseAnd": (make([N("BitwiseAnd", ["a", "b"], ["y"])],
                        [("a", [6], TP.INT32), ("b", [6], TP.INT32)], [("y", None, TP.INT32)],
                        opset=18),
                   {"a": np.array([1, 2, 7, -1, 12, 0], np.int32),
                    "b": np.array([3, 3, 5, 6, -4, 9], np.int32)}),
    "BitwiseOr": (make([N("BitwiseOr", ["a", "b"], ["y"])],
                       [("a", [6], TP.UINT8), ("b", [6], TP.UINT8)], [("y", None, TP.UINT8)],
                       opset=18),
                  {"a": np.array([1, 2, 7, 255, 12, 0], np.uint8),
                   "b": np.array([3, 3, 5, 6, 4, 9], np.uint8)}),
    "BitwiseXor": (make([N("BitwiseXor", ["a", "b"], ["y"])],
                        [("a", [6], TP.INT64), ("b", [6], TP.INT64)], [("y", None, I64)],
                        opset=18),
                   {"a": np.array([1, 2, 7, -1, 12, 0], np.int64),
                    "b": np.array([3, 3, 5, 6, -4, 9], np.int64)}),
    "BitwiseNot": (make([N("BitwiseNot", ["a"], ["y"])], [("a", [6], TP.INT32)],
                        [("y", None, TP.INT32)], opset=18),
                   {"a": np.array([1, 2, 7, -1, 12, 0], np.int32)}),
    "BitShift_left_uint8": (
        make([N("BitShift", ["a", "b"], ["y"], direction="LEFT")],
             [("a", [5], TP.UINT8), ("b", [5], TP.UINT8)], [("y", None, TP.UINT8)], opset=11),
        {"a": np.array([1, 3, 200, 255, 16], np.uint8), "b": np.array([1, 2, 1, 4, 0], np.uint8)}),
    "BitShift_right_uint32": (
        make([N("BitShift", ["a", "b"], ["y"], direction="RIGHT")],
             [("a", [5], TP.UINT32), ("b", [5], TP.UINT32)], [("y", None, TP.UINT32)],
             opset=11),
        {"a": np.array([1, 3, 4000000000, 255, 16], np.uint32),
         "b": np.array([1, 1, 3, 4, 0], np.uint32)}),
    "RMSNormalization": (
        make([N("RMSNormalization", ["x", "g"], ["y"], axis=-1, epsilon=1e-5)],
             [("x", [4, 3, 5])], [("y", None)], inits=[("g", rnd(5))], opset=23), {"x": X}),
    "RMSNormalization_two_axes": (
        make([N("RMSNormalization", ["x", "g"], ["y"], axis=1)],
             [("x", [4, 3, 5])], [("y", None)], inits=[("g", rnd(3, 5))], opset=23), {"x": X}),
    "Swish": (make([N("Swish", ["x"], ["y"], alpha=0.7)], [("x", [4, 3, 5])], [("y", None)],
                   opset=24), {"x": X}),
    "Det": (make([N("Det", ["x"], ["y"])], [("x", [2, 3, 3])], [("y", None)]),
            {"x": rnd(2, 3, 3)}),
}
for align in (0, 1):
    CASES["GridSample_align%d" % align] = (
        make([N("GridSample", ["x", "g"], ["y"], align_corners=align)],
             [("x", [2, 3, 6, 7]), ("g", [2, 4, 5, 2])], [("y", None)], opset=16),
        {"x": rnd(2, 3, 6, 7),
         "g": R.uniform(-1.2, 1.2, (2, 4, 5, 2)).astype(np.float32)})

UNIQUE = {
    "flat": dict(x=np.array([[2, 1, 1], [3, 2, 0]], np.float32), at={}),
    "axis0": dict(x=np.array([[1, 0], [2, 3], [1, 0], [0, 0]], np.float32), at={"axis": 0}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_newer_op(name):
    model, feeds = CASES[name]
    if not _runs(model.opset_import[0].version):
        pytest.skip("this onnxruntime does not run opset %d" % model.opset_import[0].version)
    check(model, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(UNIQUE))
def test_unique(name):
    c = UNIQUE[name]
    x = c["x"]
    model = make([N("Unique", ["x"], ["y", "i", "inv", "c"], **c["at"])],
                 [("x", list(x.shape))],
                 [("y", None), ("i", None, I64), ("inv", None, I64), ("c", None, I64)])
    check(model, {"x": x}, rtol=0, atol=0)


def test_unsupported_forms_name_themselves():
    cases = [
        (make([N("ScatterElements", ["d", "i", "u"], ["y"], reduction="max")],
              [("d", [3]), ("i", [1], I64), ("u", [1])], [("y", None)], opset=18), "reduction"),
        (make([N("GridSample", ["x", "g"], ["y"], mode="nearest")],
              [("x", [1, 1, 4, 4]), ("g", [1, 2, 2, 2])], [("y", None)], opset=16), "nearest"),
        (make([N("GridSample", ["x", "g"], ["y"], padding_mode="border")],
              [("x", [1, 1, 4, 4]), ("g", [1, 2, 2, 2])], [("y", None)], opset=16), "border"),
        (make([N("Unique", ["x"], ["y"], sorted=0)], [("x", [3])], [("y", None)]), "sorted=0"),
    ]
    for model, what in cases:
        with pytest.raises(mx.contrib.onnx.UnsupportedOnnxOperator, match=what):
            mx.contrib.onnx.import_model(model.SerializeToString())
