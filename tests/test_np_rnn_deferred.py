"""gluon.rnn layers with a deferred input size under npx.set_np() (NumPy
shape semantics mark an unknown dimension -1, not 0), as D2L's rnn-concise
section builds them."""
import numpy as np
import pytest

import aiond as mx
from aiond.gluon import rnn


@pytest.mark.parametrize("cls", [rnn.RNN, rnn.LSTM, rnn.GRU])
@pytest.mark.parametrize("hybrid", [False, True])
def test_deferred_input_size_under_np(cls, hybrid):
    mx.npx.set_np()
    try:
        layer = cls(8)
        layer.initialize()
        if hybrid:
            layer.hybridize()
        x = mx.np.array(np.random.RandomState(0).rand(5, 2, 3).astype(np.float32))
        out = layer(x)
        assert out.shape == (5, 2, 8)
        assert layer.l0_i2h_weight.shape[1] == 3
        states = layer.begin_state(2)
        out2, new = layer(x, states)
        np.testing.assert_allclose(out2.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)
        assert len(new) == len(states)
    finally:
        mx.npx.reset_np()
