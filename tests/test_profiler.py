import json
import os

import numpy as np
import pytest

import aiond as mx


def test_profiler_records_ops_and_writes_chrome_trace(tmp_path):
    fname = str(tmp_path / "trace.json")
    mx.profiler.set_config(profile_all=True, filename=fname, aggregate_stats=True)
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
    assert "dot" in table and "Total Count" in table


def test_profiler_off_records_nothing_and_bad_input_is_named():
    mx.profiler.set_state("stop")
    assert mx.engine.get().prof is None
    with pytest.raises(mx.MXNetError, match="unknown option"):
        mx.profiler.set_config(nonsense=1)
    with pytest.raises(mx.MXNetError, match="'run' or 'stop'"):
        mx.profiler.set_state("go")


def test_annotations_counters_markers_and_json_aggregates(tmp_path):
    import time
    fname = str(tmp_path / "annot.json")
    mx.profiler.set_config(profile_all=True, filename=fname, aggregate_stats=True,
                           continuous_dump=False)
    mx.profiler.set_state("run")
    mx.profiler.dumps(reset=True)
    dom = mx.profiler.Domain("PyDomain")
    task = dom.new_task("work")
    for _ in range(2):
        task.start()
        time.sleep(0.002)
        task.stop()
    ev = mx.profiler.Event("ev")
    ev.start()
    ev.stop()
    frame = mx.profiler.Frame(dom, "frame")
    frame.start()
    frame.stop()
    ctr = mx.profiler.Counter(dom, "ctr", 5)
    ctr += 3
    ctr -= 1
    mx.profiler.Marker(dom, "here").mark("thread")
    y = mx.nd.sqrt(mx.nd.ones((10, 10)))
    y = y + 1
    y = y + 1
    mx.nd.waitall()
    # paused: nothing is recorded
    mx.profiler.pause()
    task.start()
    task.stop()
    mx.nd.sqrt(mx.nd.ones((2,))).wait_to_read()
    mx.profiler.resume()
    stats = json.loads(mx.profiler.dumps(format="json"))
    assert set(stats) == {"Time", "Memory", "Unit"}
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}
    ops = stats["Time"]["operator"]
    assert ops["sqrt"]["Count"] == 1 and ops["_plus_scalar"]["Count"] == 2
    assert stats["Time"]["PyDomain"]["work"]["Count"] == 2
    assert stats["Time"]["PyDomain"]["work"]["Min"] >= 1.5     # ms
    assert stats["Time"]["PyDomain"]["ctr"] == {"Count": 3, "Total": 0.007, "Min": 0.005,
                                                "Max": 0.008, "Avg": 0.0015}
    assert stats["Time"]["event"]["ev"]["Count"] == 1
    mem = stats["Memory"]["Device Storage"]["Memory: cpu/0"]
    assert mem["Count"] >= 1 and mem["Max"] > 0
    # sorting
    for key, field in (("count", "Count"), ("max", "Max"), ("min", "Min")):
        for asc in (False, True):
            d = json.loads(mx.profiler.dumps(format="json", sort_by=key, ascending=asc))
            vals = [v[field] for v in d["Time"]["operator"].values()]
            assert vals == sorted(vals, reverse=not asc)
    with pytest.raises(AssertionError):
        mx.profiler.dumps(sort_by="median")
    assert "sqrt" in mx.profiler.dumps(reset=True)
    assert json.loads(mx.profiler.dumps(format="json"))["Time"] == {}
    mx.profiler.set_state("stop")
    mx.profiler.dump()
    with open(fname) as f:
        trace = json.load(f)["traceEvents"]
    by_ph = {}
    for e in trace:
        by_ph.setdefault(e["ph"], []).append(e)
    assert [e["args"]["ctr"] for e in by_ph["C"] if e["name"] == "ctr"] == [5, 8, 7]
    assert [(e["name"], e["s"]) for e in by_ph["i"]] == [("here", "t")]
    assert sum(1 for e in by_ph["X"] if e["name"] == "work") == 2
    assert sum(1 for e in by_ph["X"] if e["name"] == "sqrt") == 1


def test_continuous_dump_appends_and_finishes_valid_json(tmp_path):
    fname = str(tmp_path / "cont.json")
    mx.profiler.set_config(profile_all=True, filename=fname, continuous_dump=True,
                           dump_period=0.05)
    mx.profiler.set_state("run")
    sizes = []
    for _ in range(3):
        mx.nd.ones((3,)).wait_to_read()
        mx.profiler.dump(False)
        sizes.append(os.path.getsize(fname))
    assert sizes == sorted(sizes)
    mx.profiler.set_state("stop")
    mx.profiler.dump(True)
    with open(fname) as f:
        names = [e["name"] for e in json.load(f)["traceEvents"]]
    assert names.count("_ones") == 3
    mx.profiler.set_config(continuous_dump=False)


def test_custom_op_scope_names_its_python_and_the_ops_it_pushes():
    from aiond.engine.profiler import custom_op_scope
    mx.profiler.set_config(profile_all=True, aggregate_stats=True, continuous_dump=False,
                           filename="custom_scope.json")
    mx.profiler.set_state("run")
    mx.profiler.dumps(reset=True)
    try:
        with custom_op_scope("MySigmoid"):
            mx.nd.zeros((3, 3)).wait_to_read()
        mx.nd.zeros((2,)).wait_to_read()
        stats = json.loads(mx.profiler.dumps(format="json"))
    finally:
        mx.profiler.set_state("stop")
    custom = stats["Time"]["Custom Operator"]
    assert custom["MySigmoid::pure_python"]["Count"] == 1
    assert custom["MySigmoid::_zeros"]["Count"] == 1
    assert stats["Time"]["operator"]["_zeros"]["Count"] == 1
    if os.path.exists("custom_scope.json"):
        os.remove("custom_scope.json")
