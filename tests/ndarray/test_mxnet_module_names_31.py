"""MXNet 1.9.1's names in mxnet.ndarray.ndarray / register / utils / sparse
and mxnet.symbol.symbol / register / sparse (issue 31); expected values are
what MXNet 1.9.1 returns for the same calls."""
import numpy as np
import pytest

import aiond as mx
from aiond.ndarray import ndarray as ndm


def test_fluent_depth_space_and_slice_assign():
    x = mx.nd.array(np.arange(16).reshape(1, 4, 2, 2))
    assert x.depth_to_space(2).asnumpy().ravel().tolist() == [
        0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15]
    np.testing.assert_array_equal(x.depth_to_space(2).space_to_depth(2).asnumpy(), x.asnumpy())
    y = mx.nd.ones((2, 2, 2))
    r = y.slice_assign_scalar(0, (0, 0, None), (1, 1, None), (None, None, None))
    assert r is y and y.asnumpy().ravel().tolist() == [0, 0, 1, 1, 1, 1, 1, 1]
    y = mx.nd.ones((2, 3))
    y.slice_assign(mx.nd.array([[7, 8]]), (1, 0), (2, 3), (None, 2))
    assert y.asnumpy().ravel().tolist() == [1, 1, 1, 7, 1, 8]
    with pytest.raises(mx.base.MXNetError):      # (1, 3) into a (1, 2) crop
        y.slice_assign(mx.nd.array([[7, 8, 9]]), (1, 0), (2, 3), (None, 2)).asnumpy()


def test_indexing_helpers():
    assert ndm.get_indexing_dispatch_code((1, slice(None))) == 0
    assert ndm.get_indexing_dispatch_code((1, [0])) == 1
    assert ndm.get_indexing_dispatch_code(((),)) == 2
    with pytest.raises(ValueError, match="does not support slicing"):
        ndm.get_indexing_dispatch_code((1.5,))
    assert ndm.get_oshape_of_gather_nd_op((3, 4, 5), (2, 6)) == (6, 5)
    assert ndm.get_oshape_of_gather_nd_op((3, 4), (2, 6, 7)) == (6, 7)
    full = slice(None)
    assert ndm.indexing_key_expand_implicit_axes(np.s_[:2, None, 0, ...], (3, 4, 5)) == \
        ((slice(None, 2), None, 0, full), -1)
    assert ndm.indexing_key_expand_implicit_axes(np.s_[0], (3, 4, 5)) == ((0, full, full), -1)
    assert ndm.indexing_key_expand_implicit_axes(np.s_[..., 1], (3, 4, 5)) == \
        ((full, full, 1), -1)
    with pytest.raises(IndexError, match="ellipsis"):
        ndm.indexing_key_expand_implicit_axes(np.s_[..., 1, ...], (3, 4, 5))
    with pytest.raises(ValueError, match="legacy mode"):
        ndm.indexing_key_expand_implicit_axes((mx.nd.array([1, 0, 1], dtype="bool"),), (3, 4))


def test_code_tables_and_functions():
    assert ndm._DTYPE_MX_TO_NP[6] is np.int64 and ndm._DTYPE_NP_TO_MX[np.float16] == 2
    assert mx.nd._GRAD_REQ_MAP == {"null": 0, "write": 1, "add": 3}
    x = mx.nd.array([[1, 2], [3, 4]])
    assert ndm.add(x, 1).asnumpy().tolist() == [[2, 3], [4, 5]]
    assert ndm.moveaxis(mx.nd.zeros((1, 4, 2, 2)), 1, 3).shape == (1, 2, 2, 4)
    counts, edges = ndm.histogram(mx.nd.array([1, 2, 2, 5]), bins=2)
    assert counts.asnumpy().tolist() == [3, 1]
    assert ndm.split_v2 is mx.nd.split_v2 and ndm.from_dlpack is mx.nd.from_dlpack


