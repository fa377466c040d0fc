"""The images' user: each Dockerfile's user-creating commands, run against the accounts its base image
already has (no Docker engine here, so the account tools are stand-ins that keep /etc/passwd and
/etc/group the way shadow's useradd, userdel, groupadd and groupdel do, refusing a UID or GID in use)."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Accounts the base images ship that a host-matching UID/GID could collide with, read from the images:
# `docker run --rm IMAGE getent passwd` / `getent group`. System accounts below 1000 are listed in part
# (root and two that a mistaken MAE_UID could name); the 1000-and-up ones in full.
BASE_IMAGE_USERS: dict[str, list[tuple[str, int, int]]] = {
    "ubuntu24.04": [
        ("root", 0, 0),
        ("daemon", 1, 1),
        ("www-data", 33, 33),
        ("nobody", 65534, 65534),
        ("ubuntu", 1000, 1000),
    ],
    "python:3.11-slim-bookworm": [
        ("root", 0, 0),
        ("daemon", 1, 1),
        ("www-data", 33, 33),
        ("nobody", 65534, 65534),
    ],
}
BASE_IMAGE_GROUPS: dict[str, list[tuple[str, int]]] = {
    "ubuntu24.04": [("root", 0), ("daemon", 1), ("www-data", 33), ("nogroup", 65534), ("ubuntu", 1000)],
    "python:3.11-slim-bookworm": [("root", 0), ("daemon", 1), ("www-data", 33), ("nogroup", 65534)],
}

FAKE_ACCOUNTS = Path(__file__).with_name("fake_accounts.py")


def _base_key(dockerfile: str) -> str:
    """The base image of ``dockerfile`` (its ``FROM``, with an ``ARG`` default resolved), as a key of
    the tables above."""
    text = (REPO / dockerfile).read_text()
    base = re.search(r"^FROM\s+(\S+)", text, re.M)
    assert base
    image = base.group(1)
    arg = re.fullmatch(r"\$\{(\w+)\}", image)
    if arg:
        default = re.search(rf"^ARG {arg.group(1)}=(\S+)", text, re.M)
        assert default
        image = default.group(1)
    for key in BASE_IMAGE_USERS:
        if image.endswith(key) or image == key:
            return key
    raise AssertionError(f"{dockerfile} starts from {image}: add its accounts to BASE_IMAGE_USERS")


def _user_commands(dockerfile: str) -> tuple[list[str], dict[str, str]]:
    """The shell commands of ``dockerfile``'s RUN lines that create or remove accounts, and its ARG
    defaults."""
    text = (REPO / dockerfile).read_text().replace("\\\n", " ")
    args = dict(re.findall(r"^ARG (\w+)=(\S+)", text, re.M))
    copies = dict((dest, src) for src, dest in re.findall(r"^COPY (\S+) (\S+)$", text, re.M))
    commands = []
    for run in re.findall(r"^RUN (.+)$", text, re.M):
        for part in (p.strip() for p in run.split("&&")):
            program = shlex.split(part)[0]
            copied = next((src for dest, src in copies.items() if program in (dest, Path(dest).name)), None)
            if copied:  # a script copied into the image: run the repository's file
                part = part.replace(program, shlex.quote(str(REPO / copied)), 1)
                commands.append(part)
            elif program in {"useradd", "userdel", "groupadd", "groupdel", "adduser"}:
                commands.append(part)
    return commands, args


def _image_accounts(tmp_path: Path, base: str) -> tuple[Path, dict[str, str]]:
    etc = tmp_path / "etc"
    etc.mkdir(parents=True)
    (etc / "passwd").write_text(
        "".join(f"{n}:x:{u}:{g}::/home/{n}:/bin/sh\n" for n, u, g in BASE_IMAGE_USERS[base])
    )
    (etc / "group").write_text("".join(f"{n}:x:{g}:\n" for n, g in BASE_IMAGE_GROUPS[base]))
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("getent", "id", "groupadd", "groupdel", "useradd", "userdel"):
        stub = tools / tool
        stub.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_ACCOUNTS}" {tool} "$@"\n')
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "FAKE_ETC": str(etc), "PATH": f"{tools}:{os.environ['PATH']}"}
    return etc, env


def _build_users(
    tmp_path: Path, dockerfile: str, **build_args: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    base = _base_key(dockerfile)
    commands, args = _user_commands(dockerfile)
    assert commands, f"{dockerfile} creates no user"
    args.update(build_args)
    etc, env = _image_accounts(tmp_path, base)
    env.update(args)
    script = "set -euo pipefail\n" + "\n".join(commands) + "\n"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    return done, etc


def _accounts(etc: Path) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
    users = {
        r[0]: (int(r[2]), int(r[3]))
        for r in (line.split(":") for line in (etc / "passwd").read_text().splitlines())
    }
    groups = {r[0]: int(r[2]) for r in (line.split(":") for line in (etc / "group").read_text().splitlines())}
    return users, groups


def _user_line(dockerfile: str, args: dict[str, str]) -> str:
    text = (REPO / dockerfile).read_text()
    user = re.search(r"^USER (\S+)$", text, re.M)
    assert user
    return re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], user.group(1))


OLD_GPU_DOCKERFILE = """ARG CUDA_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04
FROM ${CUDA_IMAGE}
COPY . /app
RUN pip install --no-deps . \\
    && useradd --create-home --uid 1000 mae \\
    && mkdir -p /data /models \\
    && chown -R mae:mae /data /models
