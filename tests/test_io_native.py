"""mx.io.MXDataIter and the iterators MXNet writes in C++ (CSVIter,
LibSVMIter, MNISTIter), mx.contrib.io.DataLoaderIter, mx.io.utils.sparse_array."""
import struct

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


class _Counting(object):
    """A source of 3 batches of 2 rows: 0..5."""

    def __init__(self):
        self.i = 0

    def before_first(self):
        self.i = 0

    def next(self):
        self.i += 1
        return self.i <= 3

    def data(self):
        return mx.nd.array(np.arange(2 * self.i - 2, 2 * self.i).reshape(2, 1))

    def label(self):
        return mx.nd.array([self.i, self.i])

    def index(self):
        return np.array([2 * self.i - 2, 2 * self.i - 1], dtype=np.uint64)

    def pad(self):
        return 1 if self.i == 3 else 0


def test_mxdataiter_protocol():
    it = mx.io.MXDataIter(_Counting(), data_name="x", label_name="y")
    assert isinstance(it, mx.io.DataIter) and mx.io.io.MXDataIter is mx.io.MXDataIter
    assert it.provide_data[0].name == "x" and it.provide_data[0].shape == (2, 1)
    assert it.provide_label[0].name == "y" and it.batch_size == 2
    batches = [(b.data[0].asnumpy().ravel().tolist(), b.pad, b.index.tolist()) for b in it]
    assert batches == [([0, 1], 0, [0, 1]), ([2, 3], 0, [2, 3]), ([4, 5], 1, [4, 5])]
    assert isinstance(it.getdata(), mx.nd.NDArray)
    it.reset()
    assert it.iter_next() and it.getdata().asnumpy().ravel().tolist() == [0, 1]
    it.reset()
    it.debug_skip_load()
    first = it.next()
    again = [it.next().data[0].asnumpy().ravel().tolist() for _ in range(5)]
    assert first.data[0].asnumpy().ravel().tolist() == [0, 1] and again == [[0, 1]] * 5
    with pytest.raises(TypeError, match="before_first"):
        mx.io.MXDataIter(object())


def test_csv_iter_is_mxdataiter(tmp_path):
    d = tmp_path / "d.csv"
    d.write_text("1,2\n3,4\n5,6\n")
    it = mx.io.CSVIter(data_csv=str(d), data_shape=(2,), batch_size=2)
    assert isinstance(it, mx.io.MXDataIter)
    b = next(iter(it))
    assert it.getdata().asnumpy().tolist() == [[1, 2], [3, 4]]
    assert b.index.tolist() == [0, 1] and b.index.dtype == np.uint64
    last = it.next()
    assert last.data[0].asnumpy().tolist() == [[5, 6], [1, 2]] and last.pad == 1


def test_libsvm_iter_as_mxnet(tmp_path):
    data, label = tmp_path / "data.t", tmp_path / "label.t"
    data.write_text("1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n")
    label.write_text("1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n")
    it = mx.io.LibSVMIter(data_libsvm=str(data), label_libsvm=str(label), data_shape=(3,),
                          label_shape=(3,), batch_size=3)
    want = [[[0.5, 0., 1.2], [0., 0., 0.], [0.6, 2.4, 1.2]],
            [[0., 0., -1.2], [0.5, 0., 1.2], [0., 0., 0.]]]
    got = []
    for batch in it:
        d = it.getdata()
        assert d.stype == "csr"
        d.check_format(True)
        got.append(d.asnumpy().tolist())
        assert batch.label[0].stype == "csr"
    assert np.allclose(got, want)
    assert batch.pad == 2
    np.testing.assert_allclose(batch.label[0].asnumpy(), [[0, 1, -1.2], [0, 0, 0], [0.125, 0, 0]])
    # no label file: the lines' leading values
    it = mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=2)
    assert [b.label[0].asnumpy().tolist() for b in it] == [[1.0, -2.0], [-3.0, 4.0]]
    data.write_text("1.0 0:0.5 2:1.2\n-3.0 -1:0.6 1:2.4\n")
    with pytest.raises(MXNetError, match="negative index"):
        mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=1)
    data.write_text("1.0 0:0.5 7:1.2\n")
    with pytest.raises(MXNetError, match="out of"):
        mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=1)


def _write_mnist(tmp_path, n):
    img, lab = tmp_path / "img", tmp_path / "lab"
    pixels = (np.arange(n * 4) % 256).astype(np.uint8)
    img.write_bytes(struct.pack(">IIII", 2051, n, 2, 2) + pixels.tobytes())
    lab.write_bytes(struct.pack(">II", 2049, n) + (np.arange(n) % 10).astype(np.uint8).tobytes())
    return str(img), str(lab)


def test_mnist_iter_is_mxdataiter(tmp_path):
    img, lab = _write_mnist(tmp_path, 5)
    it = mx.io.MNISTIter(image=img, label=lab, batch_size=2, shuffle=False, silent=True)
    assert isinstance(it, mx.io.MXDataIter) and it.provide_data[0].shape == (2, 1, 2, 2)
    labels = [b.label[0].asnumpy().tolist() for b in it]
    assert labels == [[0, 1], [2, 3]]           # the partial last batch is dropped
    it.reset()
    b = it.next()
    np.testing.assert_allclose(b.data[0].asnumpy().ravel(), np.arange(8) / 256.0)


