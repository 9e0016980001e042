"""ONNX Loop and Scan through mx.contrib.onnx, each against onnxruntime (bound
as a Symbol and as a SymbolBlock): unrolled loops with a constant trip count,
while_loop for data-dependent termination, Scan unrolled over a fixed
sequence and as foreach over a dynamic one."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP, helper  # noqa: E402

import aiond as mx  # noqa: E402
from aiond.contrib.onnx import UnsupportedOnnxOperator  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_cases import F32, I64, check, make, torch_exports  # noqa: E402

N = helper.make_node
R = np.random.RandomState(5)
BOOL = TP.BOOL


def rnd(*shape):
    return R.randn(*shape).astype(np.float32)


def vi(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def graph(nodes, inputs, outputs, inits=()):
    from onnx import numpy_helper
    return helper.make_graph(nodes, "body", inputs, outputs,
                             initializer=[numpy_helper.from_array(np.asarray(v), n)
                                          for n, v in inits])


def sum_body():
    """acc += x * (i + 1); cond passes through; scan output: acc and i."""
    return graph(
        [N("Identity", ["cond_in"], ["cond_out"]),
         N("Add", ["i", "one"], ["i1"]),
         N("Cast", ["i1"], ["i1f"], to=TP.FLOAT),
         N("Mul", ["x", "i1f"], ["xi"]),
         N("Add", ["acc_in", "xi"], ["acc_out"]),
         N("Identity", ["acc_out"], ["acc_scan"]),
         N("Identity", ["i"], ["i_scan"])],
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc_in", F32, [2, 3])],
        [vi("cond_out", BOOL, []), vi("acc_out", F32, [2, 3]), vi("acc_scan", F32, [2, 3]),
         vi("i_scan", I64, [])],
        inits=[("one", np.array(1, np.int64))])


def test_loop_constant_trip_count_sum_and_scan_outputs():
    # the body reads x from the outer graph and the iteration number
    m = make([N("Loop", ["M", "", "acc0"], ["acc", "accs", "iters"], body=sum_body())],
             [("x", [2, 3]), ("acc0", [2, 3])],
             [("acc", [2, 3]), ("accs", [4, 2, 3]), ("iters", [4], I64)],
             inits=[("M", np.array(4, np.int64))])
    sym, _, _ = mx.contrib.onnx.import_model(m.SerializeToString())
    assert "_while_loop" not in sym.tojson()       # unrolled
    ref = check(m, {"x": rnd(2, 3), "acc0": rnd(2, 3)})
    np.testing.assert_array_equal(ref[2], np.arange(4))


def test_loop_with_constant_condition_input():
    m = make([N("Loop", ["M", "c", "acc0"], ["acc", "accs", "iters"], body=sum_body())],
             [("x", [2, 3]), ("acc0", [2, 3])],
             [("acc", [2, 3]), ("accs", [3, 2, 3]), ("iters", [3], I64)],
             inits=[("M", np.array(3, np.int64)), ("c", np.array(True))])
    check(m, {"x": rnd(2, 3), "acc0": rnd(2, 3)})


def test_loop_condition_known_at_import_stops_early():
    # no trip count: the condition i < 4 folds at each unrolled iteration
    body = graph(
        [N("Add", ["i", "one"], ["i1"]),
         N("Less", ["i1", "four"], ["cond_out"]),
         N("Mul", ["s_in", "two"], ["s_out"]),
         N("Identity", ["s_out"], ["s_scan"])],
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("s_in", F32, [3])],
        [vi("cond_out", BOOL, []), vi("s_out", F32, [3]), vi("s_scan", F32, [3])],
        inits=[("one", np.array(1, np.int64)), ("four", np.array(4, np.int64)),
               ("two", np.array(2, np.float32))])
    m = make([N("Loop", ["", "c", "s0"], ["s", "ss"], body=body)],
             [("s0", [3])], [("s", [3]), ("ss", [4, 3])], inits=[("c", np.array(True))])
    ref = check(m, {"s0": rnd(3)})
    assert ref[1].shape == (4, 3)


def test_nested_loop_reads_outer_values():
    inner = graph(
        [N("Identity", ["ci"], ["co"]),
         N("Cast", ["j"], ["jf"], to=TP.FLOAT),
         N("Cast", ["i"], ["if_"], to=TP.FLOAT),      # the outer loop's iteration number
         N("Mul", ["jf", "if_"], ["ij"]),
         N("Mul", ["x", "ij"], ["xij"]),
         N("Add", ["t_in", "xij"], ["t_out"])],
        [vi("j", I64, []), vi("ci", BOOL, []), vi("t_in", F32, [3])],
        [vi("co", BOOL, []), vi("t_out", F32, [3])])
    outer = graph(
        [N("Identity", ["cond_in"], ["cond_out"]),
         N("Loop", ["K", "", "s_in"], ["s_out"], body=inner),
         N("Identity", ["s_out"], ["s_scan"])],
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("s_in", F32, [3])],
        [vi("cond_out", BOOL, []), vi("s_out", F32, [3]), vi("s_scan", F32, [3])])
    m = make([N("Loop", ["M", "", "s0"], ["s", "ss"], body=outer)],
             [("x", [3]), ("s0", [3])], [("s", [3]), ("ss", [3, 3])],
             inits=[("M", np.array(3, np.int64)), ("K", np.array(4, np.int64))])
    check(m, {"x": rnd(3), "s0": rnd(3)})


def while_body(scan=False):
    """s = s * 1.5 + x while sum(s) < limit."""
    nodes = [N("Mul", ["s_in", "k"], ["sk"]),
             N("Add", ["sk", "x"], ["s_out"]),
             N("ReduceSum", ["s_out"], ["tot"], keepdims=0),
             N("Less", ["tot", "limit"], ["cond_out"]),
             N("Add", ["n_in", "one"], ["n_out"])]
    outs = [vi("cond_out", BOOL, []), vi("s_out", F32, [3]), vi("n_out", F32, [1])]
    if scan:
        nodes.append(N("Identity", ["s_out"], ["s_scan"]))
        outs.append(vi("s_scan", F32, [3]))
    return graph(nodes, [vi("i", I64, []), vi("cond_in", BOOL, []), vi("s_in", F32, [3]),
                         vi("n_in", F32, [1])], outs,
                 inits=[("k", np.array(1.5, np.float32)), ("one", np.array([1], np.float32))])


def test_loop_data_dependent_condition_is_a_while_loop():
    m = make([N("Less", ["s0sum", "limit"], ["c0"]),
              N("Loop", ["M", "c0", "s0", "n0"], ["s", "n"], body=while_body())],
             [("x", [3]), ("s0", [3]), ("s0sum", []), ("limit", [])],
             [("s", [3]), ("n", [1])],
             inits=[("M", np.array(50, np.int64)), ("n0", np.zeros(1, np.float32))])
    sym, _, _ = mx.contrib.onnx.import_model(m.SerializeToString())
    assert "_while_loop" in sym.tojson()
    x = np.abs(rnd(3)) + 0.5
    for limit in (30.0, 1000.0, -1.0):
        s0 = np.abs(rnd(3))
        ref = check(m, {"x": x, "s0": s0, "s0sum": np.array(s0.sum(), np.float32),
                        "limit": np.array(limit, np.float32)})
        assert ref[1][0] < 50


def test_loop_trip_count_from_the_data_is_a_while_loop():
    body = graph(
        [N("Identity", ["cond_in"], ["cond_out"]),
         N("Add", ["s_in", "x"], ["s_out"])],
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("s_in", F32, [3])],
        [vi("cond_out", BOOL, []), vi("s_out", F32, [3])])
    m = make([N("Loop", ["M", "", "s0"], ["s"], body=body)],
             [("x", [3]), ("s0", [3]), ("M", [], I64)], [("s", [3])])
    sym, _, _ = mx.contrib.onnx.import_model(m.SerializeToString())
    assert "_while_loop" in sym.tojson()
    for n in (0, 1, 5):
        check(m, {"x": rnd(3), "s0": rnd(3), "M": np.array(n, np.int64)})


def test_loop_data_dependent_condition_with_scan_outputs_is_refused():
    m = make([N("Less", ["s0sum", "limit"], ["c0"]),
              N("Loop", ["M", "c0", "s0", "n0"], ["s", "n", "ss"], body=while_body(True),
                name="the_loop")],
             [("x", [3]), ("s0", [3]), ("s0sum", []), ("limit", [])],
             [("s", [3]), ("n", [1]), ("ss", None)],
             inits=[("M", np.array(50, np.int64)), ("n0", np.zeros(1, np.float32))])
    with pytest.raises(UnsupportedOnnxOperator, match=r"the_loop.*scan output"):
        mx.contrib.onnx.import_model(m.SerializeToString())


def test_loop_unrolling_is_capped():
    body = graph([N("Identity", ["cond_in"], ["cond_out"]), N("Add", ["s_in", "x"], ["s_out"]),
                  N("Identity", ["s_out"], ["s_scan"])],
                 [vi("i", I64, []), vi("cond_in", BOOL, []), vi("s_in", F32, [3])],
                 [vi("cond_out", BOOL, []), vi("s_out", F32, [3]), vi("s_scan", F32, [3])])
    m = make([N("Loop", ["M", "", "s0"], ["s", "ss"], body=body, name="long_loop")],
             [("x", [3]), ("s0", [3])], [("s", [3]), ("ss", None)],
             inits=[("M", np.array(5000, np.int64))])
    with pytest.raises(UnsupportedOnnxOperator, match=r"long_loop.*5000 iterations"):
        mx.contrib.onnx.import_model(m.SerializeToString())


def scan_body():
    """state += x_t; outputs state and x_t * y_t."""
    return graph(
        [N("Add", ["st_in", "xt"], ["st_out"]),
         N("Mul", ["xt", "yt"], ["prod"]),
         N("Identity", ["st_out"], ["st_scan"])],
        [vi("st_in", F32, [4]), vi("xt", F32, [4]), vi("yt", F32, [4])],
        [vi("st_out", F32, [4]), vi("prod", F32, [4]), vi("st_scan", F32, [4])])


@pytest.mark.parametrize("dirs", [(0, 0, 0, 0), (1, 0, 0, 1), (0, 1, 1, 0)])
def test_scan_forward_and_reverse_on_other_axes(dirs):
    # x scanned along axis 1, y along axis 0; outputs stacked on axes 1 and -1
    m = make([N("Scan", ["st0", "x", "y"], ["st", "prods", "sts"], body=scan_body(),
                num_scan_inputs=2, scan_input_axes=[1, 0], scan_input_directions=list(dirs[:2]),
                scan_output_axes=[1, -1], scan_output_directions=list(dirs[2:]))],
             [("st0", [4]), ("x", [4, 5]), ("y", [5, 4])],
             [("st", [4]), ("prods", [4, 5]), ("sts", [4, 5])], opset=16)
    check(m, {"st0": rnd(4), "x": rnd(4, 5), "y": rnd(5, 4)})


@pytest.mark.parametrize("dirs", [(0, 0, 0, 0), (1, 0, 0, 1)])
def test_scan_over_a_dynamic_length_is_a_foreach(dirs):
    m = make([N("Scan", ["st0", "x", "y"], ["st", "prods", "sts"], body=scan_body(),
                num_scan_inputs=2, scan_input_axes=[1, 0], scan_input_directions=list(dirs[:2]),
                scan_output_axes=[1, 0], scan_output_directions=list(dirs[2:]))],
             [("st0", [4]), ("x", [4, "T"]), ("y", ["T", 4])],
             [("st", [4]), ("prods", [4, "T"]), ("sts", ["T", 4])], opset=16)
    sym, _, _ = mx.contrib.onnx.import_model(m.SerializeToString())
    assert "_foreach" in sym.tojson()
    for t in (2, 6):
        check(m, {"st0": rnd(4), "x": rnd(4, t), "y": rnd(t, 4)})


def test_scan_reads_an_outer_value():
    body = graph([N("Add", ["st_in", "xt"], ["s1"]), N("Mul", ["s1", "w"], ["st_out"]),
                  N("Identity", ["st_out"], ["o"])],
                 [vi("st_in", F32, [3]), vi("xt", F32, [3])],
                 [vi("st_out", F32, [3]), vi("o", F32, [3])])
    m = make([N("Scan", ["st0", "x"], ["st", "os"], body=body, num_scan_inputs=1)],
             [("st0", [3]), ("x", [6, 3]), ("w", [3])], [("st", [3]), ("os", [6, 3])])
    check(m, {"st0": rnd(3), "x": rnd(6, 3), "w": rnd(3)})



def test_loop_over_a_dynamic_axis_with_scan_outputs_is_a_foreach():
    # M = Shape(x)[0], what PyTorch writes for `for i in range(x.shape[0])`
    body = graph(
        [N("Identity", ["cond_in"], ["cond_out"]),
         N("Gather", ["x", "i"], ["xi"], axis=0),
         N("Cast", ["i"], ["if_"], to=TP.FLOAT),
         N("Mul", ["xi", "if_"], ["xw"]),
         N("Add", ["s_in", "xw"], ["s_out"]),
         N("Identity", ["s_out"], ["s_scan"]),
         N("Identity", ["i"], ["i_scan"])],
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("s_in", F32, [3])],
        [vi("cond_out", BOOL, []), vi("s_out", F32, [3]), vi("s_scan", F32, [3]),
         vi("i_scan", I64, [])])
    m = make([N("Shape", ["x"], ["sh"]), N("Gather", ["sh", "zero"], ["n"], axis=0),
              N("Loop", ["n", "", "s0"], ["s", "ss", "iters"], body=body)],
             [("x", ["T", 3]), ("s0", [3])], [("s", [3]), ("ss", ["T", 3]), ("iters", ["T"], I64)],
             inits=[("zero", np.array(0, np.int64))])
    sym, _, _ = mx.contrib.onnx.import_model(m.SerializeToString())
    assert "_foreach" in sym.tojson()
    for t in (1, 5):
        check(m, {"x": rnd(t, 3), "s0": rnd(3)})


def test_loop_over_a_dynamic_axis_without_scan_outputs_is_a_while_loop():
    body = graph(
        [N("Identity", ["cond_in"], ["cond_out"]),
         N("Gather", ["x", "i"], ["xi"], axis=0),
         N("Mul", ["s_in", "half"], ["sd"]),
         N("Add", ["sd", "xi"], ["s_out"])],
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("s_in", F32, [3])],
        [vi("cond_out", BOOL, []), vi("s_out", F32, [3])],
        inits=[("half", np.array(0.5, np.float32))])
    m = make([N("Shape", ["x"], ["sh"]), N("Gather", ["sh", "zero"], ["n"], axis=0),
              N("Loop", ["n", "", "s0"], ["s"], body=body)],
             [("x", ["T", 3]), ("s0", [3])], [("s", [3])],
             inits=[("zero", np.array(0, np.int64))])
    sym, _, _ = mx.contrib.onnx.import_model(m.SerializeToString())
    assert "_while_loop" in sym.tojson()
    for t in (1, 4):
        check(m, {"x": rnd(t, 3), "s0": rnd(3)})


def test_errors_in_a_body_name_the_loop():
    body = graph([N("Identity", ["cond_in"], ["cond_out"]),
                  N("NoSuchOp", ["s_in"], ["s_out"], name="bad")],
                 [vi("i", I64, []), vi("cond_in", BOOL, []), vi("s_in", F32, [3])],
                 [vi("cond_out", BOOL, []), vi("s_out", F32, [3])])
    m = make([N("Loop", ["M", "", "s0"], ["s"], body=body, name="outer_loop")],
             [("s0", [3])], [("s", [3])], inits=[("M", np.array(2, np.int64))])
    with pytest.raises(UnsupportedOnnxOperator,
                       match=r"NoSuchOp.*'bad'.*in the body of Loop 'outer_loop'"):
        mx.contrib.onnx.import_model(m.SerializeToString())


def test_scan_over_a_dynamic_1d_sequence():
    # the elements of a 1-d sequence are 0-d, as the body declares them
    body = graph([N("Mul", ["xt", "k"], ["xk"]), N("Add", ["st_in", "xk"], ["st_out"]),
                  N("Add", ["xt", "st_in"], ["o"])],
                 [vi("st_in", F32, []), vi("xt", F32, [])],
                 [vi("st_out", F32, []), vi("o", F32, [])],
                 inits=[("k", np.array(2.0, np.float32))])
    m = make([N("Scan", ["st0", "x"], ["st", "os"], body=body, num_scan_inputs=1,
                scan_input_directions=[1])],
             [("st0", []), ("x", ["T"])], [("st", []), ("os", ["T"])])
    for t in (1, 5):
        check(m, {"st0": np.array(0.5, np.float32), "x": rnd(t)})
    fixed = make(m.graph.node, [("st0", []), ("x", [4])], [("st", []), ("os", [4])])
    check(fixed, {"st0": np.array(0.5, np.float32), "x": rnd(4)})


def test_if_on_a_computed_condition_is_a_cond():
    then_g = graph([N("Mul", ["x", "two"], ["t"])], [], [vi("t", F32, [2, 3])],
                   inits=[("two", np.array(2.0, np.float32))])
    else_g = graph([N("Neg", ["x"], ["e"])], [], [vi("e", F32, [2, 3])])
    m = make([N("ReduceSum", ["x"], ["tot"], keepdims=0),
              N("Greater", ["tot", "zero"], ["c"]),
              N("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
             [("x", [2, 3])], [("y", [2, 3])], inits=[("zero", np.array(0, np.float32))])
    sym, _, _ = mx.contrib.onnx.import_model(m.SerializeToString())
    assert "_cond" in sym.tojson()
    x = rnd(2, 3)
    for v in (x, -x):
        check(m, {"x": v})


# ------------------------------------------------------------ PyTorch exports
TORCH_LOOPS = ["range_of_axis", "fixed_recurrence", "while_sum"]


@pytest.fixture(scope="module")
def torch_loops(tmp_path_factory):
    """torch_export_loops.py's exports."""
    return torch_exports(tmp_path_factory, "torch_export_loops")


