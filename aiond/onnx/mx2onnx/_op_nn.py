"""Translations of the neural-network layers (convolution, pooling, norms,
activations, softmax, embedding, resize, ROI ops)."""
from __future__ import annotations

import math

import numpy as np

from ._registry import register


def _conv_attrs(n, nd):
    p = n.p
    if p.get("layout") not in (None, "NCW", "NCHW", "NCDHW"):
        raise n.unsupported("layout %s (only channel-first layouts)" % p["layout"])
    kernel = list(p["kernel"])
    stride = list(p.get("stride") or ()) or [1] * nd
    dilate = list(p.get("dilate") or ()) or [1] * nd
    pad = list(p.get("pad") or ()) or [0] * nd
    return dict(kernel_shape=kernel, strides=stride, dilations=dilate, pads=pad + pad,
                group=int(p.get("num_group", 1)))


@register("Convolution")
def convolution(b, n):
    nd = len(n.ishape[0]) - 2
    ins = n.x[:2] if n.p.get("no_bias") else n.x[:3]
    return b.add("Conv", ins, [n.out()], **_conv_attrs(n, nd))


@register("Deconvolution")
def deconvolution(b, n):
    nd = len(n.ishape[0]) - 2
    attrs = _conv_attrs(n, nd)
    adj = list(n.p.get("adj") or ())
    if adj and any(adj):
        attrs["output_padding"] = adj
    if n.p.get("target_shape") and any(n.p["target_shape"]):
        attrs["output_shape"] = list(n.oshape[0][2:])
        del attrs["pads"]
    ins = n.x[:2] if n.p.get("no_bias", True) else n.x[:3]
    return b.add("ConvTranspose", ins, [n.out()], **attrs)


@register("FullyConnected")
def fully_connected(b, n):
    x, w = n.x[0], n.x[1]
    bias = None if n.p.get("no_bias") else n.x[2]
    if n.p.get("flatten", True):
        if len(n.ishape[0]) != 2:
            x = b.add("Flatten", [x], axis=1)
        ins = [x, w] + ([bias] if bias else [])
        return b.add("Gemm", ins, [n.out()], transB=1, alpha=1.0, beta=1.0)
    wt = b.add("Transpose", [w], perm=[1, 0])
    if bias is None:
        return b.add("MatMul", [x, wt], [n.out()])
    y = b.add("MatMul", [x, wt])
    return b.add("Add", [y, bias], [n.out()])


def _channel_param(b, n, value, channels, dtype, hint):
    return b.const(np.full((channels,), value, dtype=dtype), hint=n.name + "_" + hint)


@register("BatchNorm")
def batch_norm(b, n):
    p = n.p
    x, gamma, beta, mean, var = n.x[:5]
    ndim = len(n.ishape[0])
    axis = p.get("axis", 1) % ndim
    if p.get("fix_gamma", True):
        gamma = _channel_param(b, n, 1.0, n.ishape[1][0], n.idtype[1], "fixed_gamma")
    if axis != 1:
        perm = list(range(ndim))
        perm.insert(1, perm.pop(axis))
        inv = list(np.argsort(perm))
        t = b.add("Transpose", [x], perm=perm)
        y = b.add("BatchNormalization", [t, gamma, beta, mean, var], epsilon=float(p["eps"]))
        return b.add("Transpose", [y], [n.out()], perm=inv)
    return b.add("BatchNormalization", [x, gamma, beta, mean, var], [n.out()],
                 epsilon=float(p["eps"]))


_ACT = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
        "softsign": "Softsign"}


@register("Activation")
def activation(b, n):
    act = n.p["act_type"]
    if act in _ACT:
        return b.add(_ACT[act], [n.x[0]], [n.out()])
    if act == "log_sigmoid":
        s = b.add("Sigmoid", [n.x[0]])
        return b.add("Log", [s], [n.out()])
    if act == "mish":
        sp = b.add("Softplus", [n.x[0]])
        t = b.add("Tanh", [sp])
        return b.add("Mul", [n.x[0], t], [n.out()])
    raise n.unsupported("act_type=%s" % act)


for _name, _onnx in (("relu", "Relu"), ("sigmoid", "Sigmoid"), ("tanh", "Tanh"),
                     ("softsign", "Softsign")):
    register(_name)(lambda b, n, _op=_onnx: b.add(_op, [n.x[0]], [n.out()]))


