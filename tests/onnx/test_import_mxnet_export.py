"""Files written by real MXNet 1.9.1's ``mx.onnx.export_model`` at test time
(model-zoo CNNs at opset 19 as MXNet 1.9.1 writes them beside onnx 1.14, and
at opsets 12 and 13 as beside the onnx of its day; an attention block with
LayerNorm): aiond imports each (``import_model`` bound, and
``import_to_gluon``) and gives MXNet's outputs. Needs
$AIOND_MXNET_ONNX_PYTHON or .venvs/mxonnx/bin/python in the checkout, a Python
with mxnet 1.9.1 and onnx (e.g. a venv made with
``pip install mxnet==1.9.1 "numpy<1.24" onnx==1.14.1``); skipped without.
The two small files of data/ cover the same path without that Python."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from onnx_cases import aiond_run, gluon_run, ort_run  # noqa: E402

LOCAL_PY = os.path.join(os.path.dirname(os.path.dirname(HERE)), ".venvs", "mxonnx", "bin",
                        "python")
MODELS = ["resnet18_v1", "resnet18_v2", "mobilenet0.25", "mobilenetv2_0.25", "squeezenet1.1",
          "encoder"]
# not "lstm" (mxnet_export_models.py has it): MXNet 1.9.1's RNN export runs in
# no ONNX runtime (a Reshape of its zero initial state to (1, 96) fails, as
# MXNet's own RNN export tests fail on MXNet)


@pytest.fixture(scope="module")
def mx_dir(tmp_path_factory):
    py = os.environ.get("AIOND_MXNET_ONNX_PYTHON") or LOCAL_PY
    if not os.path.exists(py):
        pytest.skip("no Python with mxnet 1.9.1 and onnx: set $AIOND_MXNET_ONNX_PYTHON or "
                    "make .venvs/mxonnx")
    out = str(tmp_path_factory.mktemp("mxnet_onnx"))
    r = subprocess.run([py, os.path.join(HERE, "mxnet_export_models.py"), out] + MODELS,
                       capture_output=True, text=True, timeout=900, cwd=out)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.mark.parametrize("name", MODELS)
def test_real_mxnet_export_imports_with_mxnet_outputs(mx_dir, name):
    base = os.path.join(mx_dir, name)
    x = np.load(base + ".in.npy")
    want = list(np.load(base + ".out.npz").values())
    model = onnx.load(base + ".onnx")
    feed = {model.graph.input[0].name: x}
    # the file itself is sound: onnxruntime gives MXNet's outputs too
    for r, w in zip(ort_run(model, feed), want):
        np.testing.assert_allclose(r, w, rtol=1e-4, atol=1e-5)
    for got in (aiond_run(model, feed), gluon_run(model, feed)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
