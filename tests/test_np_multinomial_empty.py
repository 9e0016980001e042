"""np.random.multinomial with no categories gives an empty result (MXNet
1.9.1's test_np_multinomial), and bad input still gives a clear error."""
import pytest

import aiond as mx


@pytest.mark.parametrize("as_array", [False, True])
@pytest.mark.parametrize("size", [None, 0, (3,), (2, 0)])
def test_empty_pvals(as_array, size):
    pvals = mx.np.array([]) if as_array else []
    kw = {} if size is None else {"size": size}
    r = mx.np.random.multinomial(5, pvals, **kw).asnumpy()
    assert r.size == 0
    base = () if size is None else ((size,) if isinstance(size, int) else size)
    assert r.shape == tuple(base) + (0,)


def test_counts_and_errors():
    r = mx.np.random.multinomial(10, [0.2, 0.3, 0.5], size=4).asnumpy()
    assert r.shape == (4, 3) and (r.sum(axis=1) == 10).all()
    with pytest.raises(Exception, match="n must be >= 0"):
        mx.np.random.multinomial(-1, [0.5, 0.5]).asnumpy()
    with pytest.raises(Exception, match="pvals must be >= 0"):
        mx.np.random.multinomial(3, [0.9, 0.9, 0.1]).asnumpy()