def _gelu(b, n, x):
    dt = n.idtype[0]
    s = b.add("Div", [x, b.scalar(math.sqrt(2.0), dt)])
    e = b.add("Erf", [s])
    e1 = b.add("Add", [e, b.scalar(1.0, dt)])
    h = b.add("Mul", [x, b.scalar(0.5, dt)])
    return b.add("Mul", [h, e1], [n.out()])


@register("LeakyReLU")
def leaky_relu(b, n):
    act = n.p.get("act_type", "leaky")
    slope = float(n.p.get("slope", 0.25))
    x = n.x[0]
    if act == "leaky":
        return b.add("LeakyRelu", [x], [n.out()], alpha=slope)
    if act == "elu":
        return b.add("Elu", [x], [n.out()], alpha=slope)
    if act == "selu":
        return b.add("Selu", [x], [n.out()], alpha=1.6732632423543772848170429916717,
                     gamma=1.0507009873554804934193349852946)
    if act == "gelu":
        return _gelu(b, n, x)
    if act == "rrelu":  # inference: the mean of the random slope's range
        slope = (float(n.p["lower_bound"]) + float(n.p["upper_bound"])) / 2.0
        return b.add("LeakyRelu", [x], [n.out()], alpha=slope)
    if act == "prelu":
        ndim = len(n.ishape[0])
        gamma = n.x[1]
        if ndim > 2 and n.ishape[1] and n.ishape[1][0] != 1:
            gamma = b.reshape(gamma, [-1] + [1] * (ndim - 2))
        return b.add("PRelu", [x, gamma], [n.out()])
    raise n.unsupported("act_type=%s" % act)


@register("hard_sigmoid")
def hard_sigmoid(b, n):
    return b.add("HardSigmoid", [n.x[0]], [n.out()], alpha=float(n.p.get("alpha", 0.2)),
                 beta=float(n.p.get("beta", 0.5)))


@register("Pooling")
def pooling(b, n):
    p = n.p
    x = n.x[0]
    nd = len(n.ishape[0]) - 2
    if p.get("layout") not in (None, "NCW", "NCHW", "NCDHW"):
        raise n.unsupported("layout %s (only channel-first layouts)" % p["layout"])
    ptype = p.get("pool_type", "max")
    pv = int(p.get("p_value") or 2)
    if p.get("global_pool"):
        if ptype == "max":
            return b.add("GlobalMaxPool", [x], [n.out()])
        if ptype == "avg":
            return b.add("GlobalAveragePool", [x], [n.out()])
        if ptype == "lp":
            return b.add("GlobalLpPool", [x], [n.out()], p=pv)
        if ptype == "sum":
            return b.reduce("ReduceSum", x, list(range(2, nd + 2)), True, [n.out()])
        raise n.unsupported("pool_type=%s" % ptype)
    kernel = list(p["kernel"])
    stride = list(p.get("stride") or ()) or [1] * nd
    pad = list(p.get("pad") or ()) or [0] * nd
    attrs = dict(kernel_shape=kernel, strides=stride)
    conv = p.get("pooling_convention", "valid")
    if conv == "same":
        attrs["auto_pad"] = "SAME_UPPER"
    else:
        attrs["pads"] = pad + pad
        if conv == "full":
            attrs["ceil_mode"] = 1
    if ptype == "max":
        return b.add("MaxPool", [x], [n.out()], **attrs)
    if ptype in ("avg", "sum"):
        cip = p.get("count_include_pad")
        attrs["count_include_pad"] = 1 if cip is None or cip else 0
        if ptype == "avg":
            return b.add("AveragePool", [x], [n.out()], **attrs)
        attrs["count_include_pad"] = 1
        y = b.add("AveragePool", [x], **attrs)
        return b.add("Mul", [y, b.scalar(float(np.prod(kernel)), n.idtype[0])], [n.out()])
    if ptype == "lp":
        attrs.pop("ceil_mode", None)
        return b.add("LpPool", [x], [n.out()], p=pv, **attrs)
    raise n.unsupported("pool_type=%s" % ptype)


@register("Dropout", "_copy", "BlockGrad", "MakeLoss", "stop_gradient", "identity")
def identity(b, n):
    return b.add("Identity", [n.x[0]], [n.out()])


