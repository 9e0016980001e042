"""AMP's graph conversion (MXNet's ``ReducePrecision`` pass, which
``amp.convert_symbol`` runs): a copy of an FP32 graph with ``amp_cast`` /
``amp_multicast`` nodes in front of the ops that should run in the target
type, in float32, or in the widest type of their inputs.

Visiting nodes in topological order, each op is put in one class:
  * float32 ops (and excluded nodes): inputs not yet float32 get an
    ``amp_cast`` to float32;
  * target ops: inputs get an ``amp_cast`` to the target type, except aux
    states, inputs the op wants in another type (BatchNorm's gamma...), and
    with ``cast_optional_params`` the parameters (then stored in the target
    type);
  * widest-type ops: when every input's type is known from the pass, casts
    to float32 if one of them is float32, else to the target type; otherwise
    one ``amp_multicast`` over all inputs;
  * conditional float32 ops: as float32 ops when a parameter has a listed value;
  * any other op keeps its inputs, and its outputs' types are inferred from
    the type of its first input so later nodes know them.
Cast nodes are shared: each (entry, type) is cast once. The graph's outputs
are cast back to float32.
"""
from __future__ import annotations

from ...symbol.symbol import Symbol, _Node, dfs

_F32 = "float32"


def _entry_key(e):
    return (id(e[0]), e[1])


def _suffix(entry):
    """``_<output name>`` (as list_outputs names it) for an op's output, '' for a variable."""
    node, i = entry[0], entry[1]
    if node.op is None:
        return ""
    full = node.output_name(i)
    return "_" + (full[len(node.name) + 1:] if node.name and full.startswith(node.name + "_")
                  else full)


def _mutable_inputs(node):
    return set(node.aux_positions())


def _infer_out_types(node, first_type):
    """The output dtype names of ``node`` when its first input has
    ``first_type`` (others unknown), and its inputs' dtype names (None:
    unknown); None when the op's rule cannot tell."""
    from ...symbol.symbol import _ns
    try:
        names = _ns.input_names(node.op, node.params, len(node.inputs))
        fresh = [(_Node(None, "__amp_in%d" % k), 0, 0) for k in range(len(names))]
        atom = _Node(node.op, node.name, dict(node.attrs), fresh)
        atom._params = node._params
        atom.subgraphs = node.subgraphs
        s = Symbol._from([(atom, i, 0) for i in range(atom.num_outputs())])
        args, outs, auxs = s.infer_type_partial(__amp_in0=first_type)
    except Exception:  # an op whose rule needs shapes: its types stay unknown
        return None, None
    order = s.list_arguments() + s.list_auxiliary_states()
    by_name = dict(zip(order, list(args) + list(auxs)))
    ins = [by_name.get(fresh[k][0].name) for k in range(len(fresh))]
    name = lambda t: None if t is None else __import__("numpy").dtype(t).name
    return [name(t) for t in outs], [name(t) for t in ins]


def _cond_fp32(conditional, excluded, node):
    if node.op is None or node.name in excluded or node.op.name not in conditional:
        return False
    for param, values in conditional[node.op.name].items():
        if param in node.attrs and str(node.attrs[param]) in values:
            return True
    return False


