"""mx.contrib.onnx.import_model per ONNX operator: one-node (or few-node)
models built with onnx.helper, run in onnxruntime and in aiond (bound
Symbol and SymbolBlock), rtol 1e-4."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

import aiond as mx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_cases import F32, I64, check, make  # noqa: E402

R = np.random.RandomState(7)


def rnd(*shape):
    return R.randn(*shape).astype(np.float32)


def i64(*v):
    return np.array(v, np.int64)


N = helper.make_node
X4 = rnd(2, 3, 6, 6)
X3 = rnd(2, 5, 4)
X2 = rnd(4, 6)


def unary(op, x=X3, opset=17, out_type=F32, **kw):
    return (make([N(op, ["x"], ["y"], **kw)], [("x", list(x.shape))], [("y", None, out_type)],
                 opset=opset), {"x": x})


POS = np.abs(X3) + 0.5
UNIT = np.tanh(X3) * 0.9
CASES = {
    **{op: unary(op) for op in [
        "Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Floor", "Ceil", "Sign", "Sin",
        "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh", "Erf", "Softsign", "Softplus",
        "Identity", "HardSwish"]},
    "Mish": unary("Mish", opset=18),
    "Log": unary("Log", POS), "Sqrt": unary("Sqrt", POS), "Reciprocal": unary("Reciprocal", POS),
    "Asin": unary("Asin", UNIT), "Acos": unary("Acos", UNIT), "Atanh": unary("Atanh", UNIT),
    "Acosh": unary("Acosh", POS + 1), "Round": unary("Round", X3 * 3),
    "Gelu": unary("Gelu", opset=20), "Gelu_tanh": unary("Gelu", opset=20, approximate="tanh"),
    "LeakyRelu": unary("LeakyRelu", alpha=0.2), "Elu": unary("Elu", alpha=0.7),
    "Selu": unary("Selu"), "Celu": unary("Celu", alpha=0.5),
    "ThresholdedRelu": unary("ThresholdedRelu", alpha=0.3),
    "HardSigmoid": unary("HardSigmoid", alpha=0.3, beta=0.4),
    "Softmax13": unary("Softmax", axis=1), "Softmax11": unary("Softmax", opset=11, axis=1),
    "LogSoftmax": unary("LogSoftmax"), "LogSoftmax11": unary("LogSoftmax", opset=11),
    "Hardmax": unary("Hardmax", axis=1),
    "Dropout": unary("Dropout"), "Transpose": unary("Transpose", perm=[2, 0, 1]),
    "Transpose_rev": unary("Transpose"),
    "Flatten": unary("Flatten", X4), "Flatten2": unary("Flatten", X4, axis=2),
    "Flatten0": unary("Flatten", X4, axis=0),
    "Clip6": unary("Clip", opset=6, min=-0.5, max=0.5),
    "ArgMax": unary("ArgMax", axis=1, out_type=I64),
    "ArgMin": unary("ArgMin", axis=2, keepdims=0, out_type=I64),
    "ReduceMean": unary("ReduceMean", opset=13, axes=[1], keepdims=0),
    "ReduceMax": unary("ReduceMax", opset=13, axes=[-1]),
    "ReduceMin_all": unary("ReduceMin", opset=13),
    "ReduceProd": unary("ReduceProd", opset=13, axes=[2]),
    "ReduceL1": unary("ReduceL1", opset=13, axes=[1]),
    "ReduceL2": unary("ReduceL2", opset=13, axes=[1, 2]),
    "ReduceSumSquare": unary("ReduceSumSquare", opset=13, axes=[0]),
    "ReduceLogSumExp": unary("ReduceLogSumExp", opset=13, axes=[2]),
    "ReduceLogSum": unary("ReduceLogSum", POS, opset=13, axes=[2]),
    "GlobalAveragePool": unary("GlobalAveragePool", X4),
    "GlobalMaxPool": unary("GlobalMaxPool", X4),
    "MaxPool": unary("MaxPool", X4, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "MaxPool_ceil": unary("MaxPool", rnd(1, 2, 7, 7), kernel_shape=[2, 2], strides=[2, 2],
                          ceil_mode=1),
    "MaxPool_same": unary("MaxPool", X4, kernel_shape=[2, 2], auto_pad="SAME_UPPER"),
    "MaxPool_uneven": unary("MaxPool", X4, kernel_shape=[2, 2], pads=[0, 0, 1, 1]),
    "AveragePool": unary("AveragePool", X4, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "AveragePool_incl": unary("AveragePool", X4, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                              count_include_pad=1),
    "MaxPool1d": unary("MaxPool", X3, kernel_shape=[2], strides=[2]),
    "LRN": unary("LRN", X4, size=3, alpha=1e-3, beta=0.75, bias=2.0),
    "LpNormalization": unary("LpNormalization", axis=1),
    "DepthToSpace": unary("DepthToSpace", rnd(1, 8, 2, 3), blocksize=2),
    "DepthToSpace_CRD": unary("DepthToSpace", rnd(1, 8, 2, 3), blocksize=2, mode="CRD"),
    "SpaceToDepth": unary("SpaceToDepth", X4, blocksize=2),
    "Split": (make([N("Split", ["x"], ["a", "b"], axis=1)], [("x", [2, 6])],
                   [("a", None), ("b", None)]), {"x": rnd(2, 6)}),
    "Split_sizes": (make([N("Split", ["x", "s"], ["a", "b"], axis=1)], [("x", [2, 6])],
                         [("a", None), ("b", None)], [("s", i64(2, 4))]), {"x": rnd(2, 6)}),
    "Split_11": (make([N("Split", ["x"], ["a", "b", "c"], axis=0, split=[1, 1, 2])],
                      [("x", [4, 3])], [("a", None), ("b", None), ("c", None)], opset=11),
                 {"x": rnd(4, 3)}),
    "Split_18": (make([N("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)],
                      [("x", [2, 7])], [("a", None), ("b", None), ("c", None)], opset=18),
                 {"x": rnd(2, 7)}),
}


def binary(op, a, b, out_type=F32, opset=17, const_b=False):
    if const_b:
        return (make([N(op, ["a", "b"], ["y"])], [("a", list(a.shape))], [("y", None, out_type)],
                     [("b", b)], opset=opset), {"a": a})
    return (make([N(op, ["a", "b"], ["y"])], [("a", list(a.shape)), ("b", list(b.shape))],
                 [("y", None, out_type)], opset=opset), {"a": a, "b": b})


BOOL = 9
for op in ["Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"]:
    CASES[op] = binary(op, X3, rnd(5, 4) + (3 if op == "Div" else 0))
    CASES[op + "_const"] = binary(op, X3, rnd(4) + 3, const_b=True)
CASES["Add_scalar"] = binary("Add", X3, np.array(2.5, np.float32), const_b=True)
CASES["Sub_rscalar"] = (make([N("Sub", ["c", "a"], ["y"])], [("a", [2, 5, 4])], [("y", None)],
                             [("c", np.array([1.5], np.float32))]), {"a": X3})
CASES["Pow"] = binary("Pow", POS, rnd(4), const_b=True)
CASES["Pow2"] = binary("Pow", X3, np.array(2.0, np.float32), const_b=True)
CASES["Pow_half"] = binary("Pow", POS, np.array(0.5, np.float32), const_b=True)
CASES["PRelu"] = binary("PRelu", X4, np.full((3, 1, 1), 0.25, np.float32), const_b=True)
for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
    CASES[op] = binary(op, np.round(X3), np.round(rnd(4)), out_type=BOOL)
CASES["MatMul"] = binary("MatMul", X2, rnd(6, 3))
CASES["MatMul_3d2d"] = binary("MatMul", X3, rnd(4, 7), const_b=True)
CASES["MatMul_3d"] = binary("MatMul", X3, rnd(2, 4, 3))
CASES["MatMul_4d"] = binary("MatMul", rnd(2, 3, 5, 4), rnd(2, 3, 4, 6))
CASES["MatMul_vec"] = binary("MatMul", X3, rnd(4))
CASES["Gemm_fc"] = (make([N("Gemm", ["a", "w", "c"], ["y"], transB=1)], [("a", [4, 6])],
                         [("y", None)], [("w", rnd(3, 6)), ("c", rnd(3))]), {"a": X2})
CASES["Gemm_general"] = (make([N("Gemm", ["a", "w", "c"], ["y"], transA=1, alpha=0.5, beta=2.0)],
                              [("a", [6, 4])], [("y", None)], [("w", rnd(6, 3)), ("c", rnd(4, 3))]),
                         {"a": rnd(6, 4)})
CASES["Gemm_noT"] = (make([N("Gemm", ["a", "w"], ["y"])], [("a", [4, 6])], [("y", None)],
                          [("w", rnd(6, 3))], opset=11), {"a": X2})
CASES["Einsum"] = (make([N("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")],
                        [("a", [2, 5, 4]), ("b", [2, 4, 3])], [("y", None)]),
                   {"a": X3, "b": rnd(2, 4, 3)})
W = rnd(4, 3, 3, 3)
CASES["Conv"] = (make([N("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
                      [("x", [2, 3, 6, 6])], [("y", None)], [("w", W), ("b", rnd(4))]),
                 {"x": X4})
CASES["Conv_group_dil"] = (make([N("Conv", ["x", "w"], ["y"], group=3, dilations=[2, 2])],
                                [("x", [2, 3, 6, 6])], [("y", None)], [("w", rnd(6, 1, 2, 2))]),
                           {"x": X4})
CASES["Conv_same"] = (make([N("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])],
                           [("x", [2, 3, 6, 6])], [("y", None)], [("w", rnd(2, 3, 2, 2))]),
                      {"x": X4})
CASES["Conv_uneven"] = (make([N("Conv", ["x", "w"], ["y"], pads=[0, 1, 1, 0])],
                             [("x", [2, 3, 6, 6])], [("y", None)], [("w", W)]), {"x": X4})
CASES["Conv1d"] = (make([N("Conv", ["x", "w"], ["y"], pads=[1, 1])], [("x", [2, 5, 4])],
                        [("y", None)], [("w", rnd(3, 5, 3))]), {"x": X3})
CASES["ConvTranspose"] = (make([N("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2],
                                  pads=[1, 1, 1, 1], output_padding=[1, 1])],
                               [("x", [2, 3, 6, 6])], [("y", None)],
                               [("w", rnd(3, 2, 3, 3)), ("b", rnd(2))]), {"x": X4})
CASES["ConvTranspose_uneven"] = (make([N("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2],
                                         pads=[0, 1, 1, 0])],
                                      [("x", [2, 3, 6, 6])], [("y", None)],
                                      [("w", rnd(3, 2, 3, 3))]), {"x": X4})
CASES["BatchNormalization"] = (
    make([N("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"], epsilon=1e-3)],
         [("x", [2, 3, 6, 6])], [("y", None)],
         [("g", rnd(3)), ("b", rnd(3)), ("m", rnd(3)), ("v", np.abs(rnd(3)) + 0.5)]),
    {"x": X4})
CASES["InstanceNormalization"] = (
    make([N("InstanceNormalization", ["x", "g", "b"], ["y"])], [("x", [2, 3, 6, 6])],
         [("y", None)], [("g", rnd(3)), ("b", rnd(3))]), {"x": X4})
CASES["LayerNormalization"] = (
    make([N("LayerNormalization", ["x", "g", "b"], ["y"], epsilon=1e-5)], [("x", [2, 5, 4])],
         [("y", None)], [("g", rnd(4)), ("b", rnd(4))]), {"x": X3})
CASES["LayerNormalization_axis1"] = (
    make([N("LayerNormalization", ["x", "g"], ["y"], axis=1)], [("x", [2, 5, 4])],
         [("y", None)], [("g", rnd(5, 4))]), {"x": X3})
CASES["Reshape"] = (make([N("Reshape", ["x", "s"], ["y"])], [("x", [2, 5, 4])], [("y", None)],
                         [("s", i64(0, -1, 2))]), {"x": X3})
CASES["Reshape_4"] = (make([N("Reshape", ["x"], ["y"], shape=[10, 4])], [("x", [2, 5, 4])],
                           [("y", None)], opset=4), {"x": X3})
CASES["Concat"] = (make([N("Concat", ["a", "b", "c"], ["y"], axis=-1)],
                        [("a", [2, 5, 4]), ("b", [2, 5, 2])], [("y", None)],
                        [("c", rnd(2, 5, 1))]), {"a": X3, "b": rnd(2, 5, 2)})
CASES["Slice"] = (make([N("Slice", ["x", "s", "e", "a", "t"], ["y"])], [("x", [2, 5, 4])],
                       [("y", None)], [("s", i64(1, -3)), ("e", i64(2 ** 63 - 1, -1)),
                                       ("a", i64(1, 2)), ("t", i64(1, 1))]), {"x": X3})
CASES["Slice_step"] = (make([N("Slice", ["x", "s", "e", "a", "t"], ["y"])], [("x", [2, 5, 4])],
                            [("y", None)], [("s", i64(-1, 0)), ("e", i64(-2 ** 63, 4)),
                                            ("a", i64(1, 2)), ("t", i64(-2, 2))]), {"x": X3})
CASES["Slice_1"] = (make([N("Slice", ["x"], ["y"], starts=[0, 1], ends=[1, 3], axes=[0, 2])],
                         [("x", [2, 5, 4])], [("y", None)], opset=9), {"x": X3})
CASES["Gather"] = (make([N("Gather", ["x", "i"], ["y"], axis=1)], [("x", [2, 5, 4])],
                        [("y", None)], [("i", i64(4, 0, -1))]), {"x": X3})
CASES["Gather_scalar"] = (make([N("Gather", ["x", "i"], ["y"], axis=2)], [("x", [2, 5, 4])],
                               [("y", None)], [("i", np.array(-1, np.int64))]), {"x": X3})
CASES["Gather_embedding"] = (make([N("Gather", ["w", "ids"], ["y"])], [("ids", [2, 3], I64)],
                                  [("y", None)], [("w", rnd(10, 4))]),
                             {"ids": np.array([[1, 2, 9], [0, 0, 3]], np.int64)})
CASES["GatherElements"] = (make([N("GatherElements", ["x", "i"], ["y"], axis=1)],
                                [("x", [3, 4])], [("y", None)],
                                [("i", np.array([[0, 3], [1, 1], [2, 0]], np.int64))]),
                           {"x": rnd(3, 4)})
CASES["GatherND"] = (make([N("GatherND", ["x", "i"], ["y"])], [("x", [3, 4])], [("y", None)],
                          [("i", np.array([[0, 3], [2, 1]], np.int64))]), {"x": rnd(3, 4)})
CASES["Squeeze"] = (make([N("Squeeze", ["x", "a"], ["y"])], [("x", [2, 1, 4, 1])],
                         [("y", None)], [("a", i64(1, -1))]), {"x": rnd(2, 1, 4, 1)})
CASES["Squeeze_all"] = (make([N("Squeeze", ["x"], ["y"])], [("x", [2, 1, 4, 1])],
                             [("y", None)]), {"x": rnd(2, 1, 4, 1)})
CASES["Unsqueeze"] = (make([N("Unsqueeze", ["x", "a"], ["y"])], [("x", [2, 5, 4])],
                           [("y", None)], [("a", i64(0, -1))]), {"x": X3})
CASES["Unsqueeze_11"] = (make([N("Unsqueeze", ["x"], ["y"], axes=[1])], [("x", [2, 5, 4])],
                              [("y", None)], opset=11), {"x": X3})
CASES["Expand"] = (make([N("Expand", ["x", "s"], ["y"])], [("x", [5, 1])], [("y", None)],
                        [("s", i64(2, 1, 3))]), {"x": rnd(5, 1)})
CASES["Tile"] = (make([N("Tile", ["x", "r"], ["y"])], [("x", [2, 5, 4])], [("y", None)],
                      [("r", i64(1, 2, 3))]), {"x": X3})
CASES["Where"] = (make([N("Greater", ["x", "z"], ["c"]), N("Where", ["c", "x", "m"], ["y"])],
                       [("x", [2, 5, 4])], [("y", None)],
                       [("z", np.zeros(4, np.float32)),
                        ("m", np.array(-np.inf, np.float32))]), {"x": X3})
# int64 values picked by a broadcast condition (GluonCV CenterNet's decoder, exported)
CASES["Where_int64_broadcast"] = (make(
    [N("Greater", ["x", "z"], ["c"]), N("Where", ["c", "i", "j"], ["y"])],
    [("x", [2, 1, 4]), ("i", [5, 1], I64)], [("y", None, I64)],
    [("z", np.zeros(4, np.float32)), ("j", np.array([-1], np.int64))]),
    {"x": rnd(2, 1, 4), "i": np.arange(5, dtype=np.int64).reshape(5, 1)})
CASES["Cast"] = (make([N("Cast", ["x"], ["y"], to=I64)], [("x", [2, 5, 4])], [("y", None, I64)]),
                 {"x": X3 * 4})
CASES["Clip"] = (make([N("Clip", ["x", "lo", "hi"], ["y"])], [("x", [2, 5, 4])], [("y", None)],
                      [("lo", np.array(-0.3, np.float32)), ("hi", np.array(0.6, np.float32))]),
                 {"x": X3})
CASES["Clip_min_only"] = (make([N("Clip", ["x", "lo"], ["y"])], [("x", [2, 5, 4])],
                               [("y", None)], [("lo", np.array(0.0, np.float32))]), {"x": X3})
CASES["ReduceSum13"] = (make([N("ReduceSum", ["x", "a"], ["y"], keepdims=0)], [("x", [2, 5, 4])],
                             [("y", None)], [("a", i64(1))], opset=13), {"x": X3})
CASES["ReduceMean18"] = (make([N("ReduceMean", ["x", "a"], ["y"])], [("x", [2, 5, 4])],
                              [("y", None)], [("a", i64(-1))], opset=18), {"x": X3})
CASES["TopK"] = (make([N("TopK", ["x", "k"], ["v", "i"], axis=1)], [("x", [2, 5, 4])],
                      [("v", None), ("i", None, I64)], [("k", i64(2))]), {"x": X3})
CASES["TopK_smallest"] = (make([N("TopK", ["x", "k"], ["v", "i"], largest=0)], [("x", [2, 5, 4])],
                               [("v", None), ("i", None, I64)], [("k", i64(3))]), {"x": X3})
CASES["Pad"] = (make([N("Pad", ["x", "p", "v"], ["y"])], [("x", [2, 3, 6, 6])], [("y", None)],
                     [("p", i64(0, 0, 1, 2, 0, 0, 3, 0)), ("v", np.array(1.5, np.float32))]),
                {"x": X4})
CASES["Pad_reflect"] = (make([N("Pad", ["x", "p"], ["y"], mode="reflect")], [("x", [2, 3, 6, 6])],
                             [("y", None)], [("p", i64(0, 0, 1, 2, 0, 0, 2, 1))]), {"x": X4})
CASES["Pad_edge3d"] = (make([N("Pad", ["x", "p"], ["y"], mode="edge")], [("x", [2, 5, 4])],
                            [("y", None)], [("p", i64(0, 0, 1, 0, 0, 2))]), {"x": X3})
CASES["Pad_2d"] = (make([N("Pad", ["x", "p"], ["y"])], [("x", [4, 6])], [("y", None)],
                        [("p", i64(1, 0, 2, 3))]), {"x": X2})
CASES["Pad_2"] = (make([N("Pad", ["x"], ["y"], pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.5)],
                       [("x", [2, 3, 6, 6])], [("y", None)], opset=2), {"x": X4})
CASES["Resize_nearest"] = (make([N("Resize", ["x", "", "s"], ["y"], mode="nearest")],
                                [("x", [2, 3, 6, 6])], [("y", None)],
                                [("s", np.array([1, 1, 2, 2], np.float32))]), {"x": X4})
CASES["Resize_nearest_asym"] = (
    make([N("Resize", ["x", "", "s"], ["y"], mode="nearest",
            coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
         [("x", [2, 3, 6, 6])], [("y", None)], [("s", np.array([1, 1, 3, 3], np.float32))]),
    {"x": X4})
CASES["Resize_linear_ac"] = (
    make([N("Resize", ["x", "", "", "sz"], ["y"], mode="linear",
            coordinate_transformation_mode="align_corners")],
         [("x", [2, 3, 6, 6])], [("y", None)], [("sz", i64(2, 3, 9, 12))]), {"x": X4})
CASES["Resize_linear_hp"] = (
    make([N("Resize", ["x", "", "s"], ["y"], mode="linear")],
         [("x", [2, 3, 6, 6])], [("y", None)], [("s", np.array([1, 1, 2, 2], np.float32))]),
    {"x": X4})
CASES["Upsample"] = (make([N("Upsample", ["x", "s"], ["y"], mode="nearest")],
                          [("x", [2, 3, 6, 6])], [("y", None)],
                          [("s", np.array([1, 1, 2, 2], np.float32))], opset=9), {"x": X4})
CASES["CumSum"] = (make([N("CumSum", ["x", "a"], ["y"])], [("x", [2, 5, 4])], [("y", None)],
                        [("a", np.array(1, np.int64))]), {"x": X3})
CASES["CumSum_rev_excl"] = (make([N("CumSum", ["x", "a"], ["y"], reverse=1, exclusive=1)],
                                 [("x", [2, 5, 4])], [("y", None)],
                                 [("a", np.array(2, np.int64))]), {"x": X3})
CASES["Trilu"] = (make([N("Trilu", ["x", "k"], ["y"], upper=0)], [("x", [2, 5, 4])],
                       [("y", None)], [("k", np.array(1, np.int64))]), {"x": X3})
CASES["Not"] = (make([N("Greater", ["x", "z"], ["c"]), N("Not", ["c"], ["n"]),
                      N("Cast", ["n"], ["y"], to=F32)], [("x", [2, 5, 4])], [("y", None)],
                     [("z", np.zeros(4, np.float32))]), {"x": X3})
CASES["And"] = (make([N("Greater", ["x", "z"], ["c"]), N("Less", ["x", "o"], ["d"]),
                      N("And", ["c", "d"], ["e"]), N("Cast", ["e"], ["y"], to=F32)],
                     [("x", [2, 5, 4])], [("y", None)],
                     [("z", np.zeros(4, np.float32)), ("o", np.ones(4, np.float32))]),
                {"x": X3})


@pytest.mark.parametrize("name", sorted(CASES))
def test_op(name):
    model, feeds = CASES[name]
    check(model, feeds)


def rnn_case(kind, direction="forward", states=False, layout=0, bias=True, **kw):
    H, C, T, B = 3, 4, 5, 2
    g = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    d = 2 if direction == "bidirectional" else 1
    inits = [("W", rnd(d, g * H, C) * 0.5), ("R", rnd(d, g * H, H) * 0.5)]
    names = ["x", "W", "R", "B" if bias else ""]
    if bias:
        inits.append(("B", rnd(d, 2 * g * H) * 0.5))
    inputs = [("x", [B, T, C] if layout else [T, B, C])]
    feeds = {"x": rnd(B, T, C) if layout else rnd(T, B, C)}
    if states:
        names += ["", "h0"] + (["c0"] if kind == "LSTM" else [])
        sh = [B, d, H] if layout else [d, B, H]
        inputs.append(("h0", sh))
        feeds["h0"] = rnd(*sh)
        if kind == "LSTM":
            inputs.append(("c0", sh))
            feeds["c0"] = rnd(*sh)
    outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    if kind == "GRU":
        kw.setdefault("linear_before_reset", 1)
    node = N(kind, names, outs, hidden_size=H, direction=direction, layout=layout, **kw)
    return make([node], inputs, [(o, None) for o in outs], inits, opset=14), feeds


RNN_CASES = {
    "LSTM": rnn_case("LSTM"), "LSTM_bidir_states": rnn_case("LSTM", "bidirectional", True),
    "LSTM_reverse": rnn_case("LSTM", "reverse"),
    "GRU": rnn_case("GRU"), "GRU_bidir": rnn_case("GRU", "bidirectional", True),
    "GRU_nobias": rnn_case("GRU", bias=False),
    "RNN_tanh": rnn_case("RNN"), "RNN_relu_bidir": rnn_case("RNN", "bidirectional",
                                                            activations=["Relu", "Relu"]),
}


@pytest.mark.parametrize("name", sorted(RNN_CASES))
def test_recurrent(name):
    model, feeds = RNN_CASES[name]
    check(model, feeds)


def test_lstm_batch_first_layout():
    # onnxruntime runs only layout=0: compare with it on the transposed tensors
    R.seed(11)
    m1, f1 = rnn_case("LSTM", "bidirectional", states=True, layout=1)
    R.seed(11)
    m0, _ = rnn_case("LSTM", "bidirectional", states=True, layout=0)
    from onnx_cases import aiond_run, ort_run
    f0 = {"x": f1["x"].transpose(1, 0, 2), "h0": f1["h0"].transpose(1, 0, 2),
          "c0": f1["c0"].transpose(1, 0, 2)}
    ref = ort_run(m0, f0)
    got = aiond_run(m1, f1)
    np.testing.assert_allclose(got[0], ref[0].transpose(2, 0, 1, 3), rtol=1e-4, atol=1e-5)
    for g, r in zip(got[1:], ref[1:]):
        np.testing.assert_allclose(g, r.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


def test_gru_without_linear_before_reset_is_refused():
    model, feeds = rnn_case("GRU", linear_before_reset=0)
    with pytest.raises(mx.contrib.onnx.UnsupportedOnnxOperator,
                       match="linear_before_reset=0.*node 'Y', GRU|node.*GRU"):
        mx.contrib.onnx.import_model(model.SerializeToString())


def _branch(op, out):
    return helper.make_graph([N(op, ["x"], [out])], op, [],
                             [helper.make_tensor_value_info(out, F32, None)])


MORE = {
    "OneHot": (make([N("OneHot", ["i", "d", "v"], ["y"], axis=1)], [("i", [2, 3], I64)],
                    [("y", None)], [("d", i64(4)), ("v", np.array([-1, 2], np.float32))]),
               {"i": np.array([[0, 3, -1], [2, 1, -4]], np.int64)}),
    "Mod_fmod": (make([N("Mod", ["a", "b"], ["y"], fmod=1)], [("a", [2, 5, 4])], [("y", None)],
                      [("b", np.abs(rnd(4)) + 0.5)]), {"a": X3 * 5}),
    "Mod_int": (make([N("Mod", ["a", "b"], ["y"])], [("a", [6], I64)], [("y", None, I64)],
                     [("b", i64(3, -3, 4, -4, 5, 7))]), {"a": i64(7, 7, -7, -7, 0, 20)}),
    "IsNaN": (make([N("IsNaN", ["x"], ["b"]), N("Cast", ["b"], ["y"], to=F32)], [("x", [4])],
                   [("y", None)]), {"x": np.array([1, np.nan, -np.inf, 0], np.float32)}),
    "IsInf": (make([N("IsInf", ["x"], ["b"]), N("Cast", ["b"], ["y"], to=F32)], [("x", [4])],
                   [("y", None)]), {"x": np.array([1, np.nan, -np.inf, np.inf], np.float32)}),
    "IsInf_pos": (make([N("IsInf", ["x"], ["b"], detect_negative=0),
                        N("Cast", ["b"], ["y"], to=F32)], [("x", [4])], [("y", None)]),
                  {"x": np.array([1, np.nan, -np.inf, np.inf], np.float32)}),
    "Shrink": unary("Shrink", lambd=0.4, bias=0.1),
    "MeanVarianceNormalization": unary("MeanVarianceNormalization", X4),
    "GroupNormalization21": (make([N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
                                  [("x", [2, 4, 3, 3])], [("y", None)],
                                  [("s", rnd(4)), ("b", rnd(4))], opset=21),
                             {"x": rnd(2, 4, 3, 3)}),
    "GroupNormalization18": (make([N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
                                  [("x", [2, 4, 3, 3])], [("y", None)],
                                  [("s", rnd(2)), ("b", rnd(2))], opset=18),
                             {"x": rnd(2, 4, 3, 3)}),
    "If_const": (make([N("Shape", ["x"], ["s"]), N("ReduceProd", ["s"], ["n"], keepdims=0),
                       N("Greater", ["n", "ten"], ["c"]),
                       N("If", ["c"], ["y"], then_branch=_branch("Relu", "t"),
                         else_branch=_branch("Sigmoid", "e"))],
                      [("x", [2, 5, 4])], [("y", None)], [("ten", i64(10))], opset=13),
                 {"x": X3}),
    "Upsample_7": (make([N("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 2.0, 2.0])],
                        [("x", [2, 3, 6, 6])], [("y", None)], opset=7), {"x": X4}),
    "Resize_sizes_nearest": (make([N("Resize", ["x", "", "", "sz"], ["y"], mode="nearest")],
                                  [("x", [2, 3, 6, 6])], [("y", None)],
                                  [("sz", i64(2, 3, 12, 12))]), {"x": X4}),
    "Sum3": (make([N("Sum", ["a", "b", "c"], ["y"])], [("a", [2, 5, 4]), ("b", [4])],
                  [("y", None)], [("c", rnd(5, 1))]), {"a": X3, "b": rnd(4)}),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_ops(name):
    model, feeds = MORE[name]
    check(model, feeds)


def test_if_on_the_data_is_a_cond():
    # (was refused before Loop/Scan came: now a sym.contrib.cond, see
    # test_import_control_flow.py)
    model = make([N("ReduceSum", ["x"], ["s"], keepdims=0), N("Greater", ["s", "z"], ["c"]),
                  N("If", ["c"], ["y"], name="branchy", then_branch=_branch("Relu", "t"),
                    else_branch=_branch("Sigmoid", "e"))],
                 [("x", [2, 5, 4])], [("y", None)], [("z", np.array(0, np.float32))], opset=13)
    for x in (np.abs(X3), -np.abs(X3)):    # each branch
        check(model, {"x": x})


OPSET_FORMS = {
    "Squeeze_11": (make([N("Squeeze", ["x"], ["y"], axes=[1])], [("x", [2, 1, 4])],
                        [("y", None)], opset=11), {"x": rnd(2, 1, 4)}),
    "ReduceSum_11": (make([N("ReduceSum", ["x"], ["y"], axes=[0, 2], keepdims=1)],
                          [("x", [2, 5, 4])], [("y", None)], opset=11), {"x": X3}),
    "ReduceMean_18_noaxes": (make([N("ReduceMean", ["x"], ["y"])],
                                  [("x", [2, 5, 4])], [("y", None)], opset=18), {"x": X3}),
    "ReduceSum_noop": (make([N("ReduceSum", ["x"], ["y"], noop_with_empty_axes=1)],
                            [("x", [2, 5, 4])], [("y", None)], opset=13), {"x": X3}),
    "TopK_1": (make([N("TopK", ["x"], ["v", "i"], k=2, axis=-1)], [("x", [2, 5, 4])],
                    [("v", None), ("i", None, I64)], opset=1), {"x": X3}),
    "Dropout_12": (make([N("Dropout", ["x", "r"], ["y"])], [("x", [2, 5, 4])], [("y", None)],
                        [("r", np.array(0.5, np.float32))], opset=12), {"x": X3}),
    "BatchNorm_9": (make([N("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"])],
                         [("x", [2, 5, 4])], [("y", None)],
                         [("g", rnd(5)), ("b", rnd(5)), ("m", rnd(5)),
                          ("v", np.abs(rnd(5)) + 0.5)], opset=9), {"x": X3}),
    "ConvTranspose_output_shape": (
        make([N("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[12, 13])],
             [("x", [2, 3, 6, 6])], [("y", None)], [("w", rnd(3, 2, 3, 3))]), {"x": X4}),
    "ConvTranspose_group": (
        make([N("ConvTranspose", ["x", "w"], ["y"], group=3, strides=[1, 2])],
             [("x", [2, 3, 6, 6])], [("y", None)], [("w", rnd(3, 2, 2, 3))]), {"x": X4}),
    "Softmax_11_axis2": (make([N("Softmax", ["x"], ["y"], axis=2)], [("x", [2, 3, 6, 6])],
                              [("y", None)], opset=11), {"x": X4}),
    "Gemm_scalar_bias": (make([N("Gemm", ["a", "w", "c"], ["y"], transB=1)], [("a", [4, 6])],
                              [("y", None)], [("w", rnd(3, 6)), ("c", np.array([0.5], np.float32))]),
                         {"a": X2}),
}


@pytest.mark.parametrize("name", sorted(OPSET_FORMS))
def test_opset_forms(name):
    model, feeds = OPSET_FORMS[name]
    check(model, feeds)


def test_reduce_to_a_scalar_is_one_element():
    # aiond's legacy operators have no 0-d arrays (as MXNet 1.x): a full
    # reduction without keepdims gives shape (1,), with the same value
    from onnx_cases import aiond_run, ort_run
    model = make([N("ReduceSum", ["x"], ["y"], keepdims=0)], [("x", [2, 5, 4])],
                 [("y", None)], opset=13)
    got, ref = aiond_run(model, {"x": X3})[0], ort_run(model, {"x": X3})[0]
    assert ref.shape == () and got.shape == (1,)
    np.testing.assert_allclose(got[0], ref, rtol=1e-5)


def test_multinomial_samples_the_likeliest_class():
    logits = np.array([[0, 50, 0, 0], [0, 0, 0, 50]], np.float32)
    model = make([N("Multinomial", ["x"], ["y"], sample_size=5)], [("x", [2, 4])],
                 [("y", None, 6)])
    from onnx_cases import aiond_run
    got = aiond_run(model, {"x": logits})[0]
    assert got.shape == (2, 5) and got.dtype == np.int32
    np.testing.assert_array_equal(got, [[1] * 5, [3] * 5])


TIES = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 3.51]], np.float32)
SEMANTICS = {
    # ONNX rounds halves to even (MXNet's rint rounds them down)
    "Round_ties": unary("Round", TIES),
    "Clip_min_above_max": (make([N("Clip", ["x", "lo", "hi"], ["y"])], [("x", [2, 5, 4])],
                                [("y", None)], [("lo", np.array(0.5, np.float32)),
                                                ("hi", np.array(-0.5, np.float32))]), {"x": X3}),
    "LpPool_p3_pads": unary("LpPool", X4, kernel_shape=[2, 3], pads=[1, 1, 1, 1], p=3),
    "LpPool_p4": unary("LpPool", X4, kernel_shape=[3, 3], strides=[2, 2], p=4),
    "LpPool_1d": unary("LpPool", X3, kernel_shape=[2], p=2),
    "GlobalLpPool": unary("GlobalLpPool", X4, p=3),
    # the last window would start in the padding: ONNX drops it, like PyTorch
    "MaxPool_ceil_last_window": unary("MaxPool", rnd(1, 1, 4, 4), kernel_shape=[2, 2],
                                      strides=[3, 3], pads=[1, 1, 1, 1], ceil_mode=1),
    "AveragePool_ceil_last_window": unary("AveragePool", rnd(1, 3, 4, 4), kernel_shape=[2, 2],
                                          strides=[3, 3], pads=[1, 1, 1, 1], ceil_mode=1,
                                          count_include_pad=1),
    "LpNormalization_zeros": unary("LpNormalization", np.vstack([X2, np.zeros((1, 6),
                                                                               np.float32)]),
                                   axis=1),
    "ArgMax_last": unary("ArgMax", np.array([[1, 3, 3, 0], [2, 2, 1, 2]], np.float32),
                         axis=1, select_last_index=1, out_type=I64),
    "ArgMin_last": unary("ArgMin", np.array([[1, 0, 3, 0], [2, 2, 1, 1]], np.float32),
                         axis=1, keepdims=0, select_last_index=1, out_type=I64),
    "LayerNormalization_stats": (
        make([N("LayerNormalization", ["x", "g", "b"], ["y", "m", "s"], axis=-1)],
             [("x", [2, 5, 4])], [("y", None), ("m", None), ("s", None)],
             [("g", rnd(4)), ("b", rnd(4))]), {"x": X3}),
}


@pytest.mark.parametrize("name", sorted(SEMANTICS))
def test_onnx_semantics(name):
    model, feeds = SEMANTICS[name]
    check(model, feeds)


def test_nearest_resize_mode_upsampling_cannot_give_is_refused():
    model = make([N("Resize", ["x", "", "s"], ["y"], mode="nearest",
                    coordinate_transformation_mode="asymmetric",
                    nearest_mode="round_prefer_floor", name="rz")],
                 [("x", [2, 3, 6, 6])], [("y", None)],
                 [("s", np.array([1, 1, 3, 3], np.float32))])
    with pytest.raises(mx.contrib.onnx.UnsupportedOnnxOperator, match="asymmetric.*'rz'"):
        mx.contrib.onnx.import_model(model.SerializeToString())


MATMUL_BCAST = {
    "MatMul_bcast_batch": binary("MatMul", rnd(3, 1, 4, 5), rnd(1, 2, 5, 6)),
    "MatMul_2d_3d": binary("MatMul", rnd(4, 5), rnd(3, 5, 2)),
    "MatMul_1d_3d": binary("MatMul", rnd(5), rnd(3, 5, 2)),
    "MatMul_3d_4d": binary("MatMul", rnd(2, 4, 5), rnd(3, 1, 5, 6)),
}


@pytest.mark.parametrize("name", sorted(MATMUL_BCAST))
def test_matmul_broadcasting(name):
    model, feeds = MATMUL_BCAST[name]
    check(model, feeds)


def test_pow_of_mixed_types():
    # the result has the base's type, whatever the exponent's
    for base, exp in [(np.array([1.5, 2, 3], np.float32), i64(2, 3, 1)),
                      (i64(2, 3, 4), np.array([1.5, 0.5, 2], np.float32))]:
        bt = I64 if base.dtype == np.int64 else F32
        et = I64 if exp.dtype == np.int64 else F32
        model = make([N("Pow", ["a", "b"], ["y"])], [("a", [3], bt), ("b", [3], et)],
                     [("y", None, bt)])
        check(model, {"a": base, "b": exp})
