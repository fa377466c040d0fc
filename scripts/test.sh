#!/usr/bin/env bash
# Install the test dependencies and run every check: ruff, mypy and the whole test suite.
# Usage: bash scripts/test.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

# Debian's chromium (/usr/bin/chromium, passed to Playwright as executable_path) drives the Gradio page
# in the browser tests; Playwright's own download is never used (it does not work offline). Installed
# once; needs root or sudo.
if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q && apt-get install -y -q --no-install-recommends chromium
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -q && sudo apt-get install -y -q --no-install-recommends chromium
  else
    echo "warning: cannot install chromium (not root, no sudo); the browser tests will be skipped" >&2
  fi
fi

echo "== installing test dependencies (requirements-dev.txt)"
"$PYTHON" -m pip install -q --disable-pip-version-check -r requirements-dev.txt

echo "== ruff"
"$PYTHON" -m ruff check .
"$PYTHON" -m ruff format --check .

echo "== hadolint (every Dockerfile; settings in .hadolint.yaml)"
HADOLINT=$(command -v hadolint || "$PYTHON" -c 'import os, sys; print(os.path.join(os.path.dirname(sys.executable), "hadolint"))')
find . -path ./.git -prune -o \( -name 'Dockerfile' -o -name 'Dockerfile.*' \) -type f -print0 | xargs -0 -r "$HADOLINT"

echo "== mypy"
"$PYTHON" -m mypy

echo "== pytest"
"$PYTHON" -m pytest -q -p no:cacheprovider "$@"
