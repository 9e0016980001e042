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


# ------------------------------------------- with the file-format fuzzing
def _file_fuzzing():
    """tests/test_fuzz_files.py's mutation strategy, example budget and memory
    cap, so .onnx files are fuzzed like every other format aiond reads."""
    import importlib.util
    path = os.path.join(os.path.dirname(HERE), "test_fuzz_files.py")
    spec = importlib.util.spec_from_file_location("_aiond_fuzz_files", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


HERE = os.path.dirname(os.path.abspath(__file__))
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402

_FF = _file_fuzzing()
# files written by MXNet 1.9.1's exporter and graphs built here
ONNX_BASES = [open(os.path.join(HERE, "data", n + ".onnx"), "rb").read()
              for n in ("mxcnn", "mxmlp")] + _models()


def _import_and_run(path):
    net = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    sym, args, aux = mx.contrib.onnx.import_model(path)
    meta = mx.contrib.onnx.get_model_metadata(path)
    from aiond.contrib.onnx._graph import np_dtype
    used, feeds = set(sym.list_arguments()), []
    for name, shape, elem in meta["input_tensor_data"]:
        if name not in used:
            continue
        shape = [d if isinstance(d, int) and d > 0 else 2 for d in shape]
        if int(np.prod(shape)) > 1 << 16:
            return "too big to run"
        feeds.append(mx.nd.ones(shape, dtype=np_dtype(elem)))
    out = net(*feeds)
    for o in (out if isinstance(out, (list, tuple)) else [out]):
        o.asnumpy()
    return "ran"


@_FF.FUZZ
@given(data=_FF.mutated(ONNX_BASES))
def test_fuzz_onnx_file(data, tmp_path_factory):
    """A mutated .onnx file on disk: import_to_gluon, import_model,
    get_model_metadata and a forward pass give results or MXNetError."""
    path = str(tmp_path_factory.mktemp("onnx") / "model.onnx")
    with open(path, "wb") as f:
        f.write(data)
    with _FF._MemoryCap():
        _FF._outcome(lambda: _import_and_run(path))


def test_every_truncation_of_an_mxnet_file_raises_mxnet_error(tmp_path):
    data = ONNX_BASES[1]
    path = str(tmp_path / "cut.onnx")
    for n in range(0, len(data), max(1, len(data) // 97)):
        with open(path, "wb") as f:
            f.write(data[:n])
        with pytest.raises(MXNetError):
            mx.contrib.onnx.import_model(path)


def test_fuzz_bases_import_and_run(tmp_path):
    """The unmutated bases get through every step the fuzz test takes."""
    for i, data in enumerate(ONNX_BASES):
        path = str(tmp_path / ("base%d.onnx" % i))
        with open(path, "wb") as f:
            f.write(data)
        assert _import_and_run(path) == "ran", i
