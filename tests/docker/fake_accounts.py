"""Stand-ins for getent, id, useradd, userdel, groupadd and groupdel that keep the passwd and group files
under $FAKE_ETC the way shadow's tools do on Debian and Ubuntu (USERGROUPS_ENAB yes), refusing a UID
or GID already in use with shadow's own words. Usage: python fake_accounts.py TOOL ARGS..."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ETC = Path(os.environ["FAKE_ETC"])


def read(name: str) -> list[list[str]]:
    return [line.split(":") for line in (ETC / name).read_text().splitlines() if line.strip()]


def write(name: str, rows: list[list[str]]) -> None:
    (ETC / name).write_text("".join(":".join(row) + "\n" for row in rows))


def fail(message: str, code: int) -> None:
    print(message, file=sys.stderr)
    sys.exit(code)


def option(args: list[str], *names: str) -> str | None:
    for i, arg in enumerate(args[:-1]):
        if arg in names:
            return args[i + 1]
    return None


def main(tool: str, args: list[str]) -> None:
    users, groups = read("passwd"), read("group")
    name = args[-1] if args else ""
    if tool == "getent":
        table = users if args[0] == "passwd" else groups
        rows = table if len(args) == 1 else [r for r in table if args[1] in (r[0], r[2])]
        print("".join(":".join(r) + "\n" for r in rows), end="")
        sys.exit(0 if rows else 2)
    if tool == "id":
        user = next((u for u in users if u[0] == name), None)
        if user is None:
            fail(f"id: '{name}': no such user", 1)
        else:
            print(user[2] if "-u" in args else user[3])
        return
    if tool == "groupadd":
        gid = option(args, "--gid", "-g")
        if any(g[0] == name for g in groups):
            fail(f"groupadd: group '{name}' already exists", 9)
        if gid and any(g[2] == gid for g in groups):
            fail(f"groupadd: GID '{gid}' already exists", 4)
        write("group", [*groups, [name, "x", gid or "2000", ""]])
        return
    if tool == "groupdel":
        group = next((g for g in groups if g[0] == name), None)
        if group is None:
            fail(f"groupdel: group '{name}' does not exist", 6)
        elif any(u[3] == group[2] for u in users):
            fail(f"groupdel: cannot remove the primary group of user '{name}'", 8)
        write("group", [g for g in groups if g[0] != name])
        return
    if tool == "useradd":
        uid, gid = option(args, "--uid", "-u"), option(args, "--gid", "-g")
        if any(u[0] == name for u in users):
            fail(f"useradd: user '{name}' already exists", 9)
        if uid and any(u[2] == uid for u in users):
            fail(f"useradd: UID {uid} is not unique", 4)
        uid = uid or "2000"
        if gid is None:  # USERGROUPS_ENAB: a group named after the user
            if any(g[0] == name for g in groups):
                fail(f"useradd: group {name} exists - if you want to add this user to that group, use -g.", 9)
            gid = uid if not any(g[2] == uid for g in groups) else "2001"
            write("group", [*groups, [name, "x", gid, ""]])
        elif not any(gid in (g[0], g[2]) for g in groups):
            fail(f"useradd: group '{gid}' does not exist", 6)
        write("passwd", [*users, [name, "x", uid, gid, "", f"/home/{name}", "/bin/sh"]])
        return
    if tool == "userdel":
        user = next((u for u in users if u[0] == name), None)
        if user is None:
            fail(f"userdel: user '{name}' does not exist", 6)
            return
        rest = [u for u in users if u[0] != name]
        write("passwd", rest)
        if not any(u[3] == user[3] for u in rest):  # USERGROUPS_ENAB: its own group goes too
            write("group", [g for g in groups if not (g[0] == name and g[2] == user[3])])
        return
    fail(f"fake_accounts: no tool {tool}", 2)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
