"""MXNet 1.x binary NDArray files: ``mx.nd.save`` / ``mx.nd.load`` / ``.params``.

Byte layout (little-endian, as written by MXNet 1.9.1's ``NDArray::Save``)::

    file   := u64 0x112 (kMXAPINDArrayListMagic)  u64 reserved (0, ignored)
              u64 count  array*count
              u64 nnames (0 or count)  (u64 len, utf-8 bytes)*nnames
    array  := u32 magic (0xF993FAC9 = V2; 0xF993FACA = V3, "np shape" semantics)
              i32 stype (0 dense, 1 row_sparse, 2 csr)
              [shape sshape]                      -- storage shape, sparse only
              shape                               -- shape := i32 ndim, i64 dim*ndim
              -- V2 with ndim == 0 (or V3 with a dim of -1): "none" array, ends here
              i32 dev_type (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared)  i32 dev_id
              i32 type_flag (see _FLAGS; 12 = bfloat16)
              [(i32 aux_type_flag, shape aux_shape)*nad]  -- nad: 1 row_sparse, 2 csr
              raw data (prod(sshape or shape) elements)  [raw aux data*nad]
    legacy := u32 0xF993FAC8 (V1) then shape, ctx, type_flag, data (no stype), or
              V0: no magic, the first u32 is ndim, then u32 dims, ctx, type_flag, data.

Notes, all checked against real MXNet 1.9.1:

* A 0-d array (``mx.nd.array(5)``) is written by MXNet in legacy mode as V2 with
  ndim 0 *followed by its data*, but MXNet reads ndim 0 as a data-less "none" array,
  so MXNet cannot load its own file. ``loads`` first parses like MXNet and, if that
  fails or leaves bytes over, re-parses taking such arrays as 0-d scalars.
  ``dumps`` writes every array of a file holding a 0-d array as V3 (what MXNet writes
  under ``np_shape(True)``); MXNet loads those only inside ``with mx.np_shape(True)``.
* "None" arrays load as ``None``. Trailing bytes after the names are ignored (as MXNet).
* Sparse arrays (row_sparse, csr) load as sparse NDArrays (``SparseRecord`` from
  ``loads``) and are written in MXNet's sparse layout (storage shape, aux types,
  values, then indices / indptr and indices).
* bfloat16 data (flag 12) is returned as float32 (exact widening).
* Arrays saved from a GPU are written with that GPU's context and load back
  onto it (onto the CPU where there is no such GPU); all others cpu(0).
"""
from __future__ import annotations

import os
import struct
from typing import Any, Sequence

import numpy as np

from ..base import MXNetError

__all__ = ["dumps", "loads", "save", "load", "load_frombuffer", "SparseRecord"]

_STYPE_NAMES = {1: "row_sparse", 2: "csr"}
_STYPE_IDS = {"row_sparse": 1, "csr": 2}


class SparseRecord:
    """A sparse array of a file: storage type name, shape, dtype and parts
    (``data, indices`` for row_sparse; ``data, indptr, indices`` for csr, in
    MXNet's aux order)."""
    __slots__ = ("stype", "shape", "dtype", "data", "aux")

    def __init__(self, stype, shape, data, aux):
        self.stype, self.shape, self.data, self.aux = stype, tuple(shape), data, list(aux)
        self.dtype = data.dtype

    def todense(self):
        dense = np.zeros(self.shape, self.data.dtype)
        if self.stype == "row_sparse":
            dense[self.aux[0].astype(np.int64)] = self.data
        else:
            indptr, idx = self.aux
            dense[np.repeat(np.arange(self.shape[0]), np.diff(indptr.astype(np.int64))),
                  idx.astype(np.int64)] = self.data
        return dense

_LIST_MAGIC = 0x112
_V1, _V2, _V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
_BF16 = 12
# mshadow TypeFlag -> little-endian numpy dtype (flag 12, bfloat16, handled apart)
_FLAGS = {0: "<f4", 1: "<f8", 2: "<f2", 3: "u1", 4: "<i4", 5: "i1", 6: "<i8", 7: "?",
          8: "<i2", 9: "<u2", 10: "<u4", 11: "<u8"}