@register("Flatten")
def flatten(b, n):
    return b.add("Flatten", [n.x[0]], [n.out()], axis=1)


@register("SoftmaxOutput")
def softmax_output(b, n):
    x = n.x[0]
    ndim = len(n.ishape[0])
    if n.p.get("multi_output"):
        return b.softmax(x, 1, ndim, outputs=[n.out()])
    if n.p.get("preserve_shape") or ndim == 2:
        return b.softmax(x, ndim - 1, ndim, outputs=[n.out()])
    f = b.add("Flatten", [x], axis=1)
    s = b.add("Softmax", [f], axis=1)
    return b.add("Reshape", [s, b.add("Shape", [x])], [n.out()])


@register("LogisticRegressionOutput")
def logistic_output(b, n):
    return b.add("Sigmoid", [n.x[0]], [n.out()])


@register("LinearRegressionOutput", "MAERegressionOutput")
def linear_output(b, n):
    return b.add("Identity", [n.x[0]], [n.out()])


def _softmax_like(b, n, log):
    p = n.p
    x = n.x[0]
    ndim = len(n.ishape[0])
    axis = int(p.get("axis", -1)) % ndim
    dt = n.odtype[0]
    if n.idtype[0] != dt:
        x = b.cast(x, dt)
    t = p.get("temperature")
    if t is not None and float(t) != 1.0:
        x = b.add("Div", [x, b.scalar(float(t), dt)])
    if not p.get("use_length"):
        return b.softmax(x, axis, ndim, log=log, outputs=[n.out()])
    # positions past each row's length are left out of the softmax and output 0
    length = b.cast(n.x[1], np.int64)
    size = n.ishape[0][axis]
    pos_shape = [1] * ndim
    pos_shape[axis] = size
    pos = b.const(np.arange(size, dtype=np.int64).reshape(pos_shape), hint=n.name + "_pos")
    length = b.unsqueeze(length, [axis])
    mask = b.add("Less", [pos, length])
    neg = b.scalar(np.finfo(dt).min if log is False else -np.inf, dt)
    masked = b.add("Where", [mask, x, neg])
    s = b.softmax(masked, axis, ndim, log=log)
    return b.add("Where", [mask, s, b.scalar(0, dt)], [n.out()])


@register("softmax")
def softmax(b, n):
    return _softmax_like(b, n, False)


@register("log_softmax")
def log_softmax(b, n):
    return _softmax_like(b, n, True)


def _param_view(b, v, axis, ndim):
    """Reshape a per-channel (C,) parameter to broadcast along ``axis``."""
    if axis == ndim - 1:
        return v
    shape = [1] * ndim
    shape[axis] = -1
    return b.reshape(v, shape)


@register("LayerNorm")
def layer_norm(b, n):
    x, gamma, beta = n.x[:3]
    ndim = len(n.ishape[0])
    axis = int(n.p.get("axis", -1)) % ndim
    dt = n.idtype[0]
    eps = float(n.p.get("eps", 1e-5))
    if b.opset >= 17 and axis == ndim - 1:
        return b.add("LayerNormalization", [x, gamma, beta], [n.out()], axis=axis, epsilon=eps)
    mean = b.reduce("ReduceMean", x, [axis], True)
    d = b.add("Sub", [x, mean])
    var = b.reduce("ReduceMean", b.add("Mul", [d, d]), [axis], True)
    std = b.add("Sqrt", [b.add("Add", [var, b.scalar(eps, dt)])])
    y = b.add("Div", [d, std])
    y = b.add("Mul", [y, _param_view(b, gamma, axis, ndim)])
    return b.add("Add", [y, _param_view(b, beta, axis, ndim)], [n.out()])


@register("InstanceNorm")
def instance_norm(b, n):
    return b.add("InstanceNormalization", n.x[:3], [n.out()], epsilon=float(n.p.get("eps", 1e-3)))


