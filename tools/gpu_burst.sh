#!/usr/bin/env bash
# One command for a lent GPU machine that has torch but not all of ocrkit's dependencies: install the
# wheels carried in .whl/ (if any) into a private folder, then train (tools/gpu_burst.py; same arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/ocrkit-site .whl/*.whl
  export PYTHONPATH="/tmp/ocrkit-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
exec python3 tools/gpu_burst.py "$@"
