"""``mx.mod`` / ``mx.module``: the Module API (MXNet 1.9.1), a symbolic
network bound on one or more contexts, with ``fit``/``predict``/``score``
and checkpoints; ``BucketingModule`` (one network per bucket key, shared
parameters), ``SequentialModule`` (modules chained) and ``PythonModule``/
``PythonLossModule`` (computation written in Python).
"""
from .base_module import BaseModule  # noqa: F401
from .executor_group import DataParallelExecutorGroup  # noqa: F401
from .module import Module  # noqa: F401
from .bucketing_module import BucketingModule  # noqa: F401
from .sequential_module import SequentialModule  # noqa: F401
from .python_module import PythonModule, PythonLossModule  # noqa: F401
from . import bucketing_module, python_module, sequential_module  # noqa: F401

__all__ = ["BaseModule", "Module", "DataParallelExecutorGroup", "BucketingModule",
           "SequentialModule", "PythonModule", "PythonLossModule"]
