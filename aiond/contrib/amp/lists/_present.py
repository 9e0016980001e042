"""The AMP lists keep only the ops aiond has: ``amp.init`` replaces each
listed op's function in mx.nd and mx.sym, and a listed op that is not there
could be neither wrapped nor used."""
from __future__ import annotations

from .._names import resolvable


def present(names):
    return [n for n in names if resolvable(n)]


def present_conditional(entries):
    return [e for e in entries if resolvable(e[0])]


def present_dict(table):
    return {k: v for k, v in table.items() if resolvable(k)}
