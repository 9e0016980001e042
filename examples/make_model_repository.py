"""Write the model files of the sample model repository (examples/model_repository).

    python examples/make_model_repository.py            # into examples/model_repository
    python examples/make_model_repository.py DIR        # a copy in DIR, configs included
    python -m aiond.serve --model-repository examples/model_repository --port 8000

Two models, each an ordinary MXNet export (``prefix-symbol.json`` +
``prefix-NNNN.params``, which MXNet 1.x loads too), with fixed random
weights so that every run writes the same files:

* ``mlp``: 784 -> 64 (relu) -> 10 scores, in two versions (epochs 1 and 2);
  its config serves ``"versions": "all"``.
* ``seqpool``: a sequence of any length of 8-feature rows (input shape
  ``[-1, 8]``), summed over the sequence and projected to 4 values;
  requests are padded with zeros to 16, 32 or 64 rows (the config's
  ``buckets``), which leaves the sum unchanged, so requests of nearby
  lengths share a batch.

The configs (``config.json`` in each model folder) are committed; this
script writes only the model files, a few hundred KB, which git ignores.
"""
import argparse
import os
import shutil
import sys

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_repository")


def _mlp(folder, mx):
    data = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=64, name="fc1"),
                          act_type="relu", name="relu1")
    out = mx.sym.FullyConnected(h, num_hidden=10, name="fc2")
    out.save(os.path.join(folder, "mlp-symbol.json"))
    for version in (1, 2):
        rs = np.random.RandomState(version)
        params = {"arg:fc1_weight": rs.normal(0, 0.05, (64, 784)),
                  "arg:fc1_bias": np.zeros(64),
                  "arg:fc2_weight": rs.normal(0, 0.1, (10, 64)),
                  "arg:fc2_bias": rs.normal(0, 0.1, 10)}
        mx.nd.save(os.path.join(folder, "mlp-%04d.params" % version),
                   {k: mx.nd.array(v, dtype="float32") for k, v in params.items()})


def _seqpool(folder, mx):
    tokens = mx.sym.var("tokens")
    pooled = mx.sym.sum(tokens, axis=1, name="pool")
    out = mx.sym.FullyConnected(pooled, num_hidden=4, name="proj")
    out.save(os.path.join(folder, "seqpool-symbol.json"))
    rs = np.random.RandomState(7)
    mx.nd.save(os.path.join(folder, "seqpool-0001.params"),
               {"arg:proj_weight": mx.nd.array(rs.normal(0, 0.3, (4, 8)), dtype="float32"),
                "arg:proj_bias": mx.nd.array(rs.normal(0, 0.1, 4), dtype="float32")})


def make(root=HERE):
    """Write the models into ``root`` (with the sample's configs when ``root``
    is not the sample folder itself); returns ``root``."""
    import aiond as mx
    for name, write in (("mlp", _mlp), ("seqpool", _seqpool)):
        folder = os.path.join(root, name)
        os.makedirs(folder, exist_ok=True)
        cfg = os.path.join(HERE, name, "config.json")
        if os.path.abspath(folder) != os.path.abspath(os.path.dirname(cfg)):
            shutil.copyfile(cfg, os.path.join(folder, "config.json"))
        write(folder, mx)
    return root


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", nargs="?", default=HERE, help="the repository folder to write")
    root = make(p.parse_args().root)
    print("wrote the models mlp (versions 1, 2) and seqpool into %s" % root, file=sys.stderr)


if __name__ == "__main__":
    main()