@register("L2Normalization")
def l2_normalization(b, n):
    x = n.x[0]
    ndim = len(n.ishape[0])
    mode = n.p.get("mode", "instance")
    axes = {"instance": list(range(1, ndim)), "channel": [1],
            "spatial": list(range(2, ndim))}.get(mode)
    if axes is None:
        raise n.unsupported("mode=%s" % mode)
    dt = n.idtype[0]
    sq = b.reduce("ReduceSum", b.add("Mul", [x, x]), axes, True)
    norm = b.add("Sqrt", [b.add("Add", [sq, b.scalar(float(n.p.get("eps", 1e-10)), dt)])])
    return b.add("Div", [x, norm], [n.out()])


@register("LRN")
def lrn(b, n):
    p = n.p
    return b.add("LRN", [n.x[0]], [n.out()], alpha=float(p.get("alpha", 1e-4)),
                 beta=float(p.get("beta", 0.75)), bias=float(p.get("knorm", 2.0)),
                 size=int(p["nsize"]))


@register("Embedding")
def embedding(b, n):
    # MXNet clips out-of-range ids to the first or last row
    idx = b.cast(n.x[0], np.int64)
    last = int(n.ishape[1][0]) - 1
    idx = b.add("Clip", [idx, b.scalar(0, np.int64), b.scalar(last, np.int64)])
    n.odtype[0] = n.idtype[1]       # rows come out in the weight's dtype
    return b.add("Gather", [n.x[1], idx], [n.out()], axis=0)


def _resize(b, n, x, scales=None, sizes=None, **attrs):
    roi = b.const(np.zeros((0,), dtype=np.float32), hint="roi")
    if scales is not None:
        return b.add("Resize", [x, roi, b.const(np.asarray(scales, np.float32))],
                     [n.out()], **attrs)
    empty = b.const(np.zeros((0,), dtype=np.float32), hint="scales")
    return b.add("Resize", [x, roi, empty, b.i64(sizes)], [n.out()], **attrs)


@register("UpSampling")
def upsampling(b, n):
    if n.p.get("sample_type", "nearest") != "nearest":
        raise n.unsupported("sample_type=%s" % n.p.get("sample_type"))
    if len(n.x) != 1:
        raise n.unsupported("several inputs (num_args > 1)")
    s = float(n.p["scale"])
    return _resize(b, n, n.x[0], scales=[1.0, 1.0, s, s], mode="nearest",
                   coordinate_transformation_mode="asymmetric", nearest_mode="floor")


@register("_contrib_BilinearResize2D")
def bilinear_resize(b, n):
    if len(n.x) > 1:
        raise n.unsupported("mode='like' (a second input)")
    if n.p.get("align_corners", True) is False:
        ctm = "pytorch_half_pixel"
    else:
        ctm = "align_corners"
    sizes = list(n.oshape[0])
    return _resize(b, n, n.x[0], sizes=sizes, mode="linear",
                   coordinate_transformation_mode=ctm)


