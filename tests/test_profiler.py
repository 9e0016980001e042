import json

import numpy as np
import pytest

import aiond as mx


def test_profiler_records_ops_and_writes_chrome_trace(tmp_path):
    fname = str(tmp_path / "trace.json")
    mx.profiler.set_config(profile_all=True, filename=fname)
    mx.profiler.set_state("run")
    try:
        a = mx.nd.ones((300, 300))
        b = mx.nd.dot(a, a) + 1
        big = mx.nd.ones((1 << 19,)) * 2
        np.testing.assert_array_equal(b.asnumpy(), np.full((300, 300), 301))
        assert big.asnumpy()[-1] == 2
    finally:
        mx.profiler.set_state("stop")
    mx.profiler.dump()
    with open(fname) as f:
        trace = json.load(f)
    names = [e["name"] for e in trace["traceEvents"]]
    for op in ("_ones", "dot", "_plus_scalar", "_mul_scalar", "read"):
        assert op in names, names
    dot = [e for e in trace["traceEvents"] if e["name"] == "dot"][0]
    assert dot["ph"] == "X" and dot["dur"] >= 0 and dot["args"]["reads"] and dot["args"]["writes"]
    table = mx.profiler.dumps()
    assert "dot" in table and "Calls" in table


def test_profiler_off_records_nothing_and_bad_input_is_named():
    mx.profiler.set_state("stop")
    assert mx.engine.get().prof is None
    with pytest.raises(mx.MXNetError, match="unknown option"):
        mx.profiler.set_config(nonsense=1)
    with pytest.raises(mx.MXNetError, match="'run' or 'stop'"):
        mx.profiler.set_state("go")
