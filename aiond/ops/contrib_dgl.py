"""MXNet 1.9.1's graph operators for DGL (``mx.nd.contrib.dgl_*``,
``edge_id``): graphs are csr matrices whose stored values are edge ids
(row = destination vertex, column = source vertex).

- ``dgl_csr_neighbor_uniform_sample(csr, *seeds, num_hops, num_neighbor,
  max_num_vertices)`` / ``dgl_csr_neighbor_non_uniform_sample(csr, prob,
  *seeds, ...)``: breadth-first sampling from each seed array; per seed array
  the sampled vertex ids (sorted, length max_num_vertices + 1, the last
  element the number sampled), the sampled edges as a (max_num_vertices, N)
  csr (rows in the order of the vertex ids, columns and values the parent
  graph's), [the probability of each sampled vertex,] and each vertex's hop;
- ``dgl_subgraph(graph, *vertex_arrays, return_mapping)``: the induced
  subgraph of each sorted vertex array, with new edge ids 0..nnz-1 (and with
  the parent's edge ids when return_mapping);
- ``edge_id(csr, u, v)``: the edge id of (u[i], v[i]), -1 where no edge;
- ``dgl_adjacency(csr)``: the float32 adjacency matrix (ones at the edges);
- ``dgl_graph_compact(*graphs, *vertex_ids, graph_sizes, return_mapping)``:
  a sampled graph cut to its graph_sizes[i] sampled vertices, columns
  renumbered to their positions in the vertex ids.

They have csr kernels only, as in MXNet: a dense graph is an error. The
samplers draw from the context's random generator (``mx.random.seed``)."""
from __future__ import annotations

import logging

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from .registry import Param, p_bool, p_int, p_shape, register
from .sparse import CSR, SPARSE, SparseImpl

_I64 = np.dtype(np.int64)
_log = logging.getLogger(__name__)
_F32 = np.dtype(np.float32)


def _csr_only(name, doc):
    """The op's dense kernel: MXNet has none (a dense graph is an error)."""
    def kernel(xp, *args, out, **attrs):
        raise OpError("%s works on a csr graph (mx.nd.sparse.csr_matrix), got a dense array"
                      % name)
    kernel.__doc__ = doc
    return kernel


def _need_square(name, shape):
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ShapeError("%s: the graph must be a square 2-D csr matrix, got shape %s"
                         % (name, fmt(shape)))


# ------------------------------------------------------------- sampling

_SAMPLE = [
    Param("num_args", p_int, 0, "Number of input NDArrays (filled in from the inputs given)."),
    Param("num_hops", p_int, 1, "Number of hops."),
    Param("num_neighbor", p_int, 2, "Number of neighbors sampled per vertex."),
    Param("max_num_vertices", p_int, 100, "Max number of vertices sampled.")]


def _sample_rule(nfixed, per):
    def rule(attrs, shapes, dtypes):
        name = "dgl_csr_neighbor_%suniform_sample" % ("non_" if nfixed == 2 else "")
        if len(shapes) <= nfixed:
            raise OpError("%s needs at least one seed array after its %d fixed inputs"
                          % (name, nfixed))
        if attrs["num_args"] and attrs["num_args"] != len(shapes):
            raise OpError("num_args=%d but %d input(s) were given" % (attrs["num_args"],
                                                                     len(shapes)))
        _need_square(name, shapes[0])
        for s in shapes[1:]:
            if len(s) != 1:
                raise ShapeError("%s: seed arrays (and the probability) must be 1-D, got %s"
                                 % (name, fmt(s)))
        m = attrs["max_num_vertices"]
        seeds = shapes[nfixed:]
        for s in seeds:
            if s[0] > m:
                raise ShapeError("%s: %d seeds exceed max_num_vertices=%d" % (name, s[0], m))
        k = len(seeds)
        sd = dtypes[nfixed]
        oshapes = [(m + 1,)] * k + [(m, shapes[0][1])] * k
        odtypes = [sd] * k + [dtypes[0]] * k
        if per == 4:
            oshapes += [(m,)] * k
            odtypes += [dtypes[1]] * k
        oshapes += [(m,)] * k
        odtypes += [sd] * k
        return tuple(oshapes), tuple(odtypes)
    return rule


