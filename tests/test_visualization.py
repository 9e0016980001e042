"""mx.viz against MXNet 1.9.1: print_summary's table line by line and what
plot_network draws, with a stand-in ``graphviz`` module so the tests run
where graphviz is not installed (it is an optional dependency).

tests/data/module/viz_expected.json was written by make_fixtures.py in the
MXNet venv (summary lines right-stripped; the padding is checked here).
"""
import contextlib
import io
import json
import os
import sys
import types

import numpy as np
import pytest

import aiond as mx

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "module")
sys.path.insert(0, DATA)
import problem  # noqa: E402

with open(os.path.join(DATA, "viz_expected.json")) as _f:
    EXPECTED = json.load(_f)


def _summary(net, **kw):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mx.viz.print_summary(net, **kw)
    return buf.getvalue().splitlines()


@pytest.mark.parametrize("name,key", [("mlp", "shape"), ("mlp", "noshape"), ("mlp", "narrow"),
                                      ("conv", "shape"), ("emb", "shape")])
def test_print_summary_is_mxnets_table(name, key):
    net, shape = {n: (s, sh) for n, s, sh in problem.viz_nets(mx)}[name]
    kw = {"shape": shape} if key == "shape" else {} if key == "noshape" else \
        {"shape": shape, "line_length": 80, "positions": [30, 50, 60, 80]}
    lines = _summary(net, **kw)
    assert [l.rstrip() for l in lines] == EXPECTED["summary_%s_%s" % (name, key)]
    width = kw.get("line_length", 120)
    assert all(len(l) == width for l in lines if not l.startswith("Total params"))


def test_print_summary_totals_and_errors():
    net = problem.viz_nets(mx)[0][1]
    lines = _summary(net, shape={"data": (32, 100)})
    assert "Total params: 21770" in lines      # 100*128+128 + 128*64 + 64*10+10
    with pytest.raises(TypeError, match="symbol must be Symbol"):
        mx.viz.print_summary("not a symbol")


@pytest.fixture
def fake_graphviz(monkeypatch):
    fake = problem.FakeGraphviz()
    mod = types.ModuleType("graphviz")
    mod.Digraph = fake.Digraph
    monkeypatch.setitem(sys.modules, "graphviz", mod)
    return fake


def test_plot_network_draws_what_mxnet_draws(fake_graphviz):
    nets = {n: (s, sh) for n, s, sh in problem.viz_nets(mx)}
    dot = mx.viz.plot_network(nets["mlp"][0], shape=nets["mlp"][1], dtype={"data": np.float32})
    assert isinstance(dot, fake_graphviz.Digraph)
    mx.viz.plot_network(nets["conv"][0], title="conv", save_format="png", shape=nets["conv"][1])
    mx.viz.plot_network(nets["emb"][0], hide_weights=False,
                        node_attrs={"shape": "oval", "fixedsize": "false"})
    got = json.loads(json.dumps(fake_graphviz.calls))    # tuples -> lists, as stored
    assert got == EXPECTED["plot_calls"]


def test_plot_network_without_graphviz_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)    # import graphviz -> ImportError
    net = problem.viz_nets(mx)[0][1]
    with pytest.raises(ImportError, match="pip install graphviz"):
        mx.viz.plot_network(net)


def test_plot_network_warns_on_repeated_names(fake_graphviz):
    a = mx.sym.Variable("x")
    b = mx.sym.Variable("x")
    with pytest.warns(RuntimeWarning, match="Repeated names: x"):
        mx.viz.plot_network(a + b)
