"""Counting the tokens of a text."""
from __future__ import annotations

import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str, token_delim=' ', seq_delim='\n', to_lower=False,
                          counter_to_update=None):
    """Count the tokens of ``source_str``, split at ``token_delim`` and
    ``seq_delim`` (both regular expressions: escape special characters, e.g.
    ``'\\*'``); empty pieces are not tokens.

    Returns ``counter_to_update`` (a ``collections.Counter``) updated with the
    counts, or a new Counter when it is None. ``to_lower`` lower-cases the
    tokens first.

    >>> count_tokens_from_str(' Life is great ! \\n life is good . \\n', ' ', '\\n', True)
    Counter({'life': 2, 'is': 2, 'great': 1, '!': 1, 'good': 1, '.': 1})
    """
    tokens = [t for t in re.split(token_delim + '|' + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
