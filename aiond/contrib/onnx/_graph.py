"""The ONNX graph walker behind ``mx.contrib.onnx.import_model``.

Each ONNX value becomes either an aiond Symbol or a :class:`Const` (known at
import time). A node whose inputs are all constants is folded at import time
(the shape arithmetic PyTorch's exporter emits around ``Reshape``/``Expand``
becomes plain attributes). ``Shape`` of a Symbol is folded too, from the
graph inputs' declared shapes: a dynamic axis (``dim_param``) is tried at two
sizes ("probes"), so a shape entry that follows that axis shows up as two
different values and ``Reshape``/``Expand`` turn it into MXNet's "copy this
axis" (0) or "infer" (-1) codes instead of baking one size in.
"""
from __future__ import annotations

import numpy as np

from ...base import MXNetError
from ... import ndarray as nd
from ... import symbol as sym

__all__ = ["OnnxImportError", "UnsupportedOnnxOperator", "Const", "GraphImporter",
           "load_onnx", "graph_metadata"]

# the sizes dynamic axes take while shapes are folded: the k-th distinct
# dynamic axis (by dim_param name) is PROBES[0][k] under the first probe and
# PROBES[1][k] under the second - primes, so that neither two axes nor their
# products coincide, and rarely a size a model fixes
PROBES = ((3, 7, 13, 19, 29, 37, 43, 53), (5, 11, 17, 23, 31, 41, 47, 59))


class OnnxImportError(MXNetError):
    """An ONNX model aiond cannot import (the message names the node)."""


class UnsupportedOnnxOperator(OnnxImportError, NotImplementedError):
    """An ONNX operator (or attribute of one) aiond has no translation for."""


class Const:
    """A value known at import time: ``a``/``b`` under the two probes (the
    same array unless it depends on a dynamic axis)."""
    __slots__ = ("a", "b", "_name", "lazy")

    def __init__(self, a, b=None):
        self.a = np.asarray(a)
        self.b = self.a if b is None else np.asarray(b)
        self._name = None   # the ONNX value's name, for the parameter it may become
        # for a value whose length follows a dynamic axis (positions up to the
        # sequence length): makes it as a Symbol when it is used as data
        self.lazy = None

    @property
    def static(self):
        return self.a is self.b or (self.a.shape == self.b.shape and
                                    np.array_equal(self.a, self.b))


def load_onnx(model_file):
    """The ModelProto of ``model_file`` (a path, bytes or a ModelProto);
    a file that is not a readable ONNX model raises MXNetError."""
    try:
        import onnx
    except ImportError:
        from ..._extras import install_hint
        raise ImportError("importing ONNX models needs the onnx package: "
                          + install_hint("onnx")) from None
    if isinstance(model_file, onnx.ModelProto):
        return model_file
    try:
        if isinstance(model_file, (bytes, bytearray)):
            model = onnx.load_model_from_string(bytes(model_file))
        else:
            model = onnx.load_model(model_file)
    except FileNotFoundError:
        raise
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise MXNetError("%s is not a readable ONNX model (%s: %s)"
                         % (model_file if isinstance(model_file, str) else "the data",
                            type(e).__name__, e)) from None
    if not model.graph.node and not model.graph.output:
        raise MXNetError("%s holds no ONNX graph (no nodes, no outputs): not an ONNX model"
                         % (model_file if isinstance(model_file, str) else "the data"))
    return model


def _dims(value_info):
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
            for d in t.shape.dim]


