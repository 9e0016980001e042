"""The graph layer, between autograd and symbol: the graph IR (``ir``) and
the one place that runs a fixed graph. Nothing here is public API; Symbol,
Executor, CachedOp and gluon's hybridized blocks are built on it."""
