"""The package's layering, read from the source: every import of an aiond
module, at module level or deferred inside a function, is checked.

Layers, bottom up (README, *Layout*): base -> context -> engine -> ops ->
ndarray -> autograd -> graph -> symbol -> gluon/kvstore/module -> serve.
A module imports only its own layer and those below. What does not yet
hold is declared below, by name, so that a new upward import, a new
import circle across packages or a new reach into another package's
private names fails here; each list only shrinks. The upward imports left
are the few MXNet's names need (at most four, each with its reason); a
layer below that needs a value from above gets it handed in by that layer
at its import (a hook in ``ndarray._invoke.hooks`` or ``ops.registry.hooks``).

    python tests/test_layers.py      # print today's findings as lists
"""
import ast
import collections
import functools
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = "aiond"

# Each package or top-level module of aiond, by layer (index = height).
LAYERS = [
    ("base", {"base", "error", "_extras", "_ctypes_helpers", "libinfo", "log", "name", "attribute",
              "registry", "lr_scheduler", "misc", "api", "cython", "tvmop", "library",
              "_numpy_op_doc", "ndarray_doc", "symbol_doc", "notebook", "torch", "_launch_rank",
              "_c_api"}),
    ("context", {"context", "util"}),
    ("engine", {"engine", "profiler", "runtime"}),
    ("ops", {"ops"}),
    # the array front ends: mx.nd, mx.np, mx.npx and what needs only arrays
    ("ndarray", {"ndarray", "numpy", "numpy_extension", "numpy_dispatch_protocol",
                 "numpy_op_signature", "random", "rtc", "monitor"}),
    ("autograd", {"autograd"}),
    ("graph", {"graph"}),
    ("symbol", {"symbol", "executor", "visualization", "operator", "numpy_op_fallback"}),
    ("gluon/kvstore/module", {"gluon", "kvstore", "module", "optimizer", "initializer", "metric",
                              "io", "image", "recordio", "model", "callback", "checkpoint", "rnn",
                              "executor_manager", "contrib", "test_utils", "onnx"}),
    ("serve", {"serve", "launch", "mxnet_alias", "_c_api_runtime", PKG}),
]

# Modules any package may import private names from: the internal APIs.
# aiond._c_api: the handle table behind mx.base's C API names (base, symbol)
INTERNAL = ("aiond.ndarray._invoke", "aiond.ndarray._plan", "aiond.autograd._tape", "aiond.engine",
            "aiond._c_api", "aiond._extras")

# Imports from a lower layer to a higher one (importer module, imported
# module): at most four, each MXNet's API by design. The ones made inside a
# function are lazy and stay out of the circle check (see findings).
DECLARED_UPWARD = {
    # autograd.get_symbol: the tape as a Symbol, built by the symbol layer on request
    ('aiond.autograd', 'aiond.symbol._autograd'),
    # mx.nd.CachedOp: MXNet's name for the graph layer's CachedOp, a lazy export
    ('aiond.ndarray.cached_op', 'aiond.graph.cached_op'),
    # MXNet's test_utils hands `mx` to `from mxnet.test_utils import *`
    ('aiond.test_utils', 'aiond'),
}

# Import circles across packages still there: the packages each one joins.
DECLARED_CIRCLES = [
    # One package in all but name: mx.base re-exports, at its end, the C API
    # names that live in these two base-layer helpers, and both raise base's
    # MXNetError; moving the error classes out would change where user code and
    # pickles find them (aiond.base.MXNetError), for no change in what loads when.
    ['_c_api', '_ctypes_helpers', 'base'],
]