@pytest.mark.parametrize("name", TORCH_LOOPS)
def test_pytorch_loop_export(torch_loops, name):
    model = onnx.load(os.path.join(torch_loops, name + ".onnx"))
    assert "Loop" in [n.op_type for n in model.graph.node]
    x = np.load(os.path.join(torch_loops, name + ".in.npy"))
    y = np.load(os.path.join(torch_loops, name + ".out.npy"))
    ref = check(model, {"input": x})
    np.testing.assert_allclose(ref[0], y, rtol=1e-4, atol=1e-5)
    if name == "range_of_axis":     # the loop runs as long as the dynamic axis
        for t in (1, 8):
            check(model, {"input": rnd(t, 3, 2)})
    if name == "while_sum":         # and as long as the data says
        for v in (x * 0.01, x * 1000.0):
            check(model, {"input": v})


def test_loop_states_keep_their_shape_across_0d_constants():
    # a 0-d counter starting as a constant (a (1,) parameter in aiond) counted
    # up with a 0-d constant: the while_loop's state keeps its shape, and
    # the Loop's output is 0-d again
    body = graph(
        [N("Add", ["n_in", "one"], ["n_out"]),
         N("ReduceSum", ["x"], ["xs"], keepdims=1),
         N("Add", ["t_in", "xs"], ["t_out"]),
         N("Less", ["t_out", "lim"], ["cond_out"])],
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("n_in", F32, []), vi("t_in", F32, [1])],
        [vi("cond_out", BOOL, [1]), vi("n_out", F32, []), vi("t_out", F32, [1])],
        inits=[("one", np.array(1, np.float32))])
    m = make([N("ReduceSum", ["x"], ["t0"], keepdims=1),
              N("Loop", ["M", "c", "n0", "t0"], ["n", "t"], body=body)],
             [("x", [3]), ("lim", [])], [("n", []), ("t", [1])],
             inits=[("M", np.array(10, np.int64)), ("c", np.array(True)),
                    ("n0", np.array(0, np.float32))])
    x = np.abs(rnd(3)) + 0.1
    for lim in (0.0, 3.0, 100.0):
        ref = check(m, {"x": x, "lim": np.array(lim * x.sum(), np.float32)})
        assert ref[0] == {0.0: 1, 100.0: 10}.get(lim, ref[0])


def test_scan_of_opset_8_is_refused():
    body = graph([N("Add", ["s_in", "xt"], ["s_out"])], [vi("s_in", F32, [1, 3]),
                                                         vi("xt", F32, [1, 3])],
                 [vi("s_out", F32, [1, 3])])
    m = make([N("Scan", ["", "s0", "x"], ["s"], body=body, num_scan_inputs=1, name="old_scan")],
             [("s0", [1, 3]), ("x", [1, 4, 3])], [("s", [1, 3])], opset=8)
    with pytest.raises(UnsupportedOnnxOperator, match=r"opset 8.*old_scan"):
        mx.contrib.onnx.import_model(m.SerializeToString())
