"""BodyLimit: the request body is counted as it streams and refused at the limit, declared or not."""

from __future__ import annotations

import asyncio

from starlette.responses import PlainTextResponse

from ocrkit.serve.body_limit import BodyLimit


def run_request(limit: int, chunks: list[bytes], declared: int | None = None) -> tuple[list[dict], int, int]:
    """One request through BodyLimit around an app that reads the whole body then answers 200; returns
    the messages sent, the bytes the app saw, and the chunks never read."""
    seen = 0
    pending = list(chunks)

    async def app(scope, receive, send):
        nonlocal seen
        while True:
            message = await receive()
            seen += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await PlainTextResponse("read")(scope, receive, send)

    async def receive():
        body = pending.pop(0) if pending else b""
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    headers = [] if declared is None else [(b"content-length", str(declared).encode())]
    scope = {"type": "http", "method": "POST", "path": "/v1/ocr", "headers": headers}
    guarded = BodyLimit(app, limit, lambda: PlainTextResponse("too large", status_code=413))
    asyncio.run(guarded(scope, receive, send))
    return sent, seen, len(pending)


def test_a_body_within_the_limit_reaches_the_app():
    sent, seen, _ = run_request(10_000, [b"x" * 4000, b"x" * 4000])
    assert sent[0]["status"] == 200 and seen == 8000


def test_a_streamed_body_is_refused_as_soon_as_it_passes_the_limit():
    sent, seen, unread = run_request(10_000, [b"x" * 1000] * 100)  # 100 kB, no Content-Length
    assert [m["status"] for m in sent if m["type"] == "http.response.start"] == [413]
    assert seen <= 10_000  # the app never held more than the limit
    assert unread == 100 - 11  # the 11th chunk passed the limit: nothing after it was read


def test_a_declared_length_over_the_limit_is_refused_before_the_app_runs():
    sent, seen, _ = run_request(10_000, [b"x" * 2000] * 2, declared=20_000)
    assert sent[0]["status"] == 413 and seen == 0
