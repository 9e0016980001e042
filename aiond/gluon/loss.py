"""``mx.gluon.loss``: MXNet 1.9.1's losses. Each returns one value per
sample (the mean over every non-batch axis), optionally scaled by
``weight`` and ``sample_weight``.

Where MXNet uses an operator aiond does not have yet (``pick``,
``reshape_like``, ``where``), the loss uses an equivalent built from
existing operators (same values and gradients); on Symbols those need the
input shapes, which a hybridized block knows while it traces.
"""
from __future__ import annotations

import numpy as np

from .. import ndarray
from ..base import MXNetError, numeric_types
from . import _cached_op
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
           "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "SDMLLoss"]


def _has_op(F, name):
    try:
        getattr(F, name)
        return True
    except AttributeError:
        return False


def _need_shape(x, what):
    shape = _cached_op.shape_of(x)
    if shape is None:
        raise MXNetError("%s on Symbols: aiond has no %s operator yet, so this needs the input "
                         "shapes; hybridize the block and call it on NDArrays, or give the "
                         "input variables shapes" % (what, what))
    return shape


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss * sample_weight * weight`` (``sample_weight`` broadcast)."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        assert isinstance(weight, numeric_types), "weight must be a number"
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` reshaped to ``y``'s shape."""
    if F is ndarray:
        # the Reshape op, not the NDArray.reshape view: it is recorded by autograd
        return x if x.shape == y.shape else F.reshape(x, shape=y.shape)
    if _has_op(F, "reshape_like"):
        return F.reshape_like(x, y)
    shape = _need_shape(y, "reshape_like")
    if _cached_op.shape_of(x) == shape:
        return x
    return F.reshape(x, shape=shape)


def _pick(F, data, index, axis, keepdims=False):
    """MXNet's ``pick(data, index, axis, keepdims)`` (mode 'clip')."""
    if _has_op(F, "pick"):
        return F.pick(data, index, axis=axis, keepdims=keepdims)
    shape = data.shape if F is ndarray else _need_shape(data, "pick")
    dtype = _cached_op.dtype_of(data) or np.float32
    ndim = len(shape)
    ax = axis % ndim
    C = shape[ax]
    keep = tuple(1 if i == ax else d for i, d in enumerate(shape))
    ishape = tuple(C if i == ax else 1 for i in range(ndim))
    idx = F.reshape(F.cast(index, dtype=np.dtype(dtype).name), shape=keep)
    idx = F.floor(F.clip(idx, 0, C - 1))
    if F is ndarray:
        rng = ndarray.arange(0, C, dtype=np.dtype(dtype).name, ctx=data.context)
    else:
        rng = F.arange(0, C, dtype=np.dtype(dtype).name)
    rng = F.reshape(rng, shape=ishape)
    mask = F.broadcast_equal(idx, rng)
    picked = F.broadcast_mul(data, mask)
    return F.sum(picked, axis=ax, keepdims=keepdims)


def _where(F, cond, x, y):
    if _has_op(F, "where"):
        return F.where(cond, x, y)
    return cond * x + (1 - cond) * y


class Loss(HybridBlock):
    """Base class for losses: ``weight`` scales the loss, ``batch_axis`` is
    the axis kept in the output."""

    def __init__(self, weight, batch_axis, **kwargs):
        super(Loss, self).__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        s = "{name}(batch_axis={_batch_axis}, w={_weight})"
        return s.format(name=self.__class__.__name__, **self.__dict__)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class L2Loss(Loss):
    r"""``0.5 * (label - pred)^2``, averaged over non-batch axes."""

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super(L2Loss, self).__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L1Loss(Loss):
    r"""``|label - pred|``, averaged over non-batch axes."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super(L1Loss, self).__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross-entropy of ``sigmoid(pred)`` (or of ``pred`` with
    ``from_sigmoid=True``) against labels in [0, 1]; ``pos_weight`` scales
    the positive term."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super(SigmoidBinaryCrossEntropyLoss, self).__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + \
                    F.Activation(-F.abs(pred), act_type="softrelu")
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * \
                    (F.Activation(-F.abs(pred), act_type="softrelu") + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    r"""Cross-entropy of ``softmax(pred, axis)`` against class indices
    (``sparse_label=True``) or probabilities; ``from_logits=True`` takes
    ``pred`` as log-probabilities already."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super(SoftmaxCrossEntropyLoss, self).__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if (not self._from_logits and self._sparse_label and sample_weight is None
                and self._weight is None
                and _has_op(F._internal, "_sparse_softmax_cross_entropy")):
            # the ops below in one op each way, bit for bit (ops/loss_fused.py)
            return F._internal._sparse_softmax_cross_entropy(
                pred, label, axis=self._axis, batch_axis=self._batch_axis)
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -_pick(F, pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence ``label * (log(label) - pred)`` with
    ``pred`` log-probabilities (``from_logits=True``) or logits."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super(KLDivLoss, self).__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    r"""Connectionist Temporal Classification loss (Graves et al.) over
    unnormalised activations ``pred`` ('NTC' or 'TNC'); the blank is the last
    channel, labels are padded with -1 unless ``label_lengths`` is given."""

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        assert layout in ["NTC", "TNC"], \
            "Only 'NTC' and 'TNC' layouts for pred are supported. Got: %s" % layout
        assert label_layout in ["NT", "TN"], \
            "Only 'NT' and 'TN' layouts for label are supported. Got: %s" % label_layout
        self._layout = layout
        self._label_layout = label_layout
        batch_axis = label_layout.find("N")
        super(CTCLoss, self).__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    r"""Smoothed L1: ``|d| - rho/2`` where ``|d| > rho``, else ``d^2 / (2 rho)``."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super(HuberLoss, self).__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = _where(F, loss > self._rho, loss - 0.5 * self._rho,
                      (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class HingeLoss(Loss):
    r"""``max(0, margin - pred * label)`` with labels -1 or 1."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super(HingeLoss, self).__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.relu(self._margin - pred * label)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SquaredHingeLoss(Loss):
    r"""``max(0, margin - pred * label)^2`` with labels -1 or 1."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super(SquaredHingeLoss, self).__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class LogisticLoss(Loss):
    r"""``log(1 + exp(-pred * label))``; labels -1/1 (``'signed'``) or 0/1
    (``'binary'``)."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super(LogisticLoss, self).__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if self._label_format not in ["signed", "binary"]:
            raise ValueError("label_format can only be signed or binary, recieved %s."
                             % label_format)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class TripletLoss(Loss):
    r"""``max(0, |pred - positive|^2 - |pred - negative|^2 + margin)``."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super(TripletLoss, self).__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    r"""Negative log likelihood of a Poisson target (mean over everything)."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super(PoissonNLLLoss, self).__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling_factor = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            target_gt_1 = target > 1
            stirling_factor = stirling_factor * target_gt_1
            loss = loss + stirling_factor
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    r"""``1 - cos(input1, input2)`` for label 1, ``max(0, cos - margin)``
    for label -1 (output shape ``(batch, 1)``, as MXNet)."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super(CosineEmbeddingLoss, self).__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = F.reshape(label, shape=(-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        y_1 = label == 1
        y_minus_1 = label == -1
        cos_sim_a = (1 - cos_sim) * y_1
        if F is ndarray:
            z_array = ndarray.zeros((1,), ctx=cos_sim.context, dtype=cos_sim.dtype)
        else:
            z_array = F.zeros((1, 1))
        cos_sim_b = F.broadcast_maximum(z_array, y_minus_1 * (cos_sim - self._margin))
        loss = cos_sim_a + cos_sim_b
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return loss

    def _cosine_similarity(self, F, x, y, axis=-1):
        x_norm = F.reshape(F.norm(x, axis=axis), shape=(-1, 1))
        y_norm = F.reshape(F.norm(y, axis=axis), shape=(-1, 1))
        x_dot_y = F.reshape(F.sum(x * y, axis=axis), shape=(-1, 1))
        if F is ndarray:
            eps_arr = ndarray.full((1,), 1e-12, ctx=x.context, dtype=x.dtype)
        else:
            eps_arr = F.full((1, 1), 1e-12)
        return x_dot_y / F.broadcast_maximum(x_norm * y_norm, eps_arr)


class SDMLLoss(Loss):
    r"""Smoothed deep metric learning loss (imperative only, as in MXNet)."""

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super(SDMLLoss, self).__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, x1, x2):
        assert x1.shape == x2.shape
        batch_size, dim = x1.shape
        x1_ = x1.expand_dims(1).broadcast_to([batch_size, batch_size, dim])
        x2_ = x2.expand_dims(0).broadcast_to([batch_size, batch_size, dim])
        squared_diffs = (x1_ - x2_) ** 2
        return squared_diffs.sum(axis=2)

    def _compute_labels(self, F, batch_size):
        gold = F.eye(batch_size)
        return gold * (1 - self.smoothing_parameter) + \
            (1 - gold) * self.smoothing_parameter / (batch_size - 1)

    def _loss(self, F, x1, x2):
        batch_size = x1.shape[0]
        labels = self._compute_labels(F, batch_size)
        distances = self._compute_distances(x1, x2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, labels.as_in_context(distances.context))

    def hybrid_forward(self, F, x1, x2):
        return self._loss(F, x1, x2)
