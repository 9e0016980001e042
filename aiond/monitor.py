"""``mx.monitor`` / ``mx.mon``: watch the intermediate values of bound
executors every ``interval`` batches (MXNet 1.9.1's ``mx.mon.Monitor``).

    mon = mx.mon.Monitor(10, pattern='.*weight|.*output')
    mod.fit(train_iter, num_epoch=1, monitor=mon)   # logs the stats every 10 batches

Installed on an executor, the monitor receives every op output (and with
``monitor_all`` every op input) through ``Executor.set_monitor_callback``;
``toc`` adds the arguments and auxiliary states, applies ``stat_func``
(default: ``norm(x) / sqrt(x.size)``) and returns ``(step, name, text)``.
"""
from __future__ import annotations

import logging
import re
from math import sqrt

from . import ndarray
from .ndarray import NDArray

__all__ = ["Monitor"]


def _name_str(name):
    return name.decode('utf-8') if isinstance(name, bytes) else str(name)


class Monitor(object):
    """Collects ``stat_func`` of the arrays whose names match ``pattern``.

    Parameters
    ----------
    interval : int
        Collect on every ``interval``-th batch (``tic`` call).
    stat_func : callable, optional
        ``NDArray -> NDArray`` (or a list of NDArrays); default the RMS,
        ``norm(x) / sqrt(x.size)``.
    pattern : str
        A regular expression the array names must match (``re.match``).
    sort : bool
        Sort the results by name.
    monitor_all : bool
        Also see every op's inputs, not only its outputs.
    """

    def __init__(self, interval, stat_func=None, pattern='.*', sort=False, monitor_all=False):
        if stat_func is None:
            def asum_stat(x):
                """The RMS of ``x``: its 2-norm over the square root of its size."""
                return ndarray.norm(x) / sqrt(x.size)
            stat_func = asum_stat
        self.stat_func = stat_func
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            """The executor's callback: queue the stat of a matching array."""
            name = _name_str(name)
            if not self.activated or not self.re_prog.match(name):
                return
            self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Watch the executor ``exe``."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _wait_inputs(self):
        for exe in self.exes:
            for array in exe.arg_arrays:
                array.wait_to_read()
            for array in exe.aux_arrays:
                array.wait_to_read()

    def tic(self):
        """Start a batch; every ``interval``-th one is collected."""
        if self.step % self.interval == 0:
            self._wait_inputs()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """End the batch: ``[(step, name, stat as text)]`` of what was
        collected, plus the matching arguments and auxiliary states (empty
        when this batch was not collected)."""
        if not self.activated:
            return []
        self._wait_inputs()
        for exe in self.exes:
            sym = exe._symbol
            for name, array in zip(sym.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(sym.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for n, k, v_list in self.queue:
            if isinstance(v_list, NDArray):
                v_list = [v_list]
            if not isinstance(v_list, list):
                raise TypeError("Monitor: stat_func must return an NDArray or a list of "
                                "NDArrays, got %s for %s" % (type(v_list).__name__, k))
            s = ''
            for v in v_list:
                if not isinstance(v, NDArray):
                    raise TypeError("Monitor: stat_func must return NDArrays, got %s for %s"
                                    % (type(v).__name__, k))
                if v.shape == (1,) or v.shape == ():
                    s += str(v.asscalar()) + '\t'
                else:
                    s += str(v.asnumpy()) + '\t'
            res.append((n, k, s))
        self.queue = []
        return res

    def toc_print(self):
        """``toc`` and log each result (``Batch: <step> <name> <stat>``)."""
        for n, k, v in self.toc():
            logging.info('Batch: {:7d} {:30s} {:s}'.format(n, k, v))
