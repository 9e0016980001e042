"""mx.rnn's convolutional cells, BucketSentenceIter/encode_sentences and RNN
checkpoints (MXNet 1.9.1 semantics; encode_sentences figures from MXNet)."""
import numpy as np
import pytest

import aiond as mx


@pytest.mark.parametrize("cls, nstates", [(mx.rnn.ConvRNNCell, 1), (mx.rnn.ConvLSTMCell, 2),
                                          (mx.rnn.ConvGRUCell, 1)])
def test_conv_cells_unroll_shapes(cls, nstates):
    cell = cls(input_shape=(1, 3, 16, 10), num_hidden=10, prefix='rnn_')
    assert [s['shape'] for s in cell.state_info] == [(0, 10, 16, 10)] * nstates
    assert all(s['__layout__'] == 'NCHW' for s in cell.state_info)
    inputs = [mx.sym.Variable('rnn_t%d_data' % i) for i in range(3)]
    outputs, states = cell.unroll(3, inputs)
    outputs = mx.sym.Group(outputs)
    assert sorted(cell.params._params) == ['rnn_h2h_bias', 'rnn_h2h_weight', 'rnn_i2h_bias',
                                           'rnn_i2h_weight']
    assert outputs.list_outputs() == ['rnn_t0_out_output', 'rnn_t1_out_output',
                                      'rnn_t2_out_output']
    _, outs, _ = outputs.infer_shape(**{'rnn_t%d_data' % i: (2, 3, 16, 10) for i in range(3)})
    assert outs == [(2, 10, 16, 10)] * 3
    assert len(states) == nstates


def test_conv_cell_stride_changes_state_shape():
    cell = mx.rnn.ConvGRUCell(input_shape=(1, 3, 16, 10), num_hidden=4, i2h_kernel=(3, 3),
                              i2h_stride=(2, 2), i2h_pad=(1, 1))
    assert cell.state_info[0]['shape'] == (0, 4, 8, 5)
    with pytest.raises(ValueError, match='odd'):
        mx.rnn.ConvRNNCell(input_shape=(1, 3, 8, 8), num_hidden=2, h2h_kernel=(2, 3))
    with pytest.raises(NotImplementedError):
        mx.rnn.BaseConvRNNCell.__call__(cell, None, None)


def test_conv_rnn_cell_step_values():
    """One ConvRNNCell step is leaky_relu(conv(x) + conv(h)) (slope 0.2)."""
    rng = np.random.RandomState(0)
    cell = mx.rnn.ConvRNNCell(input_shape=(1, 2, 5, 5), num_hidden=3, prefix='c_')
    x = mx.sym.Variable('x')
    h0 = mx.sym.Variable('h0')
    out, _ = cell(x, [h0])
    vals = {'x': rng.randn(2, 2, 5, 5), 'h0': rng.randn(2, 3, 5, 5),
            'c_i2h_weight': rng.randn(3, 2, 3, 3), 'c_i2h_bias': rng.randn(3),
            'c_h2h_weight': rng.randn(3, 3, 3, 3), 'c_h2h_bias': rng.randn(3)}
    vals = {k: mx.nd.array(v) for k, v in vals.items()}
    got = out.bind(mx.cpu(), vals).forward()[0].asnumpy()

    def conv(d, w, b):      # 3x3, pad 1, stride 1, in numpy
        n, c, hh, ww = d.shape
        p = np.pad(d, ((0, 0), (0, 0), (1, 1), (1, 1)))
        o = np.zeros((n, w.shape[0], hh, ww))
        for i in range(3):
            for j in range(3):
                o += np.einsum('nchw,oc->nohw', p[:, :, i:i + hh, j:j + ww], w[:, :, i, j])
        return o + b[None, :, None, None]

    v = {k: a.asnumpy().astype('f8') for k, a in vals.items()}
    pre = conv(v['x'], v['c_i2h_weight'], v['c_i2h_bias']) + \
        conv(v['h0'], v['c_h2h_weight'], v['c_h2h_bias'])
    np.testing.assert_allclose(got, np.where(pre > 0, pre, 0.2 * pre), rtol=1e-4, atol=1e-4)


