"""``python -m mae models {list,serve,check,doctor,download}``: local models on a GPU workstation."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from platformdirs import user_log_dir
from pydantic import ValidationError

from mae.cli import run_cmd
from mae.config import load_settings
from mae.errors import ConfigError
from mae.llm.coordinates import CONVENTIONS, family_convention
from mae.llm.keys import redact_url
from mae.llm.providers import KNOWN_SHUTDOWNS, PRESETS, ModelProfile
from mae.llm.served import shutdown_note
from mae.llm.weights import download, models_dir, presence
from mae.serving.catalog import CATALOG, CatalogError, find
from mae.serving.doctor_fit import DEFAULT_THRESHOLD, DEFAULT_TRIALS
from mae.serving.health import ServedModel, ServeError, ServerNotReadyError, served_models, wait_for_model
from mae.serving.vllm import (
    ServeCommand,
    ServeOptions,
    build_command,
    launch,
    mae_env_lines,
    preflight,
    vllm_version,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``models`` subcommand and its actions."""
    parser = subparsers.add_parser(
        "models", help="local models: catalog, vLLM serving, health check, coordinate doctor, download"
    )

    def show_help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    parser.set_defaults(func=show_help)
    actions = parser.add_subparsers(dest="models_command", metavar="ACTION")

    listing = actions.add_parser("list", help="the models mae knows for local use, and which are downloaded")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(func=cmd_list)

    serve = actions.add_parser("serve", help="serve a catalog VLM with vLLM and wait until it is ready")
    serve.add_argument(
        "model",
        help="catalog name or alias: qwen2.5-vl-7b, qwen3-vl-8b, gui-owl-7b, ui-tars-1.5-7b, "
        "generic-vlm, ... (see `models list`)",
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine)"
    )
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=None,
        metavar="FRACTION",
        help="share of each GPU's memory vLLM may take (default: the catalog's, 0.9 or 0.95)",
    )
    serve.add_argument("--max-model-len", type=int, default=None, metavar="TOKENS")
    serve.add_argument("--tensor-parallel-size", type=int, default=None, metavar="GPUS")
    serve.add_argument("--images-per-prompt", type=int, default=None, metavar="N")
    serve.add_argument(
        "--dtype",
        choices=("auto", "bfloat16", "float16"),
        default="bfloat16",
        help="float16 for GPUs without bf16 (V100, T4)",
    )
    serve.add_argument("--served-model-name", default=None, help="name clients use (default: the hub id)")
    serve.add_argument(
        "--api-key-env",
        default=None,
        metavar="NAME",
        help="environment variable holding a key the server will require (never printed)",
    )
    serve.add_argument("--weights", default=None, metavar="DIR_OR_ID", help="local model directory to load")
    serve.add_argument(
        "--vllm-args",
        default="",
        metavar="ARGS",
        help='extra vllm serve arguments, with =: --vllm-args="--enforce-eager --max-num-seqs 8"',
    )
    serve.add_argument("--log-file", type=Path, default=None, help="server log (default: mae's log dir)")
    serve.add_argument(
        "--timeout",
        type=float,
        default=1200.0,
        metavar="SECONDS",
        help="how long to wait for the server to be ready (first start downloads weights)",
    )
    serve.add_argument("--dry-run", action="store_true", help="print the command and exit")
    serve.add_argument("--detach", action="store_true", help="leave the server running in the background")
    serve.set_defaults(func=cmd_serve)

    check = actions.add_parser("check", help="ask a running server which models it serves")
    run_cmd.add_model_arguments(check, model_help="fail unless the server lists this model")
    check.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="keep trying this long")
    check.set_defaults(func=cmd_check)

    doctor = actions.add_parser(
        "doctor",
        help="measure which coordinate convention the served model answers in, and whether taps land",
    )
    run_cmd.add_model_arguments(doctor)
    doctor.add_argument(
        "--coordinates",
        choices=list(CONVENTIONS),
        help="check this convention instead of the configured one (as MAE_COORDINATES would set it)",
    )
    doctor.add_argument(
        "--trials",
        type=int,
        default=DEFAULT_TRIALS,
        metavar="N",
        help=f"requests to send, half with a short grounding request, half through the Operator prompt "
        f"(default {DEFAULT_TRIALS})",
    )
    doctor.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        metavar="SHARE",
        help=f"fail (exit 1) when fewer taps than this share land on target under the configured convention "
        f"(default {DEFAULT_THRESHOLD})",
    )
    doctor.add_argument(
        "--out", type=Path, default=None, help="report folder (default: LOG_DIR/doctor-YYYYmmdd-HHMMSS)"
    )
    doctor.set_defaults(func=cmd_doctor)

    fetch = actions.add_parser("download", help="download a model's weights into MAE_MODELS_DIR")
    fetch.add_argument("model", help="catalog name or alias, or any Hugging Face id (owner/name)")
    fetch.add_argument(
        "--local-dir", type=Path, default=None, help="target folder (default: MAE_MODELS_DIR/ID)"
    )
    fetch.set_defaults(func=cmd_download)


