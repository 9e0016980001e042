"""Train (or load) a small MLP classifier and serve it over HTTP with dynamic batching.

    python examples/serve_mlp.py                      # trains, exports /tmp/serve_mlp-*, serves :8080
    python examples/serve_mlp.py --prefix /tmp/serve_mlp --port 8080   # loads it if it exists

Then, from another shell:

    curl -s localhost:8080/health
    curl -s -X POST localhost:8080/predict -H 'content-type: application/json' \\
         -d "{\\"data\\": $(python -c 'print([0.1]*784)')}"
    curl -s localhost:8080/metrics | grep aiond_serve_batch_size

The data are synthetic 28x28 "digits" (a noisy prototype per class), so the
example needs no download. The exported files are ordinary MXNet files:
``python -m aiond.serve --symbol /tmp/serve_mlp-symbol.json --params
/tmp/serve_mlp-0000.params --input-shape 1,784`` serves them too, and so
would MXNet 1.x load them.
"""
import argparse
import os
import sys

import numpy as np

import aiond as mx
from aiond import autograd, gluon
from aiond.gluon import nn

N_IN, N_CLASSES = 784, 10


def synthetic_digits(n, seed=0):
    """n noisy copies of 10 fixed random 28x28 prototypes; labels 0..9."""
    protos = np.random.RandomState(42).uniform(0, 1, (N_CLASSES, N_IN)).astype(np.float32)
    rs = np.random.RandomState(seed)
    y = rs.randint(0, N_CLASSES, n)
    x = protos[y] + rs.normal(0, 2.0, (n, N_IN)).astype(np.float32)
    return x.astype(np.float32), y.astype(np.float32)


def train(prefix, epochs=3, batch_size=64):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(128, activation="relu"), nn.Dense(64, activation="relu"),
                nn.Dense(N_CLASSES))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x, y = synthetic_digits(4096)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05,
                                                          "momentum": 0.9})
    for epoch in range(epochs):
        total = 0.0
        for i in range(0, len(x), batch_size):
            data, label = mx.nd.array(x[i:i + batch_size]), mx.nd.array(y[i:i + batch_size])
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
            total += loss.sum().asscalar()
        xt, yt = synthetic_digits(1000, seed=epoch + 1)
        acc = (net(mx.nd.array(xt)).asnumpy().argmax(1) == yt).mean()
        print("epoch %d: loss %.4f, held-out accuracy %.3f" % (epoch, total / len(x), acc),
              file=sys.stderr)
    net.export(prefix)
    print("exported %s-symbol.json and %s-0000.params" % (prefix, prefix), file=sys.stderr)
    return net


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prefix", default="/tmp/serve_mlp", help="model files prefix")
    p.add_argument("--train", action="store_true", help="train even if the files exist")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--max-batch-size", type=int, default=64)
    p.add_argument("--max-wait-ms", type=float, default=2.0)
    p.add_argument("--no-serve", action="store_true", help="train/load, check, and exit")
    args = p.parse_args()

    if not args.no_serve:       # before training, not after it
        from aiond.serve.__main__ import missing_serve_extra
        msg = missing_serve_extra()
        if msg:
            sys.exit(msg)
    from aiond.serve import load_model
    if args.train or not os.path.exists(args.prefix + "-symbol.json"):
        train(args.prefix)
    model = load_model(args.prefix + "-symbol.json", args.prefix + "-0000.params")
    xt, yt = synthetic_digits(200, seed=99)
    acc = (model(mx.nd.array(xt)).asnumpy().argmax(1) == yt).mean()
    print("loaded model: accuracy %.3f on 200 fresh samples" % acc, file=sys.stderr)
    if args.no_serve:
        return

    import uvicorn
    from aiond.serve.http import create_app
    app = create_app(model, sample_shape=(N_IN,), dtype="float32", name="serve_mlp",
                     max_batch_size=args.max_batch_size, max_wait=args.max_wait_ms / 1e3)
    print("serving on http://%s:%d  (POST /predict, GET /health, GET /metrics)"
          % (args.host, args.port), file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
