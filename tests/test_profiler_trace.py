"""The profiler's trace shows why ops ran when they did: one track per
thread, push spans, push-to-run queueing, dependency flow arrows, and
segments as spans enclosing their members."""
import json
import os
import threading
import time
import types

import numpy as np
import pytest

import aiond as mx


def _record(tmp_path, body, name="trace.json"):
    """Run ``body()`` under the profiler; return (trace events, stats JSON)."""
    fname = str(tmp_path / name)
    mx.profiler.set_config(profile_all=True, filename=fname, aggregate_stats=True,
                           continuous_dump=False)
    mx.profiler.set_state("run")
    mx.profiler.dumps(reset=True)
    try:
        body()
        mx.nd.waitall()
    finally:
        mx.profiler.set_state("stop")
    stats = json.loads(mx.profiler.dumps(format="json"))
    mx.profiler.dump()
    with open(fname) as f:
        return json.load(f)["traceEvents"], stats, fname


def _enclosing(spans, tid, ts):
    """The span a flow event at ``ts`` on track ``tid`` binds to, as the
    Perfetto trace processor binds a flow start and a "bp": "e" end: the
    span last begun on that track at or before ``ts`` (it does not close
    finished spans first), which must also still be open at ``ts``."""
    begun = [e for e in spans if e["tid"] == tid and e["ts"] <= ts]
    if not begun:
        return None
    last = max(begun, key=lambda e: e["ts"])
    return last if ts <= last["ts"] + last["dur"] else None


def _flows(events):
    """[(cat, name, producer span, consumer span)] from the s/f pairs."""
    spans = [e for e in events if e["ph"] == "X"]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    out = []
    for f in (e for e in events if e["ph"] == "f"):
        s = starts.pop(f["id"])
        assert (s["cat"], s["name"]) == (f["cat"], f["name"])
        assert f["bp"] == "e" and s["ts"] <= f["ts"]
        src, dst = _enclosing(spans, s["tid"], s["ts"]), _enclosing(spans, f["tid"], f["ts"])
        assert src is not None and dst is not None, (s, f)
        out.append((f["cat"], f["name"], src, dst))
    assert not starts, "flow starts without an end: %s" % starts
    return out


def _ops(events):
    return {e["args"]["op"]: e for e in events
            if e["ph"] == "X" and e["cat"] != "push" and "op" in e.get("args", {})}


