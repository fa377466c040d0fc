"""``python -m mae run "TASK"``: carry out one task on a phone, printing each step as it happens.

Exit code 0 only when the agent finished by itself; other codes per exit reason
(``mae.run.results.EXIT_CODES``):
3 max_steps, 4 consecutive_errors, 5 repeated_action, 6 unusable_reply, 7 model_error, 8 device_error,
9 rejected, 10 error, 130 stopped; 2 for bad settings or usage.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, get_args

from mae.actions.registry import ActionCall
from mae.cli import memory_cmd
from mae.config import LoopSettings, Settings, load_settings
from mae.errors import ConfigError
from mae.run.events import Event

AGENT_NAMES: tuple[str, ...] = get_args(LoopSettings.model_fields["agent"].annotation)
"""``mae.agents.choose.AGENT_NAMES`` without importing the agents (start-up time)."""

if TYPE_CHECKING:  # the loop and the runtime load the model SDK and OpenCV: only when a task runs
    from mae.run.loop import Approver, RunRequest
    from mae.run.results import TaskResult
    from mae.run.runtime import Runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand."""
    parser = subparsers.add_parser("run", help="carry out a task on a phone (real or virtual)")
    parser.add_argument("task", nargs="?", help='what the phone should do, e.g. "Find the price of ..."')
    add_run_arguments(parser)
    memory_cmd.add_memory_arguments(parser)
    parser.set_defaults(func=cmd_run)


def add_model_arguments(
    parser: argparse.ArgumentParser, model_help: str = "model name at that endpoint"
) -> None:
    """The options that name a model, the same for every command that calls or checks one."""
    parser.add_argument(
        "--backbone", help="model preset (openai, anthropic, google, dashscope, vllm) or custom"
    )
    parser.add_argument("--base-url", help="OpenAI-compatible base URL (custom backbones, local servers)")
    parser.add_argument("--model", help=model_help)
    parser.add_argument("--api-key-env", metavar="VAR", help="environment variable that holds the API key")
    parser.add_argument("--profile", type=Path, help="TOML settings profile")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Device, backbone and loop options shared by every way of running tasks."""
    parser.add_argument("--device", help="'virtual' or an ADB serial (default: the only phone attached)")
    add_model_arguments(parser)
    parser.add_argument(
        "--timeout", type=float, metavar="S", help="total seconds per model call (default 120)"
    )
    parser.add_argument("--max-retries", type=int, metavar="N", help="retries per model call (default 3)")
    parser.add_argument("--temperature", type=float, help="sampling temperature (default 0)")
    parser.add_argument("--max-tokens", type=int, metavar="N", help="longest reply asked for (default 2048)")
    parser.add_argument("--max-steps", type=int, help="step limit (default 40)")
    parser.add_argument(
        "--agent",
        choices=AGENT_NAMES,
        help="e = Mobile-Agent-E (default); baselines: v2 = Mobile-Agent-v2, v1 = Mobile-Agent (v1)",
    )
    parser.add_argument("--log-dir", type=Path, help="where run directories go (default ./runs)")
    parser.add_argument(
        "--parallel-notetaker",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the Notetaker beside the Action Reflector: one model round trip less per step; the "
        "Notetaker then sees the progress of the step before (the paper's order is sequential; default off)",
    )
    parser.add_argument(
        "--skip-planning-while-loading",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Mobile-Agent-E: keep the plan and the notes on screens that are still loading (blank or a "
        "spinner) instead of asking the Manager and the Notetaker (MAE_SKIP_PLANNING_WHILE_LOADING; "
        "default on; --no-skip-planning-while-loading asks them on every step, as the paper does)",
    )
    parser.add_argument(
        "--fast",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Mobile-Agent-E's fast mode: the Manager only when it has something to decide, notes in the "
        "Action Reflector's reply, pop-ups dismissed without a Manager round, the next Operator started "
        "while the Reflector judges (MAE_FAST; docs/agents.md; default off, the paper's order)",
    )
    parser.add_argument("--yes", action="store_true", help="approve sensitive actions without asking")
    parser.add_argument("--quiet", action="store_true", help="print only the final result")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from the profile, the environment and these flags (flags win); ``ConfigError`` when the
    log or memory folder names an existing file."""
    settings = load_run_settings(args)
    for what, folder in (("log folder", settings.log_dir), ("memory folder", settings.memory_dir)):
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"the {what} {folder} is a file: name a folder (it is created if missing)")
    if settings.loop.agent == "e" and settings.evolution.evolve:
        check_writable(settings.memory_dir, "--memory-dir (MAE_MEMORY_DIR)")
    return settings


