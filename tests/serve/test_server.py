"""uvicorn settings of `ocrkit serve`: header timeout, connection limit, bounded shutdown, log flood."""

from __future__ import annotations

import logging
import socket
import threading
import time

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request
from fixtures import free_port

from ocrkit.serve import server as server_module
from ocrkit.serve.server import HeaderTimeoutH11, RepeatFilter, server_settings


def tiny_app() -> FastAPI:
    app = FastAPI()

    @app.get("/healthz")
    async def healthz() -> dict:
        return {"status": "ok"}

    @app.post("/upload")
    async def upload(request: Request) -> dict:
        return {"bytes": len(await request.body())}

    return app


class Running:
    """A uvicorn.Server with ocrkit's settings in a thread; `exited` is set when run() returns."""

    def __init__(self, max_connections: int = 64) -> None:
        self.port = free_port()
        settings = server_settings(max_connections)
        config = uvicorn.Config(tiny_app(), host="127.0.0.1", port=self.port, log_level="warning", **settings)
        self.server = uvicorn.Server(config)
        self.exited = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.server.run()
        self.exited.set()

    def __enter__(self) -> Running:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(60)

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)


@pytest.fixture
def short_timeouts(monkeypatch):
    monkeypatch.setattr(HeaderTimeoutH11, "header_timeout_s", 0.6)
    monkeypatch.setattr(server_module, "GRACEFUL_SHUTDOWN_S", 1)


def test_a_client_that_never_finishes_its_headers_is_disconnected(short_timeouts):
    with Running() as running, running.connect() as slow:
        slow.sendall(b"GET /healthz HTTP/1.1\r\n")
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < 5:
            slow.sendall(b"X")  # one header byte now and then, as slowloris does
            slow.settimeout(0.2)
            try:
                closed = slow.recv(100) == b""
            except TimeoutError:
                continue
            except ConnectionResetError:
                closed = True
            if closed:
                break
        assert closed and time.monotonic() - started < 3
        assert httpx.get(f"http://127.0.0.1:{running.port}/healthz").status_code == 200


def test_a_kept_alive_connection_serves_several_requests_within_the_header_deadline(short_timeouts):
    with Running() as running, httpx.Client() as client:
        for _ in range(3):  # each request's headers come at once: never cut off
            assert client.get(f"http://127.0.0.1:{running.port}/healthz").status_code == 200
            time.sleep(0.4)


def test_connections_beyond_the_limit_get_503(short_timeouts):
    with Running(max_connections=2) as running:
        idle = [running.connect() for _ in range(2)]
        time.sleep(0.1)
        assert httpx.get(f"http://127.0.0.1:{running.port}/healthz").status_code == 503
        for s in idle:
            s.close()
        time.sleep(0.1)
        assert httpx.get(f"http://127.0.0.1:{running.port}/healthz").status_code == 200


def test_shutdown_does_not_wait_for_a_client_trickling_its_body(short_timeouts):
    with Running() as running, running.connect() as slow:
        slow.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        time.sleep(0.2)
        running.server.should_exit = True  # what SIGTERM does
        started = time.monotonic()
        while not running.exited.is_set() and time.monotonic() - started < 10:
            try:
                slow.sendall(b"x")  # 1 byte per 0.1 s: would take hours
            except OSError:
                break
            time.sleep(0.1)
        assert running.exited.wait(10) and time.monotonic() - started < 6


def test_a_repeated_log_line_is_written_once_per_interval_with_a_count(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(server_module.time, "monotonic", lambda: clock[0])
    repeat = RepeatFilter(interval=10)

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, msg, None, None)

    flood = "socket.accept() out of system resource\nsocket: <socket fd=6>"
    passed = [repeat.filter(record(flood)) for _ in range(1000)]
    assert passed.count(True) == 1 and repeat.filter(record("another message"))
    clock[0] += 10
    later = record(flood)
    assert repeat.filter(later) and "(999 more like this since the last one logged)" in later.getMessage()


def test_a_body_trickled_below_the_minimum_rate_is_disconnected(monkeypatch):
    monkeypatch.setattr(HeaderTimeoutH11, "body_grace_s", 0.5)
    monkeypatch.setattr(HeaderTimeoutH11, "min_body_rate", 1000)
    with Running() as running, running.connect() as slow:
        slow.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        started, closed = time.monotonic(), False
        while time.monotonic() - started < 8:
            try:
                slow.sendall(b"x")  # 5 bytes/s: the upload would take hours
                if slow.recv(1, socket.MSG_DONTWAIT) == b"":
                    closed = True
                    break
            except BlockingIOError:
                pass
            except OSError:
                closed = True
                break
            time.sleep(0.2)
        assert closed and time.monotonic() - started < 5
        big = httpx.post(f"http://127.0.0.1:{running.port}/upload", content=b"y" * 2_000_000, timeout=10)
        assert big.json() == {"bytes": 2_000_000}  # a client sending at a normal pace is not affected