def _uniform_pick(gen, n, k):
    """Positions (sorted) of k of n neighbours, each set equally likely."""
    return np.sort(gen.choice(n, size=k, replace=False))


def _weighted_pick(gen, w, k):
    """Positions (sorted) of k of len(w) neighbours drawn one by one without
    replacement, each with probability proportional to its weight."""
    w = np.asarray(w, dtype=np.float64).copy()
    picked = []
    for _ in range(k):
        tot = w.sum()
        if not tot > 0:
            rest = np.flatnonzero(w >= 0)
            rest = [i for i in rest if i not in picked]
            picked.extend(rest[:k - len(picked)])
            break
        i = int(np.searchsorted(np.cumsum(w), gen.random() * tot, side="right"))
        i = min(i, len(w) - 1)
        picked.append(i)
        w[i] = 0.0
    return np.sort(np.asarray(picked, dtype=_I64))


def _sample_one(g, seeds, prob, num_hops, num_neighbor, max_v, gen):
    indptr = g.indptr.astype(_I64)
    cols = g.indices.astype(_I64)
    seen = set()
    order = []                       # (vertex, hop) in visiting order
    for s in seeds.astype(_I64).tolist():
        if s not in seen:
            seen.add(s)
            order.append((s, 0))
    rows = {}                        # vertex -> (sampled columns, their edge ids)
    i = 0
    while i < len(order) and len(seen) < max_v:
        v, hop = order[i]
        i += 1
        if hop >= num_hops:
            continue
        lo, hi = indptr[v], indptr[v + 1]
        n = hi - lo
        if n <= num_neighbor:
            pos = np.arange(n)
        elif prob is None:
            pos = _uniform_pick(gen, n, num_neighbor)
        else:
            pos = _weighted_pick(gen, prob[cols[lo:hi]], num_neighbor)
        nb, eid = cols[lo + pos], g.data[lo + pos]
        rows[v] = (nb, eid)
        for u in nb.tolist():
            if len(seen) >= max_v:
                break
            if u not in seen:
                seen.add(u)
                order.append((u, hop + 1))
    if any(hop < num_hops for _, hop in order[i:]):
        _log.warning("dgl sampling is truncated: max_num_vertices=%d was reached; use fewer "
                     "seeds or a smaller neighbourhood", max_v)
    order.sort()
    nv = len(order)
    ids = np.zeros(max_v + 1, dtype=_I64)
    layer = np.zeros(max_v, dtype=_I64)
    ids[:nv] = [v for v, _ in order]
    layer[:nv] = [h for _, h in order]
    ids[max_v] = nv
    ind, dat = [], []
    indptr_out = np.zeros(max_v + 1, dtype=g.indptr.dtype)
    for r, (v, _) in enumerate(order):
        nb, eid = rows.get(v, (cols[:0], g.data[:0]))
        ind.append(nb)
        dat.append(eid)
        indptr_out[r + 1] = indptr_out[r] + len(nb)
    indptr_out[nv + 1:] = indptr_out[nv]
    sub = CSR(np.concatenate(dat).astype(g.data.dtype) if dat else g.data[:0].copy(),
              np.concatenate(ind).astype(g.indices.dtype) if ind else g.indices[:0].copy(),
              indptr_out)
    sub_prob = None
    if prob is not None:
        sub_prob = np.zeros(max_v, dtype=prob.dtype)
        sub_prob[:nv] = prob[ids[:nv]]
    return ids, sub, sub_prob, layer


def _sample_kernel(nfixed):
    def kern(vals, attrs, shapes, oshapes, odtypes, muts):
        g = vals[0]
        prob = vals[1] if nfixed == 2 else None
        gen = attrs["_rng"].gen
        if attrs["num_hops"] < 0 or attrs["num_neighbor"] < 0:
            raise OpError("num_hops and num_neighbor must not be negative")
        res = [_sample_one(g, s, prob, attrs["num_hops"], attrs["num_neighbor"],
                           attrs["max_num_vertices"], gen) for s in vals[nfixed:]]
        k = len(res)
        outs = [r[0].astype(odtypes[i]) for i, r in enumerate(res)]
        outs += [r[1] for r in res]
        if prob is not None:
            outs += [r[2].astype(odtypes[2 * k + i]) for i, r in enumerate(res)]
        outs += [r[3].astype(odtypes[-k + i]) for i, r in enumerate(res)]
        return outs
    return kern


