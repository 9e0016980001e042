"""mx.nd.contrib's DGL graph ops (aiond/ops/contrib_dgl.py) against MXNet
1.9.1's semantics (src/operator/contrib/dgl_graph.cc); the expected values
are MXNet's outputs for the same calls."""
import numpy as np
import pytest

import aiond as mx


def _complete5():
    # the 5-vertex complete graph of MXNet's docs: edge ids 1..20 in csr order
    data = np.arange(1, 21, dtype=np.int64)
    indices = np.array([1, 2, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 1, 2, 4, 0, 1, 2, 3], dtype=np.int64)
    indptr = np.array([0, 4, 8, 12, 16, 20], dtype=np.int64)
    return mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(5, 5))


def _i64(v):
    return mx.nd.array(v, dtype=np.int64)


def test_subgraph_new_and_parent_edge_ids():
    g = _complete5()
    sub, parent = mx.nd.contrib.dgl_subgraph(g, _i64([0, 2, 3]), return_mapping=True)
    assert sub.stype == parent.stype == "csr" and sub.dtype == np.int64
    np.testing.assert_array_equal(sub.asnumpy(), [[0, 0, 1], [2, 0, 3], [4, 5, 0]])
    np.testing.assert_array_equal(parent.asnumpy(), [[0, 2, 3], [9, 0, 11], [13, 15, 0]])
    np.testing.assert_array_equal(sub.indptr.asnumpy(), [0, 2, 4, 6])
    only = mx.nd.contrib.dgl_subgraph(g, _i64([1, 4]), return_mapping=False)
    assert only.shape == (2, 2)
    np.testing.assert_array_equal(only.asnumpy(), [[0, 0], [1, 0]])
    np.testing.assert_array_equal(only.indices.asnumpy(), [1, 0])


def test_subgraph_several_vertex_arrays_and_errors():
    g = _complete5()
    a, b = mx.nd.contrib.dgl_subgraph(g, _i64([0, 1]), _i64([2, 3, 4]), return_mapping=False)
    assert a.shape == (2, 2) and b.shape == (3, 3)
    np.testing.assert_array_equal(b.data.asnumpy(), np.arange(6))
    with pytest.raises(mx.base.MXNetError, match="has to be sorted"):
        mx.nd.contrib.dgl_subgraph(g, _i64([3, 1]), return_mapping=False).asnumpy()
    with pytest.raises(mx.base.MXNetError, match="int64"):
        mx.nd.contrib.dgl_subgraph(g, mx.nd.array([0, 1]), return_mapping=False)


def test_edge_id():
    g = _complete5()
    out = mx.nd.contrib.edge_id(g, mx.nd.array([0, 0, 1, 4]), mx.nd.array([0, 1, 2, 3]))
    assert out.stype == "default" and out.dtype == np.int64
    np.testing.assert_array_equal(out.asnumpy(), [-1, 1, 6, 20])
    f = mx.nd.contrib.edge_id(g.astype("float32"), mx.nd.array([2]), mx.nd.array([2]))
    assert f.dtype == np.float32 and f.asnumpy().tolist() == [-1.0]
    with pytest.raises(mx.base.MXNetError, match="csr"):
        mx.nd.contrib.edge_id(g.tostype("default"), mx.nd.array([0]), mx.nd.array([1])).asnumpy()


def test_adjacency():
    g = _complete5()
    adj = mx.nd.contrib.dgl_adjacency(g)
    assert adj.stype == "csr" and adj.dtype == np.float32 and adj.shape == (5, 5)
    np.testing.assert_array_equal(adj.asnumpy(), 1 - np.eye(5))
    np.testing.assert_array_equal(adj.indices.asnumpy(), g.indices.asnumpy())
    with pytest.raises(mx.base.MXNetError, match="int64"):
        mx.nd.contrib.dgl_adjacency(g.astype("float32"))


def test_uniform_sample_takes_every_neighbour_when_few():
    g = _complete5()
    ids, sub, layer = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
        g, _i64([0, 1, 2, 3, 4]), num_args=2, num_hops=1, num_neighbor=4, max_num_vertices=6)
    # every vertex is a seed: the sample is the whole graph, all at hop 0
    np.testing.assert_array_equal(ids.asnumpy(), [0, 1, 2, 3, 4, 0, 5])
    np.testing.assert_array_equal(layer.asnumpy(), [0] * 6)
    assert sub.stype == "csr" and sub.shape == (6, 5)
    np.testing.assert_array_equal(sub.asnumpy()[:5], g.asnumpy())
    np.testing.assert_array_equal(sub.asnumpy()[5], 0)


