"""Run ONNX's own per-operator backend test cases (``onnx.backend.test.case.node``,
generated in memory by the installed onnx package) through
``mx.contrib.onnx.import_model`` and report, per ONNX operator, how many pass.

    PYTHONPATH=. python tools/onnx_node_coverage.py [--op Conv] [--show-failures] [--json OUT]

A case passes when the imported Symbol, bound and run forward, gives the
case's expected outputs (its own rtol/atol, as onnx's backend runner uses
them; a 0-d output may come back as shape (1,), aiond's legacy operators
having no 0-d arrays). A case fails at import (an unsupported operator,
attribute or dynamic shape: the message says which) or at run/compare.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys

import numpy as np


def bake_inputs(model, inputs, mode):
    """The model with some graph inputs made initializers holding this data
    set's values, as exporters write them: ``ints`` the integer-typed ones
    (shapes, axes, pads, K, repeats), ``params`` every input but the first
    (weights, scales, clip bounds, pad values too)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {t.name for t in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    keep = []
    for k, (name, x) in enumerate(zip(names, inputs)):
        x = np.asarray(x)
        if (mode == "ints" and x.dtype.kind in "iu") or (mode == "params" and k > 0 and
                                                          x.dtype.kind in "iufb"):
            m.graph.initializer.append(numpy_helper.from_array(x, name))
        else:
            keep.append(name)
    ins = [i for i in m.graph.input if i.name in keep or i.name in inits]
    del m.graph.input[:]
    m.graph.input.extend(ins)
    return m, [x for n, x in zip(names, inputs) if n in keep]


def run_case(mx, case, bake=None):
    for inputs, outputs in case.data_sets:
        model = case.model
        if bake:
            model, inputs = bake_inputs(model, inputs, bake)
        _run_one(mx, case, model, inputs, outputs)


def _run_one(mx, case, model, inputs, outputs):
    sym, args, aux = mx.contrib.onnx.import_model(model)
    names = set(sym.list_arguments())
    graph_inputs = [i.name for i in model.graph.input
                    if i.name not in {t.name for t in model.graph.initializer}]
    if True:
        binds = dict(args)
        for name, x in zip(graph_inputs, inputs):
            if name in names:
                x = np.asarray(x)
                binds[name] = mx.nd.array(x.astype(np.float32) if x.dtype == np.bool_ else x,
                                          dtype=np.float32 if x.dtype == np.bool_ else x.dtype)
        ex = sym.bind(mx.cpu(), binds, aux_states=aux, grad_req="null")
        got = [o.asnumpy() for o in ex.forward(is_train=False)]
        if len(got) != len(outputs):
            raise AssertionError("%d outputs, expected %d" % (len(got), len(outputs)))
        for g, r in zip(got, outputs):
            r = np.asarray(r)
            if r.dtype.kind in "OSU":
                raise AssertionError("string output")
            if r.shape == () and g.shape == (1,):
                g = g.reshape(())
            if g.shape != r.shape:
                raise AssertionError("shape %s, expected %s" % (g.shape, r.shape))
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64),
                                       rtol=max(case.rtol, 1e-4), atol=max(case.atol, 1e-5))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--op", default=None, help="only this ONNX operator's cases")
    p.add_argument("--show-failures", action="store_true")
    p.add_argument("--json", default=None, help="write the per-case results here")
    p.add_argument("--bake", choices=["ints", "params"], default=None,
                   help="make graph inputs initializers first, as exporters write them: "
                        "ints = the integer ones (shapes, axes, pads, ...), params = all "
                        "but the first (weights, scales, bounds too)")
    a = p.parse_args(argv)
    import aiond as mx
    from onnx.backend.test.case.node import collect_testcases
    from aiond.contrib.onnx._ops import supported_ops
    supported = set(supported_ops())
    per_op = collections.defaultdict(lambda: [0, 0])
    results = {}
    for case in collect_testcases(None):
        ops = [n.op_type for n in case.model.graph.node]
        op = ops[-1] if ops else "?"
        if a.op and a.op not in ops:
            continue
        try:
            run_case(mx, case, bake=a.bake)
            ok, why = True, ""
        except Exception as e:  # noqa: BLE001 - a report, not a test
            ok, why = False, "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200]
                                         if str(e) else "")
        per_op[op][0 if ok else 1] += 1
        results[case.name] = {"op": op, "ok": ok, "why": why}
        if not ok and a.show_failures:
            print("FAIL %s [%s] %s" % (case.name, op, why))
    passed = sum(v[0] for v in per_op.values())
    total = sum(sum(v) for v in per_op.values())
    print("%-28s %6s %6s" % ("operator", "pass", "fail"))
    for op in sorted(per_op):
        ok, bad = per_op[op]
        mark = "" if op in supported else "   (not translated)"
        print("%-28s %6d %6d%s" % (op, ok, bad, mark))
    sup = {k: v for k, v in per_op.items() if k in supported}
    sp = sum(v[0] for v in sup.values())
    st = sum(sum(v) for v in sup.values())
    print("\nall cases: %d/%d pass; cases of translated operators: %d/%d (%.1f %%)"
          % (passed, total, sp, st, 100.0 * sp / max(st, 1)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
