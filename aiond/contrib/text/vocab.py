"""``Vocabulary``: indices for text tokens."""
from __future__ import annotations

import collections

from . import _constants as C

__all__ = ["Vocabulary"]


def _require(cond, message):
    # MXNet signals these misuses with AssertionError; raised explicitly so
    # they hold under ``python -O`` too
    if not cond:
        raise AssertionError(message)


class Vocabulary(object):
    """Indexing for text tokens.

    Index 0 is ``unknown_token``, then come ``reserved_tokens`` in their
    order, then the keys of ``counter`` from the most to the least frequent
    (ties in sorted order), keeping those seen at least ``min_freq`` times and
    at most ``most_freq_count`` of them (None: no cap).

    Parameters
    ----------
    counter : collections.Counter or None, default None
        Token frequencies of the text data.
    most_freq_count : None or int, default None
        The most tokens of ``counter`` to index (reserved tokens not counted).
    min_freq : int, default 1
        The least frequency a token of ``counter`` needs to be indexed.
    unknown_token : hashable, default '<unk>'
        What every token not in the vocabulary maps to.
    reserved_tokens : list or None, default None
        Tokens always indexed (padding, sentence markers); no duplicates and not
        ``unknown_token``.
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token='<unk>',
                 reserved_tokens=None):
        _require(min_freq > 0, '`min_freq` must be set to a positive value.')
        if reserved_tokens is not None:
            reserved = set(reserved_tokens)
            _require(unknown_token not in reserved,
                     '`reserved_token` cannot contain `unknown_token`.')
            _require(len(reserved) == len(reserved_tokens),
                     '`reserved_tokens` cannot contain duplicate reserved tokens.')
        self._index_unknown_and_reserved_tokens(unknown_token, reserved_tokens)
        if counter is not None:
            self._index_counter_keys(counter, unknown_token, reserved_tokens, most_freq_count,
                                     min_freq)

    def _index_unknown_and_reserved_tokens(self, unknown_token, reserved_tokens):
        self._unknown_token = unknown_token
        self._idx_to_token = [unknown_token]        # C.UNKNOWN_IDX == 0
        if reserved_tokens is None:
            self._reserved_tokens = None
        else:
            self._reserved_tokens = list(reserved_tokens)
            self._idx_to_token.extend(reserved_tokens)
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}

    def _index_counter_keys(self, counter, unknown_token, reserved_tokens, most_freq_count,
                            min_freq):
        _require(isinstance(counter, collections.Counter),
                 '`counter` must be an instance of collections.Counter.')
        special = set(reserved_tokens) if reserved_tokens is not None else set()
        special.add(unknown_token)
        # by frequency, ties in the tokens' sort order (a stable sort of sorted items)
        token_freqs = sorted(counter.items(), key=lambda x: x[0])
        token_freqs.sort(key=lambda x: x[1], reverse=True)
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in token_freqs:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._idx_to_token.append(token)
                self._token_to_idx[token] = len(self._idx_to_token) - 1

    def __len__(self):
        return len(self.idx_to_token)

    @property
    def token_to_idx(self):
        """dict: each indexed token's index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: the indexed tokens, position = index."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        """What every unknown token maps to (index 0)."""
        return self._unknown_token

    @property
    def reserved_tokens(self):
        """The reserved tokens (a list), or None."""
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token, or a list of indices for a list of tokens
        (unknown tokens give 0)."""
        single = not isinstance(tokens, list)
        if single:
            tokens = [tokens]
        idx = [self.token_to_idx.get(t, C.UNKNOWN_IDX) for t in tokens]
        return idx[0] if single else idx

    def to_tokens(self, indices):
        """The token of an index, or a list of tokens for a list of indices;
        ValueError for an index outside the vocabulary (negative indices count
        from the end, as in MXNet)."""
        single = not isinstance(indices, list)
        if single:
            indices = [indices]
        max_idx = len(self.idx_to_token) - 1
        tokens = []
        for idx in indices:
            valid = isinstance(idx, int) and not isinstance(idx, bool)
            if not valid or not -max_idx - 1 <= idx <= max_idx:
                raise ValueError('Token index %r in the provided `indices` is invalid: the '
                                 'vocabulary has indices 0 to %d.' % (idx, max_idx))
            tokens.append(self.idx_to_token[idx])
        return tokens[0] if single else tokens
