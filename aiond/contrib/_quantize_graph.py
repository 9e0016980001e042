"""The graph passes behind ``mx.contrib.quantization`` (MXNet's
``QuantizeGraph`` and ``SetCalibTableToQuantizedGraph``), over aiond's
Symbol graph.

``quantize_graph`` replaces each quantizable op (FullyConnected and
Convolution always; Pooling max/avg, relu Activation and Flatten too in
'full' mode, or in 'smart' mode when they sit between quantized ops) by its
int8 counterpart named ``quantized_<name>``:
  * a float input gets a ``_contrib_quantize_v2`` node ``<input>_quantize``;
    for parameters quantized offline that node becomes the variables
    ``<param>_quantize``, ``_min`` and ``_max``;
  * an int32 result (FC, conv) goes through ``_contrib_requantize`` named
    ``requantize_<name>``;
  * a quantized value that feeds a float op, or a graph output, goes through
    ``_contrib_dequantize`` named ``<name>_dequantize``.
It also returns the names of the float values whose range calibration
should measure (the layer outputs before each requantize, the inputs of
each quantize_v2). ``set_calib_table`` writes measured ranges into the
requantize/quantize_v2 nodes as ``min_calib_range``/``max_calib_range``.
"""
from __future__ import annotations

from ..ops import registry as _reg
from ..symbol.symbol import Symbol, _Node, dfs

_MUST, _SUPPORT = "must", "support"


def _quantized_op(node):
    """(quantized op name, kind, needs requantize) for a float node, or None."""
    op = node.op.name
    p = node.params
    if op == "FullyConnected":
        return "_contrib_quantized_fully_connected", _MUST, True
    if op == "Convolution":
        return "_contrib_quantized_conv", _MUST, True
    if op == "Pooling" and p.get("pool_type") in ("max", "avg"):
        return "_contrib_quantized_pooling", _SUPPORT, False
    if op == "Activation" and p.get("act_type") == "relu":
        return "_contrib_quantized_act", _SUPPORT, False
    if op in ("Flatten", "flatten"):
        return "_contrib_quantized_flatten", _SUPPORT, False
    return None


def _attrs_for(qop, node):
    attrs = {k: v for k, v in node.attrs.items() if not (k.startswith("__") and k.endswith("__"))}
    if qop == "_contrib_quantized_fully_connected":
        keep = ("num_hidden", "no_bias", "flatten")
    elif qop == "_contrib_quantized_conv":
        keep = tuple(p.name for p in _reg.get(qop).params)
    elif qop == "_contrib_quantized_pooling":
        keep = tuple(p.name for p in _reg.get(qop).params)
    elif qop == "_contrib_quantized_act":
        keep = ("act_type",)
    else:
        keep = ()
    return {k: v for k, v in attrs.items() if k in keep}


def _mark(order, excluded_names, excluded_ops, mode):
    plan = {}
    for n in order:
        if n.op is None or n.name in excluded_names or n.op.name in excluded_ops:
            continue
        q = _quantized_op(n)
        if q is not None:
            plan[id(n)] = q
    if mode == "full":
        return plan
    if mode != "smart":
        raise ValueError("unrecognized quantize mode: %s (expected 'full' or 'smart')" % mode)
    consumers = {}
    for n in order:
        for e in n.inputs:
            consumers.setdefault(id(e[0]), []).append(n)
    flags = {k: 0 for k, v in plan.items() if v[1] == _SUPPORT}
    must = [n for n in order if id(n) in plan and plan[id(n)][1] == _MUST]
    queue = list(must)
    while queue:                    # support nodes fed (transitively) into a must node
        n = queue.pop(0)
        for e in n.inputs:
            if id(e[0]) in flags and not flags[id(e[0])] & 1:
                flags[id(e[0])] |= 1
                queue.append(e[0])
    queue = list(must)
    while queue:                    # support nodes fed (transitively) by a must node
        n = queue.pop(0)
        for c in consumers.get(id(n), []):
            if id(c) in flags and not flags[id(c)] & 2:
                flags[id(c)] |= 2
                queue.append(c)
    for k, f in flags.items():
        if f != 3:
            del plan[k]
    return plan


def _out_name(node, i):
    return node.output_name(i) if node.op is not None else node.name


