"""The one cache every compiled plan sits in (ndarray/_plan.PlanCache):
bounded in entries and in bytes, the oldest entries going first."""
import numpy as np

from aiond import autograd, gluon, nd
from aiond.autograd import _plans
from aiond.ndarray._plan import PlanCache


class _Plan:
    def __init__(self, nbytes):
        self.workspace_bytes = nbytes


def _cache(entries, nbytes):
    return PlanCache(entries, nbytes, lambda e: e[0].workspace_bytes)


def test_past_the_entry_bound_the_oldest_entries_go():
    c = _cache(3, 1 << 30)
    for k in "abcd":
        c.put(k, (_Plan(10),))
    assert len(c) == 3 and "a" not in c and all(k in c for k in "bcd")
    assert c.nbytes == 30


def test_past_the_byte_bound_the_oldest_entries_go():
    c = _cache(100, 100)
    c.put("a", (_Plan(40),))
    c.put("b", (_Plan(40),))
    c.put("c", (_Plan(40),))
    assert "a" not in c and c.get("b") is not None and c.nbytes == 80
    # one entry bigger than the bound is kept alone
    c.put("d", (_Plan(500),))
    assert list(c.values())[0][0].workspace_bytes == 500 and len(c) == 1 and c.nbytes == 500


def test_a_cached_failure_holds_nothing_and_a_key_put_again_is_counted_once():
    c = _cache(10, 100)
    c.put("x", False)
    assert c.get("x") is False and c.nbytes == 0
    c.put("y", (_Plan(30),))
    c.put("y", (_Plan(50),))
    assert len(c) == 2 and c.nbytes == 50
    c.clear()
    assert len(c) == 0 and c.nbytes == 0 and c.get("y") is None


def test_rule_plans_and_a_graphs_signatures_use_it():
    assert isinstance(_plans._plans, PlanCache) and isinstance(_plans._tapes, PlanCache)
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize()
    for n in (2, 3):
        net(nd.array(np.ones((n, 4))))
    cache = net._cached_op.fused.cache
    assert isinstance(cache, PlanCache) and len(cache) == 2
    assert cache.nbytes == sum(c.fwd.workspace_bytes for c in cache.values() if c)
    x = nd.array(np.arange(8.0).reshape(2, 4))
    x.attach_grad()
    with autograd.record():
        y = net(x).sum()
    y.backward()
    w = net.weight.data().asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), np.tile(w.sum(0), (2, 1)), rtol=1e-6)
