"""A model repository folder served over HTTP: MXNet-format exports with
config.json / config.toml, several versions, several inputs and outputs,
a broken model that is reported while the others serve, and the
repository extension's index / load / unload, through tritonclient.http."""
import asyncio
import json
import os

import numpy as np
import pytest

import aiond as mx

pytest.importorskip("uvicorn")
tc = pytest.importorskip("tritonclient.http")
from tritonclient.utils import InferenceServerException  # noqa: E402

from aiond.serve.http import create_app  # noqa: E402
from aiond.serve.repository import (ModelConfigError, ModelRepository, ServedModel,  # noqa: E402
                                    load_served, read_config)

from .test_http import TIMEOUT, ServerThread  # noqa: E402

pytestmark = pytest.mark.timeout(180)


def export_mlp(folder, epoch, seed):
    from aiond.gluon import nn
    mx.random.seed(seed)
    net = nn.HybridSequential(prefix="mlp_")     # the same names in every version
    with net.name_scope():
        net.add(nn.Dense(8, in_units=6, activation="relu"), nn.Dense(3, in_units=8))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.zeros((1, 6)))
    os.makedirs(folder, exist_ok=True)
    net.export(os.path.join(folder, "mlp"), epoch=epoch)
    ws = [(l.weight.data().asnumpy(), l.bias.data().asnumpy()) for l in net]

    def ref(x):
        (w1, b1), (w2, b2) = ws
        return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    return ref