_FLAG_OF = {(np.dtype(v).kind, np.dtype(v).itemsize): k for k, v in _FLAGS.items()}
_DEV_TYPES = (1, 2, 3, 5)
_NUM_AUX = {0: 0, 1: 1, 2: 2}
_MAX_NDIM = 64  # numpy's limit; MXNet has none, but no real file comes near it


class _Parser:
    """One pass over a buffer; ``scalar_data`` says how to read a V0/V1/V2 ndim-0 shape."""

    def __init__(self, buf: memoryview, scalar_data: bool, semantics=None) -> None:
        self.buf, self.pos, self.scalar_data, self.saw_scalar = buf, 0, scalar_data, False
        # None: read V2 and V3 alike; else (np shape on, on for every thread) and
        # MXNet's rule: V3 only with np shape on, the others only with it off
        self.semantics = semantics
        self.gpus = {}      # array index -> GPU id, for arrays saved from a GPU

    def fail(self, what: str, at: int | None = None) -> MXNetError:
        return MXNetError("Invalid NDArray file format at byte offset "
                          f"{self.pos if at is None else at}: {what}")

    def need(self, n: int, what: str) -> int:
        left = len(self.buf) - self.pos
        if n > left:
            raise self.fail(f"truncated: {what} needs {n} bytes, only {left} left")
        start, self.pos = self.pos, self.pos + n
        return start

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack_from(fmt, self.buf, self.need(struct.calcsize(fmt), what))

    def shape(self, what: str, ndim: int | None = None, fmt: str = "<i8") -> tuple:
        at = self.pos
        if ndim is None:
            (ndim,) = self.unpack("<i", f"{what} ndim")
            if not 0 <= ndim <= _MAX_NDIM:
                raise self.fail(f"{what} has ndim {ndim}, expected 0..{_MAX_NDIM}", at)
        itemsize = np.dtype(fmt).itemsize
        start = self.need(ndim * itemsize, f"{what} with ndim {ndim}")
        return tuple(int(d) for d in np.frombuffer(self.buf, fmt, ndim, start))

    def data(self, dtype: np.dtype, shape: tuple, what: str) -> np.ndarray:
        n = 1
        for d in shape:
            if d < 0:
                raise self.fail(f"{what} has a negative dimension in shape {shape}")
            n *= d
        start = self.need(n * dtype.itemsize, f"{what} ({dtype}, shape {shape})")
        if n == 0:
            try:
                return np.empty(shape, dtype.newbyteorder("="))
            except (MemoryError, ValueError) as err:
                raise self.fail(f"{what}: bad shape {shape}: {err}", start) from None
        return np.frombuffer(self.buf, dtype, n, start).reshape(shape)

    def dtype(self, flag: int, what: str, at: int) -> np.dtype:
        if flag == _BF16:
            return np.dtype("<u2")
        if flag not in _FLAGS:
            raise self.fail(f"{what} has unknown type flag {flag} (known: 0-12)", at)
        return np.dtype(_FLAGS[flag])

    def array(self, i: int) -> np.ndarray | None:
        what, at = f"array {i}", self.pos
        (magic,) = self.unpack("<I", f"{what} magic")
        stype, sshape, np_shape = 0, None, magic == _V3
        if self.semantics is not None:
            _check_semantics(magic, *self.semantics)
        if magic in (_V2, _V3):
            (stype,) = self.unpack("<i", f"{what} storage type")
            if stype not in _NUM_AUX:
                raise self.fail(f"{what} has unknown storage type {stype} "
                                "(0 dense, 1 row_sparse, 2 csr)", self.pos - 4)
            if np_shape and stype:
                raise self.fail(f"{what} is sparse in np shape (V3) format", self.pos - 4)
            if stype:
                sshape = self.shape(f"{what} storage shape")
            shape = self.shape(f"{what} shape")
        elif magic == _V1:
            shape = self.shape(f"{what} shape")
        else:  # legacy V0: the magic is the ndim, dims are uint32
            if magic > _MAX_NDIM:
                raise self.fail(f"{what} has bad magic 0x{magic:08x}: expected 0xf993fac9 "
                                "(V2), 0xf993faca (V3), 0xf993fac8 (V1) or a small legacy "
                                "ndim", at)
            shape = self.shape(f"{what} legacy shape", magic, "<u4")
        if np_shape and -1 in shape:
            return None
        if not np_shape and not shape:
            self.saw_scalar = True
            if not self.scalar_data:
                return None
        if any(d < 0 for d in shape + (sshape or ())):
            raise self.fail(f"{what} has a negative dimension in shape {shape}", at)
        dev_type, dev_id = self.unpack("<ii", f"{what} context")
        if dev_type not in _DEV_TYPES:
            raise self.fail(f"{what} has unknown device type {dev_type}", self.pos - 8)
        if dev_type == 2 and dev_id >= 0:
            self.gpus[i] = dev_id       # saved from a GPU: MXNet loads it back there
        (flag,) = self.unpack("<i", f"{what} type flag")
        dtype = self.dtype(flag, what, self.pos - 4)
        aux = []
        for k in range(_NUM_AUX[stype]):
            (aflag,) = self.unpack("<i", f"{what} aux {k} type flag")
            adtype = self.dtype(aflag, f"{what} aux {k}", self.pos - 4)
            if adtype.kind not in "iu":
                raise self.fail(f"{what} aux {k} has non-integer type flag {aflag}",
                                self.pos - 4)
            aux.append((adtype, self.shape(f"{what} aux {k} shape")))
        out = self.data(dtype, sshape if stype else shape, f"{what} data")
        auxd = [self.data(t, s, f"{what} aux {k} data") for k, (t, s) in enumerate(aux)]
        if flag == _BF16:  # exact widening: bfloat16 is the top half of a float32
            out = (out.astype(np.uint32) << 16).view(np.float32)
        out = out.astype(out.dtype.newbyteorder("="))  # owned, writable, native order
        if stype:
            _check_sparse(self, what, at, stype, shape, out, auxd)
            auxd = [a.astype(a.dtype.newbyteorder("=")) for a in auxd]
            return SparseRecord(_STYPE_NAMES[stype], shape, out, auxd)
        return out

    def run(self) -> tuple[list, list[str]]:
        (magic,) = self.unpack("<Q", "file magic")
        if magic != _LIST_MAGIC:
            raise self.fail(f"bad file magic 0x{magic:x}, expected 0x112", 0)
        self.unpack("<Q", "reserved field")
        (count,) = self.unpack("<Q", "array count")
        if count * 4 > len(self.buf) - self.pos:
            raise self.fail(f"array count {count} is larger than the "
                            f"{len(self.buf) - self.pos} bytes left can hold", self.pos - 8)
        arrays = [self.array(i) for i in range(count)]
        (nnames,) = self.unpack("<Q", "name count")
        if nnames * 8 > len(self.buf) - self.pos:
            raise self.fail(f"name count {nnames} is larger than the "
                            f"{len(self.buf) - self.pos} bytes left can hold", self.pos - 8)
        names = []
        for i in range(nnames):
            (n,) = self.unpack("<Q", f"name {i} length")
            start = self.need(n, f"name {i}")
            try:
                names.append(bytes(self.buf[start:start + n]).decode("utf-8"))
            except UnicodeDecodeError:
                raise self.fail(f"name {i} is not valid utf-8", start) from None
        if nnames and nnames != count:
            raise self.fail(f"{nnames} names for {count} arrays (must be 0 or equal)")
        return arrays, names


