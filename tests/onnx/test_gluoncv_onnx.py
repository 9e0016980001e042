"""GluonCV 0.10.5 models (a classifier, a detector, a segmenter) through ONNX
and back with tools/onnx_gluoncv.py: export, onnx.checker (full_check),
onnxruntime against aiond's outputs, import_to_gluon against them again.
Slow; skipped when gluoncv is not installed (tests/test_gluoncv.py runs the
same models without ONNX). The whole zoo: ``python tools/onnx_gluoncv.py``."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("gluoncv") is None,
                                 reason="gluoncv is not installed")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "onnx_gluoncv.py")
MODELS = ["resnet18_v1b", "mobilenetv3_small", "center_net_resnet18_v1b_voc",
          "fcn_resnet50_voc", "yolo3_mobilenet1.0_voc"]


@pytest.mark.timeout(1800)
def test_gluoncv_models_round_trip_through_onnx():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, TOOL, "--models", ",".join(MODELS), "--timeout", "900"],
                       env=env, capture_output=True, text=True, timeout=1700)
    res = {d["model"]: d for d in map(json.loads, r.stdout.strip().splitlines())}
    assert set(res) == set(MODELS), r.stderr[-3000:]
    for name, d in res.items():
        # the YOLOv3's box_nms goes out as NonMaxSuppression and comes back in
        assert d["ok"], (name, d.get("stage"), d.get("error"))
        assert d["import_err"] <= 1e-4, d
        assert d["ort_err"] <= 1e-4, d
    assert res["yolo3_mobilenet1.0_voc"]["outputs"] == [[1, 100, 1], [1, 100, 1], [1, 100, 4]]
    assert res["fcn_resnet50_voc"]["outputs"][0] == [1, 21, 240, 240]
