"""Served models and the model repository behind the inference protocol.

A repository is a folder with one subfolder per model::

    models/
      mlp/
        config.json            (or config.toml)
        mlp-symbol.json        MXNet/aiond export (Gluon export() or a Module checkpoint)
        mlp-0001.params        one file per version: the epoch number is the version
        mlp-0002.params
      ranker/
        ranker.onnx            an ONNX model (or ranker-0001.onnx, ... per version);
                               its graph inputs are the default "inputs"
      ...

``config.json`` (or the same keys in ``config.toml``; every key but
``inputs`` is optional; ``name``, if given, must be the folder's)::

    {"platform": "mxnet",
     "max_batch_size": 64,
     "inputs":  [{"name": "data", "datatype": "FP32", "shape": [784]}],
     "outputs": [{"name": "scores", "datatype": "FP32", "shape": [10]}],
     "symbol": "mlp-symbol.json",
     "versions": "latest",
     "batching": {"max_wait_ms": 2, "max_queue": 1024, "max_in_flight": 2,
                  "timeout_ms": null}}

``max_batch_size`` 0 means requests carry no batch axis; ``versions`` is
``"latest"``, ``"all"`` or a list like ``[1, 2]``; ``symbol`` (default: the
folder's only ``*-symbol.json``) names the graph file. A model over
variable-length sequences gives that axis as -1 and may pad it to a few
lengths, so that requests of nearby lengths share a batch::

    {"inputs":  [{"name": "tokens", "datatype": "FP32", "shape": [-1, 8]}],
     "batching": {"buckets": [16, 32, 64], "pad_axis": 1, "pad_value": 0}}

(``pad_axis`` counts the batch axis as 0, so 1 is the inputs' first axis;
buckets on a fixed-length axis fail at load.) ``examples/model_repository``
is a repository to start from (``examples/make_model_repository.py`` writes
its model files).

Input names are the graph's variables (shape without the batch axis, -1 for
a variable axis); output names label the graph's outputs in order (default:
the graph's own names, with shapes inferred from the inputs'). Each version
is its own
:class:`ServedModel` with its own Batcher. A model that fails to load is
reported by :meth:`ModelRepository.index` with the reason, and the others
keep serving.
"""
from __future__ import annotations

import asyncio
import glob
import json
import logging
import os
import re

import numpy as np

from .batcher import (Batcher, BatcherClosed, DeadlineExceeded, InvalidInput, ModelError,
                      Overloaded)
from .protocol import (DATATYPES, NotFound, ProtocolError, TensorSpec, Unavailable,
                       check_inputs, check_outputs, datatype_of)

__all__ = ["ServedModel", "ModelRepository", "ModelConfigError", "read_config"]

log = logging.getLogger("aiond.serve")

_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
READY, UNAVAILABLE, LOADING, UNLOADING = "READY", "UNAVAILABLE", "LOADING", "UNLOADING"
_BATCHING_KEYS = {"max_wait_ms", "max_queue", "max_in_flight", "timeout_ms", "buckets",
                  "pad_axis", "pad_value"}


class ModelConfigError(ValueError):
    """A model folder or its config that cannot be served (the reason says why)."""


class DeadlineError(ProtocolError):
    status = 504


class ModelFailed(ProtocolError):
    status = 500