def test_sampling_stops_at_max_num_vertices(caplog):
    # as MXNet: the seeds alone fill max_num_vertices, so no neighbour is sampled
    g = _complete5()
    ids, sub, layer = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
        g, _i64([0, 1, 2, 3, 4]), num_hops=1, num_neighbor=4, max_num_vertices=5)
    np.testing.assert_array_equal(ids.asnumpy(), [0, 1, 2, 3, 4, 5])
    assert len(sub.data.asnumpy()) == 0
    assert "truncated" in caplog.text


def test_uniform_sample_structure_and_compact():
    g = _complete5()
    ids, sub, layer = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
        g, _i64([0]), num_hops=1, num_neighbor=2, max_num_vertices=6)
    assert ids.shape == (7,) and sub.shape == (6, 5) and layer.shape == (6,)
    ids_np = ids.asnumpy()
    n = int(ids_np[-1])
    assert n == 3                                  # the seed and 2 sampled neighbours
    verts = ids_np[:n]
    assert list(verts) == sorted(verts) and 0 in verts
    np.testing.assert_array_equal(layer.asnumpy()[:n], [0 if v == 0 else 1 for v in verts])
    dense = sub.asnumpy()
    row0 = dense[list(verts).index(0)]
    nbrs = np.flatnonzero(row0)
    assert set(nbrs) == set(verts) - {0}
    # the stored values are the parent graph's edge ids
    np.testing.assert_array_equal(row0[nbrs], g.asnumpy()[0, nbrs])
    assert (sub.indptr.asnumpy()[n:] == sub.indptr.asnumpy()[n]).all()
    compact = mx.nd.contrib.dgl_graph_compact(sub, ids, graph_sizes=(n,), return_mapping=False)
    assert compact.shape == (n, n) and compact.dtype == np.int64
    np.testing.assert_array_equal(compact.indptr.asnumpy(), sub.indptr.asnumpy()[:n + 1])
    np.testing.assert_array_equal(verts[compact.indices.asnumpy()], sub.indices.asnumpy())
    np.testing.assert_array_equal(compact.data.asnumpy(), np.arange(len(sub.indices.asnumpy())))


def test_sampling_follows_mx_random_seed():
    g = _complete5()

    def draw():
        return [mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
            g, _i64([0, 3]), num_hops=2, num_neighbor=1, max_num_vertices=5)[1].asnumpy()
            for _ in range(4)]
    mx.random.seed(11)
    a = draw()
    mx.random.seed(11)
    b = draw()
    assert all((x == y).all() for x, y in zip(a, b))


def test_non_uniform_sample_never_picks_zero_probability():
    g = _complete5()
    prob = mx.nd.array([1.0, 0.0, 1.0, 0.0, 1.0])
    for _ in range(5):
        ids, sub, p, layer = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(
            g, prob, _i64([0]), num_args=3, num_hops=1, num_neighbor=2, max_num_vertices=5)
        n = int(ids.asnumpy()[-1])
        assert n == 3
        np.testing.assert_array_equal(ids.asnumpy()[:n], [0, 2, 4])
        np.testing.assert_array_equal(p.asnumpy(), [1, 1, 1, 0, 0])
        assert p.dtype == np.float32
        np.testing.assert_array_equal(sub.asnumpy()[0], [0, 0, 2, 0, 4])


def test_several_seed_arrays_give_output_sets():
    g = _complete5()
    out = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
        g, _i64([0]), _i64([1, 3]), num_args=3, num_hops=1, num_neighbor=2, max_num_vertices=6)
    assert [o.shape for o in out] == [(7,), (7,), (6, 5), (6, 5), (6,), (6,)]
    assert [o.stype for o in out] == ["default", "default", "csr", "csr", "default", "default"]


def test_dense_graph_is_an_error():
    with pytest.raises(mx.base.MXNetError, match="csr"):
        mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
            mx.nd.ones((3, 3)), _i64([0]), num_hops=1, max_num_vertices=3)[0].asnumpy()


def test_symbol_names():
    g, s = mx.sym.Variable("g", stype="csr"), mx.sym.Variable("s")
    o = mx.sym.contrib.dgl_csr_neighbor_uniform_sample(g, s, num_hops=1, max_num_vertices=5)
    assert len(o.list_outputs()) == 3
    e = mx.sym.contrib.edge_id(g, mx.sym.Variable("u"), mx.sym.Variable("v"))
    assert e.list_arguments() == ["g", "u", "v"]