def test_dataloader_iter():
    X = mx.nd.arange(70).reshape((35, 2))
    y = mx.nd.arange(35)
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(X, y), batch_size=10)
    it = mx.contrib.io.DataLoaderIter(loader)
    assert it.provide_data[0].shape == (10, 2) and it.provide_label[0].shape == (10,)
    batches = list(it)
    assert len(batches) == 4 and batches[-1].pad == 5
    assert batches[-1].data[0].shape == (10, 2)
    np.testing.assert_array_equal(batches[-1].data[0].asnumpy()[:5], X.asnumpy()[30:])
    it.reset()
    assert len(list(it)) == 4
    it16 = mx.contrib.io.DataLoaderIter(loader, dtype="float16")
    assert next(iter(it16)).data[0].dtype == np.float16
    mod = mx.mod.Module(mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=1), name="softmax"),
        data_names=["data"], label_names=["softmax_label"])
    mod.fit(mx.contrib.io.DataLoaderIter(
        mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(X, y), batch_size=5)), num_epoch=1)


def test_io_utils_and_image_module_attrs():
    sp = pytest.importorskip("scipy.sparse")
    a = mx.io.utils.sparse_array(sp.csr_matrix(np.array([[0, 1.0], [2.0, 0]])))
    assert mx.io.utils.sparse_array is mx.nd.sparse.array
    assert a.stype == "csr" and a.asnumpy().tolist() == [[0, 1], [2, 0]]
    assert mx.image.recordio is mx.recordio and mx.image.image.io is mx.io
    assert mx.image.image.recordio is mx.recordio
    v = mx.gluon.data.vision
    assert v.datasets.ImageFolderDataset is v.ImageFolderDataset
    assert v.datasets.ImageRecordDataset is v.ImageRecordDataset


def _write_rec(tmp_path, n=5, label_width=1, indexed=False):
    from PIL import Image
    import io as _io
    rs = np.random.RandomState(0)
    imgs = [rs.randint(0, 256, (12, 10, 3)).astype(np.uint8) for _ in range(n)]
    rec_path, idx_path = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    rec = (mx.recordio.MXIndexedRecordIO(idx_path, rec_path, "w") if indexed
           else mx.recordio.MXRecordIO(rec_path, "w"))
    for i, im in enumerate(imgs):
        buf = _io.BytesIO()
        Image.fromarray(im).save(buf, format="PNG")
        label = float(i) if label_width == 1 else [float(i), float(10 + i)]
        s = mx.recordio.pack(mx.recordio.IRHeader(0, label, i, 0), buf.getvalue())
        if indexed:
            rec.write_idx(i, s)
        else:
            rec.write(s)
    rec.close()
    return rec_path, idx_path, imgs


def test_image_record_iter(tmp_path):
    pytest.importorskip("PIL")
    rec, _, imgs = _write_rec(tmp_path)
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                               mean_r=10, mean_g=20, mean_b=30, std_r=2, std_g=2, std_b=2,
                               scale=0.5)
    assert isinstance(it, mx.io.MXDataIter)
    assert it.provide_data[0].shape == (2, 3, 8, 8) and it.provide_label[0].shape == (2,)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    assert batches[-1].label[0].asnumpy().tolist() == [4, 0]
    crop = imgs[1][2:10, 1:9].astype(np.float32).transpose(2, 0, 1)   # centred 8x8
    want = (crop - np.array([10, 20, 30], np.float32)[:, None, None]) * 0.5 / 2
    np.testing.assert_allclose(batches[0].data[0].asnumpy()[1], want, rtol=1e-6)
    u8 = mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=5,
                                    mirror=True)
    b = u8.next()
    assert b.data[0].dtype == np.uint8
    np.testing.assert_array_equal(b.data[0].asnumpy()[0],
                                  imgs[0][2:10, 1:9].transpose(2, 0, 1)[:, :, ::-1])
    big = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=5,
                                round_batch=False)
    assert big.next().data[0].shape == (5, 3, 16, 16)      # scaled up to fit, then cropped
    sh = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=5,
                               shuffle=True, rand_crop=True, rand_mirror=True, resize=9,
                               seed=3)
    labels = sorted(sh.next().label[0].asnumpy().tolist())
    assert labels == [0, 1, 2, 3, 4]
    with pytest.raises(MXNetError, match="max_rotate_angle"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                              max_rotate_angle=10)
    with pytest.raises(MXNetError, match="unknown argument"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, bogus=1)


def test_image_record_iter_indexed_parts_and_label_width(tmp_path):
    pytest.importorskip("PIL")
    rec, idx, _ = _write_rec(tmp_path, n=6, label_width=2, indexed=True)
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 6, 6),
                               batch_size=3, label_width=2, num_parts=2, part_index=1)
    b = it.next()
    assert b.label[0].asnumpy().tolist() == [[3, 13], [4, 14], [5, 15]]
    assert b.index.tolist() == [3, 4, 5]
    with pytest.raises(StopIteration):
        it.next()
