"""Corrupted ONNX files: every byte-level mutation of a valid model either
imports or raises MXNetError (OnnxImportError for a graph that parses but is
malformed) - never another exception, a crash or a hang."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import aiond as mx  # noqa: E402
from aiond.base import MXNetError  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_cases import make  # noqa: E402

pytestmark = pytest.mark.timeout(300)


def _models():
    import test_import_models as t
    return [t.cnn_model().SerializeToString(), t.attention_model().SerializeToString()]


@pytest.mark.parametrize("which", [0, 1])
def test_byte_mutations(which):
    data = _models()[which]
    rs = np.random.RandomState(which)
    kinds = {"ok": 0, "error": 0}
    for _ in range(150):
        d = bytearray(data)
        for _ in range(rs.randint(1, 6)):
            d[rs.randint(len(d))] = rs.randint(256)
        if rs.rand() < 0.2:
            d = d[:rs.randint(1, len(d))]
        try:
            mx.contrib.onnx.import_model(bytes(d))
            mx.contrib.onnx.get_model_metadata(bytes(d))
            kinds["ok"] += 1
        except MXNetError:
            kinds["error"] += 1
    assert kinds["error"] > 10 and kinds["ok"] > 10, kinds


def test_huge_constant_of_shape_is_refused():
    from onnx import helper
    model = make([helper.make_node("ConstantOfShape", ["s"], ["z"]),
                  helper.make_node("Add", ["x", "z"], ["y"])],
                 [("x", [2])], [("y", None)],
                 [("s", np.array([1 << 20, 1 << 20], np.int64))])
    with pytest.raises(mx.contrib.onnx.OnnxImportError, match="1099511627776 elements"):
        mx.contrib.onnx.import_model(model.SerializeToString())


def test_malformed_node_names_the_node():
    from onnx import helper
    # a Reshape without its shape input: the graph parses, the node is broken
    model = make([helper.make_node("Reshape", ["x"], ["y"], name="r0")], [("x", [2, 3])],
                 [("y", None)])
    with pytest.raises(mx.contrib.onnx.OnnxImportError, match="'r0', Reshape"):
        mx.contrib.onnx.import_model(model.SerializeToString())
