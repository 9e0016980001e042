"""RecordIO files (MXNet 1.9.1 ``mxnet.recordio``), in pure Python.

The binary format is dmlc-core's, byte for byte, so files written by MXNet
read here and the other way round. Each record is one or more parts::

    uint32 magic = 0xced7230a          (little-endian)
    uint32 lrec  = cflag << 29 | length
    length bytes of data, then zeros up to a multiple of 4

``cflag`` is 0 for a whole record; a record whose data contains the magic
word at a 4-byte-aligned offset is split there (the magic itself is dropped
and restored on read) into parts flagged 1 (first), 2 (middle), 3 (last).
The ``.idx`` file of MXIndexedRecordIO is text, one ``key\\tbyte_offset`` a line.

A file that breaks the format raises ``aiond.base.MXNetError``.
"""
from __future__ import annotations

import numbers
import os
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np

from .base import MXNetError

try:
    import cv2
except ImportError:
    cv2 = None

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack",
           "pack_img", "unpack_img"]

_MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack('<I', _MAGIC)
_LEN_MASK = (1 << 29) - 1
_HDR = struct.Struct('<II')


def _encode_lrec(cflag, length):
    return (cflag << 29) | length


class MXRecordIO(object):
    """Sequential reader (``flag='r'``) or writer (``flag='w'``, truncates)
    of a RecordIO file."""

    def __init__(self, uri, flag):
        if isinstance(uri, bytes):
            uri = uri.decode('utf-8')
        self.uri = os.fspath(uri)
        self.handle = None
        self.flag = flag
        self.pid = None
        self.is_open = False
        self._eof = False
        self.open()

    def open(self):
        """Open the file (again)."""
        if self.flag == "w":
            mode, self.writable = 'wb', True
        elif self.flag == "r":
            mode, self.writable = 'rb', False
        else:
            raise ValueError("Invalid flag %s" % self.flag)
        try:
            self.handle = open(self.uri, mode)
        except OSError as e:
            raise MXNetError('RecordIO: cannot open "%s": %s' % (self.uri, e.strerror)) from e
        self._eof = False
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter teardown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        """Pickle the path and mode, not the open file; reopened on unpickle."""
        is_open = self.is_open
        self.close()
        d = dict(self.__dict__)
        d['is_open'] = is_open
        del d['handle']
        return d

    def __setstate__(self, d):
        self.__dict__ = d
        is_open = d['is_open']
        self.is_open = False
        self.handle = None
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """Refuse use from another process than the one that opened the file
        (or reopen, with ``allow_reset``)."""
        if not self.pid == current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError("Forbidden operation in multiple processes")

    def close(self):
        """Close the file."""
        if not getattr(self, 'is_open', False):
            return
        self.handle.close()
        self.handle = None
        self.is_open = False
        self.pid = None

    def reset(self):
        """Back to the first record; in 'w' mode this truncates the file."""
        self.close()
        self.open()

    def write(self, buf):
        """Append ``buf`` (bytes) as one record."""
        assert self.writable
        self._check_pid(allow_reset=False)
        if isinstance(buf, str):
            raise TypeError("bytes or integer address expected instead of str instance")
        buf = bytes(buf)
        size = len(buf)
        if size >= (1 << 29):
            raise MXNetError("RecordIO only accept record less than 2^29 bytes")
        f = self.handle
        lower_align = (size >> 2) << 2
        upper_align = ((size + 3) >> 2) << 2
        dptr = 0
        if lower_align:
            words = np.frombuffer(buf, dtype='<u4', count=lower_align >> 2)
            for w in np.flatnonzero(words == _MAGIC):
                i = int(w) << 2
                f.write(_MAGIC_BYTES)
                f.write(struct.pack('<I', _encode_lrec(1 if dptr == 0 else 2, i - dptr)))
                if i != dptr:
                    f.write(buf[dptr:i])
                dptr = i + 4
        f.write(_MAGIC_BYTES)
        f.write(struct.pack('<I', _encode_lrec(3 if dptr != 0 else 0, size - dptr)))
        if size != dptr:
            f.write(buf[dptr:])
        if upper_align != size:
            f.write(b'\0' * (upper_align - size))

    def read(self):
        """The next record as bytes, or None at the end of the file."""
        assert not self.writable
        self._check_pid(allow_reset=False)
        if self._eof:
            return None
        f = self.handle
        parts = []
        while True:
            start = f.tell()
            header = f.read(8)
            if len(header) == 0:
                if parts:
                    raise MXNetError("Invalid RecordIO File: %s ends inside a multi-part "
                                     "record (offset %d)" % (self.uri, start))
                self._eof = True
                return None
            if len(header) != 8:
                raise MXNetError("Invalid RecordIO File: %s has a truncated record header "
                                 "at offset %d" % (self.uri, start))
            magic, lrec = _HDR.unpack(header)
            if magic != _MAGIC:
                raise MXNetError("Invalid RecordIO File: bad magic 0x%08x at offset %d of %s "
                                 "(expected 0x%08x)" % (magic, start, self.uri, _MAGIC))
            cflag = lrec >> 29
            length = lrec & _LEN_MASK
            upper_align = ((length + 3) >> 2) << 2
            data = f.read(upper_align) if upper_align else b''
            if len(data) != upper_align:
                raise MXNetError("Invalid RecordIO File: %s is truncated: record at offset %d "
                                 "needs %d bytes, %d left (upper_align=%d)"
                                 % (self.uri, start, upper_align, len(data), upper_align))
            parts.append(data[:length])
            if cflag == 0 or cflag == 3:
                break
            parts.append(_MAGIC_BYTES)
        return b''.join(parts)

    def tell(self):
        """Byte offset at which the next record will be written."""
        assert self.writable
        return self.handle.tell()


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with an index file, for random access by key.

    ``write_idx(key, buf)`` writes a record and its offset; ``read_idx(key)``
    reads it back. ``keys`` lists keys in file order; ``key_type`` converts
    keys read from the index (int by default).
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super(MXIndexedRecordIO, self).__init__(uri, flag)

    def open(self):
        super(MXIndexedRecordIO, self).open()
        self.idx = {}
        self.keys = []
        try:
            self.fidx = open(self.idx_path, self.flag)
        except OSError:  # as MXNet: the OSError of open() itself
            super(MXIndexedRecordIO, self).close()
            raise
        if not self.writable:
            for lineno, line in enumerate(iter(self.fidx.readline, ''), 1):
                line = line.strip()
                if not line:
                    continue
                fields = line.split('\t')
                try:
                    key = self.key_type(fields[0])
                    pos = int(fields[1])
                except (ValueError, IndexError) as e:
                    self.close()
                    raise MXNetError("Invalid RecordIO index file %s, line %d: %r"
                                     % (self.idx_path, lineno, line)) from e
                self.idx[key] = pos
                self.keys.append(key)

    def close(self):
        if not getattr(self, 'is_open', False):
            return
        super(MXIndexedRecordIO, self).close()
        self.fidx.close()

    def __getstate__(self):
        d = super(MXIndexedRecordIO, self).__getstate__()
        d['fidx'] = None
        return d

    def seek(self, idx):
        """Move the read position to the record of key ``idx``."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        pos = self.idx[idx]
        self.handle.seek(pos)
        # MXNet 1.9.1 keeps its end-of-file flag here, so read_idx after a
        # read() returned None also gives None; this one reads the record.
        self._eof = False

    def tell(self):
        """Byte offset at which the next record will be written."""
        assert self.writable
        return self.handle.tell()

    def read_idx(self, idx):
        """The record of key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Write ``buf`` as the record of key ``idx``."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write('%s\t%d\n' % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple('HEADER', ['flag', 'label', 'id', 'id2'])
