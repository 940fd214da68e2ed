"""A bounded pool for OCR requests: a fixed number read at once, a limited number wait, the rest are
turned away at once — so a burst can neither pile up unbounded work and memory behind the one copy of
the models nor make every client wait for a timeout."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


class Busy(Exception):
    """The pool is full; `retry_after` is a guess, in whole seconds, of when a place frees up."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"busy; retry after {retry_after} s")
        self.retry_after = retry_after


class RequestPool:
    """`workers` threads share the models; at most `queue` more requests wait for one of them.

    Used from the event loop only (the counters need no lock); the work itself runs in the threads.
    """

    def __init__(self, workers: int, queue: int) -> None:
        self.workers, self.capacity = workers, workers + queue
        self.admitted = 0
        self._seconds = 1.0  # moving average of admission → end of a request, for Retry-After
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="ocrkit-serve")

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """fn(*args) in a worker thread, or Busy when the pool is full. A place is released when the
        work ends, not when the client goes away, so abandoned requests still count against the limit."""
        if self.admitted >= self.capacity:
            # with the pool full, a place frees up about every (time in the pool / places)
            raise Busy(max(1, math.ceil(self._seconds / self.capacity)))
        loop = asyncio.get_running_loop()
        self.admitted += 1
        start = loop.time()
        future: Future[T] = self._executor.submit(fn, *args)
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._release, loop.time() - start))
        return await asyncio.wrap_future(future)

    def _release(self, seconds: float) -> None:
        self.admitted -= 1
        self._seconds = 0.8 * self._seconds + 0.2 * seconds

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