def _sample_stypes(nfixed, per):
    def rule(attrs, st):
        if st[0] != "csr" or any(s != "default" for s in st[1:]):
            raise OpError("the graph must be a csr matrix and the other inputs dense, got "
                          "storage types %s" % (st,))
        k = len(st) - nfixed
        out = ["default"] * k + ["csr"] * k + ["default"] * (k * (per - 2))
        return tuple(out)
    return rule


for _name, _nfixed, _per, _inputs in (
        ("_contrib_dgl_csr_neighbor_uniform_sample", 1, 3, ("csr_matrix", "*seed_arrays")),
        ("_contrib_dgl_csr_neighbor_non_uniform_sample", 2, 4,
         ("csr_matrix", "probability", "*seed_arrays"))):
    _k = _csr_only(_name[len("_contrib_"):], "%s(csr_matrix, %s*seed_arrays, num_hops=1, "
                   "num_neighbor=2, max_num_vertices=100): per seed array the sampled vertex "
                   "ids, the sampled csr graph, %sand each vertex's hop (see the module doc)."
                   % (_name[len("_contrib_"):], "probability, " if _nfixed == 2 else "",
                      "their probabilities " if _nfixed == 2 else ""))
    register(_name, inputs=_inputs, variadic=True, params=_SAMPLE,
             infer=_sample_rule(_nfixed, _per),
             num_outputs=(lambda n, p: lambda a: (a["num_args"] - n) * p)(_nfixed, _per),
             needs_rng=True, inline=False)(_k)
    SPARSE[_name] = SparseImpl(_sample_stypes(_nfixed, _per), _sample_kernel(_nfixed))


# ------------------------------------------------------------- subgraph

_SUBGRAPH = [
    Param("num_args", p_int, 0, "Number of input arguments (filled in from the inputs given)."),
    Param("return_mapping", p_bool, doc="Return mapping of vid and eid between the subgraph and "
          "the parent graph.")]


def _subgraph_rule(attrs, shapes, dtypes):
    if len(shapes) < 2:
        raise OpError("dgl_subgraph needs a graph and at least one vertex array")
    if len(shapes[0]) != 2:
        raise ShapeError("dgl_subgraph: the graph must be 2-D, got %s" % fmt(shapes[0]))
    for s, d in zip(shapes[1:], dtypes[1:]):
        if len(s) != 1:
            raise ShapeError("dgl_subgraph: vertex arrays must be 1-D, got %s" % fmt(s))
        if d != _I64:
            raise OpError("dgl_subgraph: vertex arrays must be int64, got %s" % d)
    sh = [(s[0], s[0]) for s in shapes[1:]]
    if attrs["return_mapping"]:
        sh = sh + sh
    return tuple(sh), (dtypes[0],) * len(sh)


def _subgraph_one(g, vids, nrows):
    vids = vids.astype(_I64)
    if len(vids) > 1 and np.any(vids[1:] < vids[:-1]):
        raise OpError("dgl_subgraph: the input vertex list has to be sorted")
    if len(vids) and (vids.max() >= nrows or vids.min() < 0):
        raise OpError("dgl_subgraph: vertex id %d isn't in a graph of %d vertices"
                      % (int(vids.max()), nrows))
    new_id = {v: i for i, v in enumerate(vids.tolist())}
    indptr = g.indptr.astype(_I64)
    cols, eids, ptr = [], [], [0]
    for v in vids.tolist():
        lo, hi = indptr[v], indptr[v + 1]
        for c, e in zip(g.indices[lo:hi].tolist(), g.data[lo:hi].tolist()):
            j = new_id.get(c)
            if j is not None:
                cols.append(j)
                eids.append(e)
        ptr.append(len(cols))
    ind = np.asarray(cols, dtype=g.indices.dtype)
    ip = np.asarray(ptr, dtype=g.indptr.dtype)
    dt = g.data.dtype
    return (CSR(np.arange(len(cols)).astype(dt), ind, ip),
            CSR(np.asarray(eids, dtype=dt), ind.copy(), ip.copy()))


