"""AMP's op lists: ``symbol_fp16`` (target float16) and ``symbol_bf16`` (bfloat16)."""
from . import symbol_fp16, symbol_bf16  # noqa: F401
