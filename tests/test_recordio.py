"""mx.recordio: dmlc-core's binary format, byte for byte.

tests/data/recordio/mxnet.rec and mxnet.idx were written by MXNet 1.9.1::

    M = b'\\x0a\\x23\\xd7\\xce'   # the magic word, little-endian
    w = mx.recordio.MXIndexedRecordIO('mxnet.idx', 'mxnet.rec', 'w')
    for i, r in enumerate(RECORDS):
        w.write_idx(i * 3 + 1, r)
    w.close()
"""
import os
import pickle
import struct

import numpy as np
import pytest

import aiond.recordio as recordio
from aiond.base import MXNetError

DATA = os.path.join(os.path.dirname(__file__), 'data', 'recordio')
M = b'\x0a\x23\xd7\xce'
RECORDS = [b'', b'a', b'hello', b'12345678', M, M + b'tail', b'ab' + M + b'xy',
           b'abcd' + M + M + b'efgh' + M,
           recordio.pack(recordio.IRHeader(0, 3.0, 17, 0), b'img-bytes'),
           recordio.pack(recordio.IRHeader(0, [1.0, 2.5, -4.0], 18, 1), b'\x00\x01\x02'),
           bytes(range(256)) * 3]
KEYS = [i * 3 + 1 for i in range(len(RECORDS))]
MX_IDX = "1\t0\n4\t8\n7\t20\n10\t36\n13\t52\n16\t68\n19\t88\n22\t104\n25\t144\n28\t188\n31\t236\n"


def test_read_mxnet_written_files():
    r = recordio.MXRecordIO(os.path.join(DATA, 'mxnet.rec'), 'r')
    got = []
    while True:
        item = r.read()
        if item is None:
            break
        got.append(item)
    assert got == RECORDS
    assert r.read() is None  # stays at the end
    r.reset()
    assert r.read() == b''
    r.close()

    ir = recordio.MXIndexedRecordIO(os.path.join(DATA, 'mxnet.idx'),
                                    os.path.join(DATA, 'mxnet.rec'), 'r')
    assert ir.keys == KEYS
    assert ir.idx[25] == 144
    for k in reversed(KEYS):
        assert ir.read_idx(k) == RECORDS[KEYS.index(k)]
    header, payload = recordio.unpack(ir.read_idx(28))
    assert (header.flag, header.id, header.id2, payload) == (3, 18, 1, b'\x00\x01\x02')
    assert header.label.tolist() == [1.0, 2.5, -4.0]
    ir.close()


def test_write_is_byte_identical_to_mxnet(tmp_path):
    idx, rec = str(tmp_path / 'a.idx'), str(tmp_path / 'a.rec')
    w = recordio.MXIndexedRecordIO(idx, rec, 'w')
    for k, r in zip(KEYS, RECORDS):
        w.write_idx(k, r)
    w.close()
    with open(os.path.join(DATA, 'mxnet.rec'), 'rb') as f:
        assert open(rec, 'rb').read() == f.read()
    assert open(idx).read() == MX_IDX

    seq = str(tmp_path / 'seq.rec')
    with recordio.MXRecordIO(seq, 'w') as w:
        for r in RECORDS:
            w.write(r)
    assert open(seq, 'rb').read() == open(rec, 'rb').read()


def test_split_record_layout(tmp_path):
    # MXNet 1.9.1 writes b'', b'ab', M+M+b'xyz' as exactly these bytes
    p = str(tmp_path / 'e.rec')
    w = recordio.MXRecordIO(p, 'w')
    for r in (b'', b'ab', M * 2 + b'xyz'):
        w.write(r)
    w.close()
    assert open(p, 'rb').read().hex() == (
        '0a23d7ce00000000' '0a23d7ce02000000616200000a23d7ce00000020'
        '0a23d7ce000000400a23d7ce0300006078797a00')
    r = recordio.MXRecordIO(p, 'r')
    assert [r.read() for _ in range(5)] == [b'', b'ab', M * 2 + b'xyz', None, None]