class ServedModel:
    """One version of one model: its declared tensors and its Batcher.

    ``model``: a callable taking one batch per input (NDArrays, or numpy
    with ``numpy_model``) and returning one array per output (a tuple when
    several). ``outputs`` may be None: the outputs are then named
    ``output0``, ``output1``, ... with the datatypes the model returns.
    """

    def __init__(self, name, model, inputs, outputs=None, *, version="1", max_batch_size=32,
                 platform="mxnet", numpy_model=False, batcher=None, **batcher_options):
        self.name = str(name)
        self.version = str(version)
        self.platform = platform
        self.inputs = [s if isinstance(s, TensorSpec) else TensorSpec(*s) for s in inputs]
        self.outputs = None if outputs is None else \
            [s if isinstance(s, TensorSpec) else TensorSpec(*s) for s in outputs]
        if not self.inputs:
            raise ValueError("model %r needs at least one input" % self.name)
        self.max_batch_size = int(max_batch_size)
        if batcher is not None:
            self.batcher = batcher
        else:
            n = len(self.inputs)
            samples = [None if s.shape is None else
                       tuple(None if d < 0 else d for d in s.shape) for s in self.inputs]
            dts = [None if s.datatype == "BYTES" else s.dtype.newbyteorder("=")
                   for s in self.inputs]
            self.batcher = Batcher(model, max_batch_size=max(1, self.max_batch_size),
                                   name=self.name, num_inputs=n,
                                   sample_shape=samples if n > 1 else samples[0],
                                   dtype=dts if n > 1 else dts[0],
                                   numpy_model=numpy_model or any(
                                       s.datatype == "BYTES" for s in self.inputs),
                                   **batcher_options)
        self.model = model

    @property
    def ready(self) -> bool:
        return not self.batcher.closing

    # ---------------------------------------------------------- metadata
    def output_specs(self):
        return self.outputs or [TensorSpec("output0", "FP32", [-1])]

    def metadata(self):
        mb = self.max_batch_size
        return {"name": self.name, "versions": [self.version], "platform": self.platform,
                "inputs": [s.metadata(mb) for s in self.inputs],
                "outputs": [s.metadata(mb) for s in self.output_specs()]}

    def config(self):
        """The model's configuration in Triton's JSON form (``get_model_config``)."""
        def t(s):
            return {"name": s.name, "data_type": "TYPE_" + ("STRING" if s.datatype == "BYTES"
                                                            else s.datatype),
                    "dims": list(s.shape)}
        b = self.batcher
        return {"name": self.name, "platform": self.platform,
                "backend": "aiond", "max_batch_size": self.max_batch_size,
                "input": [t(s) for s in self.inputs],
                "output": [t(s) for s in self.output_specs()],
                "dynamic_batching": {"max_queue_delay_microseconds": int(b.max_wait * 1e6),
                                     "priority_levels": 2, "default_priority_level": 2}}

    # ------------------------------------------------------------- infer
    async def infer(self, request):
        """{output name: array} for a decoded InferRequest. Raises ProtocolError
        (400 bad input, 503 overloaded or unloading, 504 deadline, 500 the
        model failed on this input)."""
        fut = self.submit(request)
        try:
            y = await fut
        except Exception as e:  # noqa: BLE001 - mapped to the protocol's errors
            raise protocol_error(e) from None
        return self.finish(request, y)

    def submit(self, request):
        """Check ``request`` and queue it: the Batcher's future of its result
        (cancel it to withdraw the request). Raises ProtocolError."""
        arrays, rows = check_inputs(request, self.inputs, self.max_batch_size, self.name)
        if self.outputs is not None:
            check_outputs(request, self.outputs, self.name)
        if not self.max_batch_size:
            arrays = [a[None] for a in arrays]
        priority = 1 if request.priority == 1 else 0
        try:
            return self.batcher(tuple(arrays) if len(arrays) > 1 else arrays[0],
                                timeout=request.timeout, priority=priority)
        except Exception as e:  # noqa: BLE001 - mapped to the protocol's errors
            raise protocol_error(e, self.name) from None

    def finish(self, request, y):
        """{output name: array} from the Batcher's result."""
        ys = y if isinstance(y, tuple) else (y,)
        if not self.max_batch_size:
            ys = tuple(o[0] for o in ys)
        specs = self.outputs
        if specs is None:
            specs = self.outputs = [TensorSpec("output%d" % i, datatype_of(o.dtype),
                                               [-1] * (o.ndim - (1 if self.max_batch_size
                                                                 else 0)))
                                    for i, o in enumerate(ys)]
            check_outputs(request, specs, self.name)
        if len(ys) != len(specs):
            raise ModelFailed("model %r returned %d outputs, its config declares %d"
                              % (self.name, len(ys), len(specs)))
        return {s.name: o for s, o in zip(specs, ys)}

    async def aclose(self, drain=True):
        await self.batcher.aclose(drain=drain)