def cmd_list(args: argparse.Namespace) -> int:
    """Print the catalog with each model's memory needs and whether its weights are on this machine."""
    rows = []
    for entry in CATALOG:
        if entry.hub_id:
            present = presence(entry.hub_id).describe()
        else:
            present = "give --weights" if entry.needs_weights else "bundled"
        rows.append((entry, present))
    if args.json:
        data = [{**entry.model_dump(mode="json"), "present": present} for entry, present in rows]
        print(json.dumps(data, indent=2))
        return 0
    header = ("NAME", "KIND", "ROLES", "HUB ID", "WEIGHTS", "GPU", "COORDINATES", "PRESENT")
    table = [header]
    for entry, present in rows:
        table.append(
            (
                entry.name,
                entry.kind,
                ",".join(entry.roles),
                entry.hub_id or "-",
                f"{entry.weights_gb:g} GiB" if entry.weights_gb else "-",
                "depends"
                if entry.needs_weights
                else _gpu_text(
                    entry.recommended_gpu_gb, entry.vllm.tensor_parallel_size if entry.vllm else 1
                ),
                entry.coordinates or "-",
                present,
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    print(f"\nweights folder: {models_dir()} (MAE_MODELS_DIR); otherwise the Hugging Face cache")
    print("serve one: python -m mae models serve qwen2.5-vl-7b   (details: docs/local-models.md)")
    return 0


def _serve_options(args: argparse.Namespace, extra: list[str]) -> ServeOptions:
    return ServeOptions(
        host=args.host,
        port=args.port,
        dtype=args.dtype,
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_model_len=args.max_model_len,
        tensor_parallel_size=args.tensor_parallel_size,
        images_per_prompt=args.images_per_prompt,
        served_model_name=args.served_model_name,
        api_key_env=args.api_key_env,
        weights=args.weights,
        extra_args=extra,
    )


def _gpu_text(gib: float, gpus: int) -> str:
    if not gib:
        return "CPU"
    return f"{gpus}x{gib:g} GiB" if gpus > 1 else f"{gib:g} GiB"


def cmd_serve(args: argparse.Namespace) -> int:
    """Print (``--dry-run``) or run ``vllm serve`` for a catalog model, then wait until it is healthy."""
    entry = find(args.model)
    try:
        extra = shlex.split(args.vllm_args)
    except ValueError as exc:
        raise ConfigError(f"--vllm-args is not a valid shell-quoted string: {exc}") from None
    try:
        options = _serve_options(args, extra)
    except ValidationError as exc:
        problems = "; ".join(
            f"--{'-'.join(str(p) for p in e['loc']).replace('_', '-')}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"invalid serve options: {problems}") from None
    command = build_command(entry, options, version=vllm_version())
    need = entry.estimate_gpu_gb(command.max_model_len, command.tensor_parallel_size)
    if args.dry_run:
        print(command.display())
        print(f"\n# {entry.label}: about {need:.0f} GiB per GPU on {command.tensor_parallel_size} GPU(s)")
        print(f"# then point mae at {command.base_url}:")
        for line in mae_env_lines(command):
            print(line)
        return 0

    api_key = os.environ.get(command.api_key_env) if command.api_key_env else None
    if _port_in_use(command.base_url):
        wait_for_model(command.base_url, command.served_model_name, timeout_s=0, api_key=api_key)
        print(f"{command.served_model_name} is already served at {command.base_url}; nothing to start")
        _print_use(command)
        return 0
    for warning in preflight(entry, command):
        print(f"warning: {warning}", file=sys.stderr)
    log_path = args.log_file or Path(user_log_dir("mae")) / f"vllm-{entry.name}-{args.port}.log"
    server = launch(command, log_path)
    print(f"started vLLM (pid {server.pid}) for {entry.label}; log: {log_path}", flush=True)
    print(f"$ {command.display()}", flush=True)
    try:
        report = server.wait_ready(
            args.timeout, progress=lambda text: print(text, flush=True), api_key=api_key
        )
    except BaseException:
        server.stop()
        raise
    print(
        f"ready after {report.elapsed_s:.0f} s: {', '.join(report.models)} at {command.base_url}", flush=True
    )
    _print_use(command)
    if args.detach:
        print(f"vLLM keeps running in the background (pid {server.pid}); stop it with: kill {server.pid}")
        return 0
    print("serving; press Ctrl-C to stop", flush=True)
    try:
        code = server.process.wait()
    except KeyboardInterrupt:
        print("stopping vLLM ...", flush=True)
        server.stop()
        return 0
    print(f"vLLM exited with code {code}; last lines of {log_path}:\n{server.log_tail()}", file=sys.stderr)
    return 1 if code == 0 else code


def _print_use(command: ServeCommand) -> None:
    print("point mae at it:")
    for line in mae_env_lines(command):
        print(f"  {line}")


def _port_in_use(base_url: str) -> bool:
    parsed = urlparse(base_url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 80), timeout=1.0):
            return True
    except OSError:
        return False


def _default_target(args: argparse.Namespace) -> tuple[str, str | None, str | None, ModelProfile]:
    """Base URL, expected model and key variable for ``check``: from the flags, else the backbone named
    with ``--backbone`` or mae's settings when they point at a local server, else the vllm preset; plus
    the Operator's profile as configured."""
    overrides = {
        "backbone": args.backbone,
        "base_url": args.base_url,
        "model": args.model,
        "api_key_env": args.api_key_env,
    }
    profile = load_settings(args.profile, overrides=overrides).profile_for("operator")
    if args.base_url:
        return args.base_url, args.model, args.api_key_env, profile
    if args.backbone or profile.provider in ("vllm", "custom"):
        key_env = args.api_key_env or profile.api_key_env
        return profile.base_url, args.model or profile.model, key_env, profile
    return PRESETS["vllm"].base_url, args.model, args.api_key_env, profile


def convention_warnings(profile: ModelProfile, served: list[ServedModel], model: str | None) -> list[str]:
    """A warning for each served model (only ``model`` when given) whose family writes coordinates in
    another convention than the one mae is configured for."""
    warnings = []
    for item in served:
        if model is not None and item.id != model:
            continue
        family = family_convention(item.id) or (family_convention(item.root) if item.root else None)
        if family is None:
            continue
        expected = CONVENTIONS[family]
        if (profile.coordinate_space, profile.model_resize) == (expected.space, expected.model_resize):
            continue
        configured = next(
            (
                c.name
                for c in CONVENTIONS.values()
                if (c.space, c.model_resize) == (profile.coordinate_space, profile.model_resize)
            ),
            profile.coordinate_space,
        )
        warnings.append(
            f"{item.id} is a {family} model: it answers in {expected.label}, but mae is configured for "
            f"'{configured}' coordinates, so its taps would land in the wrong place. "
            f"Set MAE_COORDINATES={family} (or MAE_MODEL={item.root or item.id})"
        )
    return warnings


def cmd_check(args: argparse.Namespace) -> int:
    """Run the health check against a server and print the models it serves."""
    base_url, model, key_env, profile = _default_target(args)
    api_key = None
    if key_env:
        api_key = os.environ.get(key_env)
        if not api_key:
            raise ConfigError(f"the server's key variable {key_env} is not set")
    started = time.monotonic()
    try:
        report = wait_for_model(
            base_url,
            model,
            timeout_s=args.wait,
            api_key=api_key,
            progress=lambda text: print(text, flush=True),
        )
    except ServerNotReadyError as exc:
        if "no server answers" not in str(exc):
            raise
        raise ServerNotReadyError(
            f"{exc}. Start one with `python -m mae models serve qwen2.5-vl-7b` (or pass --base-url)"
        ) from None
    try:
        listing = served_models(base_url, api_key)
    except ServeError as exc:
        listing = None
        problem = exc
    dates = {item.id: item.shutdown_date for item in listing or []}
    print(f"ok: {base_url} answered in {time.monotonic() - started:.2f} s and serves:")
    for name in report.models:
        marker = "  <- mae uses this" if name == model else ""
        when = dates.get(name) or KNOWN_SHUTDOWNS.get(name)
        print(f"  {name}{f'  (shuts down {when})' if when else ''}{marker}")
    if model and (note := shutdown_note(model, dates.get(model) or KNOWN_SHUTDOWNS.get(model))):
        print(f"warning: {note}", file=sys.stderr)
    if listing is None:
        print(f"warning: could not read what the models are ({problem})", file=sys.stderr)
        return 0
    for warning in convention_warnings(profile, listing, model):
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """Run the coordinate doctor against the Operator's model; exit 1 when taps miss too often."""
    from mae.llm.client import ChatClient  # the model SDK loads only for commands that call a model
    from mae.serving.doctor import ROLE as DOCTOR_ROLE
    from mae.serving.doctor import run_doctor
    from mae.serving.doctor_report import summary_text, write_report

    settings = load_settings(
        args.profile,
        overrides={
            "backbone": args.backbone,
            "base_url": args.base_url,
            "model": args.model,
            "api_key_env": args.api_key_env,
            "coordinates": args.coordinates,
        },
    )
    client = ChatClient(settings.profile_for)
    client.check_key(DOCTOR_ROLE)
    profile = client.profile(DOCTOR_ROLE)
    print(
        f"checking {profile.model} at {redact_url(profile.base_url)} with {args.trials} requests ...",
        flush=True,
    )

    def progress(done: int, total: int, text: str) -> None:
        print(f"[{done}/{total}] {text}", flush=True)

    report = run_doctor(
        client,
        trials=args.trials,
        threshold=args.threshold,
        progress=progress,
        configured_name=settings.coordinates or family_convention(profile.model),
    )
    folder = args.out or settings.log_dir / time.strftime("doctor-%Y%m%d-%H%M%S")
    markdown, picture = write_report(report, folder)
    print(f"\n{summary_text(report)}\nreport: {markdown}\npicture: {picture}")
    return report.exit_code


def cmd_download(args: argparse.Namespace) -> int:
    """Download a catalog model (or any hub id) into ``MAE_MODELS_DIR``."""
    try:
        entry = find(args.model)
    except CatalogError:
        if "/" not in args.model:
            raise
        model_id = args.model
    else:
        if entry.hub_id is None:
            print(f"{entry.label} needs no download: {entry.notes}")
            return 0
        model_id = entry.hub_id
    print(f"downloading {model_id} ...", flush=True)
    path = download(model_id, local_dir=args.local_dir)
    print(f"done: {path}")
    return 0