# Private names of another package still imported outside INTERNAL
# (importer module, imported module or module.name).
DECLARED_PRIVATE = {
    ('aiond', 'aiond._c_api_runtime'),
    ('aiond._c_api', 'aiond._ctypes_helpers'),
    ('aiond.serve.onnx_models', 'aiond.contrib.onnx._graph.GraphImporter'),
    ('aiond.serve.onnx_models', 'aiond.contrib.onnx._graph.graph_metadata'),
    ('aiond.serve.onnx_models', 'aiond.contrib.onnx._graph.load_onnx'),
    ('aiond.serve.onnx_models', 'aiond.contrib.onnx._graph.np_dtype'),
    ('aiond.autograd', 'aiond._ctypes_helpers.MXCallbackList'),
    ('aiond.autograd', 'aiond._ctypes_helpers.c_array'),
    ('aiond.autograd', 'aiond._ctypes_helpers.c_array_buf'),
    ('aiond.autograd', 'aiond._ctypes_helpers.c_handle_array'),
    ('aiond.autograd', 'aiond.symbol._autograd.tape_to_symbol'),
    ('aiond.contrib._quantize_graph', 'aiond.symbol.symbol._Node'),
    ('aiond.contrib._quantize_graph', 'aiond.symbol.symbol._copy_graph'),
    ('aiond.contrib.amp._reduce_precision', 'aiond.symbol.symbol._Node'),
    ('aiond.contrib.amp._reduce_precision', 'aiond.symbol.symbol._ns'),
    ('aiond.contrib.amp.amp', 'aiond.symbol.symbol._Node'),
    ('aiond.contrib.svrg_optimization.svrg_module', 'aiond.base._as_list'),
    ('aiond.executor_manager', 'aiond.symbol.executor._reshaped'),
    ('aiond.gluon._cached_op', 'aiond.symbol.numpy._symbol.SYM'),
    ('aiond.gluon._fast', 'aiond.ndarray._coalesce'),
    ('aiond.gluon._formats', 'aiond.numpy.multiarray._as_np'),
    ('aiond.gluon._formats', 'aiond.symbol.numpy._Symbol'),
    ('aiond.gluon.symbol_block', 'aiond.symbol.numpy._Symbol'),
    ('aiond.image.detection', 'aiond.ndarray._internal'),
    ('aiond.image.image', 'aiond.ndarray._internal'),
    ('aiond.io.utils', 'aiond.ndarray.ndarray._cached'),
    ('aiond.launch', 'aiond._launch_rank.STATUS_DIR_ENV'),
    ('aiond.ndarray._fluent', 'aiond.ops._lazy'),
    ('aiond.ndarray._indexing', 'aiond.ops.matrix._axis_len'),
    ('aiond.ndarray._indexing', 'aiond.ops.matrix._axis_of'),
    ('aiond.ndarray._indexing', 'aiond.ops.matrix._index_shape'),
    ('aiond.ndarray._namespace', 'aiond.ops._lazy'),
    ('aiond.ndarray.numpy._internal', 'aiond.numpy._front.npi_function'),
    ('aiond.ndarray.numpy._internal', 'aiond.numpy.multiarray._as_np'),
    ('aiond.numpy._f_binary', 'aiond.util._np_ufunc_check'),
    ('aiond.numpy._f_linalg', 'aiond.util._np_ufunc_check'),
    ('aiond.numpy._f_unary', 'aiond.util._np_ufunc_check'),
    ('aiond.numpy._indexing', 'aiond.ndarray._indexing'),
    ('aiond.numpy.multiarray', 'aiond.ndarray._gpu.from_numpy_value'),
    ('aiond.numpy_dispatch_protocol', 'aiond.numpy._protocol'),
    ('aiond.numpy_extension._op', 'aiond.ndarray._namespace'),
    ('aiond.numpy_extension._op', 'aiond.numpy._front'),
    ('aiond.numpy_extension._op', 'aiond.numpy.multiarray._as_np'),
    ('aiond.numpy_extension._op', 'aiond.numpy.multiarray._reshape'),
    ('aiond.numpy_extension.image', 'aiond.numpy._front'),
    ('aiond.numpy_extension.random', 'aiond.numpy._front'),
    ('aiond.numpy_extension.utils', 'aiond.numpy.multiarray._as_np'),
    ('aiond.numpy_op_fallback', 'aiond.ndarray.numpy._internal'),
    ('aiond.numpy_op_fallback', 'aiond.numpy.utils._STR_2_DTYPE_'),
    ('aiond.numpy_op_fallback', 'aiond.symbol.numpy._internal'),
    ('aiond.operator', 'aiond.ndarray._sparse_invoke.assign'),
    ('aiond.operator', 'aiond.ndarray._sparse_invoke.new_sparse'),
    ('aiond.operator', 'aiond.ndarray._sparse_invoke.value_of'),
    ('aiond.operator', 'aiond.ndarray.ndarray._await_result'),
    ('aiond.ops.registry', 'aiond.base._Null'),
    ('aiond.ops.registry', 'aiond.base._NullType'),
    ('aiond.optimizer._states', 'aiond.ndarray.io._Parser'),
    ('aiond.rtc', 'aiond.ndarray._gpu._kept'),
    ('aiond.symbol', 'aiond.ndarray._namespace.populate_lazily'),
    ('aiond.symbol', 'aiond.ops._lazy'),
    ('aiond.symbol._control_flow', 'aiond.ndarray._control_flow.LoopInputError'),
    ('aiond.symbol._control_flow', 'aiond.ndarray._control_flow.regroup'),
    ('aiond.symbol._namespace', 'aiond.ndarray._namespace.populate_lazily'),
    ('aiond.symbol._namespace', 'aiond.ops._rules'),
    ('aiond.symbol._partial', 'aiond.ops._rules'),
    ('aiond.symbol.executor', 'aiond._ctypes_helpers.c_str_array'),
    ('aiond.symbol.numpy', 'aiond.numpy._front'),
    ('aiond.symbol.numpy._internal', 'aiond.numpy._front.npi_function'),
    ('aiond.symbol.numpy._symbol', 'aiond.numpy._f_binary.binary'),
    ('aiond.symbol.numpy._symbol', 'aiond.numpy._front'),
    ('aiond.symbol.numpy_extension', 'aiond.numpy._front'),
    ('aiond.symbol.random', 'aiond.base._Null'),
    ('aiond.test_utils', 'aiond.symbol.numpy._Symbol'),
    ('aiond.test_utils._callables', 'aiond.symbol._test_hooks'),
    ('aiond.util', 'aiond._ctypes_helpers.c_str'),
    ('aiond.util', 'aiond._ctypes_helpers.check_call'),
}