def _dim_keys(value_info):
    """Per axis its size, or a key naming a dynamic axis (its dim_param, or
    one of its own when unnamed); None when the rank is unknown."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    out = []
    for k, d in enumerate(t.shape.dim):
        if d.HasField("dim_value") and d.dim_value > 0:
            out.append(d.dim_value)
        else:
            out.append(d.dim_param or "\0%s:%d" % (value_info.name, k))
    return out


def graph_metadata(graph):
    """MXNet's metadata dict: inputs as (name, shape, ONNX elem type), outputs
    as (name, shape); unknown dimensions are 0, as MXNet reports them."""
    inits = {t.name for t in graph.initializer}
    ins = [(i.name, tuple(d or 0 for d in (_dims(i) or [])), i.type.tensor_type.elem_type)
           for i in graph.input if i.name not in inits]
    outs = [(o.name, tuple(d or 0 for d in (_dims(o) or []))) for o in graph.output]
    return {"input_tensor_data": ins, "output_tensor_data": outs}


def np_dtype(elem_type):
    from onnx import helper
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


class GraphImporter:
    """Walks one ONNX graph into an aiond Symbol and its parameters."""

    def __init__(self, model, dynamic_batch=False, graph=None, opset_version=None):
        """``model``: a ModelProto; or None with ``graph`` (a GraphProto) and
        ``opset_version``, as MXNet's GraphProto.from_onnx takes them."""
        from onnx import helper
        self.model = model
        self.graph = model.graph if graph is None else graph
        if model is not None:
            self.opset_imports = list(model.opset_import)
            self.ir_version = model.ir_version
        else:
            self.opset_imports = [helper.make_opsetid("", int(opset_version))]
            self.ir_version = None
        self.opset = max([o.version for o in self.opset_imports
                          if o.domain in ("", "ai.onnx")] or [1])
        self.values = {}        # ONNX value name -> Symbol or Const
        self.params = {}        # variable name -> numpy array (constants used as tensors)
        self.probe_shapes = ({}, {})    # variable name -> shape under probe a / b
        self.input_dtypes = {}
        self._const_vars = {}   # id(Const) -> Variable
        self._shape_cache = {}
        self.dynamic_batch = dynamic_batch
        self.node = None

    # ----------------------------------------------------------- errors
    def where(self):
        n = self.node
        if n is None:
            return ""
        return " (node %r, %s)" % (n.name or (n.output[0] if n.output else "?"), n.op_type)

    def fail(self, msg):
        raise OnnxImportError(msg + self.where())

    def unsupported(self, msg):
        raise UnsupportedOnnxOperator(msg + self.where())

    # --------------------------------------------------------- values
    def sym(self, v, dtype=None):
        """``v`` as a Symbol: a constant becomes a parameter variable."""
        if v is None:
            self.fail("a required input is missing")
        if not isinstance(v, Const):
            return v
        var = self._const_vars.get(id(v))
        if var is None and not v.static:
            if v.lazy is None:
                v.lazy = self._fill_lazy(v)
            if v.lazy is not None:
                var = self._const_vars[id(v)] = v.lazy()
        if var is None:
            if not v.static:
                self.fail("a tensor whose value depends on a dynamic input axis is used "
                          "as data; aiond folds such values only into shapes")
            arr = v.a
            if arr.dtype == np.bool_:
                arr = arr.astype(np.float32)    # MXNet operators compute masks as 0/1
            if dtype is not None:
                arr = arr.astype(dtype)
            if arr.ndim == 0:
                arr = arr.reshape(1)    # legacy operators take no 0-d arrays; broadcasts alike
            name = v._name or "_onnx_const%d" % len(self.params)
            while name in self.params or name in self.probe_shapes[0]:
                name = name + "_"
            self.params[name] = arr
            for ps in self.probe_shapes:
                ps[name] = arr.shape
            var = sym.Variable(name, shape=arr.shape, dtype=arr.dtype)
            self._const_vars[id(v)] = var
        return var

    def const(self, v, what, static=True):
        """The numpy value of ``v``, which must be known at import time."""
        if not isinstance(v, Const):
            self.unsupported("%s must be a constant (an initializer or computed from "
                             "shapes), not computed from the model's inputs" % what)
        if static and not v.static:
            self.fail("%s depends on a dynamic input axis; aiond needs it fixed" % what)
        return v.a

    def shapes(self, v):
        """(shape under probe a, shape under probe b) of a Symbol or Const;
        None for a shape not completely known."""
        return tuple(None if s is None or None in s else s for s in self.partial_shapes(v))

    def partial_shapes(self, v):
        """As :meth:`shapes`, with None for the unknown dims of a shape whose
        rank is known (the rows after a NonMaxSuppression: a value)."""
        if isinstance(v, Const):
            return tuple(v.a.shape), tuple(v.b.shape)
        hit = self._shape_cache.get(id(v))
        got = hit[1] if hit is not None and hit[0] is v else None
        if got is None:
            args = set(v.list_arguments()) | set(v.list_auxiliary_states())
            out = []
            for ps in self.probe_shapes:
                kw = {k: s for k, s in ps.items() if k in args}
                try:
                    _, oshapes, _ = v.infer_shape_partial(**kw)
                    s = oshapes[0]
                except Exception:  # noqa: BLE001 - reported as unknown below
                    s = None
                out.append(None if s is None else
                           tuple(None if d in (0, -1, None) else d for d in s))
            got = tuple(out)
            self._shape_cache[id(v)] = (v, got)   # v kept: its id stays its own
        return got

    def dtype(self, v):
        """The numpy dtype of a Symbol or Const (None when it cannot be inferred)."""
        if isinstance(v, Const):
            return v.a.dtype
        args = set(v.list_arguments())
        kw = {k: d for k, d in self.input_dtypes.items() if k in args}
        kw.update({k: a.dtype for k, a in self.params.items() if k in args})
        try:
            t = v.infer_type_partial(**kw)[1][0]
        except Exception:  # noqa: BLE001 - unknown
            return None
        return None if t is None else np.dtype(t)

    def shape(self, v, what="the input"):
        a, b = self.shapes(v)
        if a is None or b is None:
            self.fail("cannot infer the shape of %s; give the model's inputs fixed or "
                      "named dimensions" % what)
        return a, b

    def rank(self, v, what="the input"):
        a, _ = self.partial_shapes(v)
        if a is None:
            self.fail("cannot infer the rank of %s; give the model's inputs fixed or "
                      "named dimensions" % what)
        return len(a)

    def static_shape(self, v, what="the input"):
        a, b = self.shape(v, what)
        if a != b:
            self.fail("the shape of %s depends on a dynamic input axis (%s / %s under "
                      "two sizes); this operator needs it fixed" % (what, a, b))
        return a

    # ----------------------------------------------------------- walk
    def run(self):
        """``(sym, arg_params, aux_params)``; a malformed graph raises OnnxImportError."""
        try:
            return self._run()
        except MXNetError:
            raise
        except Exception as e:  # noqa: BLE001 - e.g. a corrupted file that still parses
            raise OnnxImportError("malformed ONNX graph: %s: %s%s"
                                  % (type(e).__name__, e, self.where())) from e

    def _run(self):
        g = self.graph
        for t in g.initializer:
            if not t.name.strip():
                raise OnnxImportError("an initializer has no name")
            self.values[t.name] = self._named(Const(self._array(t)), t.name)
        dyn = {}    # dynamic axis key -> its probe index
        for i in g.input:
            if i.name in self.values:
                continue        # IR < 4 lists initializers among the inputs
            dt = np_dtype(i.type.tensor_type.elem_type) if i.type.tensor_type.elem_type \
                else np.dtype(np.float32)
            if dt == np.bool_:
                dt = np.dtype(np.float32)
            self.input_dtypes[i.name] = dt
            dims = _dim_keys(i)
            if dims is not None:
                if self.dynamic_batch and dims:
                    dims = ["\0batch"] + dims[1:]     # every input's axis 0 is the batch
                for k, d in enumerate(dims):
                    if isinstance(d, str) and d not in dyn:
                        dyn[d] = len(dyn) % len(PROBES[0])
                for ps, p in zip(self.probe_shapes, PROBES):
                    ps[i.name] = tuple(p[dyn[d]] if isinstance(d, str) else d for d in dims)
            self.values[i.name] = sym.Variable(i.name, dtype=dt)
        self.walk(g.node)
        self.node = None
        outs = []
        for o in g.output:
            v = self.values.get(o.name)
            if v is None:
                raise OnnxImportError("graph output %r is produced by no node" % o.name)
            v = self.sym(v)
            outs.append(v)
        out = outs[0] if len(outs) == 1 else sym.Group(outs)
        args, aux = set(out.list_arguments()), set(out.list_auxiliary_states())
        arg_params = {k: nd.array(v, dtype=v.dtype) for k, v in self.params.items()
                      if k in args}
        aux_params = {k: nd.array(v, dtype=v.dtype) for k, v in self.params.items()
                      if k in aux}
        return out, arg_params, aux_params

    def walk(self, nodes):
        """Translate ``nodes`` in order into ``self.values``."""
        from ._ops import translate
        for node in nodes:
            self.node = node
            missing = [n for n in node.input if n and n not in self.values]
            if missing:
                self.fail("input %s is produced by no earlier node" % missing)
            ins = [self.values[n] if n else None for n in node.input]
            try:
                outs = translate(self, node, ins)
            except OnnxImportError:
                raise
            except Exception as e:  # noqa: BLE001 - a malformed node: say which
                raise OnnxImportError("%s: %s%s" % (type(e).__name__, e, self.where())) from e
            for name, v in zip(node.output, outs):
                if name:
                    if isinstance(v, Const):
                        v = self._named(v, name)
                    self.values[name] = v

    def inline(self, graph):
        """The outputs of a subgraph (an If branch) translated in this graph's
        scope: its nodes see every value computed so far."""
        outer = self.node
        for t in graph.initializer:
            self.values[t.name] = self._named(Const(self._array(t)), t.name)
        self.walk(graph.node)
        self.node = outer
        missing = [o.name for o in graph.output if o.name not in self.values]
        if missing:
            self.fail("the subgraph's outputs %s are produced by no node" % missing)
        return [self.values[o.name] for o in graph.output]

    def dim_ref(self, na, nb):
        """(graph input Variable, axis) whose length is ``na`` / ``nb`` under
        the two probes, or None: the dynamic axis a value's length follows."""
        if na == nb:
            return None
        for name, (sa, sb) in self._probe_inputs():
            for ax, (p, q) in enumerate(zip(sa, sb)):
                if p == na and q == nb:
                    return self.values[name], ax
        return None

    def _fill_lazy(self, v):
        """A tensor filled with one value whose shape follows dynamic axes
        (ConstantOfShape of a Shape): the value broadcast along those axes of
        the inputs that have them; None when it is not such a tensor."""
        a, b = v.a, v.b
        if a.ndim != b.ndim or not a.size or not b.size or \
                not (a.min() == a.max() == b.min() == b.max()):
            return None
        refs = []
        for i, (p, q) in enumerate(zip(a.shape, b.shape)):
            if p != q:
                ref = self.dim_ref(p, q)
                if ref is None:
                    return None
                refs.append((i, ref))
        base = Const(np.full(tuple(1 if p != q else p for p, q in zip(a.shape, b.shape)),
                             a.reshape(-1)[0], a.dtype))

        def make():
            out = self.sym(base)
            for i, (var, k) in refs:
                out = sym.broadcast_like(out, var, lhs_axes=(i,), rhs_axes=(k,))
            return out
        return make

    def _probe_inputs(self):
        pa, pb = self.probe_shapes
        return [(n, (pa[n], pb[n])) for n in self.input_dtypes if n in pa]

    @staticmethod
    def _named(c, name):
        c2 = Const(c.a, c.b)
        c2._name = name
        c2.lazy = c.lazy
        return c2

    @staticmethod
    def _array(t):
        from onnx import TensorProto, numpy_helper
        if t.data_type == TensorProto.FLOAT and not t.raw_data and t.float_data:
            # float_data (MXNet's exporter writes it): fromiter is twice as fast
            n = len(t.float_data)
            if n != int(np.prod(t.dims)):
                raise OnnxImportError("initializer %r holds %d values for shape %s"
                                      % (t.name, n, list(t.dims)))
            return np.fromiter(t.float_data, np.float32, count=n).reshape(tuple(t.dims))
        return np.asarray(numpy_helper.to_array(t))