def test_tracks_queue_times_and_dependency_flows(tmp_path):
    started = threading.Event()

    def slow():
        started.set()
        time.sleep(0.02)

    def body():
        a = mx.nd.ones((64, 64))
        b = a * 2                       # reads a: a's writer is its producer
        c = mx.nd.dot(b, a)             # reads a and b
        # a kernel that sleeps on a worker while the main thread keeps pushing
        mx.engine.push(slow, reads=[c], writes=[], name="slow_reader")
        started.wait(5)
        c += 1                          # a write waits for the reader before it
        np.testing.assert_allclose(c.asnumpy(), np.full((64, 64), 129.0))

        def other():
            (mx.nd.ones((3,)) + 1).wait_to_read()
        t = threading.Thread(target=other, name="pusher-2")
        t.start()
        t.join()

    events, stats, _ = _record(tmp_path, body)
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    # every event's track is named, with the thread's own name
    for e in events:
        if e["ph"] in ("X", "s", "f", "i"):
            assert isinstance(e["tid"], int) and e["tid"] in names, e
    main = threading.main_thread().native_id
    assert names[main] == "MainThread"
    ops = _ops(events)
    by_name = {}
    for e in ops.values():
        by_name.setdefault(e["name"], []).append(e)
    slow_span = by_name["slow_reader"][0]
    assert names[slow_span["tid"]].startswith("aiond-cpu-")
    assert "pusher-2" in names.values()

    # a push span on the pushing thread for every op; queue time is push to start
    pushes = {e["args"]["op"]: e for e in events if e.get("cat") == "push" and e["ph"] == "X"}
    assert set(pushes) == set(ops)
    for op_id, span in ops.items():
        p = pushes[op_id]
        assert p["name"] == "push:" + span["name"]
        assert span["args"]["queue_us"] == pytest.approx(span["ts"] - p["ts"], abs=2e-3)
        a = span["args"]
        assert a["queue_us"] >= 0 and a["deps_us"] >= 0 and a["dispatch_us"] >= 0
        assert a["deps_us"] + a["dispatch_us"] == pytest.approx(a["queue_us"], abs=2e-3)
    assert names[pushes[by_name["_plus_scalar"][-1]["args"]["op"]]["tid"]] == "pusher-2"
    assert all(pushes[e["args"]["op"]]["tid"] == main for e in by_name["dot"] + by_name["slow_reader"])
    # the op slept on a worker while the main thread went on: it was pushed
    # before the write that had to wait for it, whose queue time covers it
    inplace = by_name["_plus_scalar"][0]
    assert inplace["args"]["queue_us"] > 5000
    # ... waiting for that op, not for a thread: it was ready when it ended
    end_slow = slow_span["ts"] + slow_span["dur"]
    assert inplace["args"]["deps_us"] == pytest.approx(
        end_slow - pushes[inplace["args"]["op"]]["ts"], abs=50)

    flows = _flows(events)
    push_flows = [(s, d) for cat, _, s, d in flows if cat == "push"]
    assert len(push_flows) == len(ops)
    for s, d in push_flows:
        assert s["cat"] == "push" and s["args"]["op"] == d["args"]["op"]
    deps = {(s["name"], d["name"], kind) for cat, kind, s, d in flows if cat == "dependency"}
    assert ("_ones", "_mul_scalar", "read-after-write") in deps
    assert ("_mul_scalar", "dot", "read-after-write") in deps
    assert ("_ones", "dot", "read-after-write") in deps
    assert ("dot", "slow_reader", "read-after-write") in deps
    assert ("slow_reader", "_plus_scalar", "write-after-read") in deps
    # the slow op was pushed here and ran on a worker: its push arrow crosses tracks
    assert [(s["tid"], d["tid"]) for s, d in push_flows if d["name"] == "slow_reader"] \
        == [(main, slow_span["tid"])]
    for cat, kind, s, d in flows:
        if cat == "dependency":       # a producer finished before its consumer started
            assert s["ts"] + s["dur"] <= d["ts"] + 1e-3

    # queueing time is aggregated per op name, next to the run times
    q = stats["Time"]["operator queue"]
    assert q["dot"]["Count"] == stats["Time"]["operator"]["dot"]["Count"] == 1
    assert q["_plus_scalar"]["Max"] >= 5.0          # ms
    table = mx.profiler.dumps()
    assert "operator queue\n=================\n" in table


def test_segment_span_encloses_its_members_and_flows_skip_inside(tmp_path):
    """A bulk segment is one engine op running member ops in sequence: when
    the members' kernels were wrapped at their push, their spans nest in the
    segment's on the same track; arrows into the segment come only from
    outside it, and its consumers get an arrow from the segment."""
    ran = []

    def body():
        prof = mx.engine.get().prof
        a = mx.nd.ones((4,))
        b = mx.nd.zeros((4,))
        c = mx.nd.zeros((4,))
        va, vb, vc = a._st.var, b._st.var, c._st.var
        a.wait_to_read()

        def k1():
            time.sleep(0.002)
            ran.append("member1")

        def k2():
            time.sleep(0.002)
            ran.append("member2")
        m1 = prof.wrap(k1, "member1", (va,), (vb,))
        m2 = prof.wrap(k2, "member2", (vb,), (vc,))

        def segment():
            m1()
            m2()
        segment.members = [types.SimpleNamespace(name="member1"),
                           types.SimpleNamespace(name="member2")]
        mx.engine.push(segment, reads=[a], writes=[b, c], name="_segment")
        d = c + 1
        np.testing.assert_array_equal(d.asnumpy(), np.ones(4))

    events, stats, _ = _record(tmp_path, body)
    assert ran == ["member1", "member2"]
    ops = _ops(events)
    seg = [e for e in ops.values() if e["name"] == "_segment"][0]
    m1 = [e for e in ops.values() if e["name"] == "member1"][0]
    m2 = [e for e in ops.values() if e["name"] == "member2"][0]
    assert seg["args"]["members"] == ["member1", "member2"]
    for m in (m1, m2):
        assert m["tid"] == seg["tid"] and m["args"]["parent"] == seg["args"]["op"]
        assert seg["ts"] <= m["ts"] and m["ts"] + m["dur"] <= seg["ts"] + seg["dur"]
    assert m1["ts"] + m1["dur"] <= m2["ts"]
    deps = [(kind, s, d) for cat, kind, s, d in _flows(events) if cat == "dependency"]
    pairs = {(s["name"], d["name"]) for _, s, d in deps}
    assert ("member1", "member2") in pairs            # inside: member to member
    assert ("_ones", "_segment") in pairs             # into the segment from outside
    assert ("_segment", "_plus_scalar") in pairs      # out of the segment
    # nothing the segment ran itself points at the segment
    assert not [p for p in pairs if p[1] == "_segment" and p[0].startswith("member")]
    assert stats["Time"]["operator"]["member1"]["Count"] == 1


