"""One model, described the same way (input and output names, datatypes,
shapes on /v2) whether it is served by create_app, by the command line or
from a repository folder without an "outputs" config."""
import json
import os
import shutil

import pytest

import aiond as mx

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from aiond.serve import __main__ as cli  # noqa: E402
from aiond.serve import load_model  # noqa: E402
from aiond.serve.http import create_app  # noqa: E402
from aiond.serve.repository import load_served  # noqa: E402


@pytest.fixture
def exported(tmp_path):
    from aiond.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Dense(16, in_units=784, activation="relu"), nn.Dense(10, in_units=16))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.zeros((1, 784)))
    prefix = str(tmp_path / "m")
    net.export(prefix)
    return prefix


def _cli_app(monkeypatch, argv):
    seen = {}
    monkeypatch.setattr(cli, "_listen", lambda app, args, log, what: seen.setdefault("app", app))
    cli.main(argv)
    return seen["app"]


def _meta(app, name):
    return app.state.repository.get(name).metadata()


def test_create_app_and_the_cli_describe_the_model_alike(monkeypatch, exported):
    prefix = exported
    model = load_model(prefix + "-symbol.json", prefix + "-0000.params")
    by_app = _meta(create_app(model, sample_shape=(784,), name="m"), "m")
    by_cli = _meta(_cli_app(monkeypatch, ["--symbol", prefix + "-symbol.json", "--params",
                                          prefix + "-0000.params", "--input-shape", "1,784",
                                          "--workers", "1"]), "m")
    graph_out = mx.sym.load(prefix + "-symbol.json").list_outputs()
    assert by_app == by_cli
    assert by_app["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 784]}]
    assert by_app["outputs"] == [{"name": graph_out[0], "datatype": "FP32",
                                  "shape": [-1, 10]}]
    # and as a repository model without an "outputs" config
    d = os.path.join(os.path.dirname(prefix), "repo", "m")
    os.makedirs(d)
    for f in ("m-symbol.json", "m-0000.params"):
        shutil.copy(os.path.join(os.path.dirname(prefix), f), d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"max_batch_size": 32,
                   "inputs": [{"name": "data", "datatype": "FP32", "shape": [784]}]}, f)
    (served,) = load_served(d)
    meta = served.metadata()
    assert meta["inputs"] == by_app["inputs"] and meta["outputs"] == by_app["outputs"]


def test_variable_axes_are_described_as_any_length(monkeypatch, tmp_path):
    x = mx.sym.var("tokens")
    (2 * mx.sym.relu(x, name="act")).save(str(tmp_path / "seq-symbol.json"))
    mx.nd.save(str(tmp_path / "seq-0000.params"), {})
    model = load_model(str(tmp_path / "seq-symbol.json"), str(tmp_path / "seq-0000.params"))
    by_app = _meta(create_app(model, sample_shape=(None,), name="seq"), "seq")
    by_cli = _meta(_cli_app(monkeypatch, ["--symbol", str(tmp_path / "seq-symbol.json"),
                                          "--params", str(tmp_path / "seq-0000.params"),
                                          "--input-shape", "1,-1", "--workers", "1"]), "seq")
    assert by_app == by_cli
    assert by_app["inputs"] == [{"name": "tokens", "datatype": "FP32", "shape": [-1, -1]}]
    assert by_app["outputs"][0]["shape"] == [-1, -1]


def test_a_plain_callable_is_described_after_its_first_answer():
    app = create_app(lambda x: x * 2, sample_shape=(3,), name="f")
    assert _meta(app, "f")["outputs"][0]["name"] == "output0"
