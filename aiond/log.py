"""``mx.log``: loggers with MXNet's compact line format
(``W0505 00:29:47 3525 file.py:func:12] message``, coloured on a terminal
stream), as in MXNet 1.9.1's ``mxnet.log``."""
from __future__ import annotations

import logging
import warnings

__all__ = ["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET", "getLogger",
           "get_logger"]

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_LABELS = {CRITICAL: 'C', ERROR: 'E', WARNING: 'W', INFO: 'I', DEBUG: 'D'}


class _Formatter(logging.Formatter):
    """``<level letter><mmdd HH:MM:SS> <pid> <path>:<func>:<line>] <message>``,
    the level letter coloured (red from WARNING, green INFO, blue below)."""

    def __init__(self):
        super(_Formatter, self).__init__(datefmt='%m%d %H:%M:%S')

    @staticmethod
    def _get_color(level):
        if level >= logging.WARNING:
            return '\x1b[31m'
        if level >= logging.INFO:
            return '\x1b[32m'
        return '\x1b[34m'

    @staticmethod
    def _get_label(level):
        return _LABELS.get(level, 'U')

    def format(self, record):
        self._style._fmt = (self._get_color(record.levelno) + self._get_label(record.levelno) +
                            '%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d]'
                            '\x1b[0m %(message)s')
        return super(_Formatter, self).format(record)


def getLogger(name=None, filename=None, filemode=None, level=WARNING):
    """Deprecated spelling of :func:`get_logger`."""
    warnings.warn("getLogger is deprecated, Use get_logger instead.",
                  DeprecationWarning, stacklevel=2)
    return get_logger(name, filename, filemode, level)


def get_logger(name=None, filename=None, filemode=None, level=WARNING):
    """The logger ``name``, given (once) a handler with MXNet's format: a
    stream (stderr) or, with ``filename``, a file opened with ``filemode``
    (default ``'a'``), and the level ``level``. ``name=None`` returns the
    root logger unchanged."""
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, '_init_done', None):
        logger._init_done = True
        if filename:
            hdlr = logging.FileHandler(filename, filemode if filemode else 'a')
        else:
            hdlr = logging.StreamHandler()
            hdlr.setFormatter(_Formatter())   # colour codes only on a stream
        logger.addHandler(hdlr)
        logger.setLevel(level)
    return logger
