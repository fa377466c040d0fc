#!/usr/bin/env bash
# Entry point of mae's Docker images (Dockerfile: GPU workstation; Dockerfile.cpu: hosted APIs only).
#
#   (no arguments) or "demo"   start the Gradio demo on 0.0.0.0:$GRADIO_SERVER_PORT (default 7860)
#   anything else              python -m mae "$@"   (e.g. run "Open Notes", models check, eval ...)
#
# Environment (all optional; README "GPU workstation" lists them with the rest of mae's MAE_* settings):
#   MAE_APP                path of app.py (default /app/app.py)
#   ADB_CONNECT            comma-separated HOST:PORT phones to `adb connect` first (ADB over Wi-Fi)
#   ANDROID_ADB_SERVER_HOST/ANDROID_ADB_SERVER_PORT
#                          use the host's adb server (e.g. host.docker.internal, 5037) instead of one
#                          in the container; MAE_ADB_AUTOSTART=0 then stops mae from starting its own
#   MAE_WAIT_FOR_MODEL     seconds to wait for the model server at MAE_BASE_URL before starting (0: no)
#   MAE_MODEL_API_KEY_ENV  name of the variable holding that server's key, if it needs one (default:
#                          MAE_API_KEY_ENV; with MAE_BACKBONE=vllm and VLLM_API_KEY set, both name it)
#
# Before anything else it checks that it can write MAE_LOG_DIR, MAE_MEMORY_DIR and HF_HOME (the /data and
# /models volumes) and, if not, says which host folder to chown to which UID.
set -euo pipefail

PYTHON=${PYTHON:-python3}
APP=${MAE_APP:-/app/app.py}

say() { printf 'mae-entrypoint: %s\n' "$*" >&2; }

nearest_existing() {
  local path=$1
  while [ ! -e "$path" ] && [ "$path" != / ]; do path=$(dirname "$path"); done
  printf '%s' "$path"
}

check_writable() {
  local dir probe owner
  for dir in "$@"; do
    [ -n "$dir" ] || continue
    if mkdir -p "$dir" 2>/dev/null && probe=$(mktemp "$dir/.mae-write-check.XXXXXX" 2>/dev/null); then
      rm -f "$probe"
      continue
    fi
    owner=$(stat -c '%u:%g' "$(nearest_existing "$dir")" 2>/dev/null || echo unknown)
    say "cannot write $dir: mae runs as UID $(id -u), GID $(id -g), and the folder belongs to $owner."
    say "fix it on the host: sudo chown -R $(id -u):$(id -g) FOLDER, for the folder mounted at $(printf '%s' "$dir" | cut -d/ -f1-2)" \
      "(docker compose: ./mae-data for /data, ./weights/mae for /models), or rebuild the image with" \
      "--build-arg MAE_UID=... --build-arg MAE_GID=... of the folder's owner (MAE_UID/MAE_GID in .env for compose)."
    return 1
  done
}

use_vllm_key() {
  # compose hands vLLM's key to both services; mae then sends it to vLLM (and only there)
  if [ "${MAE_BACKBONE:-}" = vllm ] && [ -n "${VLLM_API_KEY:-}" ] && [ -z "${MAE_API_KEY_ENV:-}" ]; then
    export MAE_API_KEY_ENV=VLLM_API_KEY
  fi
  if [ -z "${MAE_MODEL_API_KEY_ENV:-}" ] && [ -n "${MAE_API_KEY_ENV:-}" ]; then
    export MAE_MODEL_API_KEY_ENV=$MAE_API_KEY_ENV
  fi
  return 0
}

connect_phones() {
  local target
  [ -n "${ADB_CONNECT:-}" ] || return 0
  if ! command -v adb >/dev/null 2>&1; then
    say "ADB_CONNECT is set but there is no adb in this image; install adb or use the host's adb server"
    return 1
  fi
  IFS=',' read -r -a targets <<<"$ADB_CONNECT"
  for target in "${targets[@]}"; do
    target=$(echo "$target" | tr -d '[:space:]')
    [ -n "$target" ] || continue
    if ! [[ "$target" =~ ^[A-Za-z0-9._-]+:[0-9]{1,5}$ ]]; then
      say "ADB_CONNECT entries look like 192.168.1.23:5555, not '$target'"
      return 1
    fi
    say "adb connect $target"
    if ! adb connect "$target" | grep -qiE 'connected to|already connected'; then
      say "could not reach the phone at $target: check that Wireless debugging is on and the address is right"
      return 1
    fi
  done
}

wait_for_model() {
  local seconds=${MAE_WAIT_FOR_MODEL:-0}
  [ "$seconds" != "0" ] || return 0
  if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
    say "MAE_WAIT_FOR_MODEL is a number of seconds, not '$seconds'"
    return 1
  fi
  if [ -z "${MAE_BASE_URL:-}" ]; then
    say "MAE_WAIT_FOR_MODEL needs MAE_BASE_URL (the model server, e.g. http://vllm:8000/v1)"
    return 1
  fi
  local args=(-m mae models check --base-url "$MAE_BASE_URL" --wait "$seconds")
  [ -z "${MAE_MODEL:-}" ] || args+=(--model "$MAE_MODEL")
  [ -z "${MAE_MODEL_API_KEY_ENV:-}" ] || args+=(--api-key-env "$MAE_MODEL_API_KEY_ENV")
  say "waiting up to ${seconds} s for the model server at $MAE_BASE_URL"
  "$PYTHON" "${args[@]}"
}

check_writable "${MAE_LOG_DIR:-}" "${MAE_MEMORY_DIR:-}" "${HF_HOME:-}"
use_vllm_key
connect_phones
wait_for_model

if [ "$#" -eq 0 ] || [ "$1" = "demo" ]; then
  [ "$#" -eq 0 ] || shift
  export GRADIO_SERVER_NAME=${GRADIO_SERVER_NAME:-0.0.0.0}
  export GRADIO_SERVER_PORT=${GRADIO_SERVER_PORT:-7860}
  exec "$PYTHON" "$APP" "$@"
fi
exec "$PYTHON" -m mae "$@"
