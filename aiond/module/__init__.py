"""``mx.mod`` / ``mx.module``: the Module API (MXNet 1.9.1), a symbolic
network bound on one or more contexts, with ``fit``/``predict``/``score``
and checkpoints.

BucketingModule, SequentialModule and PythonModule are not provided.
"""
from .base_module import BaseModule  # noqa: F401
from .executor_group import DataParallelExecutorGroup  # noqa: F401
from .module import Module  # noqa: F401

__all__ = ["BaseModule", "Module", "DataParallelExecutorGroup"]
