"""The sample model repository (examples/model_repository, its model files
written by examples/make_model_repository.py) served as README shows, and
configs that cannot serve failing at load with the field named."""
import importlib.util
import json
import os
import re

import numpy as np
import pytest

import aiond as mx

pytest.importorskip("uvicorn")
tc = pytest.importorskip("tritonclient.http")

from aiond.serve.http import create_app  # noqa: E402
from aiond.serve.repository import ModelConfigError, load_served  # noqa: E402
import aiond.serve.repository as repository_module  # noqa: E402

from .test_http import TIMEOUT, ServerThread  # noqa: E402

pytestmark = pytest.mark.timeout(180)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _maker():
    spec = importlib.util.spec_from_file_location(
        "make_model_repository", os.path.join(ROOT, "examples", "make_model_repository.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return _maker().make(str(tmp_path_factory.mktemp("repo")))


def _params(folder, prefix, version):
    return {k.split(":", 1)[1]: v.asnumpy()
            for k, v in mx.nd.load(os.path.join(folder, "%s-%04d.params"
                                                % (prefix, version))).items()}


def test_the_sample_repository_serves_both_models(sample):
    app = create_app(repository=sample)
    x = np.random.RandomState(0).uniform(0, 1, (3, 784)).astype(np.float32)
    with ServerThread(app) as srv:
        c = tc.InferenceServerClient("127.0.0.1:%d" % srv.port, network_timeout=TIMEOUT)
        meta = c.get_model_metadata("mlp")
        assert meta["outputs"] == [{"name": "scores", "datatype": "FP32", "shape": [-1, 10]}]
        for version in (1, 2):
            p = _params(os.path.join(sample, "mlp"), "mlp", version)
            ref = np.maximum(x @ p["fc1_weight"].T + p["fc1_bias"], 0) @ p["fc2_weight"].T \
                + p["fc2_bias"]
            i = tc.InferInput("data", [3, 784], "FP32")
            i.set_data_from_numpy(x)
            got = c.infer("mlp", [i], model_version=str(version)).as_numpy("scores")
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
        p = _params(os.path.join(sample, "seqpool"), "seqpool", 1)
        for n in (5, 40):       # padded to buckets 16 and 64
            t = np.random.RandomState(n).normal(0, 1, (2, n, 8)).astype(np.float32)
            i = tc.InferInput("tokens", [2, n, 8], "FP32")
            i.set_data_from_numpy(t)
            got = c.infer("seqpool", [i]).as_numpy("pooled")
            np.testing.assert_allclose(got, t.sum(1) @ p["proj_weight"].T + p["proj_bias"],
                                       rtol=1e-4, atol=1e-5)
        c.close()


def test_buckets_on_a_fixed_length_axis_fail_at_load_naming_the_field(sample, tmp_path):
    d = tmp_path / "mlp"
    d.mkdir()
    for f in os.listdir(os.path.join(sample, "mlp")):
        if f != "config.json":
            os.symlink(os.path.join(sample, "mlp", f), d / f)
    cfg = {"max_batch_size": 64,
           "inputs": [{"name": "data", "datatype": "FP32", "shape": [784]}],
           "batching": {"buckets": [16, 32], "pad_axis": 1}}
    (d / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelConfigError, match=r"batching\.buckets.*'data' has shape \[784\]"):
        load_served(str(d))
    cfg["batching"] = {"buckets": [16, "x"]}
    (d / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelConfigError, match=r"batching\.buckets must be a list of positive"):
        load_served(str(d))
    cfg["batching"] = {"pad_axis": 1}
    (d / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelConfigError, match=r"without batching\.buckets"):
        load_served(str(d))
    # served, the model is reported unavailable with that reason; nothing READY that fails
    cfg["batching"] = {"buckets": [16, 32], "pad_axis": 1}
    (d / "config.json").write_text(json.dumps(cfg))
    with ServerThread(create_app(repository=str(tmp_path))) as srv:
        c = tc.InferenceServerClient("127.0.0.1:%d" % srv.port, network_timeout=TIMEOUT)
        (entry,) = c.get_model_repository_index()
        assert entry["state"] == "UNAVAILABLE" and "batching.buckets" in entry["reason"]
        c.close()


def test_the_batcher_refuses_buckets_on_a_fixed_axis():
    from aiond.serve import Batcher
    with pytest.raises(ValueError, match="axis 1 of requests of shape .*784.* fixed length 784"):
        Batcher(lambda x: x, sample_shape=(784,), buckets=[16, 32], pad_axis=1)


def test_the_documented_configs_are_json():
    doc = repository_module.__doc__
    blocks = re.findall(r"::\n\n((?:    .*\n|\n)+)", doc)
    configs = [b for b in blocks if b.strip().startswith("{")]
    assert len(configs) == 2
    for b in configs:
        json.loads(b)
    with open(os.path.join(ROOT, "examples", "model_repository", "mlp", "config.json")) as f:
        assert json.load(f)["inputs"][0]["shape"] == [784]