def test_encode_sentences_matches_mxnet():
    assert mx.rnn.encode_sentences([['a', 'b'], ['c', 'a', 'd']]) == \
        ([[0, 1], [2, 0, 3]], {'\n': -1, 'a': 0, 'b': 1, 'c': 2, 'd': 3})
    # start_label equal to invalid_label skips it
    assert mx.rnn.encode_sentences([['a', 'b'], ['c', 'a', 'd']], invalid_label=0) == \
        ([[1, 2], [3, 1, 4]], {'\n': 0, 'a': 1, 'b': 2, 'c': 3, 'd': 4})
    res, vocab = mx.rnn.io.encode_sentences([['a', 'b', 'c'], ['b', 'c', 'd']],
                                            vocab={'a': 1, 'b': 2, 'c': 3},
                                            unknown_token='UNK')
    assert res == [[1, 2, 3], [2, 3, 0]] and vocab == {'a': 1, 'b': 2, 'c': 3, 'UNK': 0}
    with pytest.raises(KeyError, match='Unknown token z'):
        mx.rnn.encode_sentences([['z']], vocab={'a': 0})


def test_bucket_sentence_iter():
    sents = [[1, 2], [3, 4, 5], [6, 7], [8, 9, 10, 11], [12], [13, 14, 15],
             [1, 2, 3, 4, 5, 6, 7, 8]]
    it = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[4, 2], invalid_label=0)
    assert it.buckets == [2, 4] and it.default_bucket_key == 4
    assert it.provide_data[0].shape == (2, 4) and it.provide_label[0].name == 'softmax_label'
    batches = list(it)
    # bucket 2 holds [1,2],[6,7],[12]; bucket 4 holds the three of length 3-4 (one left over)
    assert sorted(b.bucket_key for b in batches) == [2, 4]
    for b in batches:
        d, lab = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert d.shape == (2, b.bucket_key) and b.provide_data[0].shape == d.shape
        np.testing.assert_array_equal(lab[:, :-1], d[:, 1:])
        assert (lab[:, -1] == 0).all()
        for row in d:
            seq = [int(t) for t in row if t != 0]
            assert seq in sents
    it.reset()
    assert len(list(it)) == 2
    tn = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[2, 4], layout='TN')
    assert tn.provide_data[0].shape == (4, 2)
    assert all(b.data[0].shape == (b.bucket_key, 2) for b in tn)
    with pytest.raises(ValueError, match='Invalid layout'):
        mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[2, 4], layout='XY')


def test_rnn_checkpoint_round_trip(tmp_path):
    cell = mx.rnn.LSTMCell(4, prefix='l_')
    outs, _ = cell.unroll(2, [mx.sym.Variable('t0'), mx.sym.Variable('t1')])
    net = mx.sym.Group(outs)
    rng = np.random.RandomState(0)
    args = {'l_i2h_weight': mx.nd.array(rng.randn(16, 3)), 'l_i2h_bias': mx.nd.array(rng.randn(16)),
            'l_h2h_weight': mx.nd.array(rng.randn(16, 4)), 'l_h2h_bias': mx.nd.array(rng.randn(16))}
    prefix = str(tmp_path / 'rnn')
    cb = mx.rnn.do_rnn_checkpoint(cell, prefix, period=2)
    cb(0, net, args, {})                        # epoch 1: not a multiple of 2
    assert not (tmp_path / 'rnn-0001.params').exists()
    cb(1, net, args, {})
    saved = mx.nd.load(prefix + '-0002.params')
    # saved unpacked: one weight per gate
    assert 'arg:l_i2h_i_weight' in saved and 'arg:l_i2h_weight' not in saved
    np.testing.assert_array_equal(saved['arg:l_i2h_f_weight'].asnumpy(),
                                  args['l_i2h_weight'].asnumpy()[4:8])
    sym, arg, aux = mx.rnn.load_rnn_checkpoint(cell, prefix, 2)
    assert sorted(arg) == sorted(args) and aux == {}
    for k in args:
        np.testing.assert_array_equal(arg[k].asnumpy(), args[k].asnumpy())
    assert sym.list_outputs() == net.list_outputs()


def test_rnn_unroll_deprecated_makes_inputs():
    cell = mx.rnn.RNNCell(3, prefix='r_')
    with pytest.warns(UserWarning, match='deprecated'):
        outs, _ = mx.rnn.rnn_unroll(cell, 2, input_prefix='in_')
    assert 'in_t0_data' in mx.sym.Group(outs).list_arguments()


def test_rnn_module_attributes():
    assert mx.rnn.init is mx.init and mx.rnn.ndarray is mx.nd and mx.rnn.symbol is mx.sym
    assert mx.rnn.io.ndarray is mx.nd
    assert mx.rnn.rnn.save_rnn_checkpoint is mx.rnn.save_rnn_checkpoint
