#!/usr/bin/env bash
# The `volumes` step of docker-compose.yml: run once as root before mae starts, it creates the folders
# mounted into mae's container and gives whatever in them is not yet mae's to mae (the UID and GID the
# image was built with), so that folders Docker created as root become writable.
#
#   prepare-volumes.sh DIR...
set -euo pipefail

say() { printf 'mae prepare-volumes: %s\n' "$*" >&2; }

owner=${MAE_VOLUME_OWNER:-$(id -u mae 2>/dev/null || true):$(id -g mae 2>/dev/null || true)}
if ! [[ "$owner" =~ ^[0-9]+:[0-9]+$ ]]; then
  say "no user mae in this image and no MAE_VOLUME_OWNER=UID:GID given"
  exit 2
fi
if [ "$#" -eq 0 ]; then
  say "usage: prepare-volumes.sh DIR... (the folders mounted into mae's container)"
  exit 2
fi
for dir in "$@"; do
  mkdir -p "$dir"
  # only what is not already mae's: a weights folder of many gigabytes is not rewritten at every start
  find "$dir" \( ! -uid "${owner%%:*}" -o ! -gid "${owner##*:}" \) -exec chown -h "$owner" {} +
  say "$dir belongs to $owner"
done