def protocol_error(e, model=None):
    """The ProtocolError for an error of the Batcher (others pass through)."""
    if isinstance(e, ProtocolError):
        return e
    if isinstance(e, InvalidInput):
        return ProtocolError("model %r: %s" % (model, e) if model else str(e))
    if isinstance(e, BatcherClosed):
        return Unavailable("the model is unloading: %s" % e, retry_after=e.retry_after)
    if isinstance(e, Overloaded):
        return Unavailable(str(e), retry_after=e.retry_after, overloaded=True)
    if isinstance(e, DeadlineExceeded):
        return DeadlineError(str(e))
    if isinstance(e, ModelError):
        return ModelFailed(str(e))
    return e


# -------------------------------------------------------------- repository
def read_config(folder):
    """The model config of ``folder`` ({} when it has none)."""
    pj, pt = os.path.join(folder, "config.json"), os.path.join(folder, "config.toml")
    if os.path.exists(pj):
        try:
            with open(pj, "rb") as f:
                cfg = json.loads(f.read())
        except ValueError as e:
            raise ModelConfigError("config.json is not valid JSON: %s" % e) from None
    elif os.path.exists(pt):
        try:
            import tomllib
        except ImportError:  # pragma: no cover - Python 3.10
            raise ModelConfigError("config.toml needs Python >= 3.11 (tomllib); "
                                   "write config.json") from None
        try:
            with open(pt, "rb") as f:
                cfg = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ModelConfigError("config.toml is not valid TOML: %s" % e) from None
    else:
        cfg = {}
    if not isinstance(cfg, dict):
        raise ModelConfigError("the config must be an object")
    known = {"platform", "max_batch_size", "inputs", "outputs", "versions", "symbol",
             "batching", "name"}
    unknown = set(cfg) - known
    if unknown:
        raise ModelConfigError("unknown config keys %s (known: %s)"
                               % (sorted(unknown), sorted(known)))
    return cfg


def _specs(items, what):
    if not isinstance(items, list):
        raise ModelConfigError("%s must be a list" % what)
    out = []
    for i, t in enumerate(items):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise ModelConfigError("%s[%d] needs a 'name'" % (what, i))
        dt = t.get("datatype", "FP32")
        if dt not in DATATYPES:
            raise ModelConfigError("%s %r: unknown datatype %r" % (what, t["name"], dt))
        shape = t.get("shape")
        if not isinstance(shape, list) or not all(type(d) is int for d in shape):
            raise ModelConfigError("%s %r needs 'shape', a list of integers (-1: any)"
                                   % (what, t["name"]))
        out.append(TensorSpec(t["name"], dt, shape))
    return out


def _check_buckets(batching, inputs):
    """A config whose buckets cannot pad any input fails at load, not at every request."""
    buckets = batching.get("buckets")
    if buckets is None:
        if "pad_axis" in batching or "pad_value" in batching:
            raise ModelConfigError("batching.pad_axis/pad_value are given without "
                                   "batching.buckets")
        return
    if not isinstance(buckets, list) or not buckets or \
            not all(type(b) is int and b > 0 for b in buckets):
        raise ModelConfigError("batching.buckets must be a list of positive integers, "
                               "got %r" % (buckets,))
    ax = batching.get("pad_axis", 1)
    if type(ax) is not int or ax < 1:
        raise ModelConfigError("batching.pad_axis must be an integer >= 1 (axis 0 is the "
                               "batch axis), got %r" % (ax,))
    padded = [s for s in inputs if len(s.shape) >= ax and s.shape[ax - 1] == -1]
    if not padded:
        what = ", ".join("%r has shape %s" % (s.name, list(s.shape)) for s in inputs)
        raise ModelConfigError(
            "batching.buckets: axis %d (batching.pad_axis) is padded only in inputs whose "
            "length there varies (-1 in their shape), and none does (%s): drop "
            "batching.buckets and batching.pad_axis, or give that axis as -1"
            % (ax, what))