def quantize_graph(sym, excluded_names=(), excluded_ops=(), offline_params=(),
                   quantized_dtype="int8", quantize_mode="smart"):
    """``(quantized Symbol, calibration layer names)`` for the float graph ``sym``."""
    q_v2, requant, dequant = (_reg.get(n) for n in (
        "_contrib_quantize_v2", "_contrib_requantize", "_contrib_dequantize"))
    order = dfs(sym._outputs)
    plan = _mark(order, set(excluded_names), set(excluded_ops), quantize_mode)
    mirror = {}          # id(float node) -> new node producing its value
    quantized = {}       # id(float node) -> the new int8 node (requantize or quantized op)
    quantize_of = {}     # (id(float node), index) -> quantize_v2 node
    dequant_of = {}      # id(float node) -> dequantize node
    origin = {}          # id(new node) -> float node it stands for
    calib = []

    def dequantized(e):
        n = e[0]
        if id(n) not in dequant_of:
            src = quantized[id(n)]
            d = _Node(dequant, n.name + "_dequantize", {}, [(src, 0, 0), (src, 1, 0), (src, 2, 0)])
            dequant_of[id(n)] = d
        return (dequant_of[id(n)], 0, 0)

    for node in order:
        if id(node) in plan:
            qop_name, _, needs_requant = plan[id(node)]
            qop = _reg.get(qop_name)
            qnode = _Node(qop, "quantized_" + node.name, _attrs_for(qop_name, node), [])
            values, ranges = [], []
            for e in node.inputs:
                src = e[0]
                if id(src) in quantized:
                    q = quantized[id(src)]
                    values.append((q, 0, 0))
                    ranges += [(q, 1, 0), (q, 2, 0)]
                    continue
                key = (id(src), e[1])
                if key not in quantize_of:
                    m = mirror[id(src)]
                    suffix = "" if src.op is None else "_" + _out_name(src, e[1])[len(src.name) + 1:]
                    qn = _Node(q_v2, src.name + suffix + "_quantize",
                               {"out_type": quantized_dtype}, [(m, e[1], e[2])])
                    quantize_of[key] = qn
                    if src.op is None:
                        calib.append((qn, src.name))
                    else:
                        calib.append((qn, _out_name(src, e[1])))
                qn = quantize_of[key]
                values.append((qn, 0, 0))
                ranges += [(qn, 1, 0), (qn, 2, 0)]
            qnode.inputs = values + ranges
            out = qnode
            if needs_requant:
                out = _Node(requant, "requantize_" + node.name, {"out_type": quantized_dtype},
                            [(qnode, 0, 0), (qnode, 1, 0), (qnode, 2, 0)])
                calib.append((out, _out_name(node, 0)))
            quantized[id(node)] = out
            mirror[id(node)] = out
            origin[id(out)] = node
        else:
            new = _Node(node.op, node.name, dict(node.attrs), [])
            new.version = node.version
            new._params = node._params
            new.subgraphs = node.subgraphs
            for e in node.inputs:
                if id(e[0]) in quantized:
                    new.inputs.append(dequantized(e))
                else:
                    new.inputs.append((mirror[id(e[0])], e[1], e[2]))
            mirror[id(node)] = new
            origin[id(new)] = node

    outputs = []
    for e in sym._outputs:
        outputs.append(dequantized(e) if id(e[0]) in quantized else (mirror[id(e[0])], e[1], e[2]))

    # parameters quantized offline: their quantize_v2 nodes become variables
    offline = set(offline_params)
    replaced = {}
    for (src_id, _), qn in quantize_of.items():
        src = qn.inputs[0][0]
        if src.op is None and src.name in offline:
            # typed variables: int8 values, float32 (1,) ranges
            replaced[id(qn)] = [_Node(None, qn.name, {"__dtype__": "5"}),
                                _Node(None, qn.name + "_min", {"__dtype__": "0", "__shape__": "(1,)"}),
                                _Node(None, qn.name + "_max", {"__dtype__": "0", "__shape__": "(1,)"})]
    if replaced:
        for n in dfs(outputs):
            n.inputs = [(replaced[id(e[0])][e[1]], 0, 0) if id(e[0]) in replaced else e
                        for e in n.inputs]
        outputs = [(replaced[id(e[0])][e[1]], 0, 0) if id(e[0]) in replaced else e
                   for e in outputs]
    live = {id(n) for n in dfs(outputs)}
    names = [name for n, name in calib if id(n) in live]
    return Symbol._from(outputs), names


def set_calib_table(qsym, th_dict):
    """A copy of ``qsym`` whose requantize and quantize_v2 nodes carry the
    calibrated ranges of ``th_dict`` (layer output name -> (min, max))."""
    from ..symbol.symbol import _copy_graph
    outputs = _copy_graph(qsym._outputs)
    for n in dfs(outputs):
        if n.op is None or n.op.name not in ("_contrib_requantize", "_contrib_quantize_v2"):
            continue
        src, idx = n.inputs[0][0], n.inputs[0][1]
        name = _out_name(src, idx)
        if name.startswith("quantized_"):
            name = name[len("quantized_"):]
        if name in th_dict:
            lo, hi = th_dict[name]
            n.attrs["min_calib_range"] = repr(float(_scalar(lo)))
            n.attrs["max_calib_range"] = repr(float(_scalar(hi)))
            n._params = None
    return Symbol._from(outputs)


def _scalar(v):
    try:
        return float(v)
    except TypeError:
        return float(v.reshape(-1)[0])
