#!/usr/bin/env bash
# HEALTHCHECK of mae's images: the demo's page answers on $GRADIO_SERVER_PORT (default 7860).
set -euo pipefail
exec "${PYTHON:-python3}" - <<'PY'
import os
import sys
import urllib.request

port = os.environ.get("GRADIO_SERVER_PORT", "7860")
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
        sys.exit(0 if response.status == 200 else 1)
except OSError as exc:
    print(f"mae demo not answering on port {port}: {exc}", file=sys.stderr)
    sys.exit(1)
PY
