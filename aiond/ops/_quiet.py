"""Kernels run with numpy's floating-point warnings off, as MXNet's are silent.

MXNet's C++ kernels give inf/nan for 1/0, sqrt(-1), log(0), overflow, ...
and say nothing; numpy's ufuncs warn (``RuntimeWarning: divide by zero``),
and under ``-W error`` that warning would fail the op. Every registered
kernel therefore runs under ``errstate(all="ignore")``. ``np.errstate`` as
a context manager costs microseconds a call, so this sets numpy's error
state directly: one context variable set and reset (numpy >= 2), or the
thread's error object swapped (numpy 1.x), a few hundred ns. On the
engine's workers (they run nothing but kernels) it is set once for good,
so a kernel there pays one check. A caller's thread that runs a ready op
itself has its own numpy state back once the kernel returns.
"""
from __future__ import annotations

import functools
import threading

import numpy as np

__all__ = ["quiet_kernel"]


def _state_functions():
    try:
        from numpy._core import _ufunc_config as cfg
        cv = cfg._extobj_contextvar
    except (ImportError, AttributeError):
        cv = None
    if cv is not None:
        with np.errstate(all="ignore"):
            quiet = cv.get()
        return cv, cv.set, cv.reset, quiet
    geterrobj, seterrobj = np.geterrobj, np.seterrobj      # numpy 1.x

    def enter(quiet):
        old = geterrobj()
        seterrobj(quiet)
        return old
    with np.errstate(all="ignore"):
        quiet = geterrobj()
    return None, enter, seterrobj, quiet


_CV, _enter, _leave, _QUIET = _state_functions()


def _engine_threads():
    from ..engine import get as _engine
    return _engine().threads       # the CPU workers' idents: they run nothing but kernels


def quiet_kernel(kernel):
    """``kernel`` run with numpy's floating-point errors ignored."""
    enter, leave, quiet = _enter, _leave, _QUIET
    get = _CV.get if _CV is not None else (lambda: None)
    ident = threading.get_ident
    workers = None

    @functools.wraps(kernel)
    def run(*args, **kwargs):
        nonlocal workers
        if get() is quiet:
            return kernel(*args, **kwargs)
        if workers is None:
            workers = _engine_threads()
        if _CV is not None and ident() in workers:
            _CV.set(quiet)              # a worker: quiet for good
            return kernel(*args, **kwargs)
        token = enter(quiet)            # a caller's thread: its state back afterwards
        try:
            return kernel(*args, **kwargs)
        finally:
            leave(token)
    run.raw_kernel = kernel
    return run
