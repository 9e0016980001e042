"""Data-parallel training of an MLP with a distributed kvstore.

    pip install -e '.[dist]'
    python -m aiond.launch -n 2 examples/dist_train_mlp.py        # or: mpiexec -n 2 python ...
    python examples/dist_train_mlp.py                             # one worker, no MPI

Every worker reads its own part of the data (``SplitSampler``), computes
gradients on it, and ``Trainer(kvstore='dist_sync')`` sums them over the
workers and applies the same update everywhere: the weights stay identical
on every worker, and one step is one step on the global batch.
"""
import time

import numpy as np

import aiond as mx
from aiond import autograd, gluon


def main(epochs=3, batch_per_worker=64, seed=0):
    kv = mx.kv.create("dist_sync")
    rank, nworkers = kv.rank, kv.num_workers

    # a synthetic classification problem, the same on every worker
    rs = np.random.RandomState(seed)
    x = rs.randn(4096, 20).astype(np.float32)
    w = rs.randn(20, 4).astype(np.float32)
    y = (x @ w).argmax(axis=1).astype(np.float32)
    dataset = gluon.data.ArrayDataset(x, y)
    sampler = gluon.data.SplitSampler(len(dataset), nworkers, rank, shuffle=True, seed=seed)
    loader = gluon.data.DataLoader(dataset, batch_size=batch_per_worker, sampler=sampler,
                                   last_batch="discard")

    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(64, activation="relu"), gluon.nn.Dense(4))
    mx.random.seed(seed)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    # rank 0's initial weights go to every worker when the trainer starts
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.5, "momentum": 0.9}, kvstore=kv)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    metric = mx.metric.Accuracy()

    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        metric.reset()
        tic = time.perf_counter()
        for data, label in loader:
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(batch_per_worker * nworkers)   # normalise by the global batch
            metric.update([label], [out])
        name, acc = metric.get()
        print("worker %d/%d epoch %d: %s %.3f (%.2f s)"
              % (rank, nworkers, epoch, name, acc, time.perf_counter() - tic), flush=True)

    # the parameters are the same bits on every worker
    first = next(iter(net.collect_params().values())).data().asnumpy()
    print("worker %d: checksum of the first weight %.6f" % (rank, float(first.sum())), flush=True)


if __name__ == "__main__":
    main()
