"""Property-based fuzzing of every file format aiond reads (issue 15):
``nd.load`` files, ``-symbol.json``, ``.params``, optimizer ``.states`` and
RecordIO. Each mutated or random input must give a clear ``MXNetError`` or a
correct result - never another exception type, never a hang, and never
memory out of proportion to the input. Example counts are fixed and modest
so CI stays in budget (``AIOND_FUZZ_EXAMPLES`` raises them for a longer run).
Sparse NDArray files are left out: their storage is being rebuilt."""
from __future__ import annotations

import base64
import glob
import json
import os
import resource
import struct

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = pytest.mark.timeout(300)

EXAMPLES = int(os.environ.get("AIOND_FUZZ_EXAMPLES", "50"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
HERE = os.path.dirname(os.path.abspath(__file__))
ND_FILES = sorted(glob.glob(os.path.join(HERE, "data", "mxnet_files", "*.nd")))
ND_BYTES = [open(f, "rb").read() for f in ND_FILES] + \
    [open(os.path.join(HERE, "data", "mxnet_files", "dict.params"), "rb").read(),
     open(os.path.join(HERE, "data", "module", "mlpbn-0002.params"), "rb").read()]
INTERESTING = [0, 1, 2, 3, 0x7F, 0xFF, 0x112, 0xF993FAC9, 0xF993FACA, 0xF993FAC8,
               (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 40, (1 << 63) - 1, (1 << 64) - 1]


@st.composite
def mutated(draw, bases):
    """A base file with a few byte-level mutations: flips, cuts, inserts and
    'interesting' integers written over length and magic fields."""
    data = bytearray(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "int32", "int64", "delete"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del data[pos:]
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del data[pos:pos + draw(st.integers(1, 16))]
        elif kind == "int32":
            data[pos:pos + 4] = struct.pack("<I", draw(st.sampled_from(INTERESTING)) & 0xFFFFFFFF)
        else:
            data[pos:pos + 8] = struct.pack("<Q", draw(st.sampled_from(INTERESTING)))
    return bytes(data)


class _MemoryCap:
    """Fail (MemoryError) rather than let a bad length allocate gigabytes."""

    def __init__(self, extra=1 << 30):
        self.extra = extra

    def __enter__(self):
        self.old = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as f:
            vm = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        cap = vm + self.extra
        if self.old[1] != resource.RLIM_INFINITY:
            cap = min(cap, self.old[1])
        resource.setrlimit(resource.RLIMIT_AS, (cap, self.old[1]))

    def __exit__(self, *exc):
        resource.setrlimit(resource.RLIMIT_AS, self.old)


def _outcome(fn):
    """``fn()``'s result, or the MXNetError it raised; any other exception
    fails the test (a MemoryError means the input was allowed to allocate
    far beyond its own size)."""
    try:
        return fn()
    except MXNetError as e:
        return e


# ------------------------------------------------------------------ nd.load
def _check_loaded(res, data):
    if isinstance(res, MXNetError):
        return
    assert isinstance(res, (list, dict))
    vals = res.values() if isinstance(res, dict) else res
    total = 0
    for v in vals:
        assert v is None or isinstance(v, mx.nd.NDArray)
        if v is None:
            continue
        if v.stype == "default":
            total += v.size * np.dtype(v.dtype).itemsize
            v.asnumpy()
        else:       # sparse arrays stay sparse: only their stored parts count
            parts = [v.data, v.indices] + ([v.indptr] if v.stype == "csr" else [])
            total += sum(p.size * np.dtype(p.dtype).itemsize for p in parts)
    # arrays come from the file's own bytes: never more than it holds
    assert total <= len(data), (total, len(data))


@FUZZ
@given(data=mutated(ND_BYTES))
def test_fuzz_nd_load_buffer(data):
    with _MemoryCap():
        res = _outcome(lambda: mx.nd.load_frombuffer(data))
    _check_loaded(res, data)


@FUZZ
@given(data=st.binary(max_size=256))
def test_fuzz_nd_load_random_bytes(data, tmp_path_factory):
    f = str(tmp_path_factory.mktemp("nd") / "x.nd")
    with open(f, "wb") as fh:
        fh.write(data)
    with _MemoryCap():
        res = _outcome(lambda: mx.nd.load(f))
    _check_loaded(res, data)


def test_nd_load_valid_files_still_load():
    for data in ND_BYTES:
        try:
            res = mx.nd.load_frombuffer(data)
        except mx.MXNetError as e:     # MXNet's rule: np-shape files need np-shape semantics
            assert "saved in np shape semantics" in str(e)
            with mx.np_shape(True):
                res = mx.nd.load_frombuffer(data)
        assert isinstance(res, (list, dict))


# ------------------------------------------------------------- symbol JSON
def _graph_json():
    x = mx.sym.var("data")
    h = mx.sym.FullyConnected(x, num_hidden=4, name="fc1")
    h = mx.sym.BatchNorm(h, name="bn")
    h = mx.sym.Activation(h, act_type="relu", name="act")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=2, name="fc2"), name="sm")
    return json.loads(out.tojson())


GRAPH = _graph_json()
_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.integers(-2**70, 2**70),
                  st.floats(allow_nan=True), st.text(max_size=6),
                  st.sampled_from(["null", "FullyConnected", "-1", "(2, 3)", "1e400", "[]"]))
_value = st.recursive(_leaf, lambda c: st.one_of(st.lists(c, max_size=4),
                                                 st.dictionaries(st.text(max_size=6), c,
                                                                 max_size=3)), max_leaves=12)


def _paths(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, path + (i,))


PATHS = list(_paths(GRAPH))


@st.composite
def mutated_graph(draw):
    g = json.loads(json.dumps(GRAPH))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        node = g
        try:
            for k in path[:-1]:
                node = node[k]
            if not path:
                g = draw(_value)
                continue
            if draw(st.booleans()) and isinstance(node, dict):
                node.pop(path[-1], None)
            else:
                node[path[-1]] = draw(_value)
        except (KeyError, IndexError, TypeError):
            pass
    return g


def _check_symbol(res):
    if isinstance(res, MXNetError):
        return
    assert isinstance(res, mx.sym.Symbol)
    res.list_arguments()
    res.list_outputs()


@FUZZ
@given(g=mutated_graph())
def test_fuzz_symbol_json_structure(g, tmp_path_factory):
    f = str(tmp_path_factory.mktemp("sym") / "m-symbol.json")
    with open(f, "w") as fh:
        json.dump(g, fh)
    with _MemoryCap():
        res = _outcome(lambda: mx.sym.load(f))
    if isinstance(res, MXNetError):
        assert f in str(res)
    _check_symbol(res)


@FUZZ
@given(data=mutated([json.dumps(GRAPH).encode()]))
def test_fuzz_symbol_json_bytes(data, tmp_path_factory):
    f = str(tmp_path_factory.mktemp("sym") / "m-symbol.json")
    with open(f, "wb") as fh:
        fh.write(data)
    with _MemoryCap():
        res = _outcome(lambda: mx.sym.load(f))
    _check_symbol(res)


# ------------------------------------------------------------------ .params
@FUZZ
@given(data=mutated([ND_BYTES[-1]]))
def test_fuzz_params_into_a_module_checkpoint(data, tmp_path_factory):
    d = tmp_path_factory.mktemp("params")
    with open(str(d / "m-0000.params"), "wb") as fh:
        fh.write(data)
    with _MemoryCap():
        res = _outcome(lambda: mx.model.load_params(str(d / "m"), 0))
    if not isinstance(res, MXNetError):
        arg, aux = res
        assert all(isinstance(v, mx.nd.NDArray) for v in list(arg.values()) + list(aux.values()))


def _dense_params():
    from aiond.gluon import nn
    net = nn.Dense(3, in_units=2, prefix="d_")
    net.initialize()
    return net


def _gluon_params():
    from aiond.ndarray import io as ndio
    return ndio.dumps([np.ones((3, 2), np.float32), np.zeros(3, np.float32)],
                      ["d_weight", "d_bias"])


@FUZZ
@given(data=mutated([_gluon_params()]))
def test_fuzz_mutated_params_into_gluon(data, tmp_path_factory):
    f = str(tmp_path_factory.mktemp("gp") / "p.params")
    with open(f, "wb") as fh:
        fh.write(data)
    net = _dense_params()
    with _MemoryCap():
        res = _outcome(lambda: net.collect_params().load(f))
    if not isinstance(res, MXNetError):
        assert net.weight.data().shape == (3, 2) and net.bias.data().shape == (3,)


# ------------------------------------------------------------------ .states
def _states_bases():
    from test_optimizer import MX_STATES
    o = mx.optimizer.create("adam", learning_rate=0.1,
                            lr_scheduler=mx.lr_scheduler.FactorScheduler(2, 0.5))
    upd = mx.optimizer.get_updater(o)
    w = mx.nd.ones((2, 2))
    upd(0, mx.nd.ones((2, 2)), w)
    upd("b", mx.nd.ones((2, 2)), w)
    return [base64.b64decode(MX_STATES), upd.get_states(True), upd.get_states(False),
            open(os.path.join(HERE, "data", "module", "mlpbn-0002.states"), "rb").read()]


STATES = _states_bases()


@FUZZ
@given(data=mutated(STATES))
def test_fuzz_states(data):
    upd = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    with _MemoryCap():
        res = _outcome(lambda: upd.set_states(data))
    if not isinstance(res, MXNetError):
        assert isinstance(upd.states, dict)
        assert isinstance(upd.optimizer, mx.optimizer.Optimizer)


# ----------------------------------------------------------------- RecordIO
def _rec_bases(tmp):
    f = os.path.join(tmp, "base.rec")
    w = mx.recordio.MXRecordIO(f, "w")
    for i, rec in enumerate([b"", b"abc", b"\x0a\x23\xd7\xce" * 3 + b"tail", b"x" * 100]):
        w.write(mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), rec))
    w.close()
    return [open(f, "rb").read(), open(os.path.join(HERE, "data", "recordio", "mxnet.rec"),
                                       "rb").read()]


@pytest.fixture(scope="module")
def rec_bases(tmp_path_factory):
    return _rec_bases(str(tmp_path_factory.mktemp("rec")))


@FUZZ
@given(seed=st.integers(0, 1 << 30), data=st.data())
def test_fuzz_recordio(rec_bases, seed, data, tmp_path_factory):
    blob = data.draw(mutated(rec_bases))
    f = str(tmp_path_factory.mktemp("r") / "x.rec")
    with open(f, "wb") as fh:
        fh.write(blob)

    def read_all():
        r = mx.recordio.MXRecordIO(f, "r")
        out = []
        try:
            while len(out) <= len(blob):
                rec = r.read()
                if rec is None:
                    break
                out.append(rec)
                try:
                    mx.recordio.unpack(rec)
                except MXNetError:
                    pass
        finally:
            r.close()
        return out
    with _MemoryCap():
        res = _outcome(read_all)
    if not isinstance(res, MXNetError):
        assert sum(len(r) for r in res) <= len(blob)
