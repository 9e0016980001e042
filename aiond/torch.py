"""``mx.torch`` / ``mx.th``: in MXNet 1.9.1, NDArray functions run by a
Lua Torch backend, registered only in builds with ``USE_TORCH=1`` (the
standard builds register none, and the module is empty). aiond has no
Torch backend, so, as in a standard MXNet build, the module holds no
functions."""