def _subgraph_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    res = [_subgraph_one(vals[0], v, shapes[0][0]) for v in vals[1:]]
    outs = [r[0] for r in res]
    if attrs["return_mapping"]:
        outs += [r[1] for r in res]
    return outs


def _graph_stypes(nsparse):
    def rule(attrs, st):
        n = nsparse(len(st))
        if any(s != "csr" for s in st[:n]) or any(s != "default" for s in st[n:]):
            raise OpError("the graphs must be csr matrices and the vertex arrays dense, got "
                          "storage types %s" % (st,))
        k = len(st) - n
        return ("csr",) * (2 * k if attrs["return_mapping"] else k)
    return rule


_k = _csr_only("dgl_subgraph", "dgl_subgraph(graph, *vertex_arrays, return_mapping): the "
               "induced subgraph of each sorted int64 vertex array (csr, new edge ids; with "
               "return_mapping also the parent's edge ids).")
register("_contrib_dgl_subgraph", inputs=("graph", "*data"), variadic=True, params=_SUBGRAPH,
         infer=_subgraph_rule, inline=False,
         num_outputs=lambda a: (a["num_args"] - 1) * (2 if a["return_mapping"] else 1))(_k)
SPARSE["_contrib_dgl_subgraph"] = SparseImpl(_graph_stypes(lambda n: 1), _subgraph_ex)


# ------------------------------------------------------------- edge_id

def _edge_id_rule(attrs, shapes, dtypes):
    if len(shapes) != 3:
        raise OpError("edge_id takes 3 inputs (data, u, v), got %d" % len(shapes))
    if len(shapes[0]) != 2:
        raise ShapeError("edge_id: data must be a 2-D csr matrix, got %s" % fmt(shapes[0]))
    u, v = tuple(shapes[1]), tuple(shapes[2])
    if len(u) != 1 or u != v:
        raise ShapeError("edge_id: u %s and v %s must be 1-D of the same length"
                         % (fmt(u), fmt(v)))
    return (u,), (dtypes[0],)


def _edge_id_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    g, u, v = vals
    out = np.full(oshapes[0], -1, dtype=odtypes[0])
    indptr = g.indptr.astype(_I64)
    for i, (r, c) in enumerate(zip(u.astype(_I64).tolist(), v.astype(_I64).tolist())):
        lo, hi = indptr[r], indptr[r + 1]
        hit = np.flatnonzero(g.indices[lo:hi] == c)
        if len(hit):
            out[i] = g.data[lo + hit[0]]
    return [out]


def _edge_id_stypes(attrs, st):
    if st[0] != "csr":
        raise OpError("edge_id works on a csr matrix, got storage type %s" % st[0])
    return ("default",)


_k = _csr_only("edge_id", "edge_id(data, u, v): the stored value (edge id) of csr data at "
               "(u[i], v[i]), -1 where there is none.")
register("_contrib_edge_id", inputs=("data", "u", "v"), infer=_edge_id_rule, inline=False)(_k)
SPARSE["_contrib_edge_id"] = SparseImpl(_edge_id_stypes, _edge_id_ex)


# ------------------------------------------------------------- adjacency

def _adjacency_rule(attrs, shapes, dtypes):
    if len(shapes[0]) != 2:
        raise ShapeError("dgl_adjacency: data must be a 2-D csr matrix, got %s"
                         % fmt(shapes[0]))
    if dtypes[0] != _I64:
        raise OpError("dgl_adjacency: the graph's values must be int64 edge ids, got %s"
                      % dtypes[0])
    return (tuple(shapes[0]),), (_F32,)


def _adjacency_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    g = vals[0]
    return [CSR(np.ones(len(g.data), dtype=_F32), g.indices.copy(), g.indptr.copy())]


def _adjacency_stypes(attrs, st):
    if st[0] != "csr":
        raise OpError("dgl_adjacency works on a csr matrix, got storage type %s" % st[0])
    return ("csr",)


