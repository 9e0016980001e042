"""The ``_LIB.MX*`` functions on Symbols and graph partitioning
(MXNet 1.9.1's src/c_api/c_api_symbolic.cc and c_api_test.cc), working on
aiond Symbols through handles (see ``aiond._c_api``).

Arguments are what MXNet's Python code passes: handles, ``c_str``
strings, ``c_str_array`` lists with their lengths, and ``ctypes.byref``
outputs, which the functions fill. Returned string arrays stay valid until
the next call on the same thread, as MXNet's do.
"""
from __future__ import annotations

import ctypes
import threading

from .. import _c_api as _c
from ..base import MXNetError, py_str

_ret = threading.local()      # keeps returned C arrays alive until the next call


def _sym_mod():
    from . import symbol as _s
    return _s


def _symbol(handle):
    return _c.object_of(handle, _sym_mod().Symbol)


def _str(v):
    if isinstance(v, (ctypes.c_char_p,)):
        v = v.value
    if v is None:
        raise MXNetError("a string argument is NULL")
    return py_str(v)


def _strs(arr, n):
    n = int(getattr(n, "value", n))
    return [py_str(arr[i]) for i in range(n)]


def _target(ref, what):
    obj = getattr(ref, "_obj", None)
    if obj is None:
        raise MXNetError("%s must be passed as ctypes.byref(<%s>)" % (what, what))
    return obj


def _set_handle(ref, sym):
    out = _target(ref, "out")
    out.value = _c.handle_for(sym, owned=True)
    if isinstance(out, _c.SymbolHandle):
        out._owned = out.value


def _set_value(ref, v):
    _target(ref, "out").value = v


def _set_str_array(size_ref, arr_ref, strings):
    arr = (ctypes.c_char_p * max(len(strings), 1))()
    for i, s in enumerate(strings):
        arr[i] = s.encode("utf-8")
    _ret.keep = arr
    _set_value(size_ref, len(strings))
    out = _target(arr_ref, "out")
    ctypes.memmove(ctypes.addressof(out), ctypes.byref(ctypes.c_void_p(ctypes.addressof(arr))),
                   ctypes.sizeof(ctypes.c_void_p))


def _set_str(ref, s):
    buf = ctypes.c_char_p(s.encode("utf-8"))
    _ret.keep = buf
    _set_value(ref, buf.value)


# ---------------------------------------------------------------- symbols


def MXSymbolCreateVariable(name, out):  # noqa: N802 - MXNet's names below
    """A variable symbol named ``name``."""
    _set_handle(out, _sym_mod().var(_str(name)))


def MXSymbolCreateGroup(num_symbols, symbols, out):
    """A symbol grouping the outputs of ``num_symbols`` symbol handles."""
    n = int(getattr(num_symbols, "value", num_symbols))
    _set_handle(out, _sym_mod().Group([_symbol(_c.SymbolHandle(symbols[i]))
                                       for i in range(n)]))


def MXSymbolCreateFromJSON(json, out):
    """The symbol a JSON string describes."""
    _set_handle(out, _sym_mod().load_json(_str(json)))


def MXSymbolCreateFromFile(fname, out):
    """The symbol a JSON file holds."""
    _set_handle(out, _sym_mod().load(_str(fname)))


def MXSymbolSaveToJSON(sym, out_json):
    """The symbol's JSON."""
    _set_str(out_json, _symbol(sym).tojson())


def MXSymbolSaveToFile(sym, fname):
    """Write the symbol's JSON to ``fname``."""
    _symbol(sym).save(_str(fname))


def MXSymbolFree(sym):
    """Release a handle a call returned (a Symbol made from it stays valid)."""
    _c.release_handle(sym)


def MXSymbolCopy(sym, out):
    """A deep copy of the symbol."""
    _set_handle(out, _symbol(sym).__copy__())


def MXShallowCopySymbol(sym, out):
    """A symbol sharing the graph of ``sym``."""
    s = _sym_mod().Symbol._from(_symbol(sym)._outputs)
    _set_handle(out, s)


def MXSymbolGetOutput(sym, index, out):
    """Output ``index`` of the symbol."""
    _set_handle(out, _symbol(sym)[int(getattr(index, "value", index))])


def MXSymbolGetInternals(sym, out):
    """Every node output of the graph, as a group."""
    _set_handle(out, _symbol(sym).get_internals())


def MXSymbolGetChildren(sym, out):
    """The inputs of the symbol's head node, as a group."""
    _set_handle(out, _symbol(sym).get_children())


def MXSymbolGetNumOutputs(sym, out):
    """The number of outputs."""
    _set_value(out, len(_symbol(sym)))


def MXSymbolListArguments(sym, out_size, out_str_array):
    """The argument names."""
    _set_str_array(out_size, out_str_array, _symbol(sym).list_arguments())


def MXSymbolListOutputs(sym, out_size, out_str_array):
    """The output names."""
    _set_str_array(out_size, out_str_array, _symbol(sym).list_outputs())


def MXSymbolListAuxiliaryStates(sym, out_size, out_str_array):
    """The auxiliary state names."""
    _set_str_array(out_size, out_str_array, _symbol(sym).list_auxiliary_states())


def MXSymbolGetName(sym, out, success):
    """The head node's name; ``success`` is 0 for a group of several nodes."""
    name = _symbol(sym).name
    _set_value(success, 0 if name is None else 1)
    if name is not None:
        _set_str(out, name)


# ---------------------------------------------------------- partitioning


def _sg():
    from . import _subgraph
    return _subgraph


def MXBuildSubgraphByOpNames(sym, prop_name, num_ops, op_names, out):
    """``sym`` partitioned by backend ``prop_name``'s properties with the
    ops named ``op_names`` selected (c_api_test.cc)."""
    names = _strs(op_names, num_ops)
    _set_handle(out, _sg().build_subgraph_by_op_names(_symbol(sym), _str(prop_name), names))


def MXSetSubgraphPropertyOpNames(prop_name, num_ops, op_names):
    """The op names bind groups for backend ``prop_name`` when the
    environment variable MXNET_SUBGRAPH_BACKEND names it."""
    _sg().set_op_names(_str(prop_name), _strs(op_names, num_ops))


def MXRemoveSubgraphPropertyOpNames(prop_name):
    """Forget the op names set by MXSetSubgraphPropertyOpNames."""
    _sg().remove_op_names(_str(prop_name))


def MXSetSubgraphPropertyOpNamesV2(prop_name, num_ops, op_names):
    """The op names every property of backend ``prop_name`` groups
    (optimize_for, hybridize(backend=...))."""
    _sg().set_op_names_v2(_str(prop_name), _strs(op_names, num_ops))


def MXRemoveSubgraphPropertyOpNamesV2(prop_name):
    """Forget the op names set by MXSetSubgraphPropertyOpNamesV2."""
    _sg().remove_op_names_v2(_str(prop_name))


def MXGenBackendSubgraph(sym, backend_name, out):
    """``sym`` partitioned by every property of ``backend_name`` (with the
    op names set for it)."""
    _set_handle(out, _sg().backend_symbol(_symbol(sym), _str(backend_name)))


for _name, _fn in list(globals().items()):
    if _name.startswith("MX") and callable(_fn):
        _c._LIB._register(_name, _fn)
