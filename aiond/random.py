"""``mx.random``: seeding and sampling (MXNet 1.9.1 names)."""
from __future__ import annotations

import numpy as np

from . import engine as _engine_mod
from .context import Context
from .ndarray.random import (bernoulli, exponential, gamma, generalized_negative_binomial,
                             multinomial, negative_binomial, normal, poisson, randint, randn,
                             shuffle, uniform)
from .ops import random as _rops

__all__ = ["seed", "uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "bernoulli",
           "shuffle"]


def seed(seed_state, ctx="all"):
    """Seed the generator of ``ctx`` (every context with ``'all'``).

    The reseed is an engine op on the generator's var, so it takes effect
    exactly between the draws pushed before and after it.
    """
    if not isinstance(seed_state, (int, np.integer)):
        raise ValueError("seed_state must be an int, got %r" % (seed_state,))
    s = int(seed_state) & 0xFFFFFFFF    # MXNet passes it as a C int: negative seeds work
    if ctx == "all":
        states = _rops.all_states()
        _rops.DEFAULT_SEED[0] = s
        from .context import cpu
        states.setdefault(cpu(0), _rops.rng_state(cpu(0)))
    else:
        if not isinstance(ctx, Context):
            raise ValueError("ctx must be 'all' or a Context, got %r" % (ctx,))
        states = {ctx: _rops.rng_state(ctx)}
    for c, st in states.items():
        _reseed(st, s, c)


def _reseed(st, s, ctx):
    def fn():
        st.reseed([s, ctx.device_typeid, ctx.device_id])
    _engine_mod.get().push(fn, (), (st.var,), "random.seed", 0, True)
