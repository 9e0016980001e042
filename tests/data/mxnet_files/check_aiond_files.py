"""Check that the REAL MXNet 1.9.1 reads files written by aiond.

    python3 tests/data/mxnet_files/check_aiond_files.py --write DIR     # aiond + numpy
    .venvs/mxnet/bin/python tests/data/mxnet_files/check_aiond_files.py DIR   # MXNet

``--write`` saves every fixture of ``make_fixtures.expected()`` that aiond can write
with ``aiond.ndarray.io.dumps``; the second form loads each with ``mx.nd.load`` and
compares names, dtypes, shapes and values. Exit status 0 when all match.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_fixtures import MXNET_ONLY, NP_SHAPE_FILES, expected  # noqa: E402


def write(out_dir):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
    from aiond.ndarray.io import dumps
    os.makedirs(out_dir, exist_ok=True)
    for name, value in expected().items():
        if name in MXNET_ONLY:
            continue
        names = list(value) if isinstance(value, dict) else None
        arrays = list(value.values()) if isinstance(value, dict) else value
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(dumps(arrays, names))
        print(f"wrote {name}")


def check(in_dir):
    import mxnet as mx
    bad = 0
    for name, value in expected().items():
        path = os.path.join(in_dir, name)
        if name in MXNET_ONLY or not os.path.exists(path):
            continue
        try:
            with mx.np_shape(name in NP_SHAPE_FILES):
                got = mx.nd.load(path)
            want = value if isinstance(value, dict) else dict(enumerate(value))
            assert isinstance(got, dict) == isinstance(value, dict), "list/dict kind"
            items = dict(got) if isinstance(got, dict) else dict(enumerate(got))
            assert list(items) == list(want), f"keys {list(items)} != {list(want)}"
            for k, arr in items.items():
                a = arr.asnumpy()
                assert a.dtype == want[k].dtype, f"{k}: dtype {a.dtype} != {want[k].dtype}"
                assert a.shape == want[k].shape, f"{k}: shape {a.shape} != {want[k].shape}"
                np.testing.assert_array_equal(a, want[k])
            print(f"{name}: ok ({len(items)} arrays)")
        except Exception as err:  # report every file, then fail
            bad += 1
            print(f"{name}: FAILED: {type(err).__name__}: {str(err)[:300]}")
    print("all aiond files load in MXNet" if not bad else f"{bad} file(s) failed")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        write(sys.argv[2])
    elif len(sys.argv) == 2:
        sys.exit(check(sys.argv[1]))
    else:
        sys.exit(__doc__)
