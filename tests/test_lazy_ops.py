"""Op modules load on first use (aiond/ops/_lazy.py, the generated
aiond/ops/_index.py): the index must match the modules, and mx.nd / mx.sym
must look as they did when every function was made at import."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_index_is_up_to_date():
    # a module added to aiond.ops.MODULES, or an op added to a module, needs
    # `python tools/gen_op_index.py`
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_op_index.py"), "--check"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_index_lists_every_registered_op_under_its_module():
    got = _run("""
import json, aiond
from aiond.ops import _lazy, registry
names = _lazy.names()
ops = registry.ops()                    # loads every module
print(json.dumps([sorted(names), sorted(ops)]))
""")
    assert got[0] == got[1]


def test_import_and_one_op_load_only_what_they_use():
    got = _run("""
import json, sys
import aiond as mx
a = mx.nd.ones((4,))
v = (a + a).asnumpy().tolist()
before = sorted(m for m in sys.modules if m.startswith("aiond.ops.") or m.startswith("aiond.symbol")
                or m.startswith("aiond.gluon"))
mx.nd.Convolution                       # first lookup loads the conv module
print(json.dumps([v, before, "aiond.ops.conv" in sys.modules]))
""")
    v, before, conv_after = got
    assert v == [2.0] * 4
    for heavy in ("aiond.ops.conv", "aiond.ops.fc", "aiond.ops.softmax", "aiond.ops.linalg",
                  "aiond.ops.sparse", "aiond.ops.contrib_bbox", "aiond.symbol", "aiond.gluon"):
        assert heavy not in before
    assert conv_after


def test_namespaces_see_every_op_before_it_is_loaded():
    got = _run("""
import json, sys
import aiond as mx
listed = "Convolution" in dir(mx.nd) and "_contrib_box_nms" in dir(mx.nd._internal)
loaded = "aiond.ops.conv" in sys.modules or "aiond.ops.contrib_bbox" in sys.modules
star = {}
exec("from aiond.ndarray import *", star)
print(json.dumps([listed, loaded, hasattr(mx.nd, "Convolution"), hasattr(mx.nd, "no_such_op"),
                  "Convolution" in star, "NDArray" in star, "contrib" in star,
                  "box_nms" in dir(mx.nd.contrib), "to_tensor" in dir(mx.nd.image),
                  "retain" in dir(mx.nd.sparse), "FullyConnected" in dir(mx.sym),
                  "gemm2" in dir(mx.sym.linalg), "normal_like" in dir(mx.sym.random)]))
""")
    listed, loaded, *rest = got
    assert listed and not loaded
    assert rest == [True, False, True, True, True, True, True, True, True, True, True]


def test_lazily_made_functions_work():
    import numpy as np
    import aiond as mx
    x = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert mx.nd.sum(x).asscalar() == 15.0
    assert x.sum(axis=1).asnumpy().tolist() == [3.0, 12.0]     # fluent method, made on first call
    assert mx.nd._internal._plus_scalar(x, scalar=1.0).asnumpy()[1, 2] == 6.0
    boxes = mx.nd.array([[0, 0, 2, 2], [1, 1, 3, 3]])
    assert mx.nd.contrib.box_iou(boxes, boxes).asnumpy()[0, 1] == pytest.approx(1 / 7)
    s = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc")
    assert s.list_arguments() == ["data", "fc_weight", "fc_bias"]
    assert mx.sym._internal._Plus.__name__ == "_Plus"


def test_unknown_names_raise_attribute_error_naming_them():
    import aiond as mx
    with pytest.raises(AttributeError, match="no_such_op"):
        mx.nd.no_such_op
    with pytest.raises(AttributeError, match="no_such_op"):
        mx.nd._internal._no_such_op
    with pytest.raises(AttributeError, match="no_such_op"):
        mx.sym.no_such_op
    from aiond.base import MXNetError
    from aiond.ops import registry
    with pytest.raises(MXNetError, match="'no_such_op' is not registered"):
        registry.get("no_such_op")


def test_a_stale_index_loads_everything_rather_than_missing_an_op():
    got = _run("""
import json
import aiond
from aiond.ops import _lazy, registry
index, fresh = _lazy._index()
# as if BilinearSampler's module had been added without regenerating the index
_lazy._state["index"] = ({k: v for k, v in index.items() if k != "BilinearSampler"}, False)
op = registry.get("BilinearSampler")
print(json.dumps([fresh, op.name, _lazy._state["all"]]))
""")
    assert got == [True, "BilinearSampler", True]
