"""The transport-independent protocol core: decoding and encoding tensors
of every datatype, JSON and binary, with orjson and with the stdlib."""
import json
import struct

import numpy as np
import pytest

from aiond.serve import protocol as P


@pytest.fixture(params=["orjson", "stdlib"])
def json_impl(request, monkeypatch):
    if request.param == "stdlib":
        monkeypatch.setattr(P, "_orjson", None)
    elif P._orjson is None:
        pytest.skip("orjson is not installed")
    return request.param


def _roundtrip(arr, datatype, binary):
    head, chunks = P.encode_infer_response(
        "m", 1, P.InferRequest("", {}, [], [P.RequestedOutput("y", binary)], False),
        {"y": arr}, [P.TensorSpec("y", datatype, [-1] * arr.ndim)])
    obj = json.loads(head)
    (o,) = obj["outputs"]
    assert o["datatype"] == datatype and o["shape"] == list(arr.shape)
    if binary:
        assert o["parameters"]["binary_data_size"] == len(chunks[0])
        return P.decode_tensor_bytes("y", datatype, tuple(o["shape"]), bytes(chunks[0]))
    return P.decode_tensor_json("y", datatype, tuple(o["shape"]), o["data"])


@pytest.mark.parametrize("datatype", list(P.DATATYPES))
@pytest.mark.parametrize("binary", [False, True])
def test_every_datatype_encodes_and_decodes_back(json_impl, datatype, binary):
    rs = np.random.RandomState(0)
    dt = P.DATATYPES[datatype]
    if datatype == "BYTES":
        arr = np.array([[b"a", b"", "\u00e9".encode()], [b"xyz", b"0", b"1"]], dtype=object)
    elif datatype == "BOOL":
        arr = rs.uniform(size=(2, 3)) > 0.5
    elif dt.kind == "f":
        arr = rs.uniform(-3, 3, (2, 3)).astype(dt.newbyteorder("="))
    else:
        info = np.iinfo(dt)
        arr = np.array([[info.min, info.max, 0], [1, 2, 3]], dtype=dt.newbyteorder("="))
    back = _roundtrip(arr, datatype, binary)
    assert back.shape == arr.shape
    if datatype == "BYTES":
        assert back.tolist() == arr.tolist()
    else:
        assert back.dtype == arr.dtype
        np.testing.assert_array_equal(back, arr)


def test_non_finite_outputs_as_json_strings(json_impl):
    arr = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    head, _ = P.encode_infer_response(
        "m", 1, P.InferRequest("", {}, [], [], False), {"y": arr},
        [P.TensorSpec("y", "FP32", [4])])
    assert json.loads(head)["outputs"][0]["data"] == [1.0, "NaN", "Infinity", "-Infinity"]


def test_bytes_that_are_not_utf8_must_go_binary(json_impl):
    with pytest.raises(P.ProtocolError, match="not UTF-8"):
        P.encode_infer_response("m", 1, P.InferRequest("", {}, [], [], False),
                                {"y": np.array([b"\xff"], dtype=object)},
                                [P.TensorSpec("y", "BYTES", [1])])


def test_nested_and_flat_json_data_and_scalars():
    a = P.decode_tensor_json("x", "INT32", (2, 2), [[1, 2], [3, 4]])
    b = P.decode_tensor_json("x", "INT32", (2, 2), [1, 2, 3, 4])
    np.testing.assert_array_equal(a, b)
    assert P.decode_tensor_json("x", "FP64", (), 2.5).shape == ()
    assert P.decode_tensor_json("x", "UINT64", (1,), [2 ** 64 - 1])[0] == 2 ** 64 - 1
    with pytest.raises(P.ProtocolError, match="outside UINT64's range"):
        P.decode_tensor_json("x", "UINT64", (1,), [2 ** 64])
    with pytest.raises(P.ProtocolError, match="outside INT64's range"):
        P.decode_tensor_json("x", "INT64", (1,), [-2 ** 63 - 1])
    with pytest.raises(P.ProtocolError, match="nests deeper"):
        deep = [1]
        for _ in range(40):
            deep = [deep]
        P.decode_tensor_json("x", "INT32", (1,), deep)
    assert P.decode_tensor_json("x", "FP32", (0, 3), []).shape == (0, 3)


def test_binary_tensors_are_views_and_checked():
    buf = bytearray(np.arange(6, dtype="<f4").tobytes())
    a = P.decode_tensor_bytes("x", "FP32", (2, 3), memoryview(buf))
    assert not a.flags.owndata and a[1, 2] == 5.0
    with pytest.raises(P.ProtocolError, match="BOOL bytes must be 0 or 1"):
        P.decode_tensor_bytes("x", "BOOL", (2,), b"\x01\x02")
    with pytest.raises(P.ProtocolError, match="ends inside an element's 4-byte length"):
        P.decode_tensor_bytes("x", "BYTES", (1,), struct.pack("<I", 1) + b"a" + b"\0\0")
    with pytest.raises(P.ProtocolError, match="needs 2 BYTES elements, the data holds 1"):
        P.decode_tensor_bytes("x", "BYTES", (2,), struct.pack("<I", 1) + b"a")


def test_parse_request_with_binary_tail(json_impl):
    x = np.arange(4, dtype="<i2")
    head = json.dumps({"id": "q", "parameters": {"priority": 1, "timeout": 5000},
                       "inputs": [{"name": "a", "datatype": "INT16", "shape": [4],
                                   "parameters": {"binary_data_size": 8}},
                                  {"name": "b", "datatype": "BOOL", "shape": [2],
                                   "data": [True, False]}],
                       "outputs": [{"name": "o", "parameters": {"binary_data": True}}]}
                      ).encode()
    r = P.parse_infer_request(head + x.tobytes(), str(len(head)))
    assert r.id == "q" and r.priority == 1 and r.timeout == 0.005
    np.testing.assert_array_equal(r.inputs[0].data, x)
    assert r.inputs[1].data.tolist() == [True, False]
    assert r.outputs[0].name == "o" and r.outputs[0].binary
    with pytest.raises(P.ProtocolError, match="malformed JSON"):
        P.parse_infer_request(b'{"inputs": [NaN]}')


def test_datatype_names():
    assert P.datatype_of(np.float32) == "FP32" and P.datatype_of(">i8") == "INT64"
    assert P.datatype_of(object) == "BYTES" and P.datatype_of(bool) == "BOOL"
    with pytest.raises(ValueError):
        P.datatype_of(np.complex64)
