"""The Open Inference Protocol (KServe v2, Triton) without a transport.

Decoding an inference request (JSON tensors, or the binary tensor data
extension: a JSON header of ``Inference-Header-Content-Length`` bytes
followed by the raw tensors), checking it against a model's declared inputs
and outputs, and encoding the response, are the same for HTTP and gRPC;
the transports only move bytes and map :class:`ProtocolError` to a status
(HTTP 400/404/503, gRPC INVALID_ARGUMENT/NOT_FOUND/UNAVAILABLE/RESOURCE_EXHAUSTED).

Datatypes and their numpy dtypes (little-endian on the wire)::

    BOOL  bool     UINT8..UINT64  uint8..uint64   INT8..INT64  int8..int64
    FP16  float16  FP32  float32  FP64  float64   BYTES  object (bytes items)

A BYTES tensor travels in JSON as strings and in binary as, per element,
a 4-byte little-endian length followed by that many bytes. BF16 is part of
the protocol but has no numpy dtype: it is refused with a message saying so.
"""
from __future__ import annotations

import json
import math
import struct

import numpy as np

try:                       # optional: parses and writes JSON several times faster
    import orjson as _orjson
except ImportError:        # pragma: no cover - the stdlib fallback
    _orjson = None

__all__ = ["DATATYPES", "ProtocolError", "NotFound", "Unavailable", "TensorSpec",
           "InferInput", "RequestedOutput", "InferRequest", "datatype_of", "dtype_of",
           "parse_infer_request", "decode_tensor_json", "decode_tensor_bytes",
           "encode_infer_response", "tensor_bytes", "bytes_to_array", "check_inputs",
           "dumps", "loads"]

DATATYPES = {
    "BOOL": np.dtype(np.bool_),
    "UINT8": np.dtype("<u1"), "UINT16": np.dtype("<u2"), "UINT32": np.dtype("<u4"),
    "UINT64": np.dtype("<u8"),
    "INT8": np.dtype("<i1"), "INT16": np.dtype("<i2"), "INT32": np.dtype("<i4"),
    "INT64": np.dtype("<i8"),
    "FP16": np.dtype("<f2"), "FP32": np.dtype("<f4"), "FP64": np.dtype("<f8"),
    "BYTES": np.dtype(object),
}
_BY_DTYPE = {v.newbyteorder("=") if v.kind != "O" else v: k for k, v in DATATYPES.items()}
MAX_DIMS = 32
_LEN = struct.Struct("<I")


class ProtocolError(Exception):
    """A request the protocol refuses; ``status`` is the HTTP status."""
    status = 400

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status


class NotFound(ProtocolError):
    """An unknown model or version (HTTP 404, gRPC NOT_FOUND)."""
    status = 404


class Unavailable(ProtocolError):
    """The model exists but cannot serve now: not loaded, or overloaded
    (HTTP 503 with ``Retry-After``, gRPC UNAVAILABLE / RESOURCE_EXHAUSTED)."""
    status = 503

    def __init__(self, message, retry_after=None, overloaded=False):
        super().__init__(message)
        self.retry_after = retry_after
        self.overloaded = overloaded


def dumps(obj) -> bytes:
    if _orjson is not None:
        return _orjson.dumps(obj, option=_orjson.OPT_SERIALIZE_NUMPY)
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()


def _no_constant(name):
    raise ValueError("%s is not a JSON number" % name)


