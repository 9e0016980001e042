"""``mx.contrib.svrg_optimization``: stochastic variance reduced gradient
(SVRG) training of symbolic models: ``svrg_module.SVRGModule`` and the
optimizers it installs (``svrg_optimizer``), as in MXNet 1.9.1."""
from . import svrg_module  # noqa: F401
from . import svrg_optimizer  # noqa: F401
