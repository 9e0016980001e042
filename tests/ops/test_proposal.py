"""contrib Proposal / MultiProposal: anchors, decoding, NMS and batching."""
import numpy as np

import aiond as mx


def _inputs(n, A=9, H=5, W=6):
    rng = np.random.RandomState(1)
    cls = rng.uniform(size=(n, 2 * A, H, W)).astype(np.float32)
    bbox = rng.normal(scale=0.1, size=(n, 4 * A, H, W)).astype(np.float32)
    info = np.array([[H * 16, W * 16, 1.0]] * n, dtype=np.float32)
    return cls, bbox, info


KW = dict(feature_stride=16, scales=(8, 16, 32), ratios=(0.5, 1, 2), rpn_pre_nms_top_n=100,
          rpn_post_nms_top_n=20, threshold=0.7, rpn_min_size=16)


def test_proposal_boxes_scores_and_nms():
    cls, bbox, info = _inputs(1)
    rois, score = mx.nd.contrib.Proposal(mx.nd.array(cls), mx.nd.array(bbox), mx.nd.array(info),
                                         output_score=True, **KW)
    r, s = rois.asnumpy(), score.asnumpy()[:, 0]
    assert r.shape == (20, 5) and np.all(r[:, 0] == 0)
    assert np.all(r[:, 1:] >= 0) and np.all(r[:, [1, 3]] <= info[0, 1] - 1)
    # scores come out sorted (before any cycling) and kept boxes overlap <= threshold
    k = len({tuple(x) for x in r[:, 1:]})
    assert np.all(np.diff(s[:k]) <= 0)
    boxes = r[:k, 1:]
    for i in range(k):
        for j in range(i + 1, k):
            xx1, yy1 = np.maximum(boxes[i, :2], boxes[j, :2])
            xx2, yy2 = np.minimum(boxes[i, 2:], boxes[j, 2:])
            inter = max(0, xx2 - xx1 + 1) * max(0, yy2 - yy1 + 1)
            ai = np.prod(boxes[i, 2:] - boxes[i, :2] + 1)
            aj = np.prod(boxes[j, 2:] - boxes[j, :2] + 1)
            assert inter / (ai + aj - inter) <= 0.7 + 1e-6
    # without output_score only the rois come back
    assert isinstance(mx.nd.contrib.Proposal(mx.nd.array(cls), mx.nd.array(bbox),
                                             mx.nd.array(info), **KW), mx.nd.NDArray)


def test_multi_proposal_equals_per_image_proposal_and_has_zero_grads():
    cls, bbox, info = _inputs(3)
    multi, ms = mx.nd.contrib.MultiProposal(mx.nd.array(cls), mx.nd.array(bbox),
                                            mx.nd.array(info), output_score=True, **KW)
    for i in range(3):
        r, s = mx.nd.contrib.Proposal(mx.nd.array(cls[i:i + 1]), mx.nd.array(bbox[i:i + 1]),
                                      mx.nd.array(info[i:i + 1]), output_score=True, **KW)
        np.testing.assert_allclose(multi.asnumpy()[i * 20:(i + 1) * 20, 1:], r.asnumpy()[:, 1:])
        assert np.all(multi.asnumpy()[i * 20:(i + 1) * 20, 0] == i)
    x = mx.nd.array(cls)
    x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.MultiProposal(x, mx.nd.array(bbox), mx.nd.array(info), **KW)
    # its gradient never reads the head gradient: any shape is accepted, as in MXNet
    out.backward(mx.nd.ones((20, 5)))
    assert np.all(x.grad.asnumpy() == 0)


def test_executor_backward_accepts_unread_head_gradients():
    # index_array's gradient is zero and never reads its head gradient: MXNet's
    # executor accepts (and ignores) a head gradient of another shape
    sym = mx.sym.contrib.index_array(mx.sym.Variable("data"), axes=(1,))
    gd = mx.nd.ones((2, 3))
    exe = sym.bind(mx.cpu(), {"data": mx.nd.ones((2, 3))}, args_grad={"data": gd})
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((5,))])
    assert np.all(gd.asnumpy() == 0)
    cls, bbox, info = _inputs(1)
    s = mx.sym.contrib.Proposal(mx.sym.Variable("c"), mx.sym.Variable("b"),
                                mx.sym.Variable("i"), **KW)
    g = mx.nd.ones(cls.shape)
    exe = s.bind(mx.cpu(), {"c": mx.nd.array(cls), "b": mx.nd.array(bbox),
                            "i": mx.nd.array(info)}, args_grad={"c": g})
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((7, 5))])
    assert np.all(g.asnumpy() == 0)