def _check_semantics(magic: int, active: bool, global_on: bool) -> None:
    """MXNet's NDArray::Load rule: a V3 (np shape) array loads only with
    NumPy-shape semantics on; any other only with them off (or on globally)."""
    if magic == _V3 and not active:
        raise MXNetError("ndarray was saved in np shape semantics, must be loaded in the same "
                         "semantics. Please turn on np shape semantics in Python using `with "
                         "np_shape(True)` or decorator `use_np_shape` to scope the code of "
                         "loading the ndarray.")
    if magic != _V3 and active and not global_on:
        raise MXNetError("ndarray was not saved in np shape semantics, but being loaded in np "
                         "shape semantics. Please turn off np shape semantics in Python using "
                         "`with np_shape(False)` to scope the code of loading the ndarray.")


def _check_sparse(p: _Parser, what: str, at: int, stype: int, shape: tuple,
                  values: np.ndarray, aux: list) -> None:
    """Raise unless the parts are a consistent row_sparse (aux: indices) or csr
    (aux: indptr, indices) array."""
    idx = aux[-1].astype(np.int64)
    if stype == 1:
        ok = (len(shape) >= 1 and idx.ndim == 1 and values.shape == idx.shape + shape[1:]
              and not (idx.size and (idx.min() < 0 or idx.max() >= shape[0])))
    else:
        indptr = aux[0].astype(np.int64)
        ok = (len(shape) == 2 and indptr.shape == (shape[0] + 1,)
              and idx.shape == values.shape and indptr[0] == 0 and indptr[-1] == idx.size
              and not np.any(np.diff(indptr) < 0)
              and not (idx.size and (idx.min() < 0 or idx.max() >= shape[1])))
    if not ok:
        kind = "row_sparse" if stype == 1 else "csr"
        raise p.fail(f"{what}: inconsistent {kind} array (shape {shape})", at)


