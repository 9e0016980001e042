"""MXNet's 2-bit gradient compression (src/kvstore/gradient_compression*).

Each value of ``residual + grad`` at or above ``threshold`` is sent as
``+threshold`` (bits ``11``), at or below ``-threshold`` as ``-threshold``
(``10``), anything else as 0 (``00``); what was not sent stays in the
residual for the next push. Sixteen values fill one float32 word, four per
byte with the first value in the high bits - MXNet's exact layout, so a
compressed block is byte-for-byte what MXNet's ``quantize_2bit`` writes.
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError

__all__ = ["TwoBit", "parse_params"]

_SHIFT = np.array([6, 4, 2, 0], dtype=np.uint8)


def parse_params(compression_params):
    """MXNet's ``GradientCompressionParam``: {'type': '2bit', 'threshold': 0.5}."""
    if not isinstance(compression_params, dict):
        raise TypeError("compression_params must be a dictionary")
    params = dict(compression_params)
    if "type" not in params:
        raise ValueError("compression_params requires `type` to be set")
    ctype = str(params.pop("type"))
    threshold = float(params.pop("threshold", 0.5))
    if params:
        raise MXNetError("Cannot find argument '%s' in GradientCompressionParam"
                         % sorted(params)[0])
    if ctype == "none":
        return None
    if ctype != "2bit":
        raise MXNetError("Unknown type for gradient compression %s" % ctype)
    if not threshold > 0:
        raise MXNetError("threshold must be greater than 0")
    return TwoBit(threshold)


class TwoBit:
    """Quantise with residual / dequantise, float32 only (as MXNet)."""

    def __init__(self, threshold):
        self.threshold = np.float32(threshold)

    @staticmethod
    def compressed_bytes(n):
        """Bytes of the compressed form of ``n`` values (whole float32 words)."""
        return ((n + 15) // 16) * 4

    def quantize(self, grad, residual, out):
        """Add ``grad`` into ``residual``, write the codes into the uint8
        array ``out`` (``compressed_bytes(n)`` long) and take what was sent
        out of the residual."""
        t = self.threshold
        r = residual.reshape(-1)
        r += grad.reshape(-1)
        pos = r >= t
        neg = r <= -t
        r[pos] -= t
        r[neg] += t
        n = r.size
        codes = np.zeros(out.size * 4, dtype=np.uint8)
        codes[:n][pos] = 3
        codes[:n][neg] = 2
        np.bitwise_or.reduce(codes.reshape(-1, 4) << _SHIFT, axis=1, out=out)

    def dequantize_add(self, packed, acc):
        """``acc += dequantize(packed)`` (``acc`` float32, flat)."""
        n = acc.size
        codes = ((packed[:, None] >> _SHIFT) & 3).reshape(-1)[:n]
        t = self.threshold
        acc[codes == 3] += t
        acc[codes == 2] -= t

    def dequantize(self, packed, n):
        acc = np.zeros(n, dtype=np.float32)
        self.dequantize_add(packed, acc)
        return acc
