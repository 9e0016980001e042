"""``mx.io.ImageRecordIter`` (and its uint8/int8 forms): MXNet's C++ image
iterator over RecordIO files (``src/io/iter_image_recordio_2.cc`` with the
default augmenter and normalizer), written in Python as an ``MXDataIter``
source.

Per image, as MXNet's default augmenter: decode (RGB), ``resize`` the
shorter edge, ``pad`` with ``fill_value``, crop to ``data_shape`` (a random
area with ``random_resized_crop``, a random square between
``min_crop_size`` and ``max_crop_size``, else the ``data_shape`` window -
at a random place with ``rand_crop``, centred otherwise - after scaling up
an image smaller than it), jitter ``brightness``/``contrast``/``saturation``
in a random order, then normalize: ``((x - mean) * c + i) * scale / std``
per channel with random contrast ``c`` and illumination ``i``
(``max_random_contrast``/``max_random_illumination``), mirrored with
``mirror``/``rand_mirror``. The uint8/int8 iterators skip normalization.

Augmentations this iterator does not implement (rotation, shearing, random
scaling, HLS jitter, PCA noise, mean images) raise an error naming the
argument instead of being ignored. Batching follows MXNet's batch loader
(``round_batch``), labels are the records' ``label_width`` header values.
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError
from .mxdataiter import MXDataIter
from .native import _RowBatcher
from .utils import decode_image

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter"]

# arguments of MXNet's augmenter that aiond does not implement, with their neutral values
_UNSUPPORTED = {"max_rotate_angle": 0, "rotate": -1, "rotate_list": None,
                "max_shear_ratio": 0.0, "max_random_scale": 1.0, "min_random_scale": 1.0,
                "max_img_size": 1e10, "min_img_size": 0.0, "random_h": 0, "random_s": 0,
                "random_l": 0, "pca_noise": 0.0, "mean_img": ""}
# knobs with no aiond meaning (threads, buffers, devices, logging)
_IGNORED = ("preprocess_threads", "prefetch_buffer", "ctx", "device_id", "verbose",
            "shuffle_chunk_size", "shuffle_chunk_seed", "aug_seq", "path_root", "seed_aug")


def _scan(path):
    from ..recordio import MXRecordIO
    rec = MXRecordIO(path, "r")
    positions = []
    while True:
        pos = rec.handle.tell()
        if rec.read() is None:
            break
        positions.append(pos)
    return rec, positions


def _cv_interp(method, rng, src_hw, dst_hw):
    if method == 9:             # auto: area to shrink, cubic to enlarge, else bilinear
        if dst_hw[0] > src_hw[0] and dst_hw[1] > src_hw[1]:
            return 2
        if dst_hw[0] < src_hw[0] and dst_hw[1] < src_hw[1]:
            return 3
        return 1
    if method == 10:
        return int(rng.randint(0, 5))
    return method


class _ImageRecordSource(object):
    def __init__(self, p):
        from ..recordio import MXIndexedRecordIO
        self.p = p
        c, h, w = p["data_shape"]
        if c not in (1, 3, 4):
            raise MXNetError("ImageRecordIter: data_shape must have 1, 3 or 4 channels, got %s"
                             % (p["data_shape"],))
        if p["path_imgidx"]:
            self.rec = MXIndexedRecordIO(p["path_imgidx"], p["path_imgrec"], "r")
            self.keys = list(self.rec.keys)
            self.positions = None
        else:
            self.rec, self.positions = _scan(p["path_imgrec"])
            self.keys = list(range(len(self.positions)))
        n = len(self.keys)
        lo = n * p["part_index"] // p["num_parts"]
        hi = n * (p["part_index"] + 1) // p["num_parts"]
        self.keys = self.keys[lo:hi]
        if not self.keys:
            raise MXNetError("ImageRecordIter: %s holds no record (for part %d of %d)"
                             % (p["path_imgrec"], p["part_index"], p["num_parts"]))
        self.order = np.arange(len(self.keys))
        self.shuffle_rng = np.random.RandomState(p["seed"])
        self.aug_rng = np.random.RandomState(p["seed"] if p["seed_aug"] is None else p["seed_aug"])
        if p["shuffle"]:
            self.shuffle_rng.shuffle(self.order)
        self.batcher = _RowBatcher(len(self.keys), p["batch_size"], p["round_batch"],
                                   "ImageRecordIter")
        self.batch_data = self.batch_label = None

    # -- reading
    def _record(self, i):
        from ..recordio import unpack
        key = self.keys[self.order[i]]
        if self.positions is None:
            s = self.rec.read_idx(key)
        else:
            self.rec.handle.seek(self.positions[key])
            self.rec._eof = False       # as MXIndexedRecordIO.seek: read from here on
            s = self.rec.read()
        return unpack(s)

    def _decode(self, buf):
        c = self.p["data_shape"][0]
        img = decode_image(bytes(buf), flag=0 if c == 1 else 1)
        if img.ndim == 2:
            img = img[:, :, None]
        if c == 4 and img.shape[2] == 3:
            img = np.concatenate([img, np.full(img.shape[:2] + (1,), 255, img.dtype)], axis=2)
        return img

    # -- augmentation (MXNet's DefaultImageAugmenter)
    def _resize(self, img, w, h, interp):
        from ..ops.cvimage import resize_image
        return resize_image(img, int(w), int(h), interp)

    def _augment(self, img):
        p, rng = self.p, self.aug_rng
        _, dh, dw = p["data_shape"]
        if p["resize"] != -1:
            r = p["resize"]
            H, W = img.shape[:2]
            nh, nw = (r * H // W, r) if H > W else (r, r * W // H)
            img = self._resize(img, nw, nh, _cv_interp(p["inter_method"], rng, (H, W), (nh, nw)))
        if p["pad"] > 0:
            k = p["pad"]
            img = np.pad(img, ((k, k), (k, k), (0, 0)), constant_values=p["fill_value"])
        cropped = False
        if p["random_resized_crop"]:
            lo_r, hi_r = p["min_aspect_ratio"], p["max_aspect_ratio"]
            if lo_r is None:
                lo_r, hi_r = 1 - hi_r, 1 + hi_r
            if (p["max_random_area"] != 1.0 or p["min_random_area"] != 1.0
                    or lo_r != 1.0 or hi_r != 1.0):
                H, W = img.shape[:2]
                for _ in range(10):
                    area = H * W * rng.uniform(p["min_random_area"], p["max_random_area"])
                    ratio = rng.uniform(lo_r, hi_r)
                    y_a = int(round(np.sqrt(area / ratio)))
                    x_a = int(round(np.sqrt(area * ratio)))
                    if rng.uniform() > 0.5:
                        y_a, x_a = x_a, y_a
                    if y_a <= H and x_a <= W:
                        y0 = rng.randint(0, H - y_a + 1)
                        x0 = rng.randint(0, W - x_a + 1)
                        img = self._resize(img[y0:y0 + y_a, x0:x0 + x_a], dw, dh,
                                           _cv_interp(p["inter_method"], rng, (y_a, x_a), (dh, dw)))
                        cropped = True
                        break
        elif p["max_crop_size"] != -1 or p["min_crop_size"] != -1:
            H, W = img.shape[:2]
            if not (W >= p["max_crop_size"] and H >= p["max_crop_size"]
                    and p["max_crop_size"] >= p["min_crop_size"]):
                raise MXNetError("ImageRecordIter: input image size %dx%d smaller than "
                                 "max_crop_size %d" % (H, W, p["max_crop_size"]))
            size = rng.randint(p["min_crop_size"], p["max_crop_size"] + 1)
            y, x = H - size, W - size
            if p["rand_crop"]:
                y, x = rng.randint(0, y + 1), rng.randint(0, x + 1)
            else:
                y, x = y // 2, x // 2
            img = self._resize(img[y:y + size, x:x + size], dw, dh,
                               _cv_interp(p["inter_method"], rng, (size, size), (dh, dw)))
            cropped = True
        if not cropped:
            H, W = img.shape[:2]
            interp = _cv_interp(p["inter_method"], rng, (H, W), (dh, dw))
            if H < dh:
                img = self._resize(img, int(dh / H * W), dh, interp)
            H, W = img.shape[:2]
            if W < dw:
                img = self._resize(img, dw, int(dw / W * H), interp)
            H, W = img.shape[:2]
            y, x = H - dh, W - dw
            if p["rand_crop"]:
                y, x = rng.randint(0, y + 1), rng.randint(0, x + 1)
            else:
                y, x = y // 2, x // 2
            img = img[y:y + dh, x:x + dw]
        if p["brightness"] > 0 or p["contrast"] > 0 or p["saturation"] > 0:
            img = self._jitter(img)
        return img

    def _jitter(self, img):
        p, rng = self.p, self.aug_rng
        a_b = 1.0 + rng.uniform(-p["brightness"], p["brightness"])
        a_c = 1.0 + rng.uniform(-p["contrast"], p["contrast"])
        a_s = 1.0 + rng.uniform(-p["saturation"], p["saturation"])
        x = img.astype(np.float32)

        def gray(v):
            return v[..., :3] @ np.array([0.299, 0.587, 0.114], np.float32) \
                if v.shape[2] >= 3 else v[..., 0]

        def sat(v):             # OpenCV's saturating uint8 arithmetic
            return np.clip(np.rint(v), 0, 255)
        for i in rng.permutation(3):
            if i == 0:
                x = sat(x * a_b)
            elif i == 1:
                x = sat(x * a_c + (1 - a_c) * float(sat(gray(x)).mean()))
            else:
                x = sat(x * a_s + sat(gray(x))[..., None] * (1 - a_s))
        return x.astype(img.dtype)

    def _normalize(self, img):
        p, rng = self.p, self.aug_rng
        chw = img.transpose(2, 0, 1).astype(np.float32)
        flip = (p["rand_mirror"] and rng.uniform() < 0.5) or p["mirror"]
        if p["dtype"] != "float32":
            return (chw[:, :, ::-1] if flip else chw).astype(p["dtype"])
        contrast = rng.uniform() * p["max_random_contrast"] * 2 - p["max_random_contrast"] + 1
        illum = rng.uniform() * p["max_random_illumination"] * 2 - p["max_random_illumination"]
        mean = np.array([p["mean_r"], p["mean_g"], p["mean_b"], p["mean_a"]], np.float32)
        std = np.array([p["std_r"], p["std_g"], p["std_b"], p["std_a"]], np.float32)
        c = chw.shape[0]
        out = ((chw - mean[:c, None, None]) * np.float32(contrast) + np.float32(illum)) \
            * np.float32(p["scale"]) / std[:c, None, None]
        return out[:, :, ::-1] if flip else out

    # -- the C iterator's calls
    def before_first(self):
        if self.p["shuffle"] and not (self.p["round_batch"] and self.batcher.num_overflow):
            self.shuffle_rng.shuffle(self.order)
        self.batcher.before_first()

    def next(self):
        if not self.batcher.next():
            return False
        p = self.p
        datas, labels = [], []
        for i in self.batcher.rows:
            header, buf = self._record(int(i))
            datas.append(self._normalize(self._augment(self._decode(buf))))
            lab = np.asarray(header.label, dtype=np.float32).reshape(-1)
            if lab.size < p["label_width"]:
                raise MXNetError("ImageRecordIter: a record has %d label values, fewer than "
                                 "label_width=%d" % (lab.size, p["label_width"]))
            labels.append(lab[:p["label_width"]])
        self.batch_data = np.stack(datas)
        lab = np.stack(labels)
        self.batch_label = lab[:, 0] if p["label_width"] == 1 else lab
        return True

    def data(self):
        from ..ndarray import array
        return array(self.batch_data, dtype=self.batch_data.dtype)

    def label(self):
        from ..ndarray import array
        return array(self.batch_label, dtype=np.float32)

    def index(self):
        return np.array([self.keys[self.order[int(i)]] for i in self.batcher.rows],
                        dtype=np.uint64)

    def pad(self):
        return self.batcher.pad


_DEFAULTS = dict(
    path_imgrec="", path_imgidx="", path_imglist="", label_width=1, batch_size=None,
    data_shape=None, shuffle=False, seed=0, seed_aug=None, round_batch=True, num_parts=1,
    part_index=0, resize=-1, rand_crop=False, random_resized_crop=False, max_crop_size=-1,
    min_crop_size=-1, max_random_area=1.0, min_random_area=1.0, max_aspect_ratio=0.0,
    min_aspect_ratio=None, pad=0, fill_value=255, inter_method=1, brightness=0.0,
    contrast=0.0, saturation=0.0, mirror=False, rand_mirror=False, mean_r=0.0, mean_g=0.0,
    mean_b=0.0, mean_a=0.0, std_r=1.0, std_g=1.0, std_b=1.0, std_a=1.0, scale=1.0,
    max_random_contrast=0.0, max_random_illumination=0.0, dtype="float32",
    data_name="data", label_name="softmax_label")


def _params(kwargs, what):
    p = dict(_DEFAULTS)
    for k, v in kwargs.items():
        if k in _UNSUPPORTED:
            if v != _UNSUPPORTED[k] and v not in (None, ""):
                raise MXNetError("%s: %s=%r is an augmentation aiond's image iterator does not "
                                 "implement; use mx.image.ImageIter with augmenters for it"
                                 % (what, k, v))
            continue
        if k in _IGNORED:
            continue
        if k not in p:
            raise MXNetError("%s: unknown argument %r" % (what, k))
        p[k] = v
    if not p["path_imgrec"]:
        if p["path_imglist"]:
            raise MXNetError("%s: reading images listed in path_imglist without a .rec file "
                             "is not supported; pack them with im2rec or use "
                             "mx.image.ImageIter" % what)
        raise MXNetError("%s: path_imgrec is required" % what)
    if p["batch_size"] is None or p["data_shape"] is None:
        raise MXNetError("%s: batch_size and data_shape are required" % what)
    p["batch_size"] = int(p["batch_size"])
    p["data_shape"] = tuple(int(d) for d in p["data_shape"])
    if len(p["data_shape"]) != 3:
        raise MXNetError("%s: data_shape must be (channels, height, width), got %s"
                         % (what, p["data_shape"]))
    if p["inter_method"] not in (0, 1, 2, 3, 4, 9, 10):
        raise MXNetError("%s: invalid inter_method %r: valid values are 0, 1, 2, 3, 4, 9, 10"
                         % (what, p["inter_method"]))
    if p["random_resized_crop"] and (p["rand_crop"] or p["max_crop_size"] != -1
                                     or p["min_crop_size"] != -1):
        raise MXNetError("%s: random_resized_crop conflicts with rand_crop, min_crop_size and "
                         "max_crop_size" % what)
    p["dtype"] = str(np.dtype(p["dtype"]))
    if p["dtype"] not in ("float32", "uint8", "int8"):
        raise MXNetError("%s: dtype must be float32, uint8 or int8, got %s" % (what, p["dtype"]))
    return p


class ImageRecordIter(MXDataIter):
    """Batches of images from a RecordIO file (``path_imgrec``, optionally
    indexed by ``path_imgidx``), augmented and normalized as MXNet's C++
    ImageRecordIter does (see the module docstring for what is supported).
    Data come as ``(batch_size,) + data_shape`` float32 (uint8/int8 for
    ``dtype``), labels as ``(batch_size,)`` or ``(batch_size, label_width)``."""

    def __init__(self, **kwargs):
        p = _params(kwargs, type(self).__name__)
        super(ImageRecordIter, self).__init__(_ImageRecordSource(p), p["data_name"],
                                              p["label_name"])


class ImageRecordUInt8Iter(ImageRecordIter):
    """ImageRecordIter giving the augmented uint8 pixels (no normalization)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("dtype", "uint8")
        super(ImageRecordUInt8Iter, self).__init__(**kwargs)


class ImageRecordInt8Iter(ImageRecordIter):
    """ImageRecordIter giving the augmented pixels as int8 (no normalization)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("dtype", "int8")
        super(ImageRecordInt8Iter, self).__init__(**kwargs)
