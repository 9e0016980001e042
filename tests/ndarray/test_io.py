"""MXNet 1.9.1 NDArray file format: aiond.ndarray.io against files real MXNet wrote.

The fixtures in tests/data/mxnet_files were written by MXNet 1.9.1 (make_fixtures.py);
their expected values come from make_fixtures.expected(), which needs only numpy.
The first part imports only aiond.ndarray.io and aiond.base; the user-facing
mx.nd.save / mx.nd.load tests at the bottom need the NDArray class.
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import struct

import numpy as np
import pytest

from aiond.base import MXNetError
from aiond.ndarray.io import SparseRecord, dumps, loads

DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "mxnet_files"
_spec = importlib.util.spec_from_file_location("_mxnet_fixture_spec",
                                               DATA / "make_fixtures.py")
spec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(spec)
EXPECTED = spec.expected()
HDR = struct.pack("<QQQ", 0x112, 0, 1)
V2, V3 = 0xF993FAC9, 0xF993FACA


def raw(name: str) -> bytes:
    return (DATA / name).read_bytes()


def split(value):
    if isinstance(value, dict):
        return list(value.values()), list(value)
    return list(value), []


def assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def one_array(body: bytes, names: bytes = struct.pack("<Q", 0)) -> bytes:
    return HDR + body + names


def v2(shape, flag=0, data=b"", magic=V2, ctx=(1, 0), stype=0) -> bytes:
    return (struct.pack(f"<IiI{len(shape)}q", magic, stype, len(shape), *shape)
            + struct.pack("<iii", *ctx, flag) + data)


# ---------------------------------------------------------------- round trips

DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool",
          "int16", "uint16", "uint32", "uint64"]
SHAPES = [(), (0,), (2, 0), (1,), (5,), (3, 4), (2, 3, 4), (1, 1, 1, 1, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_roundtrip_dtype_shape(dtype, shape):
    a = spec.ramp(shape, dtype) if dtype in spec.DTYPES else \
        np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    arrays, names = loads(dumps([a]))
    assert names == []
    assert_same(arrays, [a])
    assert arrays[0].flags.writeable and arrays[0].flags.owndata


def test_roundtrip_names_and_many_arrays():
    arrays = [spec.ramp((i + 1, 2), "float32") for i in range(5)]
    names = ["arg:fc1_weight", "", "aux:bn_moving_mean", "ünïcode ✓", "x" * 300]
    got, got_names = loads(dumps(arrays, names))
    assert got_names == names
    assert_same(got, arrays)


def test_roundtrip_layouts_byte_order_and_strides():
    base = spec.ramp((4, 6), "float64")
    cases = [base[:, ::2], np.asfortranarray(base), base.astype(">f8"), base.T,
             base.astype(">i4")]
    got, _ = loads(dumps(cases))
    for g, c in zip(got, cases):
        assert g.dtype == c.dtype.newbyteorder("=") and g.shape == c.shape
        np.testing.assert_array_equal(g, c)
    # big-endian input is written little-endian: same bytes as the native array
    assert dumps([base.astype(">f8")]) == dumps([base])


def test_empty_list_and_accepted_buffer_types():
    b = dumps([])
    assert b == raw("empty_list.nd") == HDR[:16] + b"\0" * 16
    assert loads(b) == ([], [])
    data = dumps([np.arange(3, dtype="int64")])
    for buf in (bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        assert_same(loads(buf)[0], [np.arange(3, dtype="int64")])
    with pytest.raises(TypeError):
        loads("not bytes")


def test_dumps_rejects_bad_input():
    with pytest.raises(TypeError, match="dtype"):
        dumps([np.zeros(2, complex)])
    with pytest.raises(TypeError, match="dtype"):
        dumps([np.array(["a"])])
    with pytest.raises(ValueError, match="names"):
        dumps([np.zeros(2)], ["a", "b"])
    with pytest.raises(TypeError, match="names"):
        dumps([np.zeros(2)], [1])


def test_zero_d_arrays_are_written_v3_and_v2_on_request():
    s = np.array(7, "int32")
    auto = dumps([s, np.ones(2, "int32")])
    assert struct.unpack_from("<I", auto, 24)[0] == V3          # np shape semantics
    assert dumps([np.ones(2)])[24:28] == struct.pack("<I", V2)  # plain files stay V2
    assert dumps([np.ones(2)], np_shape=True)[24:28] == struct.pack("<I", V3)
    legacy = dumps([s], np_shape=False)
    assert legacy[24:28] == struct.pack("<I", V2)
    for b in (auto, legacy):
        assert_same(loads(b)[0][:1], [s])


def test_large_array_roundtrip_is_vectorised():
    a = np.random.RandomState(0).standard_normal((1000, 2500)).astype("float32")  # 10 MB
    b = dumps([a], ["w"])
    assert len(b) == 24 + 12 + 16 + 12 + a.nbytes + 8 + 8 + 1
    assert_same(loads(b)[0], [a])


# ---------------------------------------------------------------- MXNet fixtures

@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_mxnet_fixture_loads_with_expected_values(name):
    arrays, names = loads(raw(name))
    # sparse arrays load as records of their parts; compare their dense values
    arrays = [a.todense() if isinstance(a, SparseRecord) else a for a in arrays]
    want, want_names = split(EXPECTED[name])
    assert names == want_names
    assert_same(arrays, want)


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - spec.MXNET_ONLY))
def test_dumps_is_byte_identical_to_mxnet(name):
    arrays, names = split(EXPECTED[name])
    assert dumps(arrays, names or None) == raw(name)


def test_legacy_scalar_bytes_match_mxnet_legacy_mode():
    # MXNet 1.9.1 writes a 0-d array in legacy mode as V2, ndim 0, then ctx/type/data,
    # and cannot read it back; aiond writes the same bytes with np_shape=False.
    assert dumps(EXPECTED["scalar_legacy.nd"], np_shape=False) == raw("scalar_legacy.nd")


def test_none_array_loads_as_none():
    # V2 ndim 0 with nothing after it: MXNet's data-less "none" array
    arrays, names = loads(HDR + struct.pack("<IiI", V2, 0, 0) + struct.pack("<Q", 0))
    assert arrays == [None] and names == []
    # V3 with an unknown (-1) dimension is "none" in np shape semantics
    arrays, _ = loads(one_array(struct.pack("<IiIq", V3, 0, 1, -1)))
    assert arrays == [None]


def test_two_scalars_and_arrays_in_legacy_layout():
    arrays = [np.array(1.5, "float32"), np.arange(3.0), np.array(0, "int64")]
    got, names = loads(dumps(arrays, ["a", "b", "c"], np_shape=False))
    assert names == ["a", "b", "c"]
    assert_same(got, arrays)


def test_trailing_bytes_are_ignored_like_mxnet():
    assert_same(loads(raw("list.nd") + b"garbage!!")[0], EXPECTED["list.nd"])


def test_bfloat16_is_widened_to_float32():
    f = np.array([1.0, 2.5, -3.0, 0.0], "float32")
    bf = (f.view(np.uint32) >> 16).astype("<u2").tobytes()
    (got,), _ = loads(one_array(v2((4,), flag=12, data=bf)))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, f)


def test_gpu_context_loads_on_host():
    (got,), _ = loads(one_array(v2((2,), 0, np.ones(2, "<f4").tobytes(), ctx=(2, 1))))
    np.testing.assert_array_equal(got, np.ones(2, "float32"))


# ---------------------------------------------------------------- corrupt input

@pytest.mark.parametrize("name", ["list.nd", "dict.params", "npshape.nd", "empty.nd",
                                  "sparse_rsp.nd", "sparse_csr.nd", "legacy_v0.nd",
                                  "legacy_v1.nd", "scalar_legacy.nd", "dtype_bool.nd"])
def test_every_truncation_raises_mxnet_error(name):
    data = raw(name)
    for n in range(len(data)):
        with pytest.raises(MXNetError, match="Invalid NDArray file format"):
            loads(data[:n])


def test_random_corruption_raises_only_mxnet_error():
    rng = np.random.RandomState(1234)
    files = [raw(n) for n in ("list.nd", "dict.params", "sparse_csr.nd", "sparse_rsp.nd",
                              "npshape.nd", "scalar_legacy.nd")]
    for _ in range(3000):
        b = bytearray(files[rng.randint(len(files))])
        for _ in range(rng.randint(1, 4)):
            pos = rng.randint(len(b))
            b[pos] = rng.randint(256) if rng.rand() < 0.7 else 0xFF
        try:
            loads(bytes(b))
        except MXNetError:
            pass


def test_bad_file_magic():
    data = bytearray(raw("list.nd"))
    data[0] = 0x13
    with pytest.raises(MXNetError, match=r"offset 0: bad file magic 0x113"):
        loads(bytes(data))


def test_bad_array_magic():
    data = bytearray(raw("one.nd"))
    data[24:28] = struct.pack("<I", 0xDEADBEEF)
    with pytest.raises(MXNetError, match=r"offset 24: array 0 has bad magic 0xdeadbeef"):
        loads(bytes(data))


def test_unknown_dtype_flag():
    data = bytearray(raw("one.nd"))
    off = 24 + 12 + 8 + 8   # magic/stype/ndim, dims, ctx
    assert struct.unpack_from("<i", data, off)[0] == 0
    data[off:off + 4] = struct.pack("<i", 99)
    with pytest.raises(MXNetError, match=rf"offset {off}: array 0 has unknown type flag 99"):
        loads(bytes(data))


def test_huge_declared_sizes_do_not_allocate():
    big = one_array(v2((1 << 40, 1 << 20), data=b"\0" * 16))
    with pytest.raises(MXNetError, match=r"truncated: array 0 data .* needs \d+ bytes"):
        loads(big)
    with pytest.raises(MXNetError, match="array count .* larger than"):
        loads(struct.pack("<QQQ", 0x112, 0, 1 << 62) + b"\0" * 64)
    with pytest.raises(MXNetError, match="name count .* larger than"):
        loads(struct.pack("<QQQQ", 0x112, 0, 0, 1 << 61))
    with pytest.raises(MXNetError, match="truncated: name 0 needs"):
        loads(struct.pack("<QQQQQ", 0x112, 0, 0, 1, 1 << 60) + b"abc")
    with pytest.raises(MXNetError, match="ndim 100000"):
        loads(one_array(struct.pack("<IiI", V2, 0, 100000) + b"\0" * 800000))


def test_structural_errors():
    cases = [
        (one_array(v2((2,), data=b"\0" * 8), struct.pack("<QQ", 2, 1) + b"a"
                   + struct.pack("<Q", 1) + b"b"), "2 names for 1 arrays"),
        (one_array(v2((2,), data=b"\0" * 8, stype=7)), "unknown storage type 7"),
        (one_array(struct.pack("<IiI", V2, 0, 0xFFFFFFFF)), "ndim -1"),
        (one_array(v2((3, -2), data=b"")), "negative dimension"),
        (one_array(v2((2,), data=b"\0" * 8, ctx=(9, 0))), "unknown device type 9"),
        (one_array(v2((2,), data=b"\0" * 8, stype=1, magic=V3)), "sparse in np shape"),
        (one_array(v2((1,), data=b"\0" * 4), struct.pack("<QQ", 1, 2) + b"\xff\xfe"),
         "not valid utf-8"),
    ]
    for data, msg in cases:
        with pytest.raises(MXNetError, match=msg):
            loads(data)


def test_inconsistent_sparse_arrays():
    def rsp(index):
        return (HDR + struct.pack("<IiIqqIqq", V2, 1, 2, 1, 2, 2, 4, 2)  # sshape, shape
                + struct.pack("<iii", 1, 0, 0) + struct.pack("<iIq", 6, 1, 1)
                + np.ones(2, "<f4").tobytes() + struct.pack("<q", index)
                + struct.pack("<Q", 0))
    (good,), _ = loads(rsp(3))
    assert good.stype == "row_sparse"
    np.testing.assert_array_equal(good.todense(), [[0, 0], [0, 0], [0, 0], [1, 1]])
    with pytest.raises(MXNetError, match="inconsistent row_sparse"):
        loads(rsp(4))
    csr = bytearray(raw("sparse_csr.nd"))
    csr[-8 - 24:-8 - 16] = struct.pack("<q", 9)   # a column index out of range
    with pytest.raises(MXNetError, match="inconsistent csr"):
        loads(bytes(csr))


# ---------------------------------------------------------------- user-facing API
# These need aiond's NDArray (aiond.nd.array / asnumpy) and aiond.nd.save/load.

@pytest.fixture
def mx():
    import aiond
    return aiond


def test_nd_save_load_list_and_dict(mx, tmp_path):
    a, b = mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([5, 6, 7], dtype="int64")
    mx.nd.save(str(tmp_path / "l"), [a, b])
    got = mx.nd.load(str(tmp_path / "l"))
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_array_equal(got[0].asnumpy(), a.asnumpy())
    assert got[1].dtype == np.int64 and got[1].shape == (3,)
    mx.nd.save(tmp_path / "d", {"x": a, "y": b})              # os.PathLike works too
    got = mx.nd.load(tmp_path / "d", ctx=mx.cpu())
    assert list(got) == ["x", "y"]
    np.testing.assert_array_equal(got["y"].asnumpy(), [5, 6, 7])
    assert sorted(os.listdir(tmp_path)) == ["d", "l"]            # no temp files left


def test_nd_save_single_ndarray_and_tuple(mx, tmp_path):
    mx.nd.save(str(tmp_path / "s"), mx.nd.ones((2, 3)))
    got = mx.nd.load(str(tmp_path / "s"))
    assert isinstance(got, list) and got[0].shape == (2, 3)
    mx.nd.save(str(tmp_path / "t"), (mx.nd.ones(1), mx.nd.zeros(2)))
    assert [x.shape for x in mx.nd.load(str(tmp_path / "t"))] == [(1,), (2,)]


def test_nd_save_bad_arguments(mx, tmp_path):
    with pytest.raises(TypeError, match="save only accept dict str->NDArray"):
        mx.nd.save(str(tmp_path / "x"), [mx.nd.ones(1), np.ones(1)])
    with pytest.raises(TypeError, match="save only accept dict str->NDArray"):
        mx.nd.save(str(tmp_path / "x"), {1: mx.nd.ones(1)})
    with pytest.raises(ValueError, match="data needs to either be a NDArray"):
        mx.nd.save(str(tmp_path / "x"), 3)
    assert not os.listdir(tmp_path)


def test_nd_load_missing_file_and_buffer(mx, tmp_path):
    missing = str(tmp_path / "nope.params")
    with pytest.raises(MXNetError, match="nope.params"):
        mx.nd.load(missing)
    got = mx.nd.load_frombuffer(raw("dict.params"))
    assert list(got) == list(EXPECTED["dict.params"])
    np.testing.assert_array_equal(got["arg:fc1_weight"].asnumpy(),
                                  EXPECTED["dict.params"]["arg:fc1_weight"])
    with pytest.raises(TypeError):
        mx.nd.load_frombuffer(12)


def test_nd_load_mxnet_fixtures(mx):
    for name in ("list.nd", "3d.nd", "dtype_int8.nd", "dtype_bool.nd", "empty.nd"):
        got = mx.nd.load(str(DATA / name))
        for g, w in zip(got, EXPECTED[name]):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g.asnumpy(), w)
