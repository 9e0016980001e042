"""mx.rnn (symbolic RNN cells): unrolled cells against the fused RNN op,
weight (un)packing and begin states whose batch size comes from inference."""
import numpy as np
import pytest

import aiond as mx


def _run(sym, args, data):
    exe = sym.simple_bind(mx.cpu(), data=data.shape, grad_req='null')
    for k, v in args.items():
        if k in exe.arg_dict:
            exe.arg_dict[k][:] = v
    exe.arg_dict['data'][:] = data
    exe.forward(is_train=False)
    return exe.outputs[0].asnumpy()


@pytest.mark.parametrize("mode,make", [
    ("lstm", lambda p: mx.rnn.LSTMCell(6, prefix=p)),
    ("gru", lambda p: mx.rnn.GRUCell(6, prefix=p)),
    ("rnn_tanh", lambda p: mx.rnn.RNNCell(6, activation='tanh', prefix=p)),
])
def test_fused_matches_stacked_cells(mode, make):
    T, N, I = 3, 2, 4
    data = mx.sym.Variable('data')
    fused = mx.rnn.FusedRNNCell(6, num_layers=2, mode=mode, get_next_state=True, prefix='')
    stack = mx.rnn.SequentialRNNCell()
    stack.add(make('l0_'))
    stack.add(make('l1_'))
    y1, _ = fused.unroll(T, data, layout='NTC', merge_outputs=True)
    y2, _ = stack.unroll(T, data, layout='NTC', merge_outputs=True)
    assert sorted(y2.list_arguments()) == sorted(
        ['data'] + ['l%d_%s_%s' % (l, g, w) for l in (0, 1) for g in ('i2h', 'h2h')
                    for w in ('weight', 'bias')])
    arg_shapes, _, _ = y1.infer_shape(data=(N, T, I))
    shapes = dict(zip(y1.list_arguments(), arg_shapes))
    rng = np.random.RandomState(0)
    fused_args = {'parameters': mx.nd.array(rng.uniform(-.5, .5, shapes['parameters']))}
    stack_args = stack.pack_weights(fused.unpack_weights(fused_args))
    back = fused.pack_weights(stack.unpack_weights(stack_args))
    np.testing.assert_array_equal(back['parameters'].asnumpy(),
                                  fused_args['parameters'].asnumpy())
    x = rng.uniform(-1, 1, (N, T, I)).astype(np.float32)
    np.testing.assert_allclose(_run(y1, fused_args, x), _run(y2, stack_args, x),
                               rtol=1e-4, atol=1e-5)


def test_begin_state_batch_from_inference_and_bidirectional():
    cell = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(5, prefix='l_'),
                                    mx.rnn.LSTMCell(5, prefix='r_'), output_prefix='bi_')
    out, states = cell.unroll(4, mx.sym.Variable('data'), layout='NTC', merge_outputs=True)
    assert len(states) == 2 and len(states[0]) == 2
    _, out_shapes, _ = out.infer_shape(data=(3, 4, 2))
    assert out_shapes == [(3, 4, 10)]
    exe = out.simple_bind(mx.cpu(), data=(3, 4, 2))
    exe.forward()
    assert exe.outputs[0].shape == (3, 4, 10)
