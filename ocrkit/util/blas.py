"""Keep numpy's BLAS on one thread while torch or onnxruntime do the heavy work.

Why: OpenBLAS worker threads keep spinning after a call. The CTC head's small numpy matmul between two
encoder batches left them competing with torch's (or onnxruntime's) threads for the cores: reading one
SROIE page's 66 lines with CTC took 1.13 s instead of 0.11 s on 2 threads (torch; ONNX 0.35 s vs 0.10 s).
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits


def single_thread_blas() -> threadpool_limits:
    """Context manager: numpy's BLAS limited to one thread inside, restored on exit."""
    return threadpool_limits(limits=1, user_api="blas")