def test_round_trip_random(tmp_path):
    rng = np.random.RandomState(0)
    recs = []
    for n in list(range(0, 13)) + [100, 1001]:
        b = bytearray(rng.randint(0, 256, n, dtype=np.uint8).tobytes())
        for pos in range(0, n - 3, 4):  # plant magic words at some aligned spots
            if rng.rand() < 0.3:
                b[pos:pos + 4] = M
        if n > 6 and rng.rand() < 0.5:
            b[1:5] = M  # and an unaligned one, which is not split
        recs.append(bytes(b))
    p = str(tmp_path / 'r.rec')
    w = recordio.MXIndexedRecordIO(str(tmp_path / 'r.idx'), p, 'w', key_type=str)
    positions = [w.tell()]
    for i, b in enumerate(recs):
        w.write_idx('k%d' % i, b)
        positions.append(w.tell())
    w.close()
    assert os.path.getsize(p) == positions[-1]
    assert all(pos % 4 == 0 for pos in positions)
    r = recordio.MXIndexedRecordIO(str(tmp_path / 'r.idx'), p, 'r', key_type=str)
    assert r.keys == ['k%d' % i for i in range(len(recs))]
    assert [r.read() for _ in recs] == recs
    assert r.read() is None
    order = list(rng.permutation(len(recs)))
    assert [r.read_idx('k%d' % i) for i in order] == [recs[i] for i in order]


def test_tell_and_idx_format(tmp_path):
    idx, rec = str(tmp_path / 't.idx'), str(tmp_path / 't.rec')
    w = recordio.MXIndexedRecordIO(idx, rec, 'w')
    tells = [w.tell()]
    for i in range(4):
        w.write_idx(i * 10, b'rec%d' % i + b'x' * i)
        tells.append(w.tell())
    assert tells == [0, 12, 28, 44, 60]
    assert (w.keys, w.idx) == ([0, 10, 20, 30], {0: 0, 10: 12, 20: 28, 30: 44})
    w.close()
    assert open(idx).read() == '0\t0\n10\t12\n20\t28\n30\t44\n'

    r = recordio.MXIndexedRecordIO(idx, rec, 'r')
    assert [r.read_idx(20), r.read(), r.read(), r.read()] == [b'rec2xx', b'rec3xxx', None, None]
    # MXNet 1.9.1 answers None here (its end-of-file flag survives the seek)
    assert r.read_idx(0) == b'rec0'
    with pytest.raises(AssertionError):
        r.tell()
    with pytest.raises(KeyError):
        r.read_idx(99)

    r2 = pickle.loads(pickle.dumps(r))
    assert r2.read_idx(30) == b'rec3xxx' and r2.is_open and r2.uri == rec
    r.close()
    r.close()  # twice is fine
    with pytest.raises(RuntimeError, match="Forbidden operation in multiple processes"):
        r.read()
    r2.close()

    s = recordio.MXRecordIO(rec, 'r')
    assert s.read() == b'rec0'
    s.reset()
    assert s.read() == b'rec0'
    assert pickle.loads(pickle.dumps(s)).read() == b'rec0'  # reopened at the start
    s.pid = -1  # as if used from a forked child
    with pytest.raises(RuntimeError, match="Forbidden operation in multiple processes"):
        s.read()
    s.close()


def test_other_process_seek_reopens(tmp_path):
    idx, rec = str(tmp_path / 't.idx'), str(tmp_path / 't.rec')
    w = recordio.MXIndexedRecordIO(idx, rec, 'w')
    w.write_idx(0, b'zero')
    w.write_idx(1, b'one')
    w.close()
    r = recordio.MXIndexedRecordIO(idx, rec, 'r')
    r.pid = -1
    assert r.read_idx(1) == b'one'  # seek() may reopen in a new process
    r.close()


def test_flags_and_paths(tmp_path):
    with pytest.raises(ValueError, match="Invalid flag a"):
        recordio.MXRecordIO(str(tmp_path / 'x.rec'), 'a')
    with pytest.raises(MXNetError, match="No such file or directory"):
        recordio.MXRecordIO('/nonexistent/x.rec', 'r')
    with pytest.raises(MXNetError):
        recordio.MXRecordIO('/nonexistent/x.rec', 'w')
    w = recordio.MXRecordIO(str(tmp_path / 'x.rec'), 'w')
    with pytest.raises(TypeError):
        w.write('str')
    with pytest.raises(AssertionError):
        w.read()
    w.write(bytearray(b'ok'))
    w.write(memoryview(b'ok2'))
    w.close()
    r = recordio.MXRecordIO(str(tmp_path / 'x.rec'), 'r')
    assert [r.read(), r.read(), r.read()] == [b'ok', b'ok2', None]
    with pytest.raises(AssertionError):
        r.write(b'x')
    r.close()
    with pytest.raises(FileNotFoundError):
        recordio.MXIndexedRecordIO(str(tmp_path / 'none.idx'), str(tmp_path / 'x.rec'), 'r')