def check_writable(folder: Path, flag: str) -> None:
    """``ConfigError`` unless ``folder`` can be created and written (checked before a task runs, so a
    run never ends with its memory update lost)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        reason = (exc.strerror or "it cannot be written").lower()
        raise ConfigError(
            f"cannot write the memory folder {folder} ({reason}): choose a writable folder with {flag}"
        ) from None


def load_run_settings(args: argparse.Namespace, extra: dict[str, Any] | None = None) -> Settings:
    """Settings from the profile, the environment and the run flags (``add_run_arguments``), then
    ``extra`` overrides (dotted keys, None = not given)."""
    return load_settings(
        args.profile,
        overrides={
            "device": args.device,
            "backbone": args.backbone,
            "base_url": args.base_url,
            "model": args.model,
            "api_key_env": args.api_key_env,
            "log_dir": args.log_dir,
            "loop.max_steps": args.max_steps,
            "loop.parallel_notetaker": args.parallel_notetaker,
            "loop.skip_planning_while_loading": getattr(args, "skip_planning_while_loading", None),
            "loop.agent": getattr(args, "agent", None),
            "loop.fast": getattr(args, "fast", None),
            "timeout_s": args.timeout,
            "max_retries": args.max_retries,
            "temperature": args.temperature,
            "max_tokens": args.max_tokens,
            **memory_cmd.memory_overrides(args),
            **(extra or {}),
        },
    )


def make_approver(assume_yes: bool, stdin: TextIO | None = None, out: TextIO | None = None) -> Approver:
    """``--yes`` approves; otherwise ask on the terminal, and refuse when nobody can answer."""

    def approve(call: ActionCall, description: str, step: int) -> bool:
        reader, writer = stdin or sys.stdin, out or sys.stdout
        if assume_yes:
            print(f"  approved (--yes): {call}", file=writer)
            return True
        if not reader.isatty():
            print(
                f"  refused sensitive action {call} ({description}): there is no terminal to ask for "
                "approval; rerun with --yes to allow it",
                file=writer,
            )
            return False
        print(f"  step {step} wants to run a sensitive action: {call}\n  ({description})", file=writer)
        writer.write("  allow it? [y/N] ")
        writer.flush()
        return reader.readline().strip().lower() in ("y", "yes")

    return approve


class StepPrinter:
    """An event listener that prints one concise block per step."""

    def __init__(self, max_steps: int, out: TextIO | None = None, quiet: bool = False) -> None:
        self.max_steps = max_steps
        self.out = out
        self.quiet = quiet
        self.seconds: dict[str, float] = {}
        self.timed_step = 0

    def __call__(self, event: Event) -> None:
        data, line = event.data, None
        next_step = event.type == "stage_started" and event.step != self.timed_step
        if self.seconds and (event.type == "run_finished" or next_step):
            self._print("  time: " + "  ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items()), "timing")
            self.seconds = {}
        if event.type == "run_started":
            line = f"task: {data['task']}\ndevice: {data['device']}  backbone: {data['backbone']}"
            line += _shutdown_line(str(data["backbone"]))
            line += f"\nlog: {data['run_dir']}"
        elif event.type == "stage_finished":
            self.seconds[data["stage"]] = data["seconds"]
            self.timed_step = event.step
            result = data.get("result") or {}
            if data["stage"] == "manager" and result:
                line = f"step {event.step}/{self.max_steps}  subgoal: {_short(result.get('subgoal', ''))}"
            elif data["stage"] in ("v1_agent", "decision") and result:  # the baselines
                line = f"step {event.step}/{self.max_steps}  thought: {_short(result.get('thought', ''))}"
            elif data["stage"] == "planning" and result:
                line = f"  progress: {_short(result.get('progress', ''))}"
            elif data.get("problem"):
                line = f"  {data['stage']}: unusable reply: {_short(data['problem'])}"
        elif event.type == "action":
            from mae.llm.coordinates import shown_action  # loaded by the run already

            shown = shown_action(str(data["action"]), data.get("written"), str(data.get("frame") or ""))
            line = f"  action: {shown}  ({_short(data['description'], 80)})"
        elif event.type == "outcome":
            error = f"  {_short(data['error_description'] or '', 90)}" if data["outcome"] != "A" else ""
            line = f"  outcome: {data['outcome']}{error}"
        elif event.type == "warning":
            line = f"  warning: {data['message']}"
        elif event.type == "run_finished":
            from mae.wording import counted  # loaded by the run already; not at start-up

            totals = data["totals"]
            status = "finished" if data["finished"] else "stopped"
            line = (
                f"{status}: {_stop_text(data)}\n"
                f"{counted(data['steps'], 'step')} in {data['seconds']:.1f} s; "
                f"{counted(totals['model_calls'], 'model call')}, {totals['input_tokens']} input tokens"
                f"{_cached_text(totals)}, "
                f"{counted(totals['images'], 'image')}\nlog: {data['run_dir']}"
            )
        if line is not None:
            self._print(line, event.type)

    def _print(self, line: str, event_type: str) -> None:
        if not self.quiet or event_type == "run_finished":
            print(line, file=self.out or sys.stdout, flush=True)


def _stop_text(data: dict[str, Any]) -> str:
    """Why the run ended, readable, with the loop's message when it adds something."""
    from mae.run.results import exit_text  # loaded by the run already; not at start-up

    reason, message = data["exit_reason"], str(data.get("message") or "").strip()
    if data.get("finished"):
        return message or exit_text(reason)
    return f"{exit_text(reason)} ({reason})" + (f": {message}" if message else "")


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def run_one(request: RunRequest, runtime: Runtime, args: argparse.Namespace) -> TaskResult:
    """One task with the CLI's printer and approver."""
    from mae.run.loop import run_task

    settings = runtime.settings
    return run_task(
        request.instruction,
        device=runtime.device,
        client=runtime.client,
        perceptor=runtime.perceptor,
        settings=settings.loop,
        tips=request.tips,
        shortcuts=request.shortcuts,
        shortcut_guard=request.shortcut_guard,
        listener=StepPrinter(settings.loop.max_steps, quiet=args.quiet),
        approver=make_approver(args.yes),
        log_dir=settings.log_dir,
        backbone=runtime.backbone,
    )