def test_register_utils_and_sparse_names():
    assert isinstance(mx.nd.ones(2), mx.nd.register.NDArrayBase)
    assert isinstance(mx.nd.ones((2, 2)).tostype("csr"), mx.nd.register.NDArrayBase)
    assert isinstance(mx.sym.var("a"), mx.sym.register.SymbolBase)
    assert not isinstance(np.ones(2), mx.nd.register.NDArrayBase)
    with pytest.raises(TypeError):
        mx.nd.register.NDArrayBase()
    assert mx.nd.register.adamw_update is mx.nd.contrib.adamw_update
    assert type(mx.nd.utils.zeros((2, 2), stype="row_sparse")).__name__ == "RowSparseNDArray"
    assert type(mx.nd.utils.empty((2, 2), stype="csr")).__name__ == "CSRNDArray"
    assert mx.nd.utils.array([1, 2]).dtype == np.float32
    c = mx.nd.array([[0.4, 0, -1.6]]).tostype("csr")
    assert mx.nd.sparse._contrib_round_ste(c).stype == "csr"
    assert mx.nd.sparse._contrib_sign_ste(c).asnumpy().tolist() == [[1, 0, -1]]
    assert mx.sym.sparse._contrib_round_ste(mx.sym.var("x")).list_outputs()


def test_symbol_split_v2_and_histogram():
    s = mx.sym.var("x")
    o = s.split_v2(2, axis=1)
    assert len(o.list_outputs()) == 2
    assert o.eval(x=mx.nd.ones((2, 4)))[1].shape == (2, 2)
    assert mx.sym.symbol.split_v2 is mx.sym.split_v2
    h = mx.sym.symbol.histogram(s, bins=3, range=(0, 6))
    assert h.list_outputs() == ["_histogram0_output0", "_histogram0_output1"] or \
        len(h.list_outputs()) == 2
    counts = h.eval(x=mx.nd.array([0.5, 1, 2.5, 5.9]))[0]
    assert counts.asnumpy().tolist() == [2, 1, 1]


def test_legacy_imdecode():
    import io
    from PIL import Image
    rgb = (np.arange(2 * 3 * 3).reshape(2, 3, 3) * 10).astype(np.uint8)
    b = io.BytesIO()
    Image.fromarray(rgb).save(b, format="PNG")
    buf = b.getvalue()
    r = ndm.imdecode(buf)
    # (channels, h, w) float32 in OpenCV's BGR order, as MXNet's _imdecode
    assert r.shape == (3, 2, 3) and r.dtype == np.float32
    np.testing.assert_array_equal(r.asnumpy(), rgb[:, :, ::-1].transpose(2, 0, 1))
    gray = ndm.imdecode(buf, channels=1).asnumpy()
    assert gray.shape == (1, 2, 3)
    clip = ndm.imdecode(buf, clip_rect=(1, 0, 3, 2)).asnumpy()
    np.testing.assert_array_equal(clip, rgb[0:2, 1:3, ::-1].transpose(2, 0, 1))
    out = mx.nd.zeros((2, 3, 2, 3))
    assert ndm.imdecode(buf, out=out, index=1) is out
    assert not out[0].asnumpy().any() and (out[1].asnumpy() == r.asnumpy()).all()
    mean = mx.nd.ones((3, 2, 3), dtype="float64") * 5
    m = ndm.imdecode(buf, mean=mean)
    assert m.dtype == np.float64
    np.testing.assert_array_equal(m.asnumpy(), r.asnumpy() - 5)
    with pytest.raises(mx.base.MXNetError, match="exceeds"):
        ndm.imdecode(buf, clip_rect=(0, 0, 9, 9))
    with pytest.raises(mx.base.MXNetError, match="decode"):
        ndm.imdecode(b"not an image")


def test_handle_helpers_have_aiond_meanings():
    empty = mx.nd.NDArray(ndm._new_empty_handle())
    assert isinstance(empty, mx.nd.NDArray) and empty.size == 0
    c = mx.nd.ones((2, 2)).tostype("csr")
    assert mx.nd.sparse._ndarray_cls(c, stype=2) is c
    assert mx.nd.sparse._ndarray_cls(None).size == 0
    with pytest.raises(mx.base.MXNetError, match="storage type is csr"):
        mx.nd.sparse._ndarray_cls(c, stype=1)
    with pytest.raises(TypeError, match="no C handles"):
        mx.nd.sparse._ndarray_cls(12345)
