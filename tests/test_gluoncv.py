"""GluonCV 0.10.5, a real library written for MXNet, on aiond through the
opt-in ``mxnet`` alias (installed into a temporary directory). Skipped when
gluoncv is not installed in this environment; the comparison with MXNet
itself also needs an MXNet 1.9.1 venv with gluoncv at .venvs/mxnet.

Each check runs in a subprocess so the alias never leaks into this one."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import aiond
from aiond import mxnet_alias

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(aiond.__file__)))
MXNET_PY = os.path.join(os.path.dirname(HERE), ".venvs", "mxnet", "bin", "python")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("gluoncv") is None,
                                 reason="gluoncv is not installed")]

# GluonCV 0.10.5 itself uses np.float (gone in numpy 1.24; MXNet 1.9.1 pins numpy<1.24)
OLD_NUMPY = tuple(int(v) for v in np.__version__.split(".")[:2]) < (1, 24)


@pytest.fixture(scope="module")
def alias_dir(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("mxnet_alias"))
    mxnet_alias.install(d)
    r = _run("import gluoncv; print('ok')", d)
    if r.returncode != 0:
        if "has no attribute 'operator'" in r.stderr:
            pytest.skip("gluoncv's import needs mx.operator (CustomOp), not in this aiond yet")
        pytest.fail("import gluoncv failed:\n" + r.stderr[-3000:])
    return d


def _run(code, alias, python=sys.executable, args=(), timeout=600):
    env = dict(os.environ)
    extra = [alias, ROOT] if alias else []
    env["PYTHONPATH"] = os.pathsep.join(extra + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([python, "-c", code] + list(args), env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=alias or None)


FORWARD = textwrap.dedent("""
    import json, sys, numpy as np
    import mxnet as mx
    import gluoncv
    from gluoncv import model_zoo
    assert mx.__version__ == "1.9.1"
    res = {}
    for name, size in json.loads(sys.argv[1]):
        kw = {} if name.startswith(("resnet", "mobilenet")) else {"pretrained_base": False}
        net = model_zoo.get_model(name, pretrained=False, **kw)
        net.initialize()
        x = mx.nd.array(np.random.RandomState(0).rand(1, 3, size, size).astype("float32"))
        o1 = net(x)
        o1 = [o.asnumpy() for o in (o1 if isinstance(o1, (list, tuple)) else [o1])]
        net.hybridize()
        o2 = net(x)
        o2 = [o.asnumpy() for o in (o2 if isinstance(o2, (list, tuple)) else [o2])]
        res[name] = {"shapes": [list(v.shape) for v in o1],
                     # relative to each output's scale: a hybridized graph runs
                     # oneDNN chains (other kernels, other rounding) and SSD's
                     # decoded boxes reach thousands, where a float32 ulp is 1e-4
                     "err": max(float(np.abs(a - b).max()) / max(1.0, float(np.abs(a).max()))
                                for a, b in zip(o1, o2)),
                     "finite": all(bool(np.isfinite(v).all()) for v in o1)}
    print(json.dumps(res))
""")


def test_gluoncv_models_build_and_run(alias_dir):
    models = [("resnet50_v1b", 224), ("mobilenet1.0", 224), ("ssd_300_vgg16_atrous_voc", 300),
              ("yolo3_mobilenet1.0_voc", 320), ("center_net_resnet18_v1b_voc", 224),
              ("fcn_resnet50_voc", 480)]
    if OLD_NUMPY:
        models.append(("faster_rcnn_resnet50_v1b_voc", 320))
    r = _run(FORWARD, alias_dir, args=[json.dumps(models)], timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    want = {"resnet50_v1b": [[1, 1000]], "mobilenet1.0": [[1, 1000]],
            "ssd_300_vgg16_atrous_voc": [[1, 100, 1], [1, 100, 1], [1, 100, 4]],
            "yolo3_mobilenet1.0_voc": [[1, 100, 1], [1, 100, 1], [1, 100, 4]],
            "center_net_resnet18_v1b_voc": [[1, 40], [1, 40], [1, 40, 4]],
            "fcn_resnet50_voc": [[1, 21, 480, 480], [1, 21, 480, 480]]}
    for name, shapes in want.items():
        assert res[name]["shapes"] == shapes, name
        assert res[name]["finite"], name
        assert res[name]["err"] <= 1e-5, (name, res[name]["err"])   # hybridized == imperative


MX_MAKE = textwrap.dedent("""
    import json, sys, numpy as np, mxnet as mx
    from gluoncv import model_zoo
    out = sys.argv[1]
    for name, size in json.loads(sys.argv[2]):
        kw = {} if name.startswith(("resnet", "mobilenet")) else {"pretrained_base": False}
        net = model_zoo.get_model(name, pretrained=False, **kw)
        x = mx.nd.array(np.random.RandomState(0).rand(1, 3, size, size).astype("float32"))
        net.initialize()
        net(x)
        rng = np.random.RandomState(1)
        # random but well-scaled parameters: the zoo's inits saturate these nets
        # (ties in topk/NMS would then make the comparison meaningless)
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
        o = net(x)
        o = o if isinstance(o, (list, tuple)) else [o]
        net.save_parameters("%s/%s.params" % (out, name))
        mx.nd.save("%s/%s.io.nd" % (out, name), dict(x=x, **{"y%d" % i: v for i, v in enumerate(o)}))
