"""uvicorn settings of `ocrkit serve`: bounds on connections, slow clients and shutdown.

- HeaderTimeoutH11: uvicorn's h11 protocol with a deadline for a request's headers; uvicorn itself only
  times out idle keep-alive connections, so a client that never finishes its headers would hold its
  socket for ever.
- server_settings: that protocol plus uvicorn's connection limit, keep-alive and graceful-shutdown bounds.
- RepeatFilter: a log line repeated in a burst (asyncio's "socket.accept() out of system resource" when
  file descriptors run out, uvicorn's "Exceeded concurrency limit.") is written once per interval with a
  count, not hundreds of thousands of times.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 10.0  # a request's headers must be complete this long after the connection is free
BODY_GRACE_S = 10.0  # a request body may start slowly for this long after its headers ...
MIN_BODY_BYTES_PER_S = 20_000  # ... then must average this rate (a 20 MB upload: 1000 s at the least)
KEEP_ALIVE_S = 5  # an idle keep-alive connection is closed after this
GRACEFUL_SHUTDOWN_S = 30  # on SIGTERM, requests still running after this are cut off
MAX_HEADER_BYTES = 16 * 1024  # h11: the largest request head accepted
LOG_REPEAT_INTERVAL_S = 10.0
# accept errors when file descriptors run out; "Exceeded concurrency limit." per refused request
FLOODED_LOGGERS = ("asyncio", "uvicorn.error")


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers are not complete within
    HEADER_TIMEOUT_S of the connection being opened or its previous response being sent (a slowloris
    client sends a header byte now and then and would otherwise hold its socket for ever)."""

    header_timeout_s = HEADER_TIMEOUT_S
    body_grace_s = BODY_GRACE_S
    min_body_rate = MIN_BODY_BYTES_PER_S

    def connection_made(self, transport) -> None:  # noqa: ANN001 - asyncio.Transport
        super().connection_made(transport)
        self._body_clock = None
        self._start_header_clock()

    def data_received(self, data: bytes) -> None:
        self._body_bytes = getattr(self, "_body_bytes", 0) + len(data)
        super().data_received(data)
        if self.cycle is not self._waiting_after and self._header_clock is not None:  # headers complete
            self._stop_header_clock()
            self._body_bytes, self._body_since = 0, self.loop.time()
            self._body_clock = self.loop.call_later(1.0, self._check_body_rate, self.cycle)

    def _check_body_rate(self, cycle: object) -> None:
        """Close the connection of a request whose body, once its grace period is over, arrives slower
        than `min_body_rate` on average: a slow upload otherwise holds one of the connections for ever."""
        self._body_clock = None
        if self.cycle is not cycle or not cycle.more_body or self.transport.is_closing():
            return
        late = self.loop.time() - self._body_since - self.body_grace_s
        if late > 0 and not self.flow.read_paused and self._body_bytes < self.min_body_rate * late:
            self.transport.close()
            return
        self._body_clock = self.loop.call_later(1.0, self._check_body_rate, cycle)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._start_header_clock()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_clock()
        if self._body_clock is not None:
            self._body_clock.cancel()
        super().connection_lost(exc)

    def _start_header_clock(self) -> None:
        self._stop_header_clock()
        self._waiting_after = self.cycle
        self._header_clock = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _stop_header_clock(self) -> None:
        clock = getattr(self, "_header_clock", None)
        if clock is not None:
            clock.cancel()
        self._header_clock = None

    def _headers_too_slow(self) -> None:
        self._header_clock = None
        if self.cycle is self._waiting_after and not self.transport.is_closing():
            self.transport.close()


class RepeatFilter(logging.Filter):
    """Let a message through once per `interval` seconds; the next one that passes says how many were
    held back meanwhile."""

    def __init__(self, interval: float = LOG_REPEAT_INTERVAL_S) -> None:
        super().__init__()
        self.interval = interval
        self._last: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = str(record.msg).split("\n", 1)[0]
        now = time.monotonic()
        last, held = self._last.get(key, (float("-inf"), 0))
        if now - last < self.interval:
            self._last[key] = (last, held + 1)
            return False
        if len(self._last) > 1000:  # forget messages that have not come back within the interval
            self._last = {k: v for k, v in self._last.items() if now - v[0] < self.interval}
        self._last[key] = (now, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like this since the last one logged)"
        return True


def server_settings(max_connections: int) -> dict[str, Any]:
    """uvicorn.run keyword arguments: at most `max_connections` open connections (more get 503), the
    header and keep-alive timeouts, a bounded graceful shutdown; floods of one log line rate-limited."""
    for name in FLOODED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RepeatFilter) for f in logger.filters):
            logger.addFilter(RepeatFilter())
    return {
        "http": HeaderTimeoutH11,
        "limit_concurrency": max_connections,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_S,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
    }