@register("_contrib_AdaptiveAvgPooling2D")
def adaptive_avg_pool(b, n):
    x = n.x[0]
    h, w = n.ishape[0][2:]
    oh, ow = n.oshape[0][2:]
    if oh == 1 and ow == 1:
        return b.add("GlobalAveragePool", [x], [n.out()])
    if h % oh == 0 and w % ow == 0:
        k = [h // oh, w // ow]
        return b.add("AveragePool", [x], [n.out()], kernel_shape=k, strides=k)
    # uneven bins: each output cell averages its own window
    rows = []
    for i in range(oh):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        cells = []
        for j in range(ow):
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            win = b.slice(x, [h0, w0], [h1, w1], [2, 3])
            cells.append(b.reduce("ReduceMean", win, [2, 3], True))
        rows.append(b.add("Concat", cells, axis=3) if len(cells) > 1 else cells[0])
    if len(rows) == 1:
        return b.add("Identity", rows, [n.out()])
    return b.add("Concat", rows, [n.out()], axis=2)


@register("ROIPooling")
def roi_pooling(b, n):
    return b.add("MaxRoiPool", n.x[:2], [n.out()], pooled_shape=list(n.p["pooled_size"]),
                 spatial_scale=float(n.p["spatial_scale"]))


@register("_contrib_ROIAlign")
def roi_align(b, n):
    p = n.p
    if p.get("position_sensitive"):
        raise n.unsupported("position_sensitive=True")
    rois = n.x[1]
    idx = b.slice(rois, [0], [1], [1])
    idx = b.cast(b.squeeze(idx, [1]), np.int64)
    boxes = b.slice(rois, [1], [5], [1])
    ph, pw = p["pooled_size"]
    attrs = dict(output_height=int(ph), output_width=int(pw),
                 spatial_scale=float(p["spatial_scale"]),
                 sampling_ratio=max(int(p.get("sample_ratio", -1)), 0), mode="avg")
    if b.opset >= 16:
        attrs["coordinate_transformation_mode"] = (
            "half_pixel" if p.get("aligned") else "output_half_pixel")
    elif p.get("aligned"):
        raise n.unsupported("aligned=True below opset 16")
    return b.add("RoiAlign", [n.x[0], boxes, idx], [n.out()], **attrs)


# MXNet packs gates i,f,c,o (LSTM) and r,z,n (GRU); ONNX wants i,o,f,c and z,r,h
_RNN = {"lstm": ("LSTM", 4, [0, 3, 1, 2]), "gru": ("GRU", 3, [1, 0, 2]),
        "rnn_tanh": ("RNN", 1, [0]), "rnn_relu": ("RNN", 1, [0])}


@register("RNN")
def rnn(b, n):
    p = n.p
    mode = p["mode"]
    if p.get("projection_size") or p.get("use_sequence_length"):
        raise n.unsupported("projection_size / use_sequence_length")
    op, G, order = _RNN[mode]
    H = int(p["state_size"])
    L = int(p["num_layers"])
    D = 2 if p.get("bidirectional") else 1
    T, B, I = n.ishape[0]
    x, params, h0 = n.x[0], n.x[1], n.x[2]
    c0 = n.x[3] if mode == "lstm" else None
    flat = b.reshape(params, [-1])
    off = 0

    def take(count, shape):
        nonlocal off
        t = b.slice(flat, [off], [off + count], [0])
        off += count
        return b.reshape(t, shape)

    def reorder(t):
        if G == 1:
            return t
        parts = b.split(t, [H] * G, 0)
        return b.add("Concat", [parts[i] for i in order], axis=0)

    weights = []
    for layer in range(L):
        size_in = I if layer == 0 else H * D
        weights.append([(reorder(take(G * H * size_in, [G * H, size_in])),
                         reorder(take(G * H * H, [G * H, H]))) for _ in range(D)])
    biases = []
    for layer in range(L):
        biases.append([(reorder(take(G * H, [G * H])), reorder(take(G * H, [G * H])))
                       for _ in range(D)])
    attrs = {"hidden_size": H, "direction": "bidirectional" if D == 2 else "forward"}
    if mode == "gru":
        attrs["linear_before_reset"] = 1
    if mode.startswith("rnn_"):
        act = "Tanh" if mode == "rnn_tanh" else "Relu"
        attrs["activations"] = [act] * D
    seq = x
    hs, cs = [], []
    for layer in range(L):
        W = b.add("Concat", [b.unsqueeze(w, [0]) for w, _ in weights[layer]], axis=0)
        R = b.add("Concat", [b.unsqueeze(r, [0]) for _, r in weights[layer]], axis=0)
        Bs = b.add("Concat", [b.unsqueeze(b.add("Concat", [bw, br], axis=0), [0])
                              for bw, br in biases[layer]], axis=0)
        hl = b.slice(h0, [layer * D], [(layer + 1) * D], [0])
        ins = [seq, W, R, Bs, "", hl]
        if mode == "lstm":
            ins.append(b.slice(c0, [layer * D], [(layer + 1) * D], [0]))
        outs = b.add(op, ins, n_out=3 if mode == "lstm" else 2, **attrs)
        y, yh = outs[0], outs[1]
        hs.append(yh)
        if mode == "lstm":
            cs.append(outs[2])
        y = b.add("Transpose", [y], perm=[0, 2, 1, 3])          # (T, B, D, H)
        seq = b.reshape(y, [T, B, D * H])
    results = [b.add("Identity", [seq], [n.out(0)])]
    if p.get("state_outputs"):
        results.append(b.add("Concat", hs, [n.out(1)], axis=0) if L > 1
                       else b.add("Identity", hs, [n.out(1)]))
        if mode == "lstm":
            results.append(b.add("Concat", cs, [n.out(2)], axis=0) if L > 1
                           else b.add("Identity", cs, [n.out(2)]))
    return results
