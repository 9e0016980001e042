"""uvicorn's httptools protocol with each connection's writes coalesced.

uvicorn writes a response's status line and headers when the app sends
``http.response.start`` and its body on ``http.response.body``: two socket
writes, two system calls, for every batch-1 inference response. Here the
writes a connection makes within one event-loop iteration are joined and
written once, at the end of the iteration (``loop.call_soon``), so a small
response costs one system call. Nothing else of uvicorn changes.

    uvicorn.Config(app, http=coalescing_protocol() or "auto")

This module imports nothing from aiond (benchmarks load it by path into
other interpreters).
"""
from __future__ import annotations

__all__ = ["coalescing_protocol", "CoalescingTransport"]


class CoalescingTransport:
    """A transport whose ``write`` calls within one loop iteration become one."""
    __slots__ = ("_t", "_loop", "_buf")

    def __init__(self, transport, loop):
        self._t = transport
        self._loop = loop
        self._buf = None

    def write(self, data):
        buf = self._buf
        if buf is None:
            self._buf = [data]
            self._loop.call_soon(self._flush)
        else:
            buf.append(data)

    def writelines(self, lines):
        for d in lines:
            self.write(d)

    def _flush(self):
        buf = self._buf
        if buf is None:
            return
        self._buf = None
        if self._t.is_closing():
            return
        self._t.write(buf[0] if len(buf) == 1 else b"".join(buf))

    def close(self):
        self._flush()
        self._t.close()

    def write_eof(self):
        self._flush()
        self._t.write_eof()

    def get_write_buffer_size(self):
        n = sum(len(b) for b in self._buf) if self._buf else 0
        return n + self._t.get_write_buffer_size()

    def __getattr__(self, name):
        return getattr(self._t, name)


def coalescing_protocol():
    """The protocol class, or None without httptools (uvicorn then picks h11)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return None

    class CoalescingHttpToolsProtocol(HttpToolsProtocol):
        def connection_made(self, transport):
            super().connection_made(CoalescingTransport(transport, self.loop))

    return CoalescingHttpToolsProtocol