def loads(buf: Any, semantics=None,
          devices=None) -> tuple[list[np.ndarray | None], list[str]]:
    """Parse an NDArray file's bytes into (arrays, names); names is [] for a list file.

    ``semantics``: None reads every format; ``(np_shape_on, on_for_all_threads)``
    applies MXNet's check (V3 arrays only with NumPy-shape semantics on, the
    others only with them off), as ``mx.nd.load`` does. ``devices`` (a dict)
    receives {array index: GPU id} for the arrays the file says were on a GPU."""
    if isinstance(buf, str):
        raise TypeError("buf required to be bytes-like, not str")
    mv = memoryview(buf).cast("B")
    first = _Parser(mv, scalar_data=False, semantics=semantics)
    try:
        result = first.run()
    except MXNetError as err:
        if not first.saw_scalar:
            raise
        result, error = None, err
    if result is not None and (not first.saw_scalar or first.pos == len(mv)):
        if devices is not None:
            devices.update(first.gpus)
        return result
    # An ndim-0 array was met: retry reading it as a 0-d scalar with data, as MXNet
    # 1.9.1 writes one in legacy mode (but cannot read back itself).
    second = _Parser(mv, scalar_data=True, semantics=semantics)
    try:
        retry = second.run()
    except MXNetError:
        if result is not None:
            return result
        raise error from None
    if devices is not None:
        devices.update(second.gpus if (result is None or second.pos == len(mv)) else first.gpus)
    return retry if result is None or second.pos == len(mv) else result


def _encode(arrays: Sequence[Any], names: Sequence[str] | None,
            np_shape: bool | None, gpus=None) -> list:
    arrays = [a if isinstance(a, SparseRecord) else np.asarray(a) for a in arrays]
    if names is not None:
        names = list(names)
        if any(not isinstance(n, str) for n in names):
            raise TypeError("names must be a list of str")
        if len(names) != len(arrays):
            raise ValueError(f"{len(names)} names for {len(arrays)} arrays")
    if np_shape is None:
        np_shape = any(not isinstance(a, SparseRecord) and a.ndim == 0 for a in arrays)
    out = [struct.pack("<QQQ", _LIST_MAGIC, 0, len(arrays))]
    for k, a in enumerate(arrays):
        if isinstance(a, SparseRecord):
            out.extend(_encode_sparse(a, _ctx_of(gpus, k)))
            continue
        dt = a.dtype
        if dt.names == ("bfloat16",) or dt.name == "bfloat16":
            flag, le = _BF16, dt
        elif (dt.kind, dt.itemsize) in _FLAG_OF and dt.kind in "fiub":
            flag, le = _FLAG_OF[(dt.kind, dt.itemsize)], dt.newbyteorder("<")
        else:
            raise TypeError(f"cannot save arrays of dtype {dt} in the MXNet NDArray format")
        out.append(struct.pack(f"<IiI{a.ndim}q", _V3 if np_shape else _V2, 0, a.ndim,
                               *a.shape) + struct.pack("<iii", *_ctx_of(gpus, k), flag))
        flat = np.ascontiguousarray(np.asarray(a, dtype=le).reshape(-1))
        out.append(memoryview(flat.view(np.uint8)))
    names = names or []
    out.append(struct.pack("<Q", len(names)))
    for n in names:
        raw = n.encode("utf-8")
        out.append(struct.pack("<Q", len(raw)) + raw)
    return out