def build_runtime(settings: Settings) -> Runtime:
    """``mae.run.runtime.build_runtime``, imported when a task runs (it loads the model SDK and OpenCV)."""
    from mae.run.runtime import build_runtime as build

    return build(settings)


def cmd_run(args: argparse.Namespace) -> int:
    """Run the task; the exit code says how it ended."""
    if getattr(args, "tasks", None):
        settings = settings_from_args(args)
        if settings.loop.agent != "e":
            if args.setting == "evolution":
                agent = settings.loop.agent
                raise ConfigError(
                    f"--agent {agent} has no long-term memory to evolve: add --setting individual"
                )
            settings = settings.model_copy(
                update={"evolution": settings.evolution.model_copy(update={"evolve": False})}
            )
        return memory_cmd.run_task_list_from_args(args, settings, build_runtime, run_one)
    if not args.task:
        raise ConfigError('give the task to carry out: python -m mae run "Open Notes and ..."')
    settings = settings_from_args(args)
    runtime = build_runtime(settings)
    try:
        if settings.loop.agent != "e":  # the baselines neither read nor change the long-term memory
            from mae.run.loop import RunRequest

            result = run_one(RunRequest(args.task), runtime, args)
        else:
            result = memory_cmd.run_single_with_memory(args, runtime, run_one)
    finally:
        runtime.close()
    return result.exit_code


def _cached_text(totals: dict[str, object]) -> str:
    """`` (N cached)`` when the provider served input tokens from its prompt cache."""
    cached = totals.get("cached_tokens") or 0
    return f" ({cached} cached)" if isinstance(cached, int) and cached > 0 else ""


def _shutdown_line(backbone: str) -> str:
    """A line on the backbone's shutdown date when its provider has published one."""
    from mae.llm.providers import KNOWN_SHUTDOWNS  # loaded by the run already
    from mae.llm.served import shutdown_note

    model = backbone.partition(":")[2]
    note = shutdown_note(model, KNOWN_SHUTDOWNS.get(model))
    return f"\nnote: {note}" if note else ""
