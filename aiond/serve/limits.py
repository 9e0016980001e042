"""What a client may hold of the server: connections, time, header bytes.

A client that opens a connection and sends its headers one byte a second
costs itself nothing and holds a file descriptor, a protocol object and a
parser of the server's (the slow-headers attack); a few hundred of them and
the server has no descriptors left. So ``python -m aiond.serve`` wraps
uvicorn's HTTP protocol with these limits, each enforced per connection
on the event loop with one timer:

* ``header_timeout`` (10 s): from a connection's opening, or from the first
  byte of a request on a kept-alive one, to the end of its headers; past it
  the server answers 408 (no answer if the client sent nothing) and closes.
* ``keepalive_timeout`` (5 s): how long an idle kept-alive connection stays
  open between requests (uvicorn's own timer).
* ``max_connections`` (1,000) and ``max_connections_per_client`` (100, per
  client IP address): a connection past either is answered 503 with
  ``Retry-After`` and closed at once.
* ``max_header_count`` (100) and ``max_header_bytes`` (16 KiB, request line
  included): past either, 431 and close.

The body's deadline (``--body-timeout``, 30 s) and size (``--max-body-bytes``,
413) are the app's (``http.py``), so they hold under any ASGI server; a 408
there closes the connection, which a client trickling the rest of its body
would otherwise keep. Every violation is counted on ``/metrics``
(``aiond_serve_connections_closed_total{reason=...}``), beside the open
connections.

This module imports nothing from aiond, nor uvicorn at import time.
"""
from __future__ import annotations

import dataclasses
import json

__all__ = ["ServerLimits", "ConnectionStats", "limited_protocol", "REASONS"]

REASONS = ("header_timeout", "idle_timeout", "headers_too_large", "too_many_headers",
           "max_connections", "max_connections_per_client")


