"""Translations of contrib ops: attention products, box decoding and NMS."""
from __future__ import annotations

import numpy as np

from ._registry import register
