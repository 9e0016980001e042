"""``mx.viz``: a text summary of a Symbol (``print_summary``) and a Graphviz
drawing of it (``plot_network``), as in MXNet 1.9.1.

Both read the graph from ``symbol.tojson()``, like MXNet, so their output is
MXNet's line for line, quirks included: the first node of the graph is
always listed, the parameter count of a layer is derived from the size of
its input (so it needs ``shape`` to be exact), and only Convolution,
FullyConnected, BatchNorm and Embedding count parameters.

``graphviz`` (the Python package) is an optional dependency, imported only
by ``plot_network``.
"""
from __future__ import annotations

import copy
import json
import re
import warnings

from .symbol import Symbol

__all__ = ["print_summary", "plot_network"]


def _str2tuple(string):
    """The digits groups of a shape string: ``'(3, 3)'`` -> ``['3', '3']``."""
    return re.findall(r"\d+", string)


def _print_row(fields, positions):
    line = ''
    for i, field in enumerate(fields):
        line += str(field)
        line = line[:positions[i]]
        line += ' ' * (positions[i] - len(line))
    print(line)


def _layer_params(node, show_shape, shape_dict, pre_filter):
    """Parameter count of one layer, as MXNet's summary estimates it."""
    op, attrs = node["op"], node.get("attrs", {})
    if op == 'Convolution':
        num_group = int(attrs.get('num_group', '1'))
        cur_param = pre_filter * int(attrs["num_filter"]) // num_group
        for k in _str2tuple(attrs["kernel"]):
            cur_param *= int(k)
        if attrs.get("no_bias") != 'True':
            cur_param += int(attrs["num_filter"])
        return cur_param
    if op == 'FullyConnected':
        if attrs.get("no_bias") == 'True':
            return pre_filter * int(attrs["num_hidden"])
        return (pre_filter + 1) * int(attrs["num_hidden"])
    if op == 'BatchNorm':
        if show_shape:
            return int(shape_dict[node["name"] + "_output"][1]) * 2
        return 0
    if op == 'Embedding':
        return int(attrs['input_dim']) * int(attrs['output_dim'])
    return 0