"""Header of an image record: ``flag`` (set by ``pack``: 0 for a scalar label,
else the label's length), ``label`` (a number or an array of floats), ``id``
and ``id2`` (high bits of the id, usually 0)."""

_IR_FORMAT = 'IfQQ'
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """Prefix bytes ``s`` with the ``IRHeader`` ``header`` (an array label is
    stored as float32 after the header, and ``flag`` set to its size)."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    s = struct.pack(_IR_FORMAT, *header) + s
    return s


def unpack(s):
    """``(IRHeader, payload bytes)`` of a packed record."""
    if len(s) < _IR_SIZE:
        raise MXNetError("unpack: record of %d bytes is shorter than the %d-byte IRHeader"
                         % (len(s), _IR_SIZE))
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if header.flag * 4 > len(s):
            raise MXNetError("unpack: the IRHeader says %d float32 labels follow, but the "
                             "record has only %d bytes after it" % (header.flag, len(s)))
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def _need_cv2(what):
    if cv2 is None:
        raise ImportError("mx.recordio.%s needs OpenCV to encode/decode images, and it is "
                          "not installed: pip install opencv-python-headless" % what)


def unpack_img(s, iscolor=-1):
    """``(IRHeader, image)``: the payload decoded with ``cv2.imdecode``."""
    _need_cv2('unpack_img')
    header, s = unpack(s)
    img = np.frombuffer(s, dtype=np.uint8)
    img = cv2.imdecode(img, iscolor)
    return header, img


def pack_img(header, img, quality=95, img_fmt='.jpg'):
    """Encode ``img`` with ``cv2.imencode`` (``.jpg`` quality 1-100 or ``.png``
    compression 0-9) and ``pack`` it with ``header``."""
    _need_cv2('pack_img')
    jpg_formats = ['.JPG', '.JPEG']
    png_formats = ['.PNG']
    encode_params = None
    if img_fmt.upper() in jpg_formats:
        encode_params = [cv2.IMWRITE_JPEG_QUALITY, quality]
    elif img_fmt.upper() in png_formats:
        encode_params = [cv2.IMWRITE_PNG_COMPRESSION, quality]

    ret, buf = cv2.imencode(img_fmt, img, encode_params)
    assert ret, 'failed to encode image'
    return pack(header, buf.tobytes())
