"""``mx.executor``: the bound-graph Executor (lives in aiond.symbol.executor)."""
from .symbol.executor import *  # noqa: F401,F403
from .symbol.executor import Executor  # noqa: F401
