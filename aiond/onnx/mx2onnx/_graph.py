"""Walks an MXNet Symbol (its JSON graph, shapes and dtypes from inference) and
builds the ONNX graph, one translation per MXNet node."""
from __future__ import annotations

import json
import logging
import re

import numpy as np

from ...base import MXNetError
from ...ops import registry as _ops
from ...symbol.symbol import parse_params
from . import _registry

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


class Node:
    """One MXNet node as a translation sees it: its parsed parameters and, per
    input and output, the ONNX tensor name, the shape and the dtype."""

    def __init__(self, op, name, attrs, params, inputs, in_shapes, in_dtypes,
                 out_shapes, out_dtypes, num_outputs):
        self.op = op
        self.name = name
        self.attrs = attrs
        self.p = params
        self.x = inputs
        self.ishape = in_shapes
        self.idtype = in_dtypes
        self.oshape = out_shapes
        self.odtype = out_dtypes
        self.num_outputs = num_outputs

    def out(self, i=0):
        return self.name if i == 0 else "%s%d" % (self.name, i)

    def unsupported(self, what):
        return MXNetError("ONNX export of %s (node %r): %s is not supported"
                          % (self.op, self.name, what))


class Builder:
    """Collects ONNX nodes and initializers; hands out unique tensor names."""

    def __init__(self, opset, dynamic):
        import onnx
        from onnx import helper, numpy_helper
        self.onnx = onnx
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.opset = opset
        self.dynamic = dynamic
        self.nodes = []
        self.initializers = []
        self.used = set()

    def unique(self, hint):
        name, i = hint, 0
        while name in self.used:
            i += 1
            name = "%s_%d" % (hint, i)
        self.used.add(name)
        return name

    def tensor_type(self, dtype):
        return self.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def add(self, op_type, inputs, outputs=None, name=None, n_out=1, **attrs):
        """Add a node; ``outputs`` (names) or ``n_out`` fresh names. Returns the
        output name, or the list of names when there are several."""
        if outputs is None:
            outputs = [self.unique("%s_%s" % (name or op_type.lower(), "out"))
                       for _ in range(n_out)]
        else:
            outputs = [o if o in ("",) else o for o in outputs]
            self.used.update(outputs)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(
            op_type, list(inputs), outputs, name=self.unique(name or op_type), **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def const(self, value, dtype=None, hint="const"):
        arr = np.asarray(value, dtype=dtype)
        name = self.unique(hint)
        self.initializers.append(self.numpy_helper.from_array(arr, name))
        return name

    def i64(self, values, hint="const"):
        return self.const(np.asarray(values, dtype=np.int64).reshape(-1), hint=hint)

    def scalar(self, value, dtype, hint="scalar"):
        return self.const(np.asarray(value).astype(dtype), hint=hint)

    # opset-dependent forms of common nodes
    def cast(self, x, dtype, outputs=None):
        return self.add("Cast", [x], outputs, to=self.tensor_type(dtype))

    def unsqueeze(self, x, axes, outputs=None):
        if self.opset >= 13:
            return self.add("Unsqueeze", [x, self.i64(axes)], outputs)
        return self.add("Unsqueeze", [x], outputs, axes=list(axes))

    def squeeze(self, x, axes=None, outputs=None):
        if axes is None:
            return self.add("Squeeze", [x], outputs)
        if self.opset >= 13:
            return self.add("Squeeze", [x, self.i64(axes)], outputs)
        return self.add("Squeeze", [x], outputs, axes=list(axes))

    def reduce(self, op_type, x, axes, keepdims, outputs=None):
        """ReduceX over ``axes`` (None: every axis)."""
        axes_as_input = self.opset >= (13 if op_type == "ReduceSum" else 18)
        inputs = [x]
        attrs = {"keepdims": int(bool(keepdims))}
        if axes is not None:
            if axes_as_input:
                inputs.append(self.i64(axes))
            else:
                attrs["axes"] = list(axes)
        return self.add(op_type, inputs, outputs, **attrs)

    def split(self, x, sizes, axis, outputs=None):
        n = len(sizes)
        if self.opset >= 13:
            return self.add("Split", [x, self.i64(sizes)], outputs, n_out=n, axis=axis)
        return self.add("Split", [x], outputs, n_out=n, axis=axis, split=list(sizes))

    def slice(self, x, starts, ends, axes, steps=None, outputs=None):
        ins = [x, self.i64(starts), self.i64(ends), self.i64(axes)]
        if steps is not None:
            ins.append(self.i64(steps))
        return self.add("Slice", ins, outputs)

    def shape_of(self, x, start=None, end=None):
        if self.opset >= 15 and (start is not None or end is not None):
            return self.add("Shape", [x], start=start, end=end)
        s = self.add("Shape", [x])
        if start is None and end is None:
            return s
        return self.slice(s, [start or 0], [INT64_MAX if end is None else end], [0])

    def reshape(self, x, shape, outputs=None):
        return self.add("Reshape", [x, self.i64(shape)], outputs)

    def softmax(self, x, axis, ndim, log=False, outputs=None):
        """Softmax along one axis; opset < 13 flattens to 2-D from ``axis`` on, so
        a non-last axis is moved last first."""
        op = "LogSoftmax" if log else "Softmax"
        axis = axis % ndim
        if self.opset >= 13 or axis == ndim - 1:
            return self.add(op, [x], outputs, axis=axis)
        perm = list(range(ndim))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        t = self.add("Transpose", [x], perm=perm)
        s = self.add(op, [t], axis=ndim - 1)
        return self.add("Transpose", [s], outputs, perm=perm)


def _out_names(sym):
    names = []
    for name in sym.list_outputs():
        if name.endswith("_output"):
            names.append(name[:-len("_output")])
        elif re.search(r"_output[0-9]+$", name):
            m = re.search(r"_output([0-9]+)$", name)
            names.append(name[:m.start()] + m.group(1))
        else:
            names.append(name)
    return names


def _internal_info(sym, input_shapes, input_dtypes):
    """Shape and dtype of every visible output of every node, keyed by
    (json node index, output index)."""
    internals = sym.get_internals()
    _, shapes, _ = internals.infer_shape(**input_shapes)
    _, dtypes, _ = internals.infer_type(**input_dtypes)
    if shapes is None or dtypes is None:
        raise MXNetError("ONNX export: cannot infer the shapes and dtypes of the graph "
                         "from in_shapes=%s, in_types=%s" % (input_shapes, input_dtypes))
    # get_internals lists the nodes in graph order (the order of tojson), each
    # variable once and each op with its visible outputs
    entries = internals._outputs
    order = {}
    info = {}
    for (node, idx, _), shp, dt in zip(entries, shapes, dtypes):
        key = order.setdefault(id(node), len(order))
        info[(key, idx)] = (tuple(shp), np.dtype(dt))
    return info


def build_graph(sym, params, in_shapes, in_types, opset, dynamic=False,
                dynamic_input_shapes=None, verbose=False):
    """The ONNX GraphProto of ``sym`` with ``params`` as initializers."""
    _registry.load_translations()
    helper = __import__("onnx").helper
    params = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v
              for k, v in params.items()}
    weights = {k: (v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v))
               for k, v in params.items()}
    graph = json.loads(sym.tojson())
    jnodes = graph["nodes"]
    output_label = sym.get_internals().list_outputs()[-1]
    output_label = (output_label[:-len("_output")] if output_label.endswith("_output")
                    else output_label) + "_label"

    data_names = [n for n in sym.list_inputs() if n not in params and n != output_label]
    if len(in_shapes) != len(data_names):
        raise MXNetError("ONNX export: the model has %d inputs %s but in_shapes has %d shapes"
                         % (len(data_names), data_names, len(in_shapes)))
    if len(in_types) != len(data_names):
        raise MXNetError("ONNX export: in_types has %d types for the %d inputs %s"
                         % (len(in_types), len(data_names), data_names))
    shapes = {n: tuple(s) for n, s in zip(data_names, in_shapes)}
    shapes.update({n: weights[n].shape for n in sym.list_inputs() if n in weights})
    dtypes = {n: np.dtype(t) for n, t in zip(data_names, in_types)}
    dtypes.update({n: weights[n].dtype for n in sym.list_inputs() if n in weights})
    info = _internal_info(sym, shapes, dtypes)

    if dynamic:
        if dynamic_input_shapes is None:
            graph_in_shapes = [tuple(None for _ in s) for s in in_shapes]
        else:
            if len(dynamic_input_shapes) != len(in_shapes):
                raise MXNetError("ONNX export: dynamic_input_shapes must have one shape per "
                                 "input (%d), got %d" % (len(in_shapes), len(dynamic_input_shapes)))
            for s, d in zip(in_shapes, dynamic_input_shapes):
                if len(s) != len(d):
                    raise MXNetError("ONNX export: dynamic input shape %s and input shape %s "
                                     "differ in rank" % (d, s))
            graph_in_shapes = [tuple(d) for d in dynamic_input_shapes]
    else:
        if dynamic_input_shapes is not None:
            raise MXNetError("ONNX export: dynamic_input_shapes is given; pass dynamic=True "
                             "to export dynamic input shapes")
        graph_in_shapes = [tuple(s) for s in in_shapes]
    graph_in = dict(zip(data_names, graph_in_shapes))

    b = Builder(opset, dynamic)
    tensors = {}                       # (json index, output index) -> ONNX name
    inputs, seen = [], set()
    for idx, jn in enumerate(jnodes):
        name = jn["name"]
        if name in seen:
            name = "idx_%d_%s" % (idx, name)
        seen.add(name)
        if jn["op"] == "null":
            if name in weights:
                b.used.add(name)
                b.initializers.append(b.numpy_helper.from_array(weights[name], name))
            elif name != output_label or name in data_names:
                shp, dt = info[(idx, 0)]
                b.used.add(name)
                inputs.append(helper.make_tensor_value_info(
                    name, b.tensor_type(dt), list(graph_in.get(name, shp))))
            tensors[(idx, 0)] = name
            continue
        op = _ops.get(jn["op"])
        fn = _registry.lookup(op.name, opset) or _registry.lookup(jn["op"], opset)
        if fn is None:
            raise MXNetError("ONNX export: operator %s (node %r) has no ONNX translation for "
                             "opset %d; mx.onnx.get_operator_support() lists the supported ones"
                             % (jn["op"], name, opset))
        attrs = jn.get("attrs", {})
        p = parse_params(op, attrs, name, strict=False)
        ins = [tensors[(e[0], e[1])] for e in jn["inputs"]]
        ishape = [info.get((e[0], e[1]), (None, None))[0] for e in jn["inputs"]]
        idtype = [info.get((e[0], e[1]), (None, None))[1] for e in jn["inputs"]]
        outs = sorted(k[1] for k in info if k[0] == idx)
        oshape = [info[(idx, k)][0] for k in outs]
        odtype = [info[(idx, k)][1] for k in outs]
        node = Node(jn["op"], name, attrs, p, ins, ishape, idtype, oshape, odtype, len(outs))
        if verbose:
            logging.info("Converting idx: %d, op: %s, name: %s", idx, jn["op"], name)
        b.used.add(name)
        result = fn(b, node)
        if isinstance(result, str):
            result = [result]
        for k, t in enumerate(result):
            tensors[(idx, k)] = t
            if (idx, k) in info:    # a translation may know an output's dtype better
                info[(idx, k)] = (info[(idx, k)][0], np.dtype(node.odtype[k]))

    outputs = []
    input_names = {i.name for i in inputs} | {i.name for i in b.initializers}
    head_names = set()
    for (nid, k, _), want in zip(graph["heads"], _out_names(sym)):
        t = tensors[(nid, k)]
        shp, dt = info[(nid, k)]
        if t != want or t in input_names or t in head_names:
            new = b.unique(want)
            b.add("Identity", [t], [new])
            t = new
        head_names.add(t)
        shp = tuple(None for _ in shp) if dynamic else shp
        outputs.append(helper.make_tensor_value_info(t, b.tensor_type(dt), list(shp)))

    return helper.make_graph(b.nodes, "mxnet_converted_model", inputs, outputs,
                             initializer=b.initializers)
