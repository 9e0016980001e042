"""Corrupt model files raise MXNetError naming the file, the node or key and
what was expected, at load (issue 15, item 6)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.gluon import SymbolBlock, nn


def _graph():
    x = mx.sym.var("data")
    return json.loads(mx.sym.FullyConnected(x, num_hidden=3, name="fc").tojson())


def _load(tmp_path, doc=None, raw=None):
    p = tmp_path / "m-symbol.json"
    p.write_text(raw if raw is not None else json.dumps(doc))
    return mx.sym.load(str(p)), str(p)


def _bad(tmp_path, match, doc=None, raw=None):
    p = tmp_path / "m-symbol.json"
    with pytest.raises(MXNetError, match=match) as ei:
        _load(tmp_path, doc, raw)
    assert str(p) in str(ei.value)


def test_nodes_not_a_list(tmp_path):
    _bad(tmp_path, "'nodes' must be a list", {"nodes": 5, "heads": [[0, 0, 0]]})


def test_node_of_wrong_type(tmp_path):
    _bad(tmp_path, "node 0 must be an object", {"nodes": [5], "heads": [[0, 0, 0]]})


def test_attrs_of_wrong_type(tmp_path):
    g = _graph()
    g["nodes"][3]["attrs"] = [1]
    _bad(tmp_path, r"node 3 \(fc\) has 'attrs' of type list", g)
    g = _graph()
    g["nodes"][3]["attrs"]["num_hidden"] = {"a": 1}
    _bad(tmp_path, "attribute 'num_hidden' is a dict", g)


def test_deep_nesting(tmp_path):
    _bad(tmp_path, "nested too deeply", raw="[" * 100000)


def test_huge_unary_minus_value(tmp_path):
    g = _graph()
    g["nodes"][3]["attrs"]["num_hidden"] = "-" * 100000 + "1"
    _bad(tmp_path, r"fc.*num_hidden.*\(100003 characters\)", g)


def test_head_index_out_of_range(tmp_path):
    g = _graph()
    g["heads"] = [[3, 5, 0]]
    _bad(tmp_path, "output 5 of node 'fc', which has 1", g)
    g = _graph()
    g["nodes"][3]["inputs"][0] = [0, 2, 0]
    _bad(tmp_path, "reads output 2 of node 'data'", g)


def test_bad_entries(tmp_path):
    for e in ([0], ["a", 0, 0], [0, 0, 0, 0], 7, [True, 0], [0, -1, 0]):
        g = _graph()
        g["heads"] = [e]
        _bad(tmp_path, "heads|output", g)


def test_not_utf8(tmp_path):
    p = tmp_path / "m-symbol.json"
    p.write_bytes(b'{"nodes": [\xff]}')
    with pytest.raises(MXNetError, match="UTF-8"):
        mx.sym.load(str(p))


def test_good_graph_still_loads(tmp_path):
    s, _ = _load(tmp_path, _graph())
    assert s.list_outputs() == ["fc_output"]


# -------------------------------------------------------------- .params
def _net():
    net = nn.Dense(2, in_units=3, prefix="d_")
    net.initialize()
    return net


def test_missing_parameter_is_mxnet_error(tmp_path):
    f = str(tmp_path / "p.params")
    mx.nd.save(f, {"weight": mx.nd.ones((2, 3))})
    net = _net()
    with pytest.raises(MXNetError, match="'bias' is missing"):
        net.load_parameters(f)
    with pytest.raises(AssertionError):      # MXNet raised AssertionError: still caught
        net.load_parameters(f)


def test_extra_parameter_is_mxnet_error(tmp_path):
    f = str(tmp_path / "p.params")
    mx.nd.save(f, {"d_weight": mx.nd.ones((2, 3)), "d_bias": mx.nd.ones((2,)),
                   "d_other": mx.nd.ones((1,))})
    net = _net()
    with pytest.raises(MXNetError, match="d_other"):
        net.collect_params().load(f)


def test_shape_and_dtype_mismatch_are_mxnet_errors(tmp_path):
    f = str(tmp_path / "p.params")
    mx.nd.save(f, {"d_weight": mx.nd.ones((2, 4)), "d_bias": mx.nd.ones((2,))})
    with pytest.raises(MXNetError, match="shape incompatible"):
        _net().collect_params().load(f)
    mx.nd.save(f, {"d_weight": mx.nd.ones((2, 3), dtype="float64"), "d_bias": mx.nd.ones((2,))})
    with pytest.raises(MXNetError, match="dtype incompatible"):
        _net().collect_params().load(f)


def test_none_array_in_place_of_weight(tmp_path):
    net = _net()
    with pytest.raises(MXNetError, match="'none' array"):
        net.collect_params().load_dict({"d_weight": None, "d_bias": mx.nd.ones((2,))})
    from aiond.model import _split_params
    with pytest.raises(MXNetError, match="'none'"):
        _split_params({"arg:w": None}, "f.params", False)


def test_symbolblock_imports_with_bad_params(tmp_path):
    x = mx.sym.var("data")
    mx.sym.FullyConnected(x, num_hidden=3, name="fc").save(str(tmp_path / "m-symbol.json"))
    mx.nd.save(str(tmp_path / "m-0000.params"), {"arg:fc_weight": mx.nd.ones((3, 2))})
    with pytest.raises(MXNetError, match="fc_bias"):
        SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"],
                            str(tmp_path / "m-0000.params"))
    # a good file still works
    mx.nd.save(str(tmp_path / "m-0000.params"), {"arg:fc_weight": mx.nd.ones((3, 2)),
                                                 "arg:fc_bias": mx.nd.zeros((3,))})
    blk = SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"],
                              str(tmp_path / "m-0000.params"))
    np.testing.assert_array_equal(blk(mx.nd.ones((1, 2))).asnumpy(), [[2, 2, 2]])


def test_node_with_missing_inputs(tmp_path):
    x = mx.sym.var("data")
    g = json.loads(mx.sym.BatchNorm(x, name="bn").tojson())
    bn = next(n for n in g["nodes"] if n["op"] == "BatchNorm")
    bn["inputs"] = bn["inputs"][:2]
    _bad(tmp_path, r"node 'bn' \(BatchNorm\) has 2 input\(s\); the operator takes 5", g)


def test_recordio_label_count_past_the_record():
    from aiond import recordio
    s = recordio.pack(recordio.IRHeader(0, 1.0, 7, 0), b"ab")
    s = s[:0] + bytes([3]) + s[1:]         # flag = 3 labels, but only 2 bytes follow
    with pytest.raises(MXNetError, match="3 float32 labels"):
        recordio.unpack(s)
