"""One limit on request bodies, in the ASGI layer: the bytes are counted while they stream.

The declared Content-Length alone is not enough: an upload sent chunked has none, and Starlette would
spool all of it to a temp file before the application could refuse it. Counting in `receive` stops it at
the limit, whatever the client declares.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _TooLarge(Exception):
    """Raised into the application when the body passes the limit."""


class BodyLimit:
    """Refuse a request body larger than `max_bytes` with `too_large()` (an ASGI response), counting the
    bytes as they arrive; a declared Content-Length over the limit is refused before any is read. What
    the client still sends after the answer is not the application's: the server reads and drops it
    (uvicorn does, until the connection's header deadline closes it)."""

    def __init__(self, app: ASGIApp, max_bytes: int, too_large: Callable[[], ASGIApp]) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.too_large = too_large

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self.too_large()(scope, receive, send)
            return
        received, tripped, started = 0, False, False

        async def counted() -> Message:
            nonlocal received, tripped
            if tripped:
                raise _TooLarge
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    tripped = True
                    raise _TooLarge
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if tripped:  # the application's answer to a body cut short is replaced by the 413
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not tripped:
                raise
        if tripped and not started:
            await self.too_large()(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