def export_two_in(folder):
    """out0 = fc(a) + b, out1 = relu(fc(a)): two inputs, two outputs."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    fc = mx.sym.FullyConnected(a, num_hidden=4, name="fc")
    out = mx.sym.Group([mx.sym.elemwise_add(fc, b, name="sum"),
                        mx.sym.relu(fc, name="act")])
    os.makedirs(folder, exist_ok=True)
    out.save(os.path.join(folder, "pair-symbol.json"))
    rs = np.random.RandomState(5)
    w = rs.uniform(-1, 1, (4, 5)).astype(np.float32)
    bias = rs.uniform(-1, 1, 4).astype(np.float32)
    mx.nd.save(os.path.join(folder, "pair-0001.params"),
               {"arg:fc_weight": mx.nd.array(w), "arg:fc_bias": mx.nd.array(bias)})
    return lambda x, y: (x @ w.T + bias + y, np.maximum(x @ w.T + bias, 0))


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    refs = {}
    refs[1] = export_mlp(str(root / "mlp"), 1, 1)
    refs[2] = export_mlp(str(root / "mlp"), 2, 2)
    (root / "mlp" / "config.json").write_text(json.dumps({
        "max_batch_size": 8, "versions": "all",
        "inputs": [{"name": "data", "datatype": "FP32", "shape": [6]}],
        "outputs": [{"name": "logits", "datatype": "FP32", "shape": [3]}],
        "batching": {"max_wait_ms": 1, "max_queue": 64}}))
    refs["pair"] = export_two_in(str(root / "pair"))
    (root / "pair" / "config.toml").write_text(
        'max_batch_size = 4\n'
        '[[inputs]]\nname = "a"\ndatatype = "FP32"\nshape = [5]\n'
        '[[inputs]]\nname = "b"\ndatatype = "FP32"\nshape = [4]\n')
    (root / "broken").mkdir()
    (root / "broken" / "broken-symbol.json").write_text("{not json")
    (root / "broken" / "config.json").write_text(
        '{"inputs": [{"name": "data", "datatype": "FP32", "shape": [6]}]}')
    (root / "broken" / "broken-0000.params").write_bytes(b"")
    return root, refs


def _infer(c, model, arrays, version="", outputs=None):
    inputs = []
    for name, x in arrays.items():
        i = tc.InferInput(name, list(x.shape), "FP32")
        i.set_data_from_numpy(x)
        inputs.append(i)
    outs = None if outputs is None else [tc.InferRequestedOutput(o) for o in outputs]
    return c.infer(model, inputs, model_version=version, outputs=outs)


def test_repository_serves_versions_multi_io_and_reports_the_broken_model(repo):
    root, refs = repo
    app = create_app(repository=str(root))
    with ServerThread(app) as srv:
        c = tc.InferenceServerClient("127.0.0.1:%d" % srv.port, network_timeout=TIMEOUT)
        x = np.random.RandomState(0).uniform(-1, 1, (3, 6)).astype(np.float32)
        for v in ("1", "2"):
            y = _infer(c, "mlp", {"data": x}, version=v).as_numpy("logits")
            np.testing.assert_allclose(y, refs[int(v)](x), rtol=1e-4, atol=1e-5)
        # no version: the highest
        np.testing.assert_allclose(_infer(c, "mlp", {"data": x}).as_numpy("logits"),
                                   refs[2](x), rtol=1e-4, atol=1e-5)
        meta = c.get_model_metadata("mlp", "1")
        assert meta["outputs"] == [{"name": "logits", "datatype": "FP32", "shape": [-1, 3]}]
        # two inputs, two outputs named as the graph names them
        a = np.random.RandomState(1).uniform(-1, 1, (2, 5)).astype(np.float32)
        b = np.random.RandomState(2).uniform(-1, 1, (2, 4)).astype(np.float32)
        meta = c.get_model_metadata("pair")
        assert [o["name"] for o in meta["outputs"]] == ["sum_output", "act_output"]
        assert meta["outputs"][0]["shape"] == [-1, 4]
        r = _infer(c, "pair", {"a": a, "b": b})
        want = refs["pair"](a, b)
        np.testing.assert_allclose(r.as_numpy("sum_output"), want[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(r.as_numpy("act_output"), want[1], rtol=1e-4, atol=1e-5)
        r = _infer(c, "pair", {"b": b, "a": a}, outputs=["act_output"])
        assert r.as_numpy("sum_output") is None
        # the broken model is reported, not served
        index = {(e["name"], e.get("version")): e for e in c.get_model_repository_index()}
        assert index[("mlp", "1")]["state"] == "READY"
        assert index[("mlp", "2")]["state"] == "READY"
        assert index[("pair", "1")]["state"] == "READY"
        broken = index[("broken", None)]
        assert broken["state"] == "UNAVAILABLE" and "broken-symbol.json" in broken["reason"]
        assert not c.is_model_ready("broken")
        with pytest.raises(InferenceServerException, match="not loaded"):
            _infer(c, "broken", {"data": x})
        with pytest.raises(InferenceServerException, match="failed to load"):
            c.load_model("broken")
        with pytest.raises(InferenceServerException, match="no model 'ghost'"):
            c.load_model("ghost")
        # unload, then load again
        c.unload_model("pair")
        assert not c.is_model_ready("pair")
        with pytest.raises(InferenceServerException, match="not loaded"):
            _infer(c, "pair", {"a": a, "b": b})
        assert ("pair", None) in {(e["name"], e.get("version"))
                                  for e in c.get_model_repository_index()}
        c.load_model("pair")
        assert c.is_model_ready("pair")
        np.testing.assert_allclose(_infer(c, "pair", {"a": a, "b": b}).as_numpy("act_output"),
                                   want[1], rtol=1e-4, atol=1e-5)
        c.close()


def test_reload_keeps_serving_while_the_new_version_loads(repo, tmp_path):
    root, refs = repo
    import shutil
    shutil.copytree(root / "mlp", tmp_path / "mlp")
    app = create_app(repository=str(tmp_path))
    with ServerThread(app) as srv:
        c = tc.InferenceServerClient("127.0.0.1:%d" % srv.port, network_timeout=TIMEOUT)
        x = np.ones((1, 6), np.float32)
        ref3 = export_mlp(str(tmp_path / "mlp"), 3, 3)
        c.load_model("mlp")
        np.testing.assert_allclose(_infer(c, "mlp", {"data": x}).as_numpy("logits"), ref3(x),
                                   rtol=1e-4, atol=1e-5)
        assert c.get_model_metadata("mlp")["versions"] == ["1", "2", "3"]
        np.testing.assert_allclose(_infer(c, "mlp", {"data": x}, "1").as_numpy("logits"),
                                   refs[1](x), rtol=1e-4, atol=1e-5)
        c.close()


def test_config_errors_name_the_problem(tmp_path):
    (tmp_path / "config.json").write_text('{"max_batch_size": 4, "colour": 1}')
    with pytest.raises(ModelConfigError, match="unknown config keys"):
        read_config(str(tmp_path))
    export_mlp(str(tmp_path), 0, 0)
    (tmp_path / "config.json").write_text('{"max_batch_size": 4}')
    with pytest.raises(ModelConfigError, match="must give 'inputs'"):
        load_served(str(tmp_path))
    (tmp_path / "config.json").write_text('{"name": "other", "inputs": []}')
    with pytest.raises(ModelConfigError, match="names the model 'other'"):
        load_served(str(tmp_path), name="mlp")
    (tmp_path / "config.json").write_text('{"inputs": 3}')
    with pytest.raises(ModelConfigError, match="inputs must be a list"):
        load_served(str(tmp_path))
    (tmp_path / "config.json").write_text('{"versions": [5], "inputs": []}')
    with pytest.raises(ModelConfigError, match=r"versions \['5'\] have no"):
        load_served(str(tmp_path))
    (tmp_path / "config.json").write_text(
        '{"inputs": [{"name": "data", "datatype": "FP32", "shape": [6]}], '
        '"outputs": [{"name": "a", "shape": [3]}, {"name": "b", "shape": [3]}]}')
    with pytest.raises(ModelConfigError, match="names 2 outputs, the graph has 1"):
        load_served(str(tmp_path))
    # parameters of another graph (a version exported from a net named differently)
    from aiond.gluon import nn
    other = nn.Dense(3, in_units=6, prefix="other_")
    other.initialize()
    other.save_parameters(str(tmp_path / "p.params"))
    from aiond.serve import load_model
    with pytest.raises(mx.base.MXNetError, match="lacks the parameters"):
        load_model(str(tmp_path / "mlp-symbol.json"), str(tmp_path / "p.params"), "data")


def test_unknown_and_unloaded_models_in_code():
    from aiond.serve.protocol import NotFound, Unavailable
    r = ModelRepository()
    with pytest.raises(NotFound):
        r.get("x")

    async def main():
        with pytest.raises(NotFound):
            await r.unload("x")
    asyncio.run(main())
    r._state["y"] = ("UNAVAILABLE", "unloaded")
    with pytest.raises(Unavailable):
        r.get("y")


def test_variable_length_input_padded_to_buckets(tmp_path):
    """A graph over sequences (2 * relu(x), any length): requests of lengths
    3 and 6 run padded to buckets 4 and 8 and come back at their own length."""
    d = tmp_path / "seq"
    d.mkdir()
    x = mx.sym.var("tokens")
    (2 * mx.sym.relu(x, name="act")).save(str(d / "seq-symbol.json"))
    mx.nd.save(str(d / "seq-0001.params"), {})
    (d / "config.json").write_text(json.dumps({
        "max_batch_size": 8,
        "inputs": [{"name": "tokens", "datatype": "FP32", "shape": [-1]}],
        "outputs": [{"name": "y", "datatype": "FP32", "shape": [-1]}],
        "batching": {"buckets": [4, 8], "pad_axis": 1}}))
    app = create_app(repository=str(tmp_path))
    with ServerThread(app) as srv:
        c = tc.InferenceServerClient("127.0.0.1:%d" % srv.port, network_timeout=TIMEOUT)
        for n in (3, 6, 8):
            v = np.linspace(-1, 1, 2 * n, dtype=np.float32).reshape(2, n)
            i = tc.InferInput("tokens", [2, n], "FP32")
            i.set_data_from_numpy(v)
            np.testing.assert_allclose(c.infer("seq", [i]).as_numpy("y"), 2 * np.maximum(v, 0))
        i = tc.InferInput("tokens", [1, 9], "FP32")
        i.set_data_from_numpy(np.zeros((1, 9), np.float32))
        with pytest.raises(InferenceServerException, match="largest bucket 8"):
            c.infer("seq", [i])
        st = srv.app.state.repository.get("seq").batcher.statistics()
        assert st.batch_size_histogram == {2: 3}
        c.close()


def test_unload_drains_queued_requests_and_refuses_new_ones():
    from aiond.serve.protocol import Unavailable, decode_request_object

    def req(v):
        return decode_request_object({"inputs": [{"name": "x", "datatype": "FP32",
                                                  "shape": [1, 2], "data": [v, v]}]})

    async def main():
        gate = asyncio.Event()
        ran = []

        async def model(x):
            await gate.wait()
            ran.append(x[:, 0].tolist())
            return x + 1
        r = ModelRepository()
        m = ServedModel("g", model, [("x", "FP32", [2])], [("y", "FP32", [2])],
                        max_batch_size=1, numpy_model=True, max_in_flight=1)
        r.add(m)
        calls = [asyncio.ensure_future(m.infer(req(v))) for v in (1.0, 2.0, 3.0)]
        await asyncio.sleep(0)
        unloading = asyncio.ensure_future(r.unload("g"))
        await asyncio.sleep(0)
        with pytest.raises(Unavailable, match="not loaded"):
            r.get("g")
        with pytest.raises(Unavailable, match="unloading"):
            await m.infer(req(4.0))          # a caller still holding the old model
        assert not unloading.done()
        gate.set()
        outs = await asyncio.gather(*calls)
        await unloading
        assert [o["y"].tolist() for o in outs] == [[[2.0, 2.0]], [[3.0, 3.0]], [[4.0, 4.0]]]
        assert ran == [[1.0], [2.0], [3.0]]
        assert r.index() == [{"name": "g", "state": "UNAVAILABLE", "reason": "unloaded"}]
        with pytest.raises(NotFound):
            await r.load("g")                # not a folder model: nothing to load
    from aiond.serve.protocol import NotFound
    asyncio.run(asyncio.wait_for(main(), TIMEOUT))
