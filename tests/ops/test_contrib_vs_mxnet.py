"""The vision ops against MXNet 1.9.1 itself (skipped without the MXNet venv
at .venvs/mxnet): box_nms (ties included), box_iou, bipartite_matching,
box_decode, BilinearResize2D, AdaptiveAvgPooling2D, ROIAlign, arange_like,
SyncBatchNorm (outputs, gradient, moving statistics), mx.image resizing and
borders, mx.nd.image. The inputs and calls are in contrib_cases.py."""
import os
import subprocess

import numpy as np
import pytest

import aiond as mx

from . import contrib_cases

HERE = os.path.dirname(os.path.abspath(__file__))
MXNET_PY = os.path.join(os.path.dirname(os.path.dirname(HERE)), ".venvs", "mxnet", "bin",
                        "python")

# OpenCV resizes uint8 images in fixed point: one grey level apart at most
UINT8_RESIZE = {"rs_lin", "rs_cub", "rs_area_up", "rs_lanc", "img_resize"}
FLOAT_RESIZE = {"rs_float", "rs_float_cub"}

pytestmark = pytest.mark.skipif(not os.path.exists(MXNET_PY), reason="no MXNet 1.9.1 venv")


@pytest.fixture(scope="module")
def mxnet_results(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("mxref") / "ref.npz")
    code = ("import sys, numpy as np, mxnet as mx; sys.path.insert(0, sys.argv[1]); "
            "import contrib_cases; "
            "np.savez(sys.argv[2], **{k: f().asnumpy() for k, f in "
            "contrib_cases.cases(mx).items()})")
    r = subprocess.run([MXNET_PY, "-c", code, HERE, out], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return np.load(out)


def test_ops_match_mxnet(mxnet_results):
    ours = {k: f().asnumpy() for k, f in contrib_cases.cases(mx).items()}
    assert set(ours) == set(mxnet_results.files)
    for k, a in ours.items():
        b = mxnet_results[k]
        assert a.shape == b.shape and a.dtype == b.dtype, (k, a.shape, b.shape, a.dtype, b.dtype)
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        if k in UINT8_RESIZE:
            assert d.max() <= 1 and (d > 0).mean() < 0.2, (k, d.max(), (d > 0).mean())
        elif k in FLOAT_RESIZE:
            assert d.max() < 1e-3, (k, d.max())
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=k)
