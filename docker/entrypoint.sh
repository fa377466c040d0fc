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
#   MAE_MODEL_API_KEY_ENV  name of the variable holding that server's key, if it needs one
set -euo pipefail

PYTHON=${PYTHON:-python3}
APP=${MAE_APP:-/app/app.py}

say() { printf 'mae-entrypoint: %s\n' "$*" >&2; }

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

connect_phones
wait_for_model

if [ "$#" -eq 0 ] || [ "$1" = "demo" ]; then
  [ "$#" -eq 0 ] || shift
  export GRADIO_SERVER_NAME=${GRADIO_SERVER_NAME:-0.0.0.0}
  export GRADIO_SERVER_PORT=${GRADIO_SERVER_PORT:-7860}
  exec "$PYTHON" "$APP" "$@"
fi
exec "$PYTHON" -m mae "$@"