_k = _csr_only("dgl_adjacency", "dgl_adjacency(data): the float32 csr adjacency matrix (ones "
               "where int64 csr data stores an edge).")
register("_contrib_dgl_adjacency", infer=_adjacency_rule, inline=False)(_k)
SPARSE["_contrib_dgl_adjacency"] = SparseImpl(_adjacency_stypes, _adjacency_ex)


# ------------------------------------------------------------- compact

_COMPACT = [
    Param("num_args", p_int, 0, "Number of input arguments (filled in from the inputs given)."),
    Param("return_mapping", p_bool, doc="Return mapping of vid and eid between the subgraph and "
          "the parent graph."),
    Param("graph_sizes", p_shape, doc="the number of vertices in each graph.")]


def _compact_rule(attrs, shapes, dtypes):
    n = len(shapes)
    if n < 2 or n % 2:
        raise OpError("dgl_graph_compact takes graphs then as many vertex id arrays, got %d "
                      "inputs" % n)
    k = n // 2
    sizes = attrs["graph_sizes"]
    if len(sizes) != k:
        raise OpError("dgl_graph_compact: graph_sizes has %d entries for %d graphs"
                      % (len(sizes), k))
    for i in range(k):
        g, v = shapes[i], shapes[k + i]
        if len(g) != 2 or g[0] < sizes[i] or g[1] < sizes[i]:
            raise ShapeError("dgl_graph_compact: graph %d of shape %s cannot hold %d vertices"
                             % (i, fmt(g), sizes[i]))
        if len(v) != 1 or v[0] < sizes[i]:
            raise ShapeError("dgl_graph_compact: vertex ids %d of shape %s hold fewer than %d "
                             "vertices" % (i, fmt(v), sizes[i]))
    for d in dtypes:
        if d != _I64:
            raise OpError("dgl_graph_compact: every input must be int64, got %s" % d)
    sh = [(s, s) for s in sizes]
    if attrs["return_mapping"]:
        sh = sh + sh
    return tuple(sh), (_I64,) * len(sh)


def _compact_one(g, vids, size):
    vids = vids.astype(_I64)
    if len(vids) != len(g.indptr):
        raise OpError("dgl_graph_compact: vertex ids of length %d for a graph of %d rows "
                      "(expected rows + 1, the last the number of vertices)"
                      % (len(vids), len(g.indptr) - 1))
    if vids[-1] != size:
        raise OpError("dgl_graph_compact: graph_sizes gives %d vertices but the vertex ids "
                      "say %d" % (size, int(vids[-1])))
    pos = {v: i for i, v in enumerate(vids[:size].tolist())}
    nnz = int(g.indptr[size])
    try:
        ind = np.asarray([pos[c] for c in g.indices[:nnz].tolist()], dtype=_I64)
    except KeyError as e:
        raise OpError("dgl_graph_compact: the graph has an edge to vertex %s, which is not "
                      "among its %d sampled vertices" % (e.args[0], size)) from None
    ip = g.indptr[:size + 1].astype(_I64)
    return (CSR(np.arange(nnz, dtype=_I64), ind, ip),
            CSR(g.data[:nnz].astype(_I64), ind.copy(), ip.copy()))


def _compact_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    k = len(vals) // 2
    res = [_compact_one(vals[i], vals[k + i], attrs["graph_sizes"][i]) for i in range(k)]
    outs = [r[0] for r in res]
    if attrs["return_mapping"]:
        outs += [r[1] for r in res]
    return outs


_k = _csr_only("dgl_graph_compact", "dgl_graph_compact(*graphs, *vertex_ids, graph_sizes, "
               "return_mapping): each sampled csr graph cut to its graph_sizes[i] vertices, "
               "columns renumbered by their position in vertex_ids.")
register("_contrib_dgl_graph_compact", inputs=("*graph_data",), variadic=True, params=_COMPACT,
         infer=_compact_rule, inline=False,
         num_outputs=lambda a: (a["num_args"] // 2) * (2 if a["return_mapping"] else 1))(_k)
SPARSE["_contrib_dgl_graph_compact"] = SparseImpl(_graph_stypes(lambda n: n // 2), _compact_ex)
