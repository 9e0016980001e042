"""Inputs and calls shared by test_contrib_vs_mxnet.py: ``cases(mx)`` maps a
name to a zero-argument function returning an NDArray, for either MXNet
1.9.1 (run in its own venv) or aiond."""
import numpy as np


def cases(mx):
    nd = mx.nd
    rng = np.random.RandomState(0)
    def dets(B, N, classes=3):
        d = np.zeros((B, N, 6), dtype=np.float32)
        d[..., 0] = rng.randint(0, classes, size=(B, N)); d[..., 1] = rng.rand(B, N)
        d[..., 1][:, ::7] = 0.5   # ties
        xy = rng.rand(B, N, 2) * 10; wh = rng.rand(B, N, 2) * 5 + 0.5
        d[..., 2:4] = xy; d[..., 4:6] = xy + wh
        return d
    D = dets(2, 40)
    X4 = rng.rand(2, 3, 7, 9).astype(np.float32)
    rois = np.array([[0, 1.0, 1.5, 9.0, 7.0], [1, 0.0, 0.0, 3.0, 3.0], [0, 4.2, 2.1, 15.5, 14.9], [1, -3.0, -2.0, 5.0, 4.0]], dtype=np.float32)
    IMG = rng.randint(0, 256, size=(13, 17, 3)).astype(np.uint8)
    S = rng.rand(2, 5, 4).astype(np.float32)
    def _sbn_train():
        x = nd.array(X4); mm, mv = nd.zeros(3), nd.ones(3)
        x.attach_grad()
        with mx.autograd.record():
            y = nd.contrib.SyncBatchNorm(x, nd.array([1.0, 2, 3]), nd.array([0.1, 0.2, 0.3]), mm, mv, fix_gamma=False, key="k", output_mean_var=True)
        y[0].backward(nd.array(np.arange(y[0].size).reshape(y[0].shape) % 5))
        return nd.concat(y[0].reshape(-1), y[1], y[2], x.grad.reshape(-1), mm, mv, dim=0)
    return {
      "nms_default": lambda: nd.contrib.box_nms(nd.array(D)),
      "nms_id": lambda: nd.contrib.box_nms(nd.array(D), id_index=0, overlap_thresh=0.3, topk=20, valid_thresh=0.1),
      "nms_force_center": lambda: nd.contrib.box_nms(nd.array(D), id_index=0, force_suppress=True, out_format="center", background_id=1),
      "iou": lambda: nd.contrib.box_iou(nd.array(D[0, :, 2:]), nd.array(D[1, :5, 2:])),
      "iou_center": lambda: nd.contrib.box_iou(nd.array(D[0, :, 2:]), nd.array(D[1, :5, 2:]), format="center"),
      "bm": lambda: nd.contrib.bipartite_matching(nd.array(S), threshold=0.3)[0],
      "bm_c": lambda: nd.contrib.bipartite_matching(nd.array(S), threshold=0.3, topk=2)[1],
      "bm_asc": lambda: nd.contrib.bipartite_matching(nd.array(S), threshold=0.6, is_ascend=True)[0],
      "dec": lambda: nd.contrib.box_decode(nd.array(S.reshape(2, 5, 4)), nd.array(D[:1, :5, 2:]), std0=0.1, std1=0.1, std2=0.2, std3=0.2, clip=0.5),
      "dec_corner": lambda: nd.contrib.box_decode(nd.array(S), nd.array(D[:1, :5, 2:]), format="corner"),
      "br": lambda: nd.contrib.BilinearResize2D(nd.array(X4), height=11, width=5),
      "br_noalign": lambda: nd.contrib.BilinearResize2D(nd.array(X4), height=11, width=5, align_corners=False),
      "br_scale": lambda: nd.contrib.BilinearResize2D(nd.array(X4), scale_height=1.7, scale_width=0.6),
      "br_odd": lambda: nd.contrib.BilinearResize2D(nd.array(X4), scale_height=2, scale_width=2, mode="odd_scale"),
      "ap": lambda: nd.contrib.AdaptiveAvgPooling2D(nd.array(X4), output_size=(3, 4)),
      "ap5": lambda: nd.contrib.AdaptiveAvgPooling2D(nd.array(X4), output_size=5),
      "roi": lambda: nd.contrib.ROIAlign(nd.array(rng.rand(2, 4, 8, 10).astype(np.float32)), nd.array(rois), pooled_size=(3, 2), spatial_scale=0.5),
      "roi_al": lambda: nd.contrib.ROIAlign(nd.array(rng.rand(2, 4, 8, 10).astype(np.float32)), nd.array(rois), pooled_size=(2, 2), spatial_scale=0.5, sample_ratio=2, aligned=True),
      "arange_like": lambda: nd.contrib.arange_like(nd.array(X4), start=1.5, step=0.5, repeat=3),
      "rs_lin": lambda: mx.image.imresize(nd.array(IMG, dtype="uint8"), 7, 9, interp=1),
      "rs_near": lambda: mx.image.imresize(nd.array(IMG, dtype="uint8"), 29, 31, interp=0),
      "rs_cub": lambda: mx.image.imresize(nd.array(IMG, dtype="uint8"), 29, 31, interp=2),
      "rs_area": lambda: mx.image.imresize(nd.array(IMG, dtype="uint8"), 5, 4, interp=3),
      "rs_area_up": lambda: mx.image.imresize(nd.array(IMG, dtype="uint8"), 29, 31, interp=3),
      "rs_lanc": lambda: mx.image.imresize(nd.array(IMG, dtype="uint8"), 29, 31, interp=4),
      "rs_float": lambda: mx.image.imresize(nd.array(IMG.astype(np.float32)), 7, 9, interp=1),
      "rs_float_cub": lambda: mx.image.imresize(nd.array(IMG.astype(np.float32)), 29, 31, interp=2),
      "border_reflect": lambda: mx.image.copyMakeBorder(nd.array(IMG, dtype="uint8"), 2, 3, 4, 5, type=2),
      "border_const": lambda: mx.image.copyMakeBorder(nd.array(IMG, dtype="uint8"), 2, 3, 4, 5, type=0, values=(1, 2, 3)),
      "to_tensor": lambda: nd.image.to_tensor(nd.array(IMG, dtype="uint8")),
      "normalize": lambda: nd.image.normalize(nd.image.to_tensor(nd.array(IMG, dtype="uint8")), mean=(0.1, 0.2, 0.3), std=(0.3, 0.2, 0.1)),
      "img_resize": lambda: nd.image.resize(nd.array(IMG, dtype="uint8"), size=8, keep_ratio=True),
      "sbn": lambda: nd.contrib.SyncBatchNorm(nd.array(X4), nd.array([1.0, 2, 3]), nd.array([0.1, 0.2, 0.3]), nd.zeros(3), nd.ones(3), fix_gamma=False, key="k"),
      "sbn_train": lambda: _sbn_train(),
    }