def _versions(folder, prefix):
    """{version: params path} of ``prefix-NNNN.params`` in ``folder``."""
    out = {}
    for p in glob.glob(os.path.join(glob.escape(folder), glob.escape(prefix) + "-*.params")):
        m = re.match(re.escape(prefix) + r"-(\d+)\.params$", os.path.basename(p))
        if m:
            out[str(int(m.group(1)))] = p
    return out


def load_served(folder, name=None, ctx=None):
    """[ServedModel per version] of the model in ``folder`` (blocking: run it
    off the event loop). Raises ModelConfigError or the loader's error."""
    from .models import load_model
    from .onnx_models import onnx_input_specs, onnx_output_specs, onnx_versions
    name = name or os.path.basename(os.path.normpath(folder))
    cfg = read_config(folder)
    sym_file = cfg.get("symbol")
    onnx_files = onnx_versions(folder, sym_file)    # {version: file.onnx}, or None
    if onnx_files is not None:
        found, prefix = onnx_files, "ONNX model"
    elif sym_file is None:
        cands = sorted(glob.glob(os.path.join(glob.escape(folder), "*-symbol.json")))
        if len(cands) != 1:
            raise ModelConfigError("expected one *-symbol.json (or a .onnx file) in %s, found "
                                   "%d; name it with \"symbol\" in the config"
                                   % (folder, len(cands)))
        sym_file = cands[0]
    else:
        sym_file = os.path.join(folder, sym_file)
    if onnx_files is None:
        if not os.path.exists(sym_file):
            raise ModelConfigError("%s does not exist" % sym_file)
        prefix = os.path.basename(sym_file)[:-len("-symbol.json")]
        found = _versions(folder, prefix)
        if not found:
            raise ModelConfigError("no %s-NNNN.params in %s" % (prefix, folder))
    policy = cfg.get("versions", "latest")
    if policy == "latest":
        picked = [max(found, key=int)]
    elif policy == "all":
        picked = sorted(found, key=int)
    elif isinstance(policy, list) and all(type(v) is int for v in policy):
        picked = [str(v) for v in policy]
        missing = [v for v in picked if v not in found]
        if missing:
            raise ModelConfigError("versions %s have no %s-NNNN.params (found %s)"
                                   % (missing, prefix, sorted(found, key=int)))
    else:
        raise ModelConfigError("'versions' must be \"latest\", \"all\" or a list of integers")
    mb = cfg.get("max_batch_size", 32)
    if type(mb) is not int or mb < 0:
        raise ModelConfigError("max_batch_size must be an integer >= 0")
    batching = cfg.get("batching", {})
    if not isinstance(batching, dict) or set(batching) - _BATCHING_KEYS:
        raise ModelConfigError("'batching' takes %s" % sorted(_BATCHING_KEYS))
    opts = {}
    for k, v in batching.items():
        if k.endswith("_ms"):
            opts[k[:-3]] = None if v is None else float(v) / 1e3
        else:
            opts[k] = v
    if cfg.get("name", name) != name:
        raise ModelConfigError("the config names the model %r, its folder %r"
                               % (cfg["name"], name))
    if "inputs" in cfg:
        inputs = _specs(cfg["inputs"], "inputs")
    elif onnx_files is not None:    # an ONNX file declares its inputs
        inputs = onnx_input_specs(found[picked[-1]], mb)
    else:
        raise ModelConfigError("the config must give 'inputs' (name, datatype, shape)")
    outputs = _specs(cfg["outputs"], "outputs") if "outputs" in cfg else None
    _check_buckets(batching, inputs)
    served = []
    for v in picked:
        model = load_model(*((found[v], None) if onnx_files is not None
                             else (sym_file, found[v])), ctx=ctx,
                           input_name=[s.name for s in inputs] if len(inputs) > 1
                           else inputs[0].name)
        outs = outputs
        graph_outs = _graph_outputs(model)
        if outs is None and onnx_files is not None:
            outs = onnx_output_specs(model, inputs, mb)
        elif outs is None and graph_outs is not None:
            outs = _infer_outputs(model, inputs, graph_outs, mb)
        elif outs is not None and graph_outs is not None and len(outs) != len(graph_outs):
            raise ModelConfigError("the config names %d outputs, the graph has %d (%s)"
                                   % (len(outs), len(graph_outs), ", ".join(graph_outs)))
        served.append(ServedModel(name, model, inputs, outs, version=v, max_batch_size=mb,
                                  platform=cfg.get("platform", "mxnet" if onnx_files is None
                                                   else "onnx"), **opts))
        _warm_up(served[-1])
    return served


