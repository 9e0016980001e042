"""``mx.tvmop``: MXNet 1.9.1 loads its TVM-compiled operators
(``libtvmop.so`` and their schedule config) here when built with
``USE_TVM_OP``; otherwise the module is empty. aiond has no TVM operators
(``mx.runtime.Features().is_enabled('TVM_OP')`` is False), so, as in such
an MXNet build, there is nothing to load."""