def test_continuous_dump_names_tracks_and_keeps_flows_in_one_file(tmp_path):
    fname = str(tmp_path / "cont.json")
    mx.profiler.set_config(profile_all=True, filename=fname, continuous_dump=True,
                           dump_period=1000)
    mx.profiler.set_state("run")
    try:
        x = mx.nd.ones((8,))
        x.wait_to_read()
        mx.profiler.dump(False)
        y = x + 1
        y.wait_to_read()
        mx.profiler.dump(True)          # closes the file: the next one starts afresh
        z = y * 2
        z.wait_to_read()
    finally:
        mx.profiler.set_state("stop")
    with open(fname) as f:
        first = json.load(f)["traceEvents"]
    meta = [e for e in first if e["ph"] == "M" and e["name"] == "thread_name"]
    assert len({e["tid"] for e in meta}) == len(meta)     # each track named once
    assert {(s["name"], d["name"]) for c, _, s, d in _flows(first) if c == "dependency"} \
        >= {("_ones", "_plus_scalar")}
    mx.profiler.dump()
    with open(fname) as f:
        second = json.load(f)["traceEvents"]
    # z's producer is in the first file: no dangling arrow into the second
    assert "_mul_scalar" in [e["name"] for e in second if e["ph"] == "X"]
    assert not [d for c, _, s, d in _flows(second)
                if c == "dependency" and d["name"] == "_mul_scalar"]
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in second)
    mx.profiler.set_config(continuous_dump=False)


def test_profiler_off_leaves_vars_untouched():
    mx.profiler.set_state("stop")
    assert mx.engine.get().prof is None
    a = mx.nd.ones((3,))
    (a + 1).wait_to_read()
    with pytest.raises(AttributeError):
        a._st.var.prof          # the slot is never filled while nothing records


def _trace_processor(path):
    """A perfetto TraceProcessor on ``path``, or a skip saying why not.
    ``AIOND_TRACE_PROCESSOR_SHELL`` may name a trace_processor_shell binary."""
    tp_mod = pytest.importorskip(
        "perfetto.trace_processor",
        reason="the perfetto package is not installed (pip install perfetto)")
    cfg = tp_mod.TraceProcessorConfig(bin_path=os.environ.get("AIOND_TRACE_PROCESSOR_SHELL"))
    try:
        return tp_mod.TraceProcessor(trace=path, config=cfg)
    except Exception as e:  # noqa: BLE001 - the download of the binary, mostly
        pytest.skip("perfetto's trace_processor_shell binary could not be obtained "
                    "(it downloads it at first use; set AIOND_TRACE_PROCESSOR_SHELL to a "
                    "local binary): %s: %s" % (type(e).__name__, str(e)[:200]))


def test_trace_loads_in_perfetto_trace_processor(tmp_path):
    def body():
        a = mx.nd.ones((32, 32))
        b = mx.nd.dot(a, a)
        (b + 1).wait_to_read()
        t = threading.Thread(target=lambda: (mx.nd.ones((2,)) * 3).wait_to_read(),
                             name="pusher-tp")
        t.start()
        t.join()

    _, _, fname = _record(tmp_path, body, "tp.json")
    tp = _trace_processor(fname)
    try:
        threads = {r.name for r in tp.query(
            "select distinct t.name as name from thread_track tt join thread t using (utid)")}
        assert {"MainThread", "pusher-tp"} <= threads
        slices = {(r.name, r.thread) for r in tp.query(
            "select s.name as name, t.name as thread from slice s "
            "join thread_track tt on s.track_id = tt.id join thread t using (utid)")}
        assert ("push:dot", "MainThread") in slices
        assert ("push:_mul_scalar", "pusher-tp") in slices
        assert {"_ones", "dot", "_plus_scalar"} <= {n for n, _ in slices}
        flows = {(r.src, r.dst) for r in tp.query(
            "select so.name as src, si.name as dst from flow f "
            "join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id")}
        assert ("_ones", "dot") in flows and ("dot", "_plus_scalar") in flows
        assert ("push:dot", "dot") in flows
    finally:
        tp.close()