USER 1000:1000
"""


def test_the_old_gpu_dockerfile_clashes_with_ubuntus_own_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What this test exists to catch: `useradd --uid 1000` on Ubuntu 24.04 stops the build."""
    old = tmp_path / "repo"
    old.mkdir()
    (old / "Dockerfile.old").write_text(OLD_GPU_DOCKERFILE)
    monkeypatch.setattr(sys.modules[__name__], "REPO", old)
    done, _ = _build_users(tmp_path, "Dockerfile.old")
    assert done.returncode != 0 and "UID 1000 is not unique" in done.stderr


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.cpu"])
def test_each_image_gets_mae_at_the_uid_it_is_built_for(tmp_path: Path, dockerfile: str) -> None:
    done, etc = _build_users(tmp_path / "default", dockerfile)
    assert done.returncode == 0, done.stderr
    users, groups = _accounts(etc)
    assert users["mae"] == (1000, 1000) and groups["mae"] == 1000
    assert "ubuntu" not in users and "root" in users and "www-data" in users
    assert _user_line(dockerfile, {"MAE_UID": "1000", "MAE_GID": "1000"}) == "1000:1000"

    done, etc = _build_users(tmp_path / "host", dockerfile, MAE_UID="1001", MAE_GID="1002")
    assert done.returncode == 0, done.stderr
    users, groups = _accounts(etc)
    assert users["mae"] == (1001, 1002) and groups["mae"] == 1002
    assert users.get("ubuntu", (1000, 1000)) == (1000, 1000)  # another UID leaves Ubuntu's user alone


@pytest.mark.parametrize(
    ("uid", "gid", "says"),
    [
        ("0", "0", "does not run as root"),
        ("33", "1000", "system account 'www-data'"),
        ("1000", "33", "system group 'www-data'"),
        ("me", "1000", "numbers"),
    ],
)
def test_a_uid_that_is_not_a_host_users_stops_the_build_with_what_to_change(
    tmp_path: Path, uid: str, gid: str, says: str
) -> None:
    done, etc = _build_users(tmp_path, "Dockerfile", MAE_UID=uid, MAE_GID=gid)
    assert done.returncode != 0 and says in done.stderr and "MAE_" in done.stderr
    users, _ = _accounts(etc)
    assert "mae" not in users and "www-data" in users and "root" in users
