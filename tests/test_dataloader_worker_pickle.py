"""A dataset whose transforms have already run (hybridized, with a traced
graph) goes to DataLoader workers (aiond/gluon/data/_worker_pickle.py), and
registry ops pickle by name (ops/registry.Op.__reduce_ex__)."""
import pickle

import numpy as np

import aiond as mx
from aiond.gluon.data import ArrayDataset, DataLoader
from aiond.gluon.data._worker_pickle import dumps
from aiond.gluon.data.vision import transforms
from aiond.ops import registry


def _images(n=6):
    rs = np.random.RandomState(0)
    return rs.randint(0, 255, (n, 12, 10, 1)).astype(np.uint8), np.arange(n).astype(np.int32)


def test_used_transform_goes_to_workers():
    mx.npx.set_np()
    try:
        imgs, labels = _images()
        trans = transforms.Compose([transforms.Resize((8, 6)), transforms.ToTensor()])
        first = trans(mx.np.array(imgs[0], dtype=np.uint8))      # traces Compose's graph
        assert first.shape == (1, 6, 8)
        ds = ArrayDataset(mx.np.array(imgs, dtype=np.uint8), labels).transform_first(trans)
        seen = [(x.asnumpy(), y.asnumpy()) for x, y in DataLoader(ds, batch_size=3)]
        got = [(x.asnumpy(), y.asnumpy()) for x, y in DataLoader(ds, batch_size=3, num_workers=2)]
        assert len(got) == 2
        for (a, b), (c, d) in zip(seen, got):
            np.testing.assert_allclose(a, c)
            np.testing.assert_array_equal(b, d)
        np.testing.assert_allclose(seen[0][0][0], first.asnumpy())
        # the block in this process keeps its graph
        assert trans._children["0"]._cached_op is not None
        clone = pickle.loads(dumps(trans))
        np.testing.assert_allclose(clone(mx.np.array(imgs[1], dtype=np.uint8)).asnumpy(),
                                   seen[0][0][1])
    finally:
        mx.npx.reset_np()


def test_op_pickles_by_name():
    op = registry.get("_npx__image_resize")
    assert pickle.loads(pickle.dumps(op)) is op
    assert pickle.loads(pickle.dumps(registry.get("FullyConnected"))) is registry.get(
        "FullyConnected")
