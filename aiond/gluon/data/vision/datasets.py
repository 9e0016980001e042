"""MNIST, FashionMNIST, CIFAR10 and CIFAR100 from local files in MXNet's formats.

aiond never downloads: the files MXNet would have downloaded must already be
in ``root`` (default ``$MXNET_HOME/datasets/<name>``, ``MXNET_HOME``
defaulting to ``~/.mxnet``, as MXNet). A missing file raises
FileNotFoundError naming the file and the folder to put it in.

* MNIST / FashionMNIST: ``train-images-idx3-ubyte.gz``,
  ``train-labels-idx1-ubyte.gz``, ``t10k-images-idx3-ubyte.gz``,
  ``t10k-labels-idx1-ubyte.gz`` (idx format, gzipped; the un-gzipped file
  is accepted too).
* CIFAR10: ``data_batch_1.bin`` ... ``data_batch_5.bin``, ``test_batch.bin``
  (binary version: per image 1 label byte + 3072 pixel bytes); CIFAR100:
  ``train.bin``, ``test.bin`` (coarse label byte, fine label byte, 3072
  pixels). Also found in the archive's own sub-folder
  (``cifar-10-batches-bin/``, ``cifar-100-binary/``), or extracted from
  ``cifar-10-binary.tar.gz`` / ``cifar-100-binary.tar.gz`` if that is in root.

Samples are ``(image, label)``: the image an NDArray row of a uint8 (N, H,
W, C) array, the label a numpy int32, exactly as MXNet.
"""
from __future__ import annotations

import os
import struct

import numpy as np

from .... import ndarray as nd
from .. import dataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100"]

_MXNET_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def data_dir():
    """``$MXNET_HOME`` or ``~/.mxnet``, as MXNet's ``base.data_dir()``."""
    return os.getenv("MXNET_HOME", os.path.join(os.path.expanduser("~"), ".mxnet"))


def _missing(cls_name, root, name, namespace, extra=""):
    return FileNotFoundError(
        "%s: file not found: %s. aiond never downloads datasets: put %s in %s (or pass root= "
        "the folder that has it)%s. MXNet downloaded it from %sgluon/dataset/%s/%s."
        % (cls_name, os.path.join(root, name), name, root, extra, _MXNET_REPO, namespace, name))


class MNIST(dataset._DownloadedDataset):
    """MNIST handwritten digits: (28, 28, 1) uint8 images, int32 labels.

    ``transform(data, label)``, when given, is applied to each sample.
    """

    _namespace = "mnist"

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        self._train_data = "train-images-idx3-ubyte.gz"
        self._train_label = "train-labels-idx1-ubyte.gz"
        self._test_data = "t10k-images-idx3-ubyte.gz"
        self._test_label = "t10k-labels-idx1-ubyte.gz"
        if root is None:
            root = os.path.join(data_dir(), "datasets", self._namespace)
        super().__init__(root, transform)

    def _open(self, name):
        import gzip
        path = os.path.join(self._root, name)
        if os.path.exists(path):
            return gzip.open(path, "rb")
        plain = path[:-3] if path.endswith(".gz") else None
        if plain and os.path.exists(plain):
            return open(plain, "rb")
        raise _missing(type(self).__name__, self._root, name, self._namespace)

    def _get_data(self):
        if self._train:
            data_name, label_name = self._train_data, self._train_label
        else:
            data_name, label_name = self._test_data, self._test_label
        with self._open(label_name) as fin:
            magic, n = struct.unpack(">II", fin.read(8))
            if magic != 2049:
                raise ValueError("%s: %s is not an idx1 label file (magic %d, expected 2049)"
                                 % (type(self).__name__, label_name, magic))
            label = np.frombuffer(fin.read(), dtype=np.uint8).astype(np.int32)
        with self._open(data_name) as fin:
            magic, n_img, rows, cols = struct.unpack(">IIII", fin.read(16))
            if magic != 2051:
                raise ValueError("%s: %s is not an idx3 image file (magic %d, expected 2051)"
                                 % (type(self).__name__, data_name, magic))
            data = np.frombuffer(fin.read(), dtype=np.uint8)
        if n_img != len(label) or data.size != n_img * rows * cols:
            raise ValueError("%s: %s has %d images of %dx%d (%d bytes) for %d labels"
                             % (type(self).__name__, data_name, n_img, rows, cols, data.size,
                                len(label)))
        data = data.reshape(len(label), rows, cols, 1)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, a drop-in replacement for MNIST (same files)."""

    _namespace = "fashion-mnist"


class CIFAR10(dataset._DownloadedDataset):
    """CIFAR10: (32, 32, 3) uint8 images, int32 labels."""

    _namespace = "cifar10"
    _archive = ("cifar-10-binary.tar.gz", "cifar-10-batches-bin")
    _label_bytes = 1

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        self._train_data = ["data_batch_%d.bin" % i for i in range(1, 6)]
        self._test_data = ["test_batch.bin"]
        if root is None:
            root = os.path.join(data_dir(), "datasets", self._namespace)
        super().__init__(root, transform)

    def _label_column(self):
        return 0

    def _read_batch(self, filename):
        with open(filename, "rb") as fin:
            raw = np.frombuffer(fin.read(), dtype=np.uint8)
        row = 3072 + self._label_bytes
        if raw.size % row:
            raise ValueError("%s: %s is %d bytes, not a multiple of the %d-byte record"
                             % (type(self).__name__, filename, raw.size, row))
        raw = raw.reshape(-1, row)
        images = raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, raw[:, self._label_column()].astype(np.int32)

    def _find(self, name):
        archive, sub = self._archive
        for path in (os.path.join(self._root, name), os.path.join(self._root, sub, name)):
            if os.path.exists(path):
                return path
        tar_path = os.path.join(self._root, archive)
        if os.path.exists(tar_path):
            import tarfile
            with tarfile.open(tar_path) as tar:
                for member in tar.getmembers():
                    if member.isfile() and os.path.basename(member.name) == name:
                        member.name = name      # flat, no path from the archive
                        try:
                            tar.extract(member, self._root, filter="data")
                        except TypeError:       # Python without extraction filters
                            tar.extract(member, self._root)
                        return os.path.join(self._root, name)
        raise _missing(type(self).__name__, self._root, name, self._namespace,
                       " (or the archive %s)" % archive)

    def _get_data(self):
        names = self._train_data if self._train else self._test_data
        paths = [self._find(name) for name in names]
        data, label = zip(*(self._read_batch(p) for p in paths))
        data = np.concatenate(data)
        label = np.concatenate(label)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class CIFAR100(CIFAR10):
    """CIFAR100: (32, 32, 3) uint8 images; ``fine_label=True`` gives the 100
    fine classes, otherwise the 20 coarse super-classes (MXNet's default)."""

    _namespace = "cifar100"
    _archive = ("cifar-100-binary.tar.gz", "cifar-100-binary")
    _label_bytes = 2

    def __init__(self, root=None, fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        self._train = train
        self._train_data = ["train.bin"]
        self._test_data = ["test.bin"]
        if root is None:
            root = os.path.join(data_dir(), "datasets", self._namespace)
        dataset._DownloadedDataset.__init__(self, root, transform)

    def _label_column(self):
        return int(bool(self._fine_label))

# MXNet defines the image-file datasets in this module too
from .image_datasets import ImageRecordDataset, ImageFolderDataset  # noqa: E402,F401