def _ctx_of(gpus, k):
    """(dev_type, dev_id) written for array ``k``: its GPU, as MXNet writes it, else cpu(0)."""
    if gpus and k in gpus:
        return 2, gpus[k]
    return 1, 0


def _flag(dt):
    if (dt.kind, dt.itemsize) in _FLAG_OF and dt.kind in "fiub":
        return _FLAG_OF[(dt.kind, dt.itemsize)], dt.newbyteorder("<")
    raise TypeError(f"cannot save arrays of dtype {dt} in the MXNet NDArray format")


def _encode_sparse(rec: SparseRecord, ctx=(1, 0)) -> list:
    """One sparse array in MXNet's V2 layout (sparse arrays have no V3 form);
    ``ctx``: (dev_type, dev_id) written for it."""
    flag, le = _flag(rec.data.dtype)
    sshape = rec.data.shape
    head = struct.pack(f"<Ii", _V2, _STYPE_IDS[rec.stype])
    head += struct.pack(f"<i{len(sshape)}q", len(sshape), *sshape)
    head += struct.pack(f"<i{len(rec.shape)}q", len(rec.shape), *rec.shape)
    head += struct.pack("<iii", ctx[0], ctx[1], flag)
    aux_le = []
    for a in rec.aux:
        aflag, ale = _flag(a.dtype)
        head += struct.pack(f"<ii{a.ndim}q", aflag, a.ndim, *a.shape)
        aux_le.append(ale)
    pieces = [head, memoryview(np.ascontiguousarray(
        np.asarray(rec.data, dtype=le).reshape(-1)).view(np.uint8))]
    for a, ale in zip(rec.aux, aux_le):
        pieces.append(memoryview(np.ascontiguousarray(
            np.asarray(a, dtype=ale).reshape(-1)).view(np.uint8)))
    return pieces


def dumps(arrays: Sequence[Any], names: Sequence[str] | None = None, *,
          np_shape: bool | None = None) -> bytes:
    """Bytes of an MXNet NDArray file holding numpy ``arrays`` (and ``names``).

    ``np_shape``: None writes V2 unless an array is 0-d, then V3 for all; True forces
    V3 (MXNet's np shape semantics); False forces V2 (0-d arrays as MXNet legacy does).
    """
    return b"".join(_encode(arrays, names, np_shape))


def _path(fname: Any) -> str:
    if not isinstance(fname, (str, bytes, os.PathLike)):
        raise TypeError("fname required to be a string or os.PathLike")
    return os.fsdecode(fname)


def _umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def save(fname: Any, data: Any) -> None:
    """Save an NDArray, a list/tuple of NDArrays or a dict str->NDArray to ``fname``."""
    from .ndarray import NDArray
    path = _path(fname)
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        if any(not isinstance(k, str) for k in data) or \
           any(not isinstance(v, NDArray) for v in data.values()):
            raise TypeError("save only accept dict str->NDArray or list of NDArray")
        names, values = list(data.keys()), list(data.values())
    elif isinstance(data, (list, tuple)):
        if any(not isinstance(v, NDArray) for v in data):
            raise TypeError("save only accept dict str->NDArray or list of NDArray")
        names, values = None, list(data)
    else:
        raise ValueError("data needs to either be a NDArray, dict of str, NDArray pairs "
                         "or a list of NDarrays.")
    from ..util import is_np_shape
    gpus = {k: v.context.device_id for k, v in enumerate(values)
            if v.context.device_typeid == 2}
    pieces = _encode([_record(v) if v._sparse else v.asnumpy() for v in values], names,
                     is_np_shape(), gpus)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        import tempfile  # only when saving: keeps `import aiond` light
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                                   suffix=".tmp", dir=folder)
    except OSError as err:
        raise MXNetError(f"cannot write NDArray file {path!r}: "
                         f"{err.strerror or err}") from err
    try:
        with os.fdopen(fd, "wb") as f:
            for piece in pieces:
                f.write(piece)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):
            raise MXNetError(f"cannot write NDArray file {path!r}: "
                             f"{err.strerror or err}") from err
        raise