@dataclasses.dataclass
class ServerLimits:
    header_timeout: float = 10.0
    keepalive_timeout: float = 5.0
    max_connections: int = 1000
    max_connections_per_client: int = 100
    max_header_count: int = 100
    max_header_bytes: int = 16384

    def check(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not v > 0:
                raise ValueError("%s must be > 0, got %r" % (f.name, v))
        return self


class ConnectionStats:
    """Open connections (in all and per client address) and the connections
    closed for each reason; touched only on the event loop's thread."""

    def __init__(self):
        self.open = 0
        self.per_client = {}
        self.closed = dict.fromkeys(REASONS, 0)

    def add(self, host):
        self.open += 1
        self.per_client[host] = self.per_client.get(host, 0) + 1

    def remove(self, host):
        self.open -= 1
        n = self.per_client[host] - 1
        if n:
            self.per_client[host] = n
        else:
            del self.per_client[host]


_REASON_PHRASE = {408: b"Request Timeout", 431: b"Request Header Fields Too Large",
                  503: b"Service Unavailable"}


def _response(status, message, retry_after=None):
    body = json.dumps({"error": message, "status": status}).encode()
    head = [b"HTTP/1.1 %d %s" % (status, _REASON_PHRASE[status]),
            b"content-type: application/json", b"content-length: %d" % len(body),
            b"connection: close"]
    if retry_after is not None:
        head.append(b"retry-after: %d" % retry_after)
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def _host(transport):
    peer = transport.get_extra_info("peername")
    if isinstance(peer, (tuple, list)) and peer:
        return peer[0]
    return str(peer)


def limited_protocol(base, limits, stats):
    """``base`` (uvicorn's httptools or h11 protocol class, or a subclass)
    with ``limits`` enforced and counted in ``stats``. Header counts are
    checked on the httptools protocol (its parser calls back per header);
    on h11, uvicorn's ``h11_max_incomplete_event_size`` bounds the header
    bytes instead (set it to ``limits.max_header_bytes``)."""
    limits.check()
    httptools_like = hasattr(base, "on_headers_complete")

    class Limited(base):
        _lim_host = None
        _lim_timer = None
        _lim_bytes = 0
        _lim_count = 0
        _lim_rejected = False
        _lim_in_headers = False

        # -------------------------------------------------- connection
        def connection_made(self, transport):
            host = _host(transport)
            if stats.open >= limits.max_connections:
                return self._lim_refuse(transport, "max_connections",
                                        "the server has %d connections open, its limit"
                                        % limits.max_connections)
            if stats.per_client.get(host, 0) >= limits.max_connections_per_client:
                return self._lim_refuse(transport, "max_connections_per_client",
                                        "%s has %d connections open, the limit per client"
                                        % (host, limits.max_connections_per_client))
            stats.add(host)
            self._lim_host = host
            super().connection_made(transport)
            self._lim_start()       # a connection that never sends is cut too

        def _lim_refuse(self, transport, reason, message):
            stats.closed[reason] += 1
            self._lim_rejected = True
            self.transport = transport
            transport.write(_response(503, message + "; try again later", retry_after=1))
            transport.close()

        def connection_lost(self, exc):
            self._lim_stop()
            if self._lim_host is None:      # refused: uvicorn never knew of it
                return
            stats.remove(self._lim_host)
            self._lim_host = None
            super().connection_lost(exc)

        def data_received(self, data):
            if self._lim_rejected:
                return
            if not httptools_like and not self._lim_in_headers \
                    and self.conn.their_state is self._h11_idle:
                self._lim_start()           # the first byte of a kept-alive request
            super().data_received(data)
            if self._lim_rejected or not self._lim_in_headers:
                return
            if not httptools_like and self.conn.their_state is not self._h11_idle:
                self._lim_headers_done()    # h11 parsed the whole request head
                return
            # the headers are not complete yet: every byte so far was theirs
            self._lim_bytes += len(data)
            if self._lim_bytes > limits.max_header_bytes:
                self._lim_reject(431, "headers_too_large",
                                 "the request line and headers are more than %d bytes"
                                 % limits.max_header_bytes)

        # ----------------------------------------------------- timers
        def _lim_start(self):
            self._lim_in_headers = True
            self._lim_bytes = self._lim_count = 0
            self._lim_stop()
            self._lim_timer = self.loop.call_later(limits.header_timeout, self._lim_expired)

        def _lim_stop(self):
            if self._lim_timer is not None:
                self._lim_timer.cancel()
                self._lim_timer = None

        def _lim_headers_done(self):
            self._lim_in_headers = False
            self._lim_stop()

        def _lim_expired(self):
            self._lim_timer = None
            if self._lim_rejected or self.transport is None or self.transport.is_closing():
                return
            if not self._lim_bytes and not self._lim_count and not self._lim_began:
                stats.closed["idle_timeout"] += 1
                self._lim_rejected = True
                self.transport.close()
                return
            self._lim_reject(408, "header_timeout", "the request headers did not arrive "
                             "within %g s" % limits.header_timeout)

        def _lim_reject(self, status, reason, message):
            stats.closed[reason] += 1
            self._lim_rejected = True
            self._lim_stop()
            if not self.transport.is_closing():
                self.transport.write(_response(status, message))
                self.transport.close()

        _lim_began = False

    if httptools_like:
        class LimitedHttpTools(Limited):
            def on_message_begin(self):
                self._lim_began = True
                if not self._lim_in_headers:
                    self._lim_start()
                super().on_message_begin()

            def on_header(self, name, value):
                if self._lim_rejected:
                    return
                self._lim_count += 1
                if self._lim_count > limits.max_header_count:
                    self._lim_reject(431, "too_many_headers", "the request has more than %d "
                                     "headers" % limits.max_header_count)
                    return
                super().on_header(name, value)

            def on_headers_complete(self):
                if self._lim_rejected:
                    return
                self._lim_headers_done()
                super().on_headers_complete()

            def on_body(self, body):
                if not self._lim_rejected:
                    super().on_body(body)

            def on_message_complete(self):
                self._lim_began = False
                if not self._lim_rejected:
                    super().on_message_complete()
        cls = LimitedHttpTools
    else:
        import h11

        class LimitedH11(Limited):
            _h11_idle = h11.IDLE

            def data_received(self, data):
                if data:
                    self._lim_began = True
                super().data_received(data)
        cls = LimitedH11
    cls.__name__ = cls.__qualname__ = "Limited" + base.__name__
    return cls