def loads(data):
    """JSON from bytes; ProtocolError(400) when malformed."""
    try:
        if _orjson is not None:
            return _orjson.loads(data)
        if isinstance(data, memoryview):
            data = data.tobytes()       # the JSON header of a binary request: small
        return json.loads(data, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ProtocolError("malformed JSON in the request: %s" % e) from None


def dtype_of(datatype: str) -> np.dtype:
    dt = DATATYPES.get(datatype) if isinstance(datatype, str) else None
    if dt is None:
        if datatype == "BF16":
            raise ProtocolError("datatype BF16 is not supported by this server (numpy has "
                                "no bfloat16); send FP32 or FP16")
        raise ProtocolError("unknown datatype %r; expected one of %s"
                            % (datatype, ", ".join(DATATYPES)))
    return dt


def datatype_of(dtype) -> str:
    """The protocol's name of a numpy dtype (``float32`` -> ``FP32``)."""
    dt = np.dtype(dtype)
    if dt.kind in "OSU":
        return "BYTES"
    name = _BY_DTYPE.get(dt.newbyteorder("="))
    if name is None:
        raise ValueError("dtype %s has no datatype in the inference protocol" % dt)
    return name


class TensorSpec:
    """A model's declared input or output: name, datatype and shape
    (``-1`` for a variable axis; without the batch axis for batching models)."""
    __slots__ = ("name", "datatype", "shape", "dtype", "_full")

    def __init__(self, name, datatype, shape):
        self.name = str(name)
        self.datatype = datatype if datatype in DATATYPES else datatype_of(datatype)
        self.dtype = DATATYPES[self.datatype]
        self.shape = None if shape is None else \
            tuple(-1 if d is None or int(d) < 0 else int(d) for d in shape)
        self._full = {}

    def full_shape(self, max_batch_size):
        """The shape a request carries: [-1] + shape when batching (cached)."""
        f = self._full.get(max_batch_size)
        if f is None:
            f = self._full[max_batch_size] = self.metadata(max_batch_size)["shape"]
        return f

    def metadata(self, max_batch_size=0):
        """``shape`` None: any shape (reported as [-1, -1])."""
        dims = [-1] if self.shape is None else list(self.shape)
        shape = ([-1] if max_batch_size else []) + dims
        return {"name": self.name, "datatype": self.datatype, "shape": shape}

    def __repr__(self):
        return "TensorSpec(%r, %r, %r)" % (self.name, self.datatype, self.shape)


def _shape_str(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def _shape(value, what):
    if not isinstance(value, (list, tuple)) or len(value) > MAX_DIMS:
        raise ProtocolError("%s: 'shape' must be a list of at most %d integers, got %r"
                            % (what, MAX_DIMS, _short(value)))
    for d in value:
        if type(d) is not int or d < 0:       # bools are ints in Python: refused too
            raise ProtocolError("%s: 'shape' must hold integers >= 0, got %s"
                                % (what, _short(value)))
    return tuple(value)


def _short(v, n=80):
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ------------------------------------------------------------ tensor data
def decode_tensor_json(name, datatype, shape, data):
    """The array of ``shape`` held by ``data`` (flat or nested row-major)."""
    dt = dtype_of(datatype)
    n = _count(shape)
    if not isinstance(data, list):
        if n == 1 and isinstance(data, (int, float, str, bool)):
            data = [data]
        else:
            raise ProtocolError("input %r: 'data' must be a JSON array, got %s"
                                % (name, type(data).__name__))
    flat = data
    if flat and isinstance(flat[0], list):
        flat = _flatten(name, data)
    if len(flat) != n:
        raise ProtocolError("input %r: shape %s needs %d elements, 'data' holds %d"
                            % (name, _shape_str(shape), n, len(flat)))
    if dt.kind == "O":
        out = np.empty(n, dtype=object)
        for i, v in enumerate(flat):
            if not isinstance(v, str):
                raise ProtocolError("input %r: BYTES data must be strings, got %s"
                                    % (name, _short(v, 40)))
            out[i] = v.encode("utf-8")
        return out.reshape(shape)
    if dt.kind == "b":
        for v in flat:
            if v is not True and v is not False:
                raise ProtocolError("input %r: BOOL data must be true or false, got %s"
                                    % (name, _short(v, 40)))
        return np.array(flat, dtype=np.bool_).reshape(shape)
    if n == 0:
        return np.empty(shape, dtype=dt.newbyteorder("="))
    try:
        arr = np.array(flat)
    except (ValueError, TypeError, OverflowError):
        raise ProtocolError("input %r: 'data' must hold %s numbers" % (name, datatype)) from None
    kind = arr.dtype.kind
    if kind in "Of" and dt.kind in "iu" and all(type(v) is int for v in flat):
        kind = "i"      # ints past int64's range (numpy made floats or objects): checked below
    if kind == "b" or kind not in ("iuf" if dt.kind == "f" else "iu"):
        raise ProtocolError("input %r: datatype %s needs %s, got %s" % (
            name, datatype, "numbers" if dt.kind == "f" else "integers",
            "true/false" if kind == "b" else "strings" if kind in "US" else
            "fractions" if kind == "f" else "other values"))
    native = dt.newbyteorder("=")
    if dt.kind == "f":
        with np.errstate(over="ignore"):
            out = arr.astype(native)
        if not np.isfinite(out).all():
            raise ProtocolError("input %r: a value is outside %s's range" % (name, datatype))
    else:
        info = np.iinfo(native)
        try:
            lo, hi = min(flat), max(flat)
        except TypeError:
            raise ProtocolError("input %r: datatype %s needs integers" % (name, datatype)) \
                from None
        if lo < info.min or hi > info.max:
            raise ProtocolError("input %r: a value is outside %s's range [%d, %d]"
                                % (name, datatype, info.min, info.max))
        out = np.array(flat, dtype=native)
    return out.reshape(shape)


def _flatten(name, data):
    out = []
    stack = [iter(data)]
    depth_limit = MAX_DIMS
    while stack:
        for v in stack[-1]:
            if isinstance(v, list):
                if len(stack) >= depth_limit:
                    raise ProtocolError("input %r: 'data' nests deeper than %d"
                                        % (name, depth_limit))
                stack.append(iter(v))
                break
            out.append(v)
        else:
            stack.pop()
    return out


def bytes_to_array(name, buf):
    """A flat object array of the BYTES elements serialised in ``buf``."""
    out = []
    mv = memoryview(buf)
    off, end = 0, len(mv)
    while off < end:
        if end - off < 4:
            raise ProtocolError("input %r: BYTES data ends inside an element's 4-byte "
                                "length" % name)
        (k,) = _LEN.unpack_from(mv, off)
        off += 4
        if k > end - off:
            raise ProtocolError("input %r: a BYTES element of %d bytes runs past the end of "
                                "its data (%d bytes left)" % (name, k, end - off))
        out.append(bytes(mv[off:off + k]))
        off += k
    arr = np.empty(len(out), dtype=object)
    arr[:] = out
    return arr


def decode_tensor_bytes(name, datatype, shape, buf):
    """The array of ``shape`` whose raw little-endian bytes are ``buf`` (no copy for
    fixed-size types: the array is a read-only view of ``buf``)."""
    dt = dtype_of(datatype)
    n = _count(shape)
    if dt.kind == "O":
        arr = bytes_to_array(name, buf)
        if arr.size != n:
            raise ProtocolError("input %r: shape %s needs %d BYTES elements, the data holds %d"
                                % (name, _shape_str(shape), n, arr.size))
        return arr.reshape(shape)
    need = n * dt.itemsize
    if len(buf) != need:
        raise ProtocolError("input %r: shape %s of %s needs %d bytes, got %d"
                            % (name, _shape_str(shape), datatype, need, len(buf)))
    arr = np.frombuffer(buf, dtype=dt).reshape(shape)
    if dt.kind == "b" and n and (arr.view(np.uint8) > 1).any():
        raise ProtocolError("input %r: BOOL bytes must be 0 or 1" % name)
    if not dt.isnative:         # big-endian host: swap once
        arr = arr.astype(dt.newbyteorder("="))
    return arr


def tensor_bytes(arr, datatype=None):
    """The raw little-endian bytes of ``arr`` (BYTES: length-prefixed elements)."""
    arr = np.asarray(arr)
    if datatype == "BYTES" or arr.dtype.kind in "OSU":
        parts = []
        for v in arr.reshape(-1).tolist():
            if isinstance(v, str):
                v = v.encode("utf-8")
            elif not isinstance(v, (bytes, bytearray)):
                v = str(v).encode("utf-8")
            parts.append(_LEN.pack(len(v)))
            parts.append(v)
        return b"".join(parts)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return np.ascontiguousarray(arr).data.cast("B") if arr.size else b""


# ---------------------------------------------------------------- requests
class InferInput:
    __slots__ = ("name", "datatype", "shape", "data")

    def __init__(self, name, datatype, shape, data):
        self.name, self.datatype, self.shape, self.data = name, datatype, shape, data


class RequestedOutput:
    __slots__ = ("name", "binary")

    def __init__(self, name, binary):
        self.name, self.binary = name, binary


class InferRequest:
    """A decoded request: ``inputs`` (InferInput with numpy ``data``),
    ``outputs`` (RequestedOutput, empty for all), ``parameters``."""
    __slots__ = ("id", "parameters", "inputs", "outputs", "binary_output")

    def __init__(self, id, parameters, inputs, outputs, binary_output):
        self.id, self.parameters, self.inputs = id, parameters, inputs
        self.outputs, self.binary_output = outputs, binary_output

    @property
    def priority(self) -> int:
        p = self.parameters.get("priority", 0)
        if type(p) is not int or p < 0:
            raise ProtocolError("parameter 'priority' must be an integer >= 0, got %r" % (p,))
        return p

    @property
    def timeout(self):
        """Seconds, from the 'timeout' parameter (microseconds as in Triton)."""
        t = self.parameters.get("timeout")
        if t is None:
            return None
        if type(t) is not int or t < 0:
            raise ProtocolError("parameter 'timeout' must be microseconds >= 0, got %r" % (t,))
        return t / 1e6 if t else None


def _params(obj, what):
    p = obj.get("parameters")
    if p is None:
        return {}
    if not isinstance(p, dict):
        raise ProtocolError("%s: 'parameters' must be an object" % what)
    return p


def parse_infer_request(body, header_length=None) -> InferRequest:
    """Decode an HTTP request body. ``header_length``: the value of the
    ``Inference-Header-Content-Length`` header (None: the body is all JSON)."""
    if header_length is None:
        head, rest = body, None
    else:
        try:
            hl = int(header_length)
            if hl < 0:
                raise ValueError
        except (TypeError, ValueError):
            raise ProtocolError("Inference-Header-Content-Length %r is not a byte count"
                                % (header_length,)) from None
        if hl > len(body):
            raise ProtocolError("Inference-Header-Content-Length is %d but the body has only "
                                "%d bytes" % (hl, len(body)))
        mv = memoryview(body)
        head, rest = mv[:hl], mv[hl:]
    obj = loads(head)
    return decode_request_object(obj, rest)


def decode_request_object(obj, binary=None) -> InferRequest:
    if not isinstance(obj, dict):
        raise ProtocolError("the inference request must be a JSON object")
    rid = obj.get("id", "")
    if not isinstance(rid, str):
        raise ProtocolError("'id' must be a string")
    params = _params(obj, "request")
    raw_inputs = obj.get("inputs")
    if not isinstance(raw_inputs, list) or not raw_inputs:
        raise ProtocolError("the request needs a non-empty 'inputs' list")
    inputs, seen, off = [], set(), 0
    total = len(binary) if binary is not None else 0
    for i, t in enumerate(raw_inputs):
        if not isinstance(t, dict):
            raise ProtocolError("inputs[%d] must be an object" % i)
        name = t.get("name")
        if not isinstance(name, str):
            raise ProtocolError("inputs[%d] needs a string 'name'" % i)
        if name in seen:
            raise ProtocolError("input %r is given twice" % name)
        seen.add(name)
        datatype = t.get("datatype")
        if not isinstance(datatype, str):
            raise ProtocolError("input %r needs a string 'datatype'" % name)
        dtype_of(datatype)
        shape = _shape(t.get("shape"), "input %r" % name)
        p = _params(t, "input %r" % name)
        if "shared_memory_region" in p:
            raise ProtocolError("input %r: shared memory is not supported by this server; "
                                "send the data in the request" % name)
        size = p.get("binary_data_size")
        if size is not None:
            if type(size) is not int or size < 0:
                raise ProtocolError("input %r: 'binary_data_size' must be an integer >= 0"
                                    % name)
            if "data" in t:
                raise ProtocolError("input %r has both 'data' and 'binary_data_size'" % name)
            if binary is None:
                raise ProtocolError("input %r has 'binary_data_size' but the request has no "
                                    "binary data (Inference-Header-Content-Length missing)"
                                    % name)
            if off + size > total:
                raise ProtocolError("input %r: binary_data_size %d runs past the end of the "
                                    "body (%d bytes of binary data left)"
                                    % (name, size, total - off))
            data = decode_tensor_bytes(name, datatype, shape, binary[off:off + size])
            off += size
        else:
            if "data" not in t:
                raise ProtocolError("input %r has no 'data'" % name)
            data = decode_tensor_json(name, datatype, shape, t["data"])
        inputs.append(InferInput(name, datatype, shape, data))
    if binary is not None and off != total:
        raise ProtocolError("the body holds %d bytes of binary data but the inputs' "
                            "binary_data_size add up to %d" % (total, off))
    binary_output = params.get("binary_data_output", False)
    if not isinstance(binary_output, bool):
        raise ProtocolError("parameter 'binary_data_output' must be true or false")
    outputs = []
    raw_outputs = obj.get("outputs")
    if raw_outputs is not None:
        if not isinstance(raw_outputs, list):
            raise ProtocolError("'outputs' must be a list")
        names = set()
        for i, t in enumerate(raw_outputs):
            if not isinstance(t, dict) or not isinstance(t.get("name"), str):
                raise ProtocolError("outputs[%d] needs a string 'name'" % i)
            name = t["name"]
            if name in names:
                raise ProtocolError("output %r is requested twice" % name)
            names.add(name)
            p = _params(t, "output %r" % name)
            if "shared_memory_region" in p:
                raise ProtocolError("output %r: shared memory is not supported by this "
                                    "server" % name)
            if p.get("classification"):
                raise ProtocolError("output %r: the classification extension is not "
                                    "supported by this server" % name)
            b = p.get("binary_data", binary_output)
            if not isinstance(b, bool):
                raise ProtocolError("output %r: 'binary_data' must be true or false" % name)
            outputs.append(RequestedOutput(name, b))
    return InferRequest(rid, params, inputs, outputs, binary_output)


def check_inputs(request, specs, max_batch_size, model):
    """The request's input arrays in the order of ``specs`` (TensorSpec), each
    checked for name, datatype and shape; and the batch size (rows, or 1
    for a model without batching). Raises ProtocolError naming what was wrong."""
    by_name = {t.name: t for t in request.inputs}
    out = []
    rows = None
    for s in specs:
        t = by_name.pop(s.name, None)
        if t is None:
            raise ProtocolError("model %r expects input %r (%s %s), the request lacks it"
                                % (model, s.name, s.datatype,
                                   _shape_str(s.full_shape(max_batch_size))))
        if t.datatype != s.datatype:
            raise ProtocolError("input %r of model %r has datatype %s, the request sent %s"
                                % (s.name, model, s.datatype, t.datatype))
        shape = t.shape
        want = s.full_shape(max_batch_size)
        if s.shape is None:     # any shape (with the batch axis when batching)
            want = want[:1] if max_batch_size else []
            if len(shape) < len(want):
                raise ProtocolError("input %r of model %r needs a batch axis, the request "
                                    "sent shape %s" % (s.name, model, _shape_str(shape)))
        elif len(shape) != len(want) or any(w >= 0 and w != d for w, d in zip(want, shape)):
            raise ProtocolError("input %r of model %r has shape %s, the request sent %s"
                                % (s.name, model, _shape_str(want), _shape_str(shape)))
        if max_batch_size:
            if shape[0] < 1 or shape[0] > max_batch_size:
                raise ProtocolError("input %r: the batch axis holds %d rows; model %r takes "
                                    "1 to %d" % (s.name, shape[0], model, max_batch_size))
            if rows is not None and shape[0] != rows:
                raise ProtocolError("the inputs have different batch sizes (%d and %d)"
                                    % (rows, shape[0]))
            rows = shape[0]
        out.append(t.data)
    if by_name:
        raise ProtocolError("model %r has no input %s; its inputs are %s"
                            % (model, ", ".join(map(repr, sorted(by_name))),
                               ", ".join(repr(s.name) for s in specs)))
    return out, rows or 1


def check_outputs(request, specs, model):
    names = {s.name for s in specs}
    for o in request.outputs:
        if o.name not in names:
            raise ProtocolError("model %r has no output %r; its outputs are %s"
                                % (model, o.name, ", ".join(repr(s.name) for s in specs)))


# --------------------------------------------------------------- responses
def _json_data(name, arr, datatype):
    if datatype == "BYTES":
        out = []
        for v in arr.reshape(-1).tolist():
            if isinstance(v, (bytes, bytearray)):
                try:
                    v = v.decode("utf-8")
                except UnicodeDecodeError:
                    raise ProtocolError("output %r holds bytes that are not UTF-8: request it "
                                        "with binary_data" % name) from None
            out.append(v if isinstance(v, str) else str(v))
        return out
    flat = arr.reshape(-1)
    if arr.dtype.kind == "f" and not np.isfinite(flat).all():
        obj = flat.astype(object)
        bad = ~np.isfinite(flat)
        obj[bad] = ["NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
                    for v in flat[bad].tolist()]
        return obj.tolist()
    if _orjson is not None:
        return np.ascontiguousarray(flat)     # orjson writes numpy arrays natively
    return flat.tolist()


def encode_infer_response(model_name, model_version, request, results, specs):
    """(JSON header bytes, [binary chunks]) for ``results`` ({output name:
    array}). The header holds every requested output (all of them when none
    were named); binary chunks follow in the header's order."""
    by_name = {s.name: s for s in specs}
    if request.outputs:
        wanted = [(o.name, o.binary) for o in request.outputs]
    else:
        wanted = [(s.name, request.binary_output) for s in specs]
    outs, chunks = [], []
    for name, binary in wanted:
        arr = np.asarray(results[name])
        spec = by_name.get(name)
        datatype = spec.datatype if spec is not None else datatype_of(arr.dtype)
        if datatype != "BYTES" and arr.dtype != DATATYPES[datatype].newbyteorder("="):
            with np.errstate(all="ignore"):
                arr = arr.astype(DATATYPES[datatype].newbyteorder("="))
        o = {"name": name, "datatype": datatype, "shape": list(arr.shape)}
        if binary:
            b = tensor_bytes(arr, datatype)
            o["parameters"] = {"binary_data_size": len(b)}
            chunks.append(b)
        else:
            o["data"] = _json_data(name, arr, datatype)
        outs.append(o)
    resp = {"model_name": model_name, "model_version": str(model_version), "outputs": outs}
    if request.id:
        resp["id"] = request.id
    return dumps(resp), chunks


def error_body(message) -> bytes:
    return dumps({"error": str(message)})


def retry_after_header(seconds):
    return str(max(1, int(math.ceil(seconds or 1.0))))
