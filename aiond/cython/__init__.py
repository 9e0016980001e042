"""``mx.cython``: in MXNet 1.9.1 the Cython sources of its optional fast
NDArray/Symbol C-API bindings (``ndarray.pyx``, ``symbol.pyx``). aiond has
no C API to bind, so the package holds no extension; it exists because
MXNet's package has it."""