""")

AI_CHECK = textwrap.dedent("""
    import json, sys, numpy as np
    import mxnet as mx
    from gluoncv import model_zoo
    ref, res = sys.argv[1], {}
    for name, size in json.loads(sys.argv[2]):
        kw = {} if name.startswith(("resnet", "mobilenet")) else {"pretrained_base": False}
        net = model_zoo.get_model(name, pretrained=False, **kw)
        net.load_parameters("%s/%s.params" % (ref, name))
        io = mx.nd.load("%s/%s.io.nd" % (ref, name))
        errs = []
        for hybrid in (False, True):
            if hybrid:
                net.hybridize()
            o = net(io["x"])
            for i, v in enumerate(o if isinstance(o, (list, tuple)) else [o]):
                w = io["y%d" % i].asnumpy()
                errs.append(float(np.abs(v.asnumpy() - w).max() / (np.abs(w).max() + 1e-12)))
        res[name] = max(errs)
    print(json.dumps(res))
""")


@pytest.mark.skipif(not os.path.exists(MXNET_PY), reason="no MXNet 1.9.1 venv")
def test_mxnet_saved_gluoncv_weights_give_mxnet_outputs(alias_dir, tmp_path):
    """Parameters saved by MXNet 1.9.1 + GluonCV load in aiond, and the
    classifiers' and detectors' outputs (after NMS / top-k) match MXNet's."""
    chk = subprocess.run([MXNET_PY, "-c", "import gluoncv"], capture_output=True, text=True,
                         timeout=300)
    if chk.returncode != 0:
        pytest.skip("the MXNet venv has no working gluoncv")
    models = [("mobilenet0.25", 224), ("resnet18_v1b", 224), ("yolo3_mobilenet0.25_voc", 224),
              ("center_net_resnet18_v1b_voc", 224), ("ssd_300_vgg16_atrous_voc", 300)]
    r = subprocess.run([MXNET_PY, "-c", MX_MAKE, str(tmp_path), json.dumps(models)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    r = _run(AI_CHECK, alias_dir, args=[str(tmp_path), json.dumps(models)], timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    errs = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(errs) == {m for m, _ in models}
    for name, err in errs.items():
        assert err < 1e-5, (name, err)


TRAIN = textwrap.dedent("""
    import json, sys, numpy as np
    import mxnet as mx
    from mxnet import autograd, gluon
    from gluoncv import model_zoo, loss as gloss
    from gluoncv.data.transforms import presets
    from PIL import Image
    path = sys.argv[1]
    Image.fromarray((np.random.RandomState(0).rand(240, 320, 3) * 255).astype("uint8")).save(path)
    img = mx.image.imread(path)
    bbox = np.array([[10, 20, 200, 150, 3], [100, 50, 300, 230, 7]], dtype=np.float32)
    res = {}
    x, orig = presets.ssd.load_test(path, short=300)
    res["load_test"] = [list(x.shape), list(orig.shape)]
    mx.random.seed(0)
    # SSD: targets from the anchors, SSDMultiBoxLoss, SGD steps
    net = model_zoo.get_model("ssd_300_mobilenet0.25_voc", pretrained=False, pretrained_base=False)
    net.initialize()
    with autograd.train_mode():
        _, _, anchors = net(mx.nd.zeros((1, 3, 300, 300)))
    net.hybridize()
    x, cls_t, box_t = presets.ssd.SSDDefaultTrainTransform(300, 300, anchors)(img, bbox)
    x, cls_t, box_t = x.expand_dims(0), cls_t.expand_dims(0), box_t.expand_dims(0)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})
    lossfn, losses = gloss.SSDMultiBoxLoss(), []
    for _ in range(4):
        with autograd.record():
            cls_p, box_p, _ = net(x)
            total, _, _ = lossfn(cls_p, box_p, cls_t, box_t)
            autograd.backward(total)
        trainer.step(1)
        losses.append(float(total[0].asscalar()))
    res["ssd"] = losses
    # YOLOv3: the network computes its own losses from the transform's targets
    net = model_zoo.get_model("yolo3_mobilenet0.25_voc", pretrained=False, pretrained_base=False)
    net.initialize()
    t = presets.yolo.YOLO3DefaultTrainTransform(320, 320, net)
    net.hybridize()
    out = [o.expand_dims(0) for o in t(img, bbox)]
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.001, "momentum": 0.9})
    losses = []
    for _ in range(3):
        with autograd.record():
            parts = net(out[0], out[6], *out[1:6])
            total = parts[0] + parts[1] + parts[2] + parts[3]
            autograd.backward(total)
        trainer.step(1)
        losses.append(float(total.asnumpy().sum()))
    res["yolo"] = losses
    print(json.dumps(res))
""")


def test_gluoncv_presets_and_training_steps(alias_dir, tmp_path):
    """GluonCV's test presets and training transforms (box_iou,
    bipartite_matching, box_encode on the anchors), its SSD loss and YOLOv3's
    own losses, backward through the detectors, and SGD steps that lower the
    loss."""
    pytest.importorskip("PIL")
    r = _run(TRAIN, alias_dir, args=[str(tmp_path / "img.jpg")], timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["load_test"] == [[1, 3, 300, 400], [300, 400, 3]]
    for name in ("ssd", "yolo"):
        losses = res[name]
        assert all(np.isfinite(losses)), (name, losses)
        assert losses[-1] < losses[0], (name, losses)