def _graph_outputs(model):
    outs = getattr(model, "outputs", None)
    if isinstance(outs, list):
        return outs
    sym = getattr(model, "_cached_graph", None)
    if sym:
        return sym[1].list_outputs()
    return None


def graph_input_name(model):
    """The graph's (first) input of a loaded model, or None for a plain callable."""
    name = getattr(model, "data_name", None)
    if name is None and getattr(model, "_cached_graph", None):
        name = model._cached_graph[0][0].name
    return name


def graph_output_specs(model, inputs, mb):
    """The outputs of ``model`` as the inference protocol describes them: the
    graph's output names, with the shapes its inputs fix (None when the model
    has no graph yet, e.g. a plain callable or a block not called yet). One
    rule for a repository's models, ``create_app`` and the command line."""
    names = _graph_outputs(model)
    if not names or any(s.shape is None for s in inputs):
        return None
    return _infer_outputs(model, inputs, names, mb)


def _infer_outputs(model, inputs, names, mb):
    """Output specs from the graph: its output names, shapes where the
    inputs' shapes fix them (FP32: MXNet graphs compute in the input dtype)."""
    sym = getattr(model, "_sym", None)
    if sym is None:
        sym = model._cached_graph[1]
    shapes = {s.name: (1,) + tuple(max(d, 1) for d in s.shape) for s in inputs}
    try:
        _, out_shapes, _ = sym.infer_shape_partial(**shapes)
    except Exception:  # noqa: BLE001 - shapes stay unknown
        out_shapes = [None] * len(names)
    fixed = all(d >= 0 for s in inputs for d in s.shape)
    specs = []
    for n, shp in zip(names, out_shapes):
        dims = [-1] if not shp else [d if fixed else -1 for d in shp[1:]]
        specs.append(TensorSpec(n, inputs[0].datatype if inputs[0].datatype != "BYTES"
                                else "FP32", dims))
    return specs


def _warm_up(served):
    """One forward on zeros (binds executors, traces the graph) so the first
    request does not pay for it, and a broken model fails at load."""
    from .. import ndarray as nd
    xs = [nd.zeros((1,) + tuple(max(d, 1) for d in s.shape[1 if not served.max_batch_size
                                                              else 0:]),
                   dtype=s.dtype.newbyteorder("=")) for s in served.inputs]
    out = served.model(*xs)
    for o in (out if isinstance(out, (list, tuple)) else [out]):
        o.wait_to_read()