def _modules(root=ROOT):
    mods = {}
    base = os.path.join(root, PKG)
    for d, dirs, files in os.walk(base):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                if name.endswith(".__init__"):
                    name = name[:-len(".__init__")]
                mods[name] = path
    return mods


def _imports(mods):
    """(importer, target module, imported name or None, deferred) for every
    import of an aiond module; ``from pkg import sub`` targets ``pkg.sub``."""
    out = []
    for name, path in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        here = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        top_level = {id(n) for n in tree.body}
        for stmt in ast.walk(tree):
            deferred = id(stmt) not in top_level
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if a.name == PKG or a.name.startswith(PKG + "."):
                        out.append((name, a.name, None, deferred))
            elif isinstance(stmt, ast.ImportFrom):
                if stmt.level:
                    parts = here.split(".")
                    parts = parts[:len(parts) - (stmt.level - 1)]
                    mod = ".".join(parts + ([stmt.module] if stmt.module else []))
                else:
                    mod = stmt.module or ""
                if mod != PKG and not mod.startswith(PKG + "."):
                    continue
                for a in stmt.names:
                    sub = mod + "." + a.name
                    if sub in mods:
                        out.append((name, sub, None, deferred))
                    else:
                        out.append((name, mod, a.name, deferred))
            elif (isinstance(stmt, ast.Call) and stmt.args
                  and isinstance(stmt.args[0], ast.Constant) and isinstance(stmt.args[0].value, str)
                  and stmt.args[0].value.startswith(PKG + ".")
                  and getattr(stmt.func, "attr", getattr(stmt.func, "id", None))
                  == "import_module"):
                out.append((name, stmt.args[0].value, None, True))
    return out


def _group(mod):
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else PKG


def _layer_of():
    height = {}
    for i, (_, groups) in enumerate(LAYERS):
        for g in groups:
            height[g] = i
    return height


def _private(importer, target, name):
    """The private part an import names in another package, or None."""
    if _group(importer) == _group(target):
        return None
    if any(target == m or target.startswith(m + ".") for m in INTERNAL):
        return None
    parts = target.split(".")[1:] + ([name] if name else [])
    if any(p.startswith("_") and not p.startswith("__") for p in parts):
        return target + ("." + name if name else "")
    return None