def _record(v) -> SparseRecord:
    """The SparseRecord of sparse NDArray ``v`` (waits for its value)."""
    val = v._value()
    aux = [val.indices] if v.stype == "row_sparse" else [val.indptr, val.indices]
    return SparseRecord(v.stype, v.shape, val.data, aux)


def from_record(rec: SparseRecord, ctx: Any = None):
    """A sparse NDArray holding a copy of ``rec``."""
    from ..context import current_context
    from ..ops.sparse import CSR, RSP
    from ._sparse_invoke import new_sparse
    ctx = current_context() if ctx is None else ctx
    if rec.stype == "row_sparse":
        value = RSP(rec.data.copy(), rec.aux[0].copy())
    else:
        value = CSR(rec.data.copy(), rec.aux[1].copy(), rec.aux[0].copy())
    h = new_sparse(rec.stype, rec.shape, rec.data.dtype, ctx, [a.dtype for a in rec.aux])
    h._st.arr = value
    return h


def _sparse_from_state(stype, shape, dtype, parts, dev_type, dev_id):
    """Unpickle a sparse NDArray (its ``__reduce__``)."""
    from ..context import Context
    ctx = Context(dev_type, dev_id) if dev_type == "gpu" else Context("cpu", 0)
    if stype == "row_sparse":
        rec = SparseRecord(stype, shape, np.asarray(parts[0], dtype=dtype), [parts[1]])
    else:
        rec = SparseRecord(stype, shape, np.asarray(parts[0], dtype=dtype),
                           [parts[2], parts[1]])
    return from_record(rec, ctx)


def _wrap(arrays: list, names: list[str], ctx: Any, gpus=None) -> list | dict:
    from .ndarray import array as _array
    where = {}
    if ctx is None:
        # as MXNet: each array comes back on the context it was saved from -
        # gpu(i) where there is one, the CPU for the rest - whatever the
        # current default context is
        from ..context import cpu
        ctx = cpu()
        if gpus:
            from ..context import gpu, num_gpus
            n = num_gpus()
            where = {k: gpu(i) for k, i in gpus.items() if i < n}
    out = [None if a is None else from_record(a, where.get(k, ctx))
           if isinstance(a, SparseRecord)
           else _array(a, ctx=where.get(k, ctx), dtype=a.dtype) for k, a in enumerate(arrays)]
    return dict(zip(names, out)) if names else out


def load(fname: Any, ctx: Any = None) -> list | dict:
    """Load a file written by ``save`` (or MXNet): a list, or a dict if it has names."""
    path = _path(fname)
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except OSError as err:
        raise MXNetError(f"cannot open NDArray file {path!r}: "
                         f"{err.strerror or err}") from err
    gpus = {}
    try:
        arrays, names = loads(buf, _semantics(), gpus)
    except MXNetError as err:
        raise MXNetError(f"{err} (file {path!r})") from None
    return _wrap(arrays, names, ctx, gpus)


def _semantics():
    from .. import util
    return util.is_np_shape(), util._shape_global


def load_frombuffer(buf: Any, ctx: Any = None) -> list | dict:
    """Like ``load``, from the bytes of a file."""
    if isinstance(buf, str) or not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError("buf required to be bytes, bytearray or memoryview")
    gpus = {}
    arrays, names = loads(buf, _semantics(), gpus)
    return _wrap(arrays, names, ctx, gpus)


def dumps_one(a: np.ndarray, np_shape: bool = False) -> bytes:
    """One array in MXNet's per-array layout (``NDArray::Save``, no list header),
    the ``handle`` bytes of MXNet's ``NDArray.__getstate__``."""
    return b"".join(_encode([a], None, np_shape)[1:-1])


def loads_one(buf: Any) -> np.ndarray | None:
    """The array of :func:`dumps_one` bytes (or MXNet's ``__getstate__`` bytes)."""
    mv = memoryview(buf).cast("B")
    p = _Parser(mv, scalar_data=True)
    a = p.array(0)
    if p.pos != len(mv):
        raise p.fail(f"{len(mv) - p.pos} bytes left after the array")
    return a