def reduce_precision(outputs, target, target_ops, fp32_ops, widest_ops, conditional,
                     excluded, data_names, cast_optional_params):
    """The converted graph's output entries, and the names of the variables
    the pass decided are stored in the target type (``cast_optional_params``)."""
    from ... import symbol as _sym
    amp_cast_op = _sym.amp_cast(_sym.var("x"), dtype=_F32)._outputs[0][0].op
    multicast_op = _sym.amp_multicast(_sym.var("x"), num_outputs=1)._outputs[0][0].op
    target_name = target
    mirror = {}          # id(old node) -> new node
    fp32_map = {}        # old entry key -> new entry (float32)
    target_map = {}      # old entry key -> new entry (target type)
    lp_params = set()

    def mirror_entry(e):
        return (mirror[id(e[0])], e[1], e[2])

    def add_cast(e, dtype, table, consumer):
        src = mirror_entry(e)
        cast = _Node(amp_cast_op, e[0].name + _suffix(e) + "_amp_cast_" + dtype,
                     {"dtype": dtype}, [src])
        new = (cast, 0, e[2])
        table[_entry_key(e)] = new
        if consumer is not None:
            consumer.inputs.append(new)
        return new

    def record_outputs(node, new, types):
        for i, t in enumerate(types or []):
            if t == target_name:
                target_map[_entry_key((node, i))] = (new, i, 0)
            elif t == _F32:
                fp32_map[_entry_key((node, i))] = (new, i, 0)

    for node in dfs(outputs):
        new = _Node(node.op, node.name, dict(node.attrs), [])
        new.version = node.version
        new._params = node._params
        new.subgraphs = node.subgraphs
        is_op = node.op is not None
        opname = node.op.name if is_op else None
        if (is_op and opname in fp32_ops) or node.name in excluded:
            for i in range(node.num_outputs()):
                fp32_map[_entry_key((node, i))] = (new, i, 0)
            for e in node.inputs:
                k = _entry_key(e)
                if k in fp32_map:
                    new.inputs.append(fp32_map[k])
                elif e[0].op is None:       # variables are taken to be float32
                    new.inputs.append(mirror_entry(e))
                else:
                    add_cast(e, _F32, fp32_map, new)
        elif is_op and opname in target_ops:
            mutable = _mutable_inputs(node)
            out_t, in_t = _infer_out_types(node, target_name)
            if out_t is None:
                out_t, in_t = [target_name] * node.num_outputs(), [None] * len(node.inputs)
            record_outputs(node, new, out_t)
            for i, e in enumerate(node.inputs):
                k = _entry_key(e)
                if k in target_map:
                    new.inputs.append(target_map[k])
                elif ((cast_optional_params and e[0].op is None and e[0].name not in data_names)
                      or i in mutable or in_t[i] not in (target_name, None)):
                    new.inputs.append(mirror_entry(e))
                    if cast_optional_params and e[0].op is None:
                        target_map[k] = mirror_entry(e)
                        if e[0].name not in data_names:
                            lp_params.add(e[0].name)
                else:
                    add_cast(e, target_name, target_map, new)
        elif is_op and opname in widest_ops:
            if not node.inputs:
                raise ValueError("node %s (op %s) has no inputs: the symbol was not built "
                                 "correctly" % (node.name, opname))
            known = all(_entry_key(e) in target_map or _entry_key(e) in fp32_map
                        for e in node.inputs)
            if not known:
                e0 = node.inputs[0]
                multi = _Node(multicast_op, e0[0].name + _suffix(e0) + "_amp_multicast",
                              {"num_outputs": str(len(node.inputs))},
                              [mirror_entry(e) for e in node.inputs])
                new.inputs.extend((multi, i, e[2]) for i, e in enumerate(node.inputs))
            else:
                wide = _F32 if any(_entry_key(e) in fp32_map for e in node.inputs) else target_name
                table = fp32_map if wide == _F32 else target_map
                for i in range(node.num_outputs()):
                    table[_entry_key((node, i))] = (new, i, 0)
                for e in node.inputs:
                    k = _entry_key(e)
                    if k in table:
                        new.inputs.append(table[k])
                    else:
                        add_cast(e, wide, table, new)
        elif _cond_fp32(conditional, excluded, node):
            mutable = _mutable_inputs(node)
            for i in range(node.num_outputs()):
                fp32_map[_entry_key((node, i))] = (new, i, 0)
            for i, e in enumerate(node.inputs):
                k = _entry_key(e)
                if k in fp32_map:
                    new.inputs.append(fp32_map[k])
                elif i in mutable:
                    new.inputs.append(mirror_entry(e))
                else:
                    add_cast(e, _F32, fp32_map, new)
        else:
            if is_op and node.inputs:
                k0 = _entry_key(node.inputs[0])
                if k0 in fp32_map or k0 in target_map:
                    out_t, _ = _infer_out_types(node, target_name if k0 in target_map else _F32)
                    record_outputs(node, new, out_t)
            new.inputs.extend(mirror_entry(e) for e in node.inputs)
        mirror[id(node)] = new

    result = []
    for e in outputs:
        k = _entry_key(e)
        result.append(fp32_map[k] if k in fp32_map else add_cast(e, _F32, fp32_map, None))
    return result, lp_params
