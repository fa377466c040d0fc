#!/usr/bin/env bash
# Create the unprivileged user `mae` the images run as, with the UID and GID of the host's data folders.
#
#   docker/add-user.sh UID GID
#
# Base images may already hold that UID or GID: Ubuntu 24.04 (the CUDA images) ships the user and group
# `ubuntu` as 1000:1000, the UID most host users have. A regular account (UID/GID 1000 or more) holding
# it is removed first; a system account (below 1000) or root is never taken over: the build stops and
# says which build argument to change.
set -euo pipefail

say() { printf 'mae add-user: %s\n' "$*" >&2; }

uid=${1:-}
gid=${2:-}
for value in "$uid" "$gid"; do
  if ! [[ "$value" =~ ^[0-9]+$ ]]; then
    say "usage: add-user.sh UID GID (numbers, e.g. --build-arg MAE_UID=\$(id -u) --build-arg MAE_GID=\$(id -g)), not '$value'"
    exit 2
  fi
done
if [ "$uid" = 0 ] || [ "$gid" = 0 ]; then
  say "mae does not run as root: give MAE_UID and MAE_GID of the host user who owns the data folders (id -u, id -g)"
  exit 2
fi

holder=$(getent passwd "$uid" | cut -d: -f1 || true)
if [ -n "$holder" ] && [ "$holder" != mae ]; then
  if [ "$uid" -lt 1000 ]; then
    say "UID $uid belongs to the system account '$holder' of the base image: pick another MAE_UID and chown the data folders to it"
    exit 1
  fi
  say "removing the base image's user '$holder' (UID $uid) so that mae can have that UID"
  userdel --remove "$holder"
fi
group=$(getent group "$gid" | cut -d: -f1 || true)
if [ -n "$group" ] && [ "$group" != mae ]; then
  if [ "$gid" -lt 1000 ]; then
    say "GID $gid belongs to the system group '$group' of the base image: pick another MAE_GID"
    exit 1
  fi
  members=$(getent passwd | awk -F: -v gid="$gid" '$4 == gid { print $1 }')
  if [ -n "$members" ]; then
    say "the group '$group' (GID $gid) is the primary group of $members: pick another MAE_GID"
    exit 1
  fi
  say "removing the base image's group '$group' (GID $gid) so that mae can have that GID"
  groupdel "$group"
fi
getent group mae >/dev/null || groupadd --gid "$gid" mae
getent passwd mae >/dev/null || useradd --create-home --no-log-init --uid "$uid" --gid "$gid" --shell /bin/bash mae
[ "$(id -u mae)" = "$uid" ] && [ "$(id -g mae)" = "$gid" ] || {
  say "the user mae exists with another UID or GID than $uid:$gid"
  exit 1
}
