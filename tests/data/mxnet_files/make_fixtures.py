"""Write the NDArray-file fixtures of this folder with the REAL MXNet 1.9.1.

    .venvs/mxnet/bin/python tests/data/mxnet_files/make_fixtures.py [OUT_DIR]

Importing this module needs only numpy: ``expected()`` is the single source of the
values, shared by tests/ndarray/test_io.py and check_aiond_files.py.
"""
from __future__ import annotations

import os
import struct
import sys

import numpy as np

DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]
# saved by MXNet inside ``with mx.np_shape(True)`` (V3 magic); aiond writes the same
NP_SHAPE_FILES = {"npshape.nd"}
# written by MXNet only: aiond never writes these layouts with its default settings
MXNET_ONLY = {"sparse_rsp.nd", "sparse_csr.nd", "scalar_legacy.nd", "legacy_v0.nd",
              "legacy_v1.nd"}


def ramp(shape, dtype):
    """Deterministic values: 0, 1, 2... shifted/scaled so every dtype is exercised."""
    n = int(np.prod(shape))
    base = np.arange(n, dtype=np.float64).reshape(shape)
    if dtype == "bool":
        return (base % 3 == 0)
    if dtype in ("float32", "float64", "float16"):
        return (base * 0.5 - 2.0).astype(dtype)
    if dtype == "int8":
        return (base - 6).astype(dtype)
    if dtype in ("int32", "int64"):
        return (base * 1000003 - 7).astype(dtype)
    return base.astype(dtype)


def seeded(shape, seed):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape).astype("float32")


def expected():
    """file name -> list of numpy arrays, or dict name -> numpy array (insertion order)."""
    out = {
        "list.nd": [ramp((2, 3), "float32"), ramp((4,), "int32"), ramp((2, 2), "float64")],
        "dict.params": {"arg:fc1_weight": seeded((4, 3), 0), "arg:fc1_bias": seeded((4,), 1),
                        "aux:bn_moving_mean": seeded((3,), 2),
                        "aux:bn_moving_var": np.ones(3, "float32")},
        "empty.nd": [np.zeros((0,), "float32"), np.zeros((2, 0), "int64")],
        "one.nd": [np.array([42.0], "float32")],
        "3d.nd": [ramp((2, 3, 4), "float32")],
        "empty_list.nd": [],
        "npshape.nd": [np.array(5.0, "float32"), np.zeros((0,), "float32"),
                       ramp((2,), "int64")],
        "scalar_legacy.nd": [np.array(5.0, "float32")],
        "legacy_v0.nd": [ramp((2, 3), "float32")],
        "legacy_v1.nd": [ramp((2, 3), "int32")],
    }
    for dt in DTYPES:
        out[f"dtype_{dt}.nd"] = [ramp((3, 4), dt)]
    rsp = np.zeros((5, 3), "float32")
    rsp[[1, 3]] = np.arange(6, dtype="float32").reshape(2, 3)
    out["sparse_rsp.nd"] = {"rsp": rsp}
    out["sparse_csr.nd"] = [np.array([[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 0]], "float32")]
    return out


def legacy_bytes(version, arr):
    """Pre-1.0 layouts MXNet 1.9.1 still reads: V1 (magic, i64 dims) or V0 (u32 dims)."""
    flag = {"float32": 0, "int32": 4}[str(arr.dtype)]
    if version == 1:
        head = struct.pack(f"<Ii{arr.ndim}q", 0xF993FAC8, arr.ndim, *arr.shape)
    else:
        head = struct.pack(f"<I{arr.ndim}I", arr.ndim, *arr.shape)
    return (struct.pack("<QQQ", 0x112, 0, 1) + head + struct.pack("<iii", 1, 0, flag)
            + arr.astype(arr.dtype.newbyteorder("<")).tobytes() + struct.pack("<Q", 0))


def main(out_dir):
    import mxnet as mx
    assert mx.__version__ == "1.9.1", mx.__version__
    for name, value in expected().items():
        path = os.path.join(out_dir, name)
        if name.startswith("legacy_v"):
            with open(path, "wb") as f:
                f.write(legacy_bytes(int(name[8]), value[0]))
        elif name == "sparse_rsp.nd":
            mx.nd.save(path, {"rsp": mx.nd.sparse.row_sparse_array(
                (np.arange(6, dtype="float32").reshape(2, 3), [1, 3]), shape=(5, 3))})
        elif name == "sparse_csr.nd":
            mx.nd.save(path, [mx.nd.sparse.csr_matrix(
                (np.array([1, 2, 3], "float32"), np.array([0, 2, 1]), np.array([0, 2, 2, 3])),
                shape=(3, 4))])
        elif name in NP_SHAPE_FILES:
            with mx.np_shape(True):
                mx.nd.save(path, [mx.nd.array(v, dtype=v.dtype) for v in value])
        elif isinstance(value, dict):
            mx.nd.save(path, {k: mx.nd.array(v, dtype=v.dtype) for k, v in value.items()})
        else:
            mx.nd.save(path, [mx.nd.array(v, dtype=v.dtype) for v in value])
        if name == "scalar_legacy.nd":  # MXNet cannot read its own legacy 0-d file back
            try:
                mx.nd.load(path)
            except mx.base.MXNetError as err:
                print(f"{name}: MXNet fails to load it back, as expected: "
                      f"{str(err).splitlines()[-1][:80]}")
            continue
        with mx.np_shape(name in NP_SHAPE_FILES):
            got = mx.nd.load(path)
        items = got.items() if isinstance(got, dict) else enumerate(got)
        want = value if isinstance(value, dict) else dict(enumerate(value))
        assert len(got) == len(want), name
        for k, arr in items:
            np.testing.assert_array_equal(arr.asnumpy().astype(want[k].dtype), want[k])
            assert arr.shape == want[k].shape, (name, k)
        print(f"{name}: {os.path.getsize(path)} bytes, MXNet reloads it: ok")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
