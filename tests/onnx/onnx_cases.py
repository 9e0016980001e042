"""Helpers for the ONNX import tests: build a model with onnx.helper, run it
in onnxruntime, import it into aiond and compare."""
from __future__ import annotations

import numpy as np

import aiond as mx

F32 = 1     # TensorProto.FLOAT
I64 = 7     # TensorProto.INT64


def make(nodes, inputs, outputs, inits=(), opset=17):
    """A ModelProto. ``inputs``: [(name, shape)] or [(name, shape, elem type)];
    ``outputs`` likewise (shape may be None); ``inits``: [(name, array)]."""
    from onnx import helper, numpy_helper

    def vi(t):
        name, shape = t[0], t[1]
        return helper.make_tensor_value_info(name, t[2] if len(t) > 2 else F32, shape)
    g = helper.make_graph(nodes, "test", [vi(t) for t in inputs], [vi(t) for t in outputs],
                          initializer=[numpy_helper.from_array(np.asarray(v), n)
                                       for n, v in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def ort_run(model, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def aiond_run(model, feeds):
    """Outputs of ``import_model`` bound and run forward."""
    sym, args, aux = mx.contrib.onnx.import_model(model.SerializeToString())
    names = sym.list_arguments()
    binds = {k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items() if k in names}
    binds.update(args)
    ex = sym.bind(mx.cpu(), binds, aux_states=aux, grad_req="null")
    return [o.asnumpy() for o in ex.forward(is_train=False)]


def gluon_run(model, feeds):
    net = mx.contrib.onnx.import_to_gluon(model.SerializeToString(), ctx=mx.cpu())
    used = [i.name for i in model.graph.input if i.name in feeds]
    args = net._cached_graph[1].list_arguments() if getattr(net, "_cached_graph", None) \
        else None
    del args
    out = net(*[mx.nd.array(feeds[n], dtype=feeds[n].dtype) for n in used])
    out = out if isinstance(out, (list, tuple)) else [out]
    return [o.asnumpy() for o in out]


def check(model, feeds, rtol=1e-4, atol=1e-5, gluon=True):
    ref = ort_run(model, feeds)
    for got in [aiond_run(model, feeds)] + ([gluon_run(model, feeds)] if gluon else []):
        assert len(got) == len(ref)
        for r, g in zip(ref, got):
            r = np.asarray(r)
            assert r.shape == g.shape, (r.shape, g.shape)
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64),
                                       rtol=rtol, atol=atol)
    return ref


def torch_exports(tmp_path_factory, script):
    """A folder of PyTorch ONNX exports made by ``script`` (a module beside
    this file with ``main(out_dir)``): in this Python if it has torch, else
    with $AIOND_TORCH_PYTHON (a Python that has it); skips without either."""
    import importlib
    import os
    import subprocess
    import pytest
    here = os.path.dirname(os.path.abspath(__file__))
    out = str(tmp_path_factory.mktemp(script))
    try:
        import torch  # noqa: F401
    except ImportError:
        py = os.environ.get("AIOND_TORCH_PYTHON")
        if not py:
            pytest.skip("torch is not importable here and $AIOND_TORCH_PYTHON is not set")
        r = subprocess.run([py, os.path.join(here, script + ".py"), out], capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        return out
    importlib.import_module(script).main(out)
    return out