@functools.lru_cache(maxsize=None)
def findings(root=ROOT, lazy=None):
    """(unplaced groups, upward imports, circles, private reaches); ``lazy``:
    the declared upward imports kept out of the circle graph when deferred
    (DECLARED_UPWARD unless given)."""
    lazy = frozenset(DECLARED_UPWARD) if lazy is None else lazy
    mods = _modules(root)
    imports = _imports(mods)
    height = _layer_of()
    unplaced = sorted({_group(m) for m in mods} - set(height))
    upward, private = set(), set()
    graph = collections.defaultdict(set)
    for importer, target, name, deferred in imports:
        if target not in mods:
            continue
        if height[_group(importer)] < height[_group(target)]:
            upward.add((importer, target))
        p = _private(importer, target, name)
        if p:
            private.add((importer, p))
        # A declared upward import made inside a function is lazy by design (it
        # runs once both modules are loaded, on request): it stays out of the
        # circle graph, so a circle it closes is not counted twice.
        if deferred and (importer, target) in lazy:
            continue
        graph[importer].add(target)
    circles = [sorted({_group(m) for m in scc}) for scc in _sccs(graph)]
    circles = sorted(c for c in circles if len(c) > 1)
    return unplaced, upward, circles, private


def _sccs(graph):
    """Strongly connected components (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    scc = set()
                    while True:
                        m = stack.pop()
                        on.discard(m)
                        scc.add(m)
                        if m == node:
                            break
                    out.append(scc)
    return out


def test_every_package_has_a_layer():
    assert findings()[0] == [], "give these a layer in LAYERS"


def test_no_import_runs_up_the_layers():
    upward = findings()[1]
    assert len(DECLARED_UPWARD) <= 4, "at most four declared upward imports (issue 34)"
    new = sorted(upward - DECLARED_UPWARD)
    assert not new, "imports from a lower layer to a higher one: %s" % new
    gone = sorted(DECLARED_UPWARD - upward)
    assert not gone, "no longer there, drop from DECLARED_UPWARD: %s" % gone


def test_no_import_circle_spans_packages():
    circles = findings()[2]
    new = [c for c in circles if c not in DECLARED_CIRCLES]
    assert not new, "import circles joining these packages: %s" % new
    gone = [c for c in DECLARED_CIRCLES if c not in circles]
    assert not gone, "no longer there, drop from DECLARED_CIRCLES: %s" % gone


def test_no_reach_into_another_packages_private_names():
    private = findings()[3]
    new = sorted(private - DECLARED_PRIVATE)
    assert not new, "private names of another package (use a public name or INTERNAL): %s" % new
    gone = sorted(DECLARED_PRIVATE - private)
    assert not gone, "no longer there, drop from DECLARED_PRIVATE: %s" % gone


def test_the_checker_sees_deferred_relative_and_private_imports(tmp_path):
    files = {
        "__init__.py": "",
        "ops/__init__.py": "",
        "ops/a.py": "def f():\n    from ..gluon import b\n    return b\n",
        "gluon/__init__.py": "",
        "gluon/b.py": "from aiond.ops.a import f\nfrom ..ops import _hidden\n",
        "ops/_hidden.py": "",
        "spare.py": "",
    }
    for rel, text in files.items():
        path = tmp_path / PKG / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    unplaced, upward, circles, private = findings(str(tmp_path))
    assert unplaced == ["spare"]
    assert upward == {("aiond.ops.a", "aiond.gluon.b")}
    assert circles == [["gluon", "ops"]]
    assert private == {("aiond.gluon.b", "aiond.ops._hidden")}
    # declared, the deferred upward import no longer closes a circle
    assert findings(str(tmp_path), frozenset(upward))[2] == []


if __name__ == "__main__":
    unplaced, upward, circles, private = findings()
    if unplaced:
        print("unplaced:", unplaced)
    print("DECLARED_UPWARD = {")
    for u in sorted(upward):
        print("    %r," % (u,))
    print("}\n\nDECLARED_CIRCLES = [")
    for c in circles:
        print("    %r," % (c,))
    print("]\n\nDECLARED_PRIVATE = {")
    for p in sorted(private):
        print("    %r," % (p,))
    print("}")
    sys.exit(0)
