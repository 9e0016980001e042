"""The error ``mx.image.imread`` raises for a file it cannot open."""
from __future__ import annotations

from ..base import MXNetError


class ImageReadError(MXNetError, OSError):
    """A file imread cannot open: an MXNetError, as MXNet raises, and an
    OSError carrying the system's errno, reason and the file name."""

    def __init__(self, errno, strerror, filename):
        msg = "imread: %r couldn't open file: %s" % (str(filename), strerror)
        MXNetError.__init__(self, msg)
        self.errno, self.strerror, self.filename = errno, strerror, filename
        self._msg = msg

    def __str__(self):
        return self._msg


def open_image(filename):
    """The bytes of image file ``filename``."""
    try:
        with open(filename, "rb") as f:
            return f.read()
    except OSError as e:
        raise ImageReadError(e.errno, e.strerror or str(e), filename) from None
