"""GluonCV's classifiers, detectors and segmenters through ONNX and back:
for each model that aiond runs (``pretrained=False``, random weights from a
fixed seed), hybridize, ``HybridBlock.export``, ``mx.onnx.export_model``,
``onnx.checker.check_model(full_check=True)``, run the file in onnxruntime and
compare with aiond's outputs, then ``mx.contrib.onnx.import_to_gluon`` the file
and compare again. One JSON line per model: ``ok``, or the stage that failed
(``build``, ``forward``, ``export``, ``check``, ``ort``, ``ort_compare``,
``import``, ``import_compare``) and why.

    PYTHONPATH=<checkout> python tools/onnx_gluoncv.py [--set classifiers|detectors|segmenters|all]
        [--models NAME[:SIZE],...] [--opset N] [--timeout S] [--quick]

Needs gluoncv 0.10.5 (``pip install --no-deps gluoncv==0.10.5 tqdm portalocker``),
numpy < 1.24 (GluonCV uses ``np.float``), onnx and onnxruntime. GluonCV imports
``mxnet``: the alias package of ``aiond.mxnet_alias`` is installed into a
temporary directory and each model runs in a child process with it on the path
(a crash or a hang costs that model, not the run).

Comparison: float32 outputs must satisfy ``|got - want| <= ATOL + RTOL * |want|``
with RTOL = 1e-4 and ATOL = 1e-5 * max|want| of that output (a tolerance on the
output's own scale: logits, scores and pixel boxes differ by orders of
magnitude); integer-valued outputs (class ids) are compared the same way.
A detector's (ids, scores, boxes) that differ only in the order of rows of
equal score pass, marked ``ort_tie_order`` (box_nms leaves that order open).
The weights are replaced by well-scaled random ones (as tests/test_gluoncv.py
does) because the zoo's initialisers saturate deep nets, and ties among
saturated scores would make top-k / NMS outputs depend on rounding.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

RTOL = 1e-4
ATOL_SCALE = 1e-5

CLASSIFIERS = [
    ("resnet18_v1b", 224), ("resnet50_v1b", 224), ("resnet50_v1d", 224),
    ("resnext50_32x4d", 224), ("se_resnext50_32x4d", 224), ("se_resnet18_v1", 224),
    ("se_resnet50_v2", 224), ("resnest50", 224), ("mobilenet1.0", 224),
    ("mobilenetv2_1.0", 224), ("mobilenetv3_large", 224), ("mobilenetv3_small", 224),
    ("vgg16", 224), ("vgg16_bn", 224), ("alexnet", 224), ("densenet121", 224),
    ("squeezenet1.0", 224), ("squeezenet1.1", 224), ("inceptionv3", 299), ("googlenet", 224),
    ("xception", 299), ("darknet53", 224), ("cifar_resnet20_v1", 32),
    ("cifar_wideresnet16_10", 32), ("hrnet_w18_small_v1_c", 224),
]
DETECTORS = [
    ("ssd_300_vgg16_atrous_voc", 300), ("ssd_512_resnet50_v1_voc", 512),
    ("ssd_512_mobilenet1.0_voc", 512), ("yolo3_darknet53_voc", 320),
    ("yolo3_mobilenet1.0_voc", 320), ("center_net_resnet18_v1b_voc", 224),
    ("faster_rcnn_resnet50_v1b_voc", 320),
]
SEGMENTERS = [("fcn_resnet50_voc", 240), ("psp_resnet50_ade", 240), ("deeplab_resnet50_ade", 240)]
QUICK = [("resnet18_v1b", 224), ("mobilenetv3_small", 224), ("ssd_300_vgg16_atrous_voc", 300),
         ("fcn_resnet50_voc", 240)]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _kwargs(name, size):
    if name.startswith(("fcn_", "psp_", "deeplab_")):
        return {"pretrained_base": False, "crop_size": size, "base_size": size}
    if any(name.startswith(p) for p in ("ssd_", "yolo3_", "faster_rcnn_", "center_net_")):
        return {"pretrained_base": False}
    return {}


def _outs(o):
    return [v.asnumpy() for v in (o if isinstance(o, (list, tuple)) else [o])]


def _compare(got, want):
    """(ok, worst relative error, atol used per output) of two output lists."""
    import numpy as np
    if len(got) != len(want):
        return False, None, "%d outputs, expected %d" % (len(got), len(want))
    worst, ok, atols = 0.0, True, []
    for g, w in zip(got, want):
        g = np.asarray(g).reshape(np.shape(w)) if np.size(g) == np.size(w) else np.asarray(g)
        if g.shape != w.shape:
            return False, None, "output shape %s, expected %s" % (g.shape, w.shape)
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        scale = float(np.abs(w64).max()) if w64.size else 0.0
        atol = ATOL_SCALE * scale
        atols.append(atol)
        err = np.abs(g64 - w64)
        ok &= bool(np.all(err <= atol + RTOL * np.abs(w64)))
        worst = max(worst, float(err.max() / scale) if w64.size and scale else float(err.max(initial=0)))
    return ok, worst, atols


def _detections_sorted(outs):
    """(ids, scores, boxes) of a detector with their rows in one canonical
    order: by score, then id and box. Rows of equal score have no defined order
    (MXNet's box_nms keeps them in input order, onnxruntime's NMS need not)."""
    import numpy as np
    ids, scores, boxes = [np.asarray(o, np.float64) for o in outs]
    rows = np.concatenate([np.round(scores, 5), ids, boxes], axis=-1)[0]
    order = np.lexsort(rows.T[::-1])
    return [o[:, order] for o in (ids, scores, boxes)]


def _compare_detections(got, want):
    """_compare, and where that fails for a detector's three outputs, _compare
    of the rows in canonical order: (ok, err, atols, whether ties were reordered)."""
    ok, err, atols = _compare(got, want)
    if ok or len(want) != 3 or [w.shape[-1] for w in want] != [1, 1, 4]:
        return ok, err, atols, False
    ok2, err2, atols2 = _compare(_detections_sorted(got), _detections_sorted(want))
    return (True, err2, atols2, True) if ok2 else (ok, err, atols, False)


def run_one(name, size, opset, workdir):
    import numpy as np
    import mxnet as mx
    from gluoncv import model_zoo
    import onnx
    import onnxruntime as ort

    res = {"model": name, "size": size, "ok": False}
    stage = "build"
    t0 = time.time()
    try:
        mx.random.seed(0)
        net = model_zoo.get_model(name, pretrained=False, **_kwargs(name, size))
        net.initialize()
        x = mx.nd.array(np.random.RandomState(0).rand(1, 3, size, size).astype("float32"))
        stage = "forward"
        net(x)
        rng = np.random.RandomState(1)
        for pname, p in sorted(net.collect_params().items()):
            s = p.shape
            if pname.endswith("running_var"):
                v = 1.0 + 0.2 * rng.rand(*s)
            elif pname.endswith("gamma"):
                v = 1.0 + 0.1 * rng.randn(*s)
            elif pname.endswith(("beta", "bias", "running_mean")) or len(s) < 2:
                v = 0.1 * rng.randn(*s)
            else:
                v = rng.randn(*s) * np.sqrt(1.0 / max(int(np.prod(s[1:])), 1))
            p.set_data(mx.nd.array(v.astype(p.dtype)))
        net.hybridize()
        want = _outs(net(x))
        res["outputs"] = [list(w.shape) for w in want]
        stage = "export"
        prefix = os.path.join(workdir, name)
        net.export(prefix)
        path = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                    [x.shape], [np.float32], prefix + ".onnx",
                                    opset_version=opset)
        model = onnx.load(path)
        res["onnx_nodes"] = len(model.graph.node)
        res["opset"] = model.opset_import[0].version
        stage = "check"
        onnx.checker.check_model(model, full_check=True)
        stage = "ort"
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = sess.run(None, {sess.get_inputs()[0].name: x.asnumpy()})
        stage = "ort_compare"
        ok, err, atols, ties = _compare_detections(got, want)
        if ties:
            res["ort_tie_order"] = True
        res["ort_err"] = err
        res["atol"] = atols
        if not ok:
            raise AssertionError("onnxruntime differs from aiond: max |diff|/max|out| = %s (%s)"
                                 % (err, atols))
        stage = "import"
        back = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
        got = _outs(back(x))
        stage = "import_compare"
        ok, err, atols, ties = _compare_detections(got, want)
        if ties:
            res["import_tie_order"] = True
        res["import_err"] = err
        if not ok:
            raise AssertionError("the imported model differs from aiond: max |diff|/max|out| = "
                                 "%s (%s)" % (err, atols))
        res["ok"] = True
    except Exception as e:  # noqa: BLE001 - the report says which stage and why
        res["stage"] = stage
        res["error"] = ("%s: %s" % (type(e).__name__, e))[:600]
    res["seconds"] = round(time.time() - t0, 1)
    return res


def _parse_models(spec):
    out = []
    for item in spec.split(","):
        name, _, size = item.partition(":")
        known = dict(CLASSIFIERS + DETECTORS + SEGMENTERS)
        out.append((name, int(size) if size else known.get(name, 224)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="all",
                    choices=["classifiers", "detectors", "segmenters", "all"])
    ap.add_argument("--models", help="NAME[:SIZE],... instead of --set")
    ap.add_argument("--quick", action="store_true", help="a few models of each kind")
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per model")
    ap.add_argument("--child", nargs=2, metavar=("NAME", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        with tempfile.TemporaryDirectory() as d:
            print(json.dumps(run_one(args.child[0], int(args.child[1]), args.opset, d)))
        return 0

    if args.models:
        models = _parse_models(args.models)
    elif args.quick:
        models = QUICK
    else:
        models = {"classifiers": CLASSIFIERS, "detectors": DETECTORS, "segmenters": SEGMENTERS,
                  "all": CLASSIFIERS + DETECTORS + SEGMENTERS}[args.set]
    import aiond
    from aiond import mxnet_alias
    root = os.path.dirname(os.path.dirname(os.path.abspath(aiond.__file__)))
    failed = 0
    with tempfile.TemporaryDirectory() as alias:
        mxnet_alias.install(alias)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([alias, root] + [p for p in [env.get("PYTHONPATH")] if p])
        for name, size in models:
            cmd = [sys.executable, os.path.abspath(__file__), "--opset", str(args.opset),
                   "--child", name, str(size)]
            try:
                r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=alias,
                                   timeout=args.timeout)
                lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
                if r.returncode == 0 and lines:
                    res = json.loads(lines[-1])
                else:
                    res = {"model": name, "size": size, "ok": False, "stage": "process",
                           "error": "exit %d: %s" % (r.returncode, r.stderr[-600:])}
            except subprocess.TimeoutExpired:
                res = {"model": name, "size": size, "ok": False, "stage": "process",
                       "error": "no result in %d s" % args.timeout}
            failed += not res["ok"]
            print(json.dumps(res), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