@pytest.mark.parametrize("name,mangle,n_ok,match", [
    ('truncated', lambda d: d[:-3], 3, "truncated"),
    ('bad magic', lambda d: b'\0' * 4 + d[4:], 0, "bad magic 0x00000000"),
    ('short header', lambda d: d[:5], 0, "truncated record header"),
    ('garbage', lambda d: b'hello world!!!', 0, "bad magic"),
    ('huge length', lambda d: M + struct.pack('<I', (1 << 29) - 1) + b'abcd', 0, "truncated"),
    ('split cut', lambda d: M + struct.pack('<I', (1 << 29) | 0), 0, "multi-part"),
])
def test_corrupt_files_raise(tmp_path, name, mangle, n_ok, match):
    good = str(tmp_path / 'g.rec')
    w = recordio.MXRecordIO(good, 'w')
    for i in range(4):
        w.write(b'rec%d' % i + b'x' * i)
    w.close()
    bad = str(tmp_path / 'c.rec')
    with open(bad, 'wb') as f:
        f.write(mangle(open(good, 'rb').read()))
    r = recordio.MXRecordIO(bad, 'r')
    for _ in range(n_ok):
        assert r.read() is not None
    with pytest.raises(MXNetError, match="Invalid RecordIO File.*" + match):
        r.read()
    r.close()


def test_bad_index_file(tmp_path):
    rec = str(tmp_path / 'x.rec')
    recordio.MXRecordIO(rec, 'w').close()
    idx = tmp_path / 'x.idx'
    idx.write_text("0\t0\nnot-a-number\n")
    with pytest.raises(MXNetError, match="line 2"):
        recordio.MXIndexedRecordIO(str(idx), rec, 'r')


def test_pack_unpack_match_mxnet():
    s = recordio.pack(recordio.IRHeader(0, 3.5, 7, 0), b'payload')
    assert s.hex() == '0000000000006040070000000000000000000000000000007061796c6f6164'
    h, payload = recordio.unpack(s)
    assert (h, payload) == (recordio.IRHeader(0, 3.5, 7, 0), b'payload')
    s = recordio.pack(recordio.IRHeader(9, [1, 2.5, 3], 7, 1), b'pp')
    assert s.hex() == ('03000000000000000700000000000000010000000000000000'
                       '00803f00002040000040407070')
    h, payload = recordio.unpack(s)
    assert (h.flag, h.id, h.id2, payload) == (3, 7, 1, b'pp')
    assert h.label.dtype == np.float32 and h.label.tolist() == [1.0, 2.5, 3.0]
    h, payload = recordio.unpack(recordio.pack((0, np.array([4.]), 1, 2), b''))
    assert (h.flag, h.label.tolist(), h.id, h.id2, payload) == (1, [4.0], 1, 2, b'')
    assert type(h).__name__ == 'HEADER'
    with pytest.raises(MXNetError, match="shorter than"):
        recordio.unpack(b'abc')


def test_image_helpers_need_opencv():
    if recordio.cv2 is not None:
        img = np.zeros((4, 4, 3), dtype=np.uint8)
        h, out = recordio.unpack_img(recordio.pack_img(recordio.IRHeader(0, 1, 2, 0), img,
                                                       img_fmt='.png'))
        assert out.shape == (4, 4, 3)
        return
    with pytest.raises(ImportError, match="opencv"):
        recordio.pack_img(recordio.IRHeader(0, 1, 2, 0), np.zeros((2, 2, 3), np.uint8))
    with pytest.raises(ImportError, match="opencv"):
        recordio.unpack_img(recordio.pack(recordio.IRHeader(0, 1, 2, 0), b''))
