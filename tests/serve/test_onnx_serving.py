"""``.onnx`` models served by ``python -m aiond.serve``: in a model repository
(versions, no config: the file's own inputs; a config naming the file) and
as a single ``--symbol model.onnx``, checked against onnxruntime over HTTP."""
import asyncio
import json
import os
import sys

import numpy as np

import aiond as mx
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
httpx = pytest.importorskip("httpx")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "onnx"))
from onnx_cases import I64, make, ort_run  # noqa: E402

from .test_cli import TIMEOUT, Served  # noqa: E402

pytestmark = pytest.mark.timeout(180)


def mlp_model(seed, batch="N"):
    """Gemm-Relu-Gemm-Softmax on [batch, 6], as PyTorch exports an MLP (the
    flatten through Shape/Gather/Concat/Reshape included)."""
    from onnx import helper
    r = np.random.RandomState(seed)
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["s"]), n("Gather", ["s", "zero"], ["b"], axis=0),
             n("Unsqueeze", ["b", "ax0"], ["bu"]), n("Concat", ["bu", "m1"], ["shp"], axis=0),
             n("Reshape", ["x", "shp"], ["xf"]),
             n("Gemm", ["xf", "w1", "b1"], ["h"], transB=1), n("Relu", ["h"], ["hr"]),
             n("Gemm", ["hr", "w2", "b2"], ["z"], transB=1),
             n("Softmax", ["z"], ["probs"], axis=-1)]
    inits = [("zero", np.array(0, np.int64)), ("ax0", np.array([0], np.int64)),
             ("m1", np.array([-1], np.int64)),
             ("w1", r.randn(8, 6).astype(np.float32)), ("b1", r.randn(8).astype(np.float32)),
             ("w2", r.randn(3, 8).astype(np.float32)), ("b2", r.randn(3).astype(np.float32))]
    return make(nodes, [("x", [batch, 2, 3])], [("probs", [batch, 3])], inits)


def tagger_model():
    """Two inputs: int64 token ids (embedding lookup) and a float mask."""
    from onnx import helper
    r = np.random.RandomState(3)
    n = helper.make_node
    nodes = [n("Gather", ["emb", "ids"], ["e"]), n("Unsqueeze", ["mask", "ax"], ["m"]),
             n("Mul", ["e", "m"], ["em"]), n("ReduceSum", ["em", "ax1"], ["pooled"], keepdims=0),
             n("MatMul", ["pooled", "w"], ["logits"])]
    inits = [("emb", r.randn(20, 4).astype(np.float32)), ("ax", np.array([-1], np.int64)),
             ("ax1", np.array([1], np.int64)), ("w", r.randn(4, 2).astype(np.float32))]
    return make(nodes, [("ids", ["N", 5], I64), ("mask", ["N", 5])], [("logits", ["N", 2])],
                inits)


