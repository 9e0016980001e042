"""A training or inference step frees what it made by reference counting
alone. Every reference cycle a step leaves (an op and the segment that ran
it, a recursive closure, an exception caught inside a parser) waits for
Python's cyclic collector, whose full passes stop the whole process for
milliseconds (~20 ms measured under a server's load), and keeps buffers
alive until then."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.ops.registry import _lit


def _left_by(cyclic_garbage, step, n=3):
    """What ``n`` calls of ``step`` left to the cyclic collector, after one
    warm-up call."""
    step()
    nd.waitall()

    def steps():
        for _ in range(n):
            step()
        nd.waitall()
    return cyclic_garbage(steps)[1]


def _lenet(hybridize):
    nn = gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, activation="relu", in_channels=1), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 3, activation="relu", in_channels=4), nn.MaxPool2D(2, 2),
            nn.Dense(16, activation="relu", in_units=6 * 5 * 5), nn.Dropout(0.5),
            nn.BatchNorm(in_channels=16), nn.Dense(10, in_units=16))
    net.initialize(ctx=mx.cpu())
    if hybridize:
        net.hybridize()
    return net


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_gluon_training_step_leaves_no_cycles(hybridize, optimizer, cyclic_garbage):
    net = _lenet(hybridize)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), optimizer, {"learning_rate": 0.01})
    rs = np.random.RandomState(0)
    x = nd.array(rs.rand(8, 1, 26, 26), ctx=mx.cpu())
    y = nd.array(rs.randint(0, 10, 8), ctx=mx.cpu())
    losses = []

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(8)
        losses.append(float(loss.mean().asscalar()))
    assert _left_by(cyclic_garbage, step) == []
    assert len(losses) == 4 and all(np.isfinite(losses))


def test_inference_and_a_module_step_leave_no_cycles(cyclic_garbage):
    net = _lenet(True)
    x = nd.array(np.random.RandomState(1).rand(2, 1, 26, 26), ctx=mx.cpu())
    assert _left_by(cyclic_garbage, lambda: net(x).asnumpy()) == []
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.relu(fc), num_hidden=3, name="fc2"),
                               name="softmax")
    mod = mx.mod.Module(out, context=mx.cpu())
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    batch = mx.io.DataBatch([nd.array(np.random.rand(4, 5))], [nd.array([0, 1, 2, 1])])
    metric = mx.metric.create("acc")

    def step():
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    assert _left_by(cyclic_garbage, step) == []


@pytest.mark.parametrize("text", ["NCHW", "max", "valid", "relu", " relu ", "_x1", "True",
                                  "False", "None", "", "(5, 5)", "[1, 2]", "1.5", "-1", "inf",
                                  "nan", "1e-3", "'quoted'", "{'a': 1}", "a b"])
def test_attribute_strings_parse_as_literal_eval_says(text):
    """Bare words skip literal_eval (which can only fail on them): the
    parse is unchanged for every kind of string."""
    import ast
    s = text.strip()
    if s in ("None", ""):
        want = None
    else:
        try:
            want = ast.literal_eval(s)
        except (ValueError, SyntaxError):
            want = text
    assert _lit(text) == want and type(_lit(text)) is type(want)