def print_summary(symbol, shape=None, line_length=120, positions=[.44, .64, .74, 1.]):  # noqa: B006
    """Print a table of the layers of ``symbol``: name (type), output shape,
    parameter count and the previous layer(s).

    Parameters
    ----------
    symbol : Symbol
    shape : dict of str to tuple, optional
        Input shapes; without them the shape column is empty and counts that
        need the input size are 0 (as in MXNet).
    line_length : int
        Total width of the printed lines.
    positions : list of float or int
        Right edge of each column, relative (<= 1) or in characters.
    """
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be Symbol")
    show_shape = False
    shape_dict = {}
    if shape is not None:
        show_shape = True
        internals = symbol.get_internals()
        _, out_shapes, _ = internals.infer_shape(**shape)
        if out_shapes is None:
            raise ValueError("Input shape is incomplete")
        shape_dict = dict(zip(internals.list_outputs(), out_shapes))
    conf = json.loads(symbol.tojson())
    nodes = conf["nodes"]
    # MXNet's quirk, kept: the *fields* of the first head entry [node, index,
    # version], so node 0 often counts as a head
    heads = set(conf["heads"][0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    print('_' * line_length)
    _print_row(['Layer (type)', 'Output Shape', 'Param #', 'Previous Layer'], positions)
    print('=' * line_length)

    def layer_summary(node, out_shape):
        op = node["op"]
        pre_node = []
        pre_filter = 0
        if op != "null":
            for item in node["inputs"]:
                input_node = nodes[item[0]]
                input_name = input_node["name"]
                if input_node["op"] != "null" or item[0] in heads:
                    pre_node.append(input_name)
                    if show_shape:
                        key = input_name + "_output" if input_node["op"] != "null" else input_name
                        if key in shape_dict:
                            pre_filter += int(shape_dict[key][1:][0])
        cur_param = _layer_params(node, show_shape, shape_dict, pre_filter)
        fields = [node['name'] + '(' + op + ')', "x".join([str(x) for x in out_shape]),
                  cur_param, pre_node[0] if pre_node else '']
        _print_row(fields, positions)
        for name in pre_node[1:]:
            _print_row(['', '', '', name], positions)
        return cur_param

    total_params = 0
    for i, node in enumerate(nodes):
        out_shape = []
        op = node["op"]
        if op == "null" and i > 0:
            continue
        if (op != "null" or i in heads) and show_shape:
            key = node["name"] + "_output" if op != "null" else node["name"]
            if key in shape_dict:
                out_shape = shape_dict[key][1:]
        total_params += layer_summary(node, out_shape)
        print(('=' if i == len(nodes) - 1 else '_') * line_length)
    print("Total params: {params}".format(params=total_params))
    print('_' * line_length)


_WEIGHT_LIKE = ('_weight', '_bias', '_beta', '_gamma',
                '_moving_var', '_moving_mean', '_running_var', '_running_mean')
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3",
           "#fdb462", "#b3de69", "#fccde5")


def _node_label(node):
    """(label, fill colour) of a non-variable node."""
    op, name, attrs = node["op"], node["name"], node.get("attrs", {})
    cm = _COLORS
    if op == "Convolution":
        return ("Convolution\n{kernel}/{stride}, {filter}".format(
            kernel="x".join(_str2tuple(attrs["kernel"])),
            stride="x".join(_str2tuple(attrs["stride"])) if "stride" in attrs else "1",
            filter=attrs["num_filter"]), cm[1])
    if op == "FullyConnected":
        return "FullyConnected\n{hidden}".format(hidden=attrs["num_hidden"]), cm[1]
    if op == "BatchNorm":
        return name, cm[3]
    if op == 'Activation':
        return 'Activation\n{activation}'.format(activation=attrs["act_type"]), cm[2]
    if op == 'LeakyReLU':
        act_type = attrs.get("act_type", "Leaky") if attrs else "Leaky"
        return 'LeakyReLU\n{activation}'.format(activation=act_type), cm[2]
    if op == "Pooling":
        return ("Pooling\n{pooltype}, {kernel}/{stride}".format(
            pooltype=attrs["pool_type"],
            kernel="x".join(_str2tuple(attrs["kernel"])) if "kernel" in attrs else "[]",
            stride="x".join(_str2tuple(attrs["stride"])) if "stride" in attrs else "1"), cm[4])
    if op in ("Concat", "Flatten", "Reshape"):
        return name, cm[5]
    if op == "Softmax":
        return name, cm[6]
    if op == "Custom":
        return attrs["op_type"], cm[7]
    return name, cm[7]


def _import_digraph():
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("mx.viz.plot_network needs the graphviz Python package, which is "
                          "not installed: pip install graphviz (and the Graphviz tools to "
                          "render the drawing)") from None
    return Digraph


def plot_network(symbol, title="plot", save_format='pdf', shape=None, dtype=None,
                 node_attrs={}, hide_weights=True):  # noqa: B006
    """A ``graphviz.Digraph`` of the graph computing ``symbol``.

    Parameters
    ----------
    symbol : Symbol
    title : str
        Name of the digraph.
    save_format : str
        Format the digraph renders to ('pdf', 'png', 'svg', ...).
    shape : dict of str to tuple, optional
        Input shapes; edges are then labelled with the shapes between nodes.
    dtype : dict of str to numpy type, optional
        Input types; edges are then labelled with the types too.
    node_attrs : dict
        Graphviz node attributes overriding the defaults.
    hide_weights : bool
        Hide inputs named like weights (``*_weight``, ``*_bias``, ...).

    Raises ImportError (saying ``pip install graphviz``) when the graphviz
    package is missing.
    """
    Digraph = _import_digraph()
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be a Symbol")
    internals = symbol.get_internals()
    draw_shape = shape is not None
    if draw_shape:
        _, out_shapes, _ = internals.infer_shape(**shape)
        if out_shapes is None:
            raise ValueError("Input shape is incomplete")
        shape_dict = dict(zip(internals.list_outputs(), out_shapes))
    draw_type = dtype is not None
    if draw_type:
        _, out_types, _ = internals.infer_type(**dtype)
        if out_types is None:
            raise ValueError("Input type is incomplete")
        type_dict = dict(zip(internals.list_outputs(), out_types))
    conf = json.loads(symbol.tojson())
    nodes = conf["nodes"]
    names = [node["name"] for node in nodes]
    if len(names) != len(set(names)):
        seen = set()
        repeated = set(n for n in names if n in seen or seen.add(n))
        warnings.warn("There are multiple variables with the same name in your graph, "
                      "this may result in cyclic graph. Repeated names: " + ','.join(repeated),
                      RuntimeWarning)
    node_attr = {"shape": "box", "fixedsize": "true",
                 "width": "1.3", "height": "0.8034", "style": "filled"}
    node_attr.update(node_attrs)
    dot = Digraph(name=title, format=save_format)

    hidden_nodes = set()
    for node in nodes:
        name = node["name"]
        attr = copy.deepcopy(node_attr)
        if node["op"] == "null":
            if name.endswith(_WEIGHT_LIKE):
                if hide_weights:
                    hidden_nodes.add(name)
                continue
            attr["shape"] = "oval"  # inputs get their own shape
            label, attr["fillcolor"] = name, _COLORS[0]
        else:
            label, attr["fillcolor"] = _node_label(node)
        dot.node(name=name, label=label, **attr)

    def out_key(input_node):
        if input_node["op"] == "null":
            return input_node["name"]
        key = input_node["name"] + "_output"
        params = input_node.get("attrs", {})
        if "num_outputs" in params:
            key += str(int(params["num_outputs"]) - 1)
        return key

    for node in nodes:
        if node["op"] == "null":
            continue
        inputs = node["inputs"]
        if node['op'] == '_contrib_BilinearResize2D':
            inputs = [inputs[0]]
        for item in inputs:
            input_node = nodes[item[0]]
            input_name = input_node["name"]
            if input_name in hidden_nodes:
                continue
            attr = {"dir": "back", 'arrowtail': 'open', 'label': ''}
            if draw_shape:
                attr["label"] = "x".join([str(x) for x in shape_dict[out_key(input_node)][1:]])
            if draw_type:
                attr["label"] += '(' + type_dict[out_key(input_node)].__name__ + ')'
            dot.edge(tail_name=node["name"], head_name=input_name, **attr)
    return dot
