"""Hypothesis fuzz of the inference protocol's decoding: any JSON, any
tensor description, any binary tail. Each request decodes, or raises the
protocol's error (400/404) - never another exception, and what decodes
holds exactly the values sent. Fixed, modest example counts for CI."""
import json

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from aiond.serve import protocol as P  # noqa: E402

FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                  st.floats(allow_nan=False), st.text(max_size=4))
_json = st.recursive(_leaf, lambda c: st.one_of(st.lists(c, max_size=4),
                                                st.dictionaries(st.text(max_size=6), c,
                                                                max_size=3)),
                     max_leaves=16)
_names = st.sampled_from(["x", "y", ""])
_types = st.sampled_from(list(P.DATATYPES) + ["BF16", "FP8", "fp32", ""])
_shapes = st.lists(st.integers(-2, 4), max_size=3)


def _decodes_or_refuses(body, hl=None):
    try:
        return P.parse_infer_request(body, hl)
    except P.ProtocolError as e:
        assert e.status in (400, 404, 413) and str(e)
        return None


@FUZZ
@given(_json)
def test_any_json_decodes_or_is_refused(obj):
    _decodes_or_refuses(json.dumps(obj).encode())
    _decodes_or_refuses(json.dumps({"inputs": [obj]}).encode())
    _decodes_or_refuses(json.dumps({"inputs": [{"name": "x", "datatype": "FP32",
                                                "shape": [1], "data": obj}],
                                    "outputs": obj, "parameters": obj}).encode())


@FUZZ
@given(_names, _types, _shapes, _json, st.binary(max_size=40), st.integers(-1, 48),
       st.booleans())
def test_any_tensor_description_decodes_or_is_refused(name, dt, shape, data, tail, size,
                                                      binary):
    t = {"name": name, "datatype": dt, "shape": shape}
    if binary:
        t["parameters"] = {"binary_data_size": size}
    else:
        t["data"] = data
    head = json.dumps({"inputs": [t]}).encode()
    req = _decodes_or_refuses(head + tail, str(len(head)) if binary else None)
    if req is not None:
        (inp,) = req.inputs
        assert inp.data.shape == tuple(shape)
        if binary and dt != "BYTES":
            assert inp.data.tobytes() == tail
        spec = [P.TensorSpec("x", dt if dt in P.DATATYPES else "FP32",
                             [-1] * max(0, len(shape) - 1))]
        try:
            P.check_inputs(req, spec, 4, "m")
        except P.ProtocolError as e:
            assert e.status == 400


@FUZZ
@given(st.lists(st.binary(max_size=6), max_size=5), st.binary(max_size=6))
def test_bytes_tensors_round_trip_and_truncation_is_refused(items, junk):
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    raw = P.tensor_bytes(arr, "BYTES")
    back = P.decode_tensor_bytes("x", "BYTES", (len(items),), raw)
    assert back.tolist() == items
    cut = raw[:-1] if raw else b"\x01"
    with pytest.raises(P.ProtocolError):
        P.decode_tensor_bytes("x", "BYTES", (len(items),), cut)
    if junk and len(junk) < 4:
        with pytest.raises(P.ProtocolError):
            P.decode_tensor_bytes("x", "BYTES", (len(items) + 1,), raw + junk)


@FUZZ
@given(st.sampled_from([t for t in P.DATATYPES if t != "BYTES"]),
       st.lists(st.integers(0, 3), max_size=3), st.data())
def test_numeric_json_and_binary_agree(dt, shape, data):
    n = int(np.prod(shape)) if shape else 1
    dtype = P.DATATYPES[dt].newbyteorder("=")
    if dtype.kind == "b":
        vals = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype.kind == "f":
        vals = data.draw(st.lists(st.floats(-1e4, 1e4, width=16 if dt == "FP16" else 32),
                                  min_size=n, max_size=n))
    else:
        info = np.iinfo(dtype)
        vals = data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=n,
                                  max_size=n))
    a = P.decode_tensor_json("x", dt, tuple(shape), vals)
    b = P.decode_tensor_bytes("x", dt, tuple(shape),
                              np.array(vals, dtype=P.DATATYPES[dt]).tobytes())
    np.testing.assert_array_equal(a, b)
    assert a.dtype == b.dtype == dtype