def _infer(url, model, inputs, n_requests):
    async def main():
        limits = httpx.Limits(max_connections=n_requests)
        async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT, limits=limits) as c:
            async def one(i):
                body = {"inputs": [{"name": k, "shape": list(v[i].shape),
                                    "datatype": "INT64" if v[i].dtype == np.int64 else "FP32",
                                    "data": v[i].reshape(-1).tolist()}
                                   for k, v in inputs.items()]}
                r = await c.post("/v2/models/%s/infer" % model, json=body)
                assert r.status_code == 200, r.text
                return r.json()["outputs"]
            meta = (await c.get("/v2/models/%s" % model)).json()
            return meta, await asyncio.gather(*(one(i) for i in range(n_requests)))
    return asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def test_repository_serves_onnx_models(tmp_path):
    # versions as prefix-NNNN.onnx, no config: the graph's inputs are served
    (tmp_path / "mlp").mkdir()
    models = {v: mlp_model(v) for v in (1, 2)}
    for v, m in models.items():
        (tmp_path / "mlp" / ("mlp-%04d.onnx" % v)).write_bytes(m.SerializeToString())
    (tmp_path / "tagger").mkdir()
    (tmp_path / "tagger" / "model.onnx").write_bytes(tagger_model().SerializeToString())
    (tmp_path / "tagger" / "config.json").write_text(json.dumps(
        {"symbol": "model.onnx", "max_batch_size": 4, "batching": {"max_wait_ms": 5}}))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "broken.onnx").write_bytes(b"\x08\x07garbage, not protobuf")
    r = np.random.RandomState(0)
    xs = [r.randn(k % 3 + 1, 2, 3).astype(np.float32) for k in range(12)]
    ids = [r.randint(0, 20, (k % 2 + 1, 5)).astype(np.int64) for k in range(8)]
    masks = [(r.rand(k % 2 + 1, 5) > 0.3).astype(np.float32) for k in range(8)]
    with Served("--model-repository", str(tmp_path)) as srv:
        meta, outs = _infer(srv.url, "mlp", {"x": xs}, len(xs))
        assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 2, 3]}]
        assert meta["outputs"] == [{"name": "probs", "datatype": "FP32", "shape": [-1, 3]}]
        assert meta["versions"] == ["2"] and meta["platform"] == "onnx"
        for x, o in zip(xs, outs):
            assert o[0]["name"] == "probs" and o[0]["shape"] == [len(x), 3]
            ref = ort_run(models[2], {"x": x})[0]
            np.testing.assert_allclose(np.reshape(o[0]["data"], o[0]["shape"]), ref,
                                       rtol=1e-4, atol=1e-6)
        meta, outs = _infer(srv.url, "tagger", {"ids": ids, "mask": masks}, len(ids))
        assert [i["datatype"] for i in meta["inputs"]] == ["INT64", "FP32"]
        for i, m, o in zip(ids, masks, outs):
            ref = ort_run(tagger_model(), {"ids": i, "mask": m})[0]
            np.testing.assert_allclose(np.reshape(o[0]["data"], o[0]["shape"]), ref,
                                       rtol=1e-4, atol=1e-5)
        idx = httpx.post(srv.url + "/v2/repository/index", json={}, timeout=TIMEOUT).json()
        bad = [e for e in idx if e["name"] == "broken"]
        assert bad and bad[0]["state"] == "UNAVAILABLE"
        assert "not a readable ONNX model" in bad[0]["reason"]
        assert srv.terminate() == 0


def test_single_onnx_file_on_the_command_line(tmp_path):
    path = tmp_path / "clf.onnx"
    model = mlp_model(5, batch=1)       # a file exported for batch 1 still batches
    path.write_bytes(model.SerializeToString())
    r = np.random.RandomState(1)
    xs = [r.randn(1, 2, 3).astype(np.float32) for _ in range(6)]
    with Served("--symbol", str(path), "--input-shape", "1,2,3") as srv:
        _, outs = _infer(srv.url, "clf", {"x": xs}, len(xs))
        for x, o in zip(xs, outs):
            np.testing.assert_allclose(np.reshape(o[0]["data"], o[0]["shape"]),
                                       ort_run(model, {"x": x})[0], rtol=1e-4, atol=1e-6)
        assert srv.terminate() == 0


def test_onnx_file_with_params_is_refused(tmp_path):
    from aiond.serve.models import load_model
    path = tmp_path / "m.onnx"
    path.write_bytes(mlp_model(1).SerializeToString())
    with pytest.raises(ValueError, match="holds its parameters"):
        load_model(str(path), str(tmp_path / "m-0001.params"))


def test_model_whose_output_rows_are_not_the_batch_is_refused_at_load(tmp_path):
    """NonMaxSuppression's selected boxes: as many rows as survive, not one
    per request, so a batch could not be split back. Loading says so (the
    repository reports the model as failed) instead of serving wrong rows."""
    from onnx import helper
    from aiond.serve.repository import ModelRepository, load_served
    n = helper.make_node
    model = make([n("NonMaxSuppression", ["boxes", "scores", "lim"], ["sel"])],
                 [("boxes", ["N", 6, 4]), ("scores", ["N", 1, 6])], [("sel", None, I64)],
                 [("lim", np.array([3], np.int64))], opset=13)
    (tmp_path / "det").mkdir()
    (tmp_path / "det" / "det.onnx").write_bytes(model.SerializeToString())
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "ok.onnx").write_bytes(mlp_model(2).SerializeToString())
    with pytest.raises(mx.MXNetError, match=r"output 'sel' has shape \('\?', 3\).*batch axis"):
        load_served(str(tmp_path / "det"))
    repo = ModelRepository(str(tmp_path))

    async def load():
        await repo.load_all()
        index = {m["name"]: m for m in repo.index()}
        for m in repo.models():
            await m.aclose()
        return index
    index = asyncio.run(load())
    assert index["ok"]["state"] == "READY"
    assert index["det"]["state"] == "UNAVAILABLE" and "batch axis" in index["det"]["reason"]
