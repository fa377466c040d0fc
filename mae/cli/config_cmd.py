"""``python -m mae config {show,presets}``: the effective settings, and the backbone presets."""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

from mae.config import Settings, load_settings
from mae.errors import ConfigError
from mae.llm.client import redact_url
from mae.llm.providers import AGENT_ROLES, PRESETS

_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``config`` subcommand and its ``show`` and ``presets`` actions."""
    parser = subparsers.add_parser("config", help="show the effective settings and the backbone presets")

    def show_help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    parser.set_defaults(func=show_help)
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION")

    show = actions.add_parser(
        "show", help="settings after defaults < profile file < MAE_* variables, and each agent's model"
    )
    show.add_argument(
        "--profile", type=Path, default=None, metavar="FILE", help="TOML profile (default: $MAE_PROFILE)"
    )
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(func=cmd_show)

    presets = actions.add_parser("presets", help="the backbone presets (MAE_BACKBONE values)")
    presets.add_argument("--json", action="store_true", help="print JSON")
    presets.set_defaults(func=cmd_presets)


def role_profiles(settings: Settings) -> dict[str, dict[str, Any]]:
    """Per agent role: provider, base URL, model, the key's variable name and whether it is set (never
    the key), or the configuration error that role has."""
    roles: dict[str, dict[str, Any]] = {}
    for role in AGENT_ROLES:
        try:
            profile = settings.profile_for(role)
        except ConfigError as exc:
            roles[role] = {"error": str(exc)}
            continue
        key_env = profile.api_key_env
        if key_env and not _VAR_NAME.fullmatch(key_env):
            roles[role] = {
                "error": "api_key_env must NAME an environment variable (like OPENAI_API_KEY), not hold a key"
            }
            continue
        roles[role] = {
            "provider": profile.provider,
            "base_url": redact_url(profile.base_url),
            "model": profile.model,
            "api_key_env": key_env,
            "api_key_set": bool(os.environ.get(key_env)) if key_env else None,
            "coordinate_space": profile.coordinate_space,
        }
    return roles


def _key_text(info: dict[str, Any]) -> str:
    if info["api_key_env"] is None:
        return "no key needed"
    return f"key ${info['api_key_env']} {'set' if info['api_key_set'] else 'NOT SET'}"


def cmd_show(args: argparse.Namespace) -> int:
    """Print the effective settings and each role's model; exit 2 when a role is misconfigured."""
    settings = load_settings(profile=args.profile)
    roles = role_profiles(settings)
    broken = any("error" in info for info in roles.values())
    if args.json:
        print(json.dumps({"settings": _masked(settings.model_dump(mode="json")), "roles": roles}, indent=2))
        return 2 if broken else 0
    source = args.profile or os.environ.get("MAE_PROFILE")
    print(f"profile file: {source or 'none'}")
    print("settings:")
    for line in _flatten(_masked(settings.model_dump(mode="json", exclude={"roles"}))):
        print(f"  {line}")
    for role, override in settings.roles.items():
        fields = _masked(override.model_dump(exclude_none=True))
        if fields:
            print(f"  roles.{role}: {', '.join(f'{k}={v}' for k, v in fields.items())}")
    print("models per agent role:")
    width = max(len(role) for role in roles)
    for role, info in roles.items():
        if "error" in info:
            print(f"  {role:<{width}}  error: {info['error']}")
        else:
            where = f"{info['provider']}: {info['model']} at {info['base_url']}"
            print(f"  {role:<{width}}  {where} ({_key_text(info)})")
    missing = sorted({info["api_key_env"] for info in roles.values() if info.get("api_key_set") is False})
    if missing:
        print(
            f"note: set {', '.join(missing)} in the environment (or enter the key in the demo) before a run"
        )
    return 2 if broken else 0


def _masked(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with any ``api_key_env`` that is not a variable name (a pasted key?) hidden and
    credentials in base URLs removed."""
    masked: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            masked[key] = _masked(value)
        elif key == "api_key_env" and isinstance(value, str) and not _VAR_NAME.fullmatch(value):
            masked[key] = "<hidden: not a variable name>"
        elif key == "base_url" and isinstance(value, str):
            masked[key] = redact_url(value)  # credentials in user:key@host or ?api-key= never printed
        else:
            masked[key] = value
    return masked


def _flatten(data: dict[str, Any], prefix: str = "") -> list[str]:
    lines: list[str] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            lines.extend(_flatten(value, f"{name}."))
        else:
            lines.append(f"{name} = {json.dumps(value)}")
    return lines


def cmd_presets(args: argparse.Namespace) -> int:
    """Print the backbone presets: name, provider, base URL, models, key variable."""
    if args.json:
        print(json.dumps({name: p.model_dump(mode="json") for name, p in PRESETS.items()}, indent=2))
        return 0
    header = ("NAME", "LABEL", "MODEL", "CAPTIONS", "KEY VARIABLE", "BASE URL")
    table = [header]
    for name, preset in PRESETS.items():
        table.append(
            (
                name,
                preset.label,
                preset.model,
                preset.caption_model,
                preset.api_key_env or "-",
                preset.base_url,
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    print("\nor MAE_BACKBONE=custom with MAE_BASE_URL and MAE_MODEL for any OpenAI-compatible endpoint")
    return 0