def test_dumps_orders_ties_and_rounds_as_mxnet():
    """MXNet pops a max-heap of (value, name) (the value negated when
    ascending), so equal values come out by name, last name first, either
    way; its JSON prints four significant digits of the float32 ms value."""
    from aiond.engine.profiler import Profiler
    p = Profiler(aggregate_stats=True)
    for name, us in (("b", 5.0), ("a", 5.0), ("c", 5.0), ("big", 12345.678), ("big", 1.0)):
        p._aggregate("operator", name, us)
    for asc in (False, True):
        order = list(json.loads(p.aggregate("json", "count", asc))["Time"]["operator"])
        assert order == (["big", "c", "b", "a"] if not asc else ["c", "b", "a", "big"])
    big = json.loads(p.aggregate("json", "total", False))["Time"]["operator"]["big"]
    assert big == {"Count": 2, "Total": 12.35, "Min": 0.001, "Max": 12.35, "Avg": 6.173}
    table = p.aggregate("table", "total", False)
    assert table.startswith("\nProfile Statistics:\n\tNote the difference in units for "
                            "different entries.\noperator\n=================\n")
    assert table.endswith("\n\n")
    row = [line for line in table.splitlines() if line.startswith("big")][0]
    assert row == "%-25s%16d %16.4f %16.4f %16.4f %16.4f" % ("big", 2, 12.3467, 0.001, 12.3457,
                                                            6.1733)


def test_one_arrow_per_producer_and_writes_wait_for_readers(tmp_path):
    def body():
        x, y = mx.nd.zeros((3,)), mx.nd.zeros((3,))
        mx.engine.push(lambda: None, reads=[], writes=[x, y], name="two_outputs")
        s = x + y                   # reads both vars the producer wrote
        np.testing.assert_array_equal(s.asnumpy(), np.zeros(3))
        x[:] = 1                    # a write after two reads (s and the slice's base)

    events, _, _ = _record(tmp_path, body)
    ops = _ops(events)
    by_op = {e["args"]["op"]: e for e in ops.values()}
    producer = [e for e in ops.values() if e["name"] == "two_outputs"][0]
    add = [e for e in ops.values() if e["name"] == "broadcast_add"][0]
    setter = max(ops.values(), key=lambda e: e["args"]["op"])      # x[:] = 1
    assert set(add["args"]["reads"]) == set(producer["args"]["writes"])
    deps = [(kind, s["args"]["op"], d["args"]["op"]) for c, kind, s, d in _flows(events)
            if c == "dependency"]
    into_add = [(k, s) for k, s, d in deps if d == add["args"]["op"]]
    assert into_add == [("read-after-write", producer["args"]["op"])]   # one, not two
    # the write to x waits for the reader of x, not for x's writer
    into_set = {(k, by_op[s]["name"]) for k, s, d in deps if d == setter["args"]["op"]}
    assert ("write-after-read", "broadcast_add") in into_set
    assert not [k for k, _ in into_set if k == "write-after-write"]


def test_a_one_op_segment_is_not_counted_as_its_member(tmp_path):
    """A bulk segment of one op (the Trainer's fused update, a one-layer
    forward) is its own span: the aggregate counts the member once per
    step, under its name, and the segment under ``name[member]``."""
    net = mx.gluon.nn.Dense(4, in_units=3)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = mx.nd.ones((2, 3))

    def body():
        for _ in range(3):
            with mx.autograd.record():
                loss = net(x).sum()
            loss.backward()
            trainer.step(2)

    _, stats, _ = _record(tmp_path, body)
    ops = stats["Time"]["operator"]
    assert ops["multi_sgd_update"]["Count"] == 3
    assert ops["FullyConnected"]["Count"] == 3
    segs = {k: v["Count"] for k, v in ops.items() if k.endswith("[multi_sgd_update]")}
    assert list(segs.values()) == [3], ops.keys()