class ModelRepository:
    """Models by name and version: those of a folder (``path``), and those
    added in code with :meth:`add`. Loading runs off the event loop."""

    def __init__(self, path=None, *, ctx=None):
        self.path = path
        self.ctx = ctx
        self._models = {}       # name -> {version: ServedModel}
        self._state = {}        # name -> (state, reason)
        self._locks = {}

    # -------------------------------------------------------------- lookup
    def add(self, served):
        """Serve ``served`` (a ServedModel) next to its other versions."""
        self._models.setdefault(served.name, {})[served.version] = served
        self._state[served.name] = (READY, "")

    def names(self):
        return sorted(self._models)

    def models(self):
        return [m for vs in self._models.values() for m in vs.values()]

    def get(self, name, version=None) -> ServedModel:
        """The model's version (default: its highest); NotFound or Unavailable."""
        vs = self._models.get(name)
        if vs is None:
            st = self._state.get(name)
            if st is not None:
                raise Unavailable("model %r is not loaded (%s)%s"
                                  % (name, st[0], ": " + st[1] if st[1] else ""))
            raise NotFound("unknown model %r" % name)
        if version in (None, ""):
            return vs[max(vs, key=_vkey)]
        m = vs.get(str(version))
        if m is None:
            raise NotFound("model %r has no version %r (versions: %s)"
                           % (name, version, ", ".join(sorted(vs, key=_vkey))))
        return m

    def versions(self, name):
        return sorted(self._models.get(name, {}), key=_vkey)

    def ready(self, name, version=None) -> bool:
        try:
            return self.get(name, version).ready
        except ProtocolError:
            return False

    def index(self, ready_only=False):
        out = []
        for name in sorted(set(self._state) | set(self.folder_models())):
            vs = self._models.get(name)
            if vs:
                for v in sorted(vs, key=_vkey):
                    out.append({"name": name, "version": v, "state": READY, "reason": ""})
            elif not ready_only:
                st, reason = self._state.get(name, (UNAVAILABLE, "not loaded"))
                out.append({"name": name, "state": st, "reason": reason})
        return out

    def folder_models(self):
        if not self.path or not os.path.isdir(self.path):
            return []
        return sorted(d for d in os.listdir(self.path)
                      if _NAME.match(d) and os.path.isdir(os.path.join(self.path, d)))

    # ------------------------------------------------------ load / unload
    async def load_all(self):
        for name in self.folder_models():
            await self.load(name, raise_errors=False)

    async def load(self, name, raise_errors=True):
        """(Re)load ``name`` from the repository folder; the old versions keep
        serving until the new ones are ready, then drain."""
        if not _NAME.match(name or ""):
            raise ProtocolError("%r is not a model name" % (name,))
        if not self.path or name not in self.folder_models():
            raise NotFound("the repository has no model %r" % name)
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            if name not in self._models:
                self._state[name] = (LOADING, "")
            loop = asyncio.get_running_loop()
            try:
                served = await loop.run_in_executor(
                    None, load_served, os.path.join(self.path, name), name, self.ctx)
            except Exception as e:  # noqa: BLE001 - reported, the others keep serving
                reason = "%s: %s" % (type(e).__name__, e)
                log.error("aiond.serve: model %r failed to load: %s", name, reason)
                if name not in self._models:
                    self._state[name] = (UNAVAILABLE, reason)
                if raise_errors:
                    raise ProtocolError("model %r failed to load: %s" % (name, reason)) \
                        from None
                return
            old = self._models.get(name, {})
            self._models[name] = {m.version: m for m in served}
            self._state[name] = (READY, "")
            for m in old.values():
                m.batcher.stop_accepting()
            for m in old.values():
                await m.aclose(drain=True)

    async def unload(self, name):
        vs = self._models.get(name)
        if vs is None:
            if name in self._state or name in self.folder_models():
                return      # already unloaded: as Triton, not an error
            raise NotFound("unknown model %r" % name)
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            vs = self._models.pop(name, {})
            self._state[name] = (UNLOADING, "")
            for m in vs.values():       # at once: no request slips in before the drain
                m.batcher.stop_accepting()
            await asyncio.gather(*(m.aclose(drain=True) for m in vs.values()))
            self._state[name] = (UNAVAILABLE, "unloaded")

    async def aclose(self):
        await asyncio.gather(*(m.aclose(drain=True) for m in self.models()),
                             return_exceptions=True)


def _vkey(v):
    return (0, int(v)) if v.isdigit() else (1, v)


def tensor_specs_for(sample_shape, dtype, name="data"):
    """The input spec of a one-input model from the /predict-style options."""
    dt = np.dtype(dtype or "float32")
    shape = None if sample_shape is None else [-1 if d is None else int(d)
                                               for d in sample_shape]
    return [TensorSpec(name, datatype_of(dt), shape)]
