"""``python -m mae eval``: run a task suite and report the paper's metrics; ``eval compare A B``;
``eval report DIR`` (after judging). See docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mae.cli.run_cmd import add_run_arguments, load_run_settings, make_approver
from mae.config import Settings, load_settings
from mae.errors import ConfigError
from mae.llm.providers import AGENT_ROLES

if TYPE_CHECKING:  # the evaluation modules load the model client: imported when a command runs
    from mae.eval.runner import EvalOptions
    from mae.eval.tasks import EvalTask
    from mae.run.loop import Approver
    from mae.run.runtime import Runtime

RESULTS_FILE = "results.jsonl"


def build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
    """``mae.run.runtime.build_runtime``, imported only when an eval runs (keeps ``--help`` fast)."""
    from mae.run.runtime import build_runtime as build

    return build(settings, api_keys)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``eval`` subcommand with its ``compare`` and ``report`` actions."""
    parser = subparsers.add_parser(
        "eval", help="evaluate an agent on the virtual suite or Mobile-Eval-E tasks (SS, AA, RA, TE)"
    )
    parser.add_argument(
        "--suite",
        help="'virtual' (the hard suite; or virtual:basic, virtual:frontier (the self-evolution tier), "
        "virtual:all; graded by code), or a Mobile-Eval-E task file or folder (judged)",
    )
    parser.add_argument(
        "--setting",
        choices=("individual", "evolution"),
        help="individual: every task from the initial memory (default); evolution: one shared memory per "
        "scenario, the remaining tasks told to the reflectors",
    )
    parser.add_argument("--tasks", metavar="IDS", help="comma-separated task ids or scenarios (* wildcards)")
    parser.add_argument("--repeat", type=int, help="runs per task (confidence intervals when > 1)")
    parser.add_argument(
        "--seed", type=int, help="realism seed of repeat 0 (repeat k uses seed + k; default: each task's)"
    )
    parser.add_argument(
        "--realism",
        choices=("task", "on", "off"),
        help="virtual suite obstacles (pop-ups, sign-in nags, spinners...): each task's own (default), "
        "all on (seeded by --seed), or off",
    )
    parser.add_argument("--out", type=Path, help="eval folder (default <log dir>/eval-<time>)")
    parser.add_argument(
        "--resume", action="store_true", help="continue the eval in --out: finished tasks are kept"
    )
    parser.add_argument(
        "--role-model",
        action="append",
        default=[],
        metavar="ROLE=MODEL",
        help=f"model for one agent role ({', '.join(AGENT_ROLES)}); repeatable",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="run N tasks at once, each on its own phone (virtual phones, the attached phones, or the "
        "serials given as --device A,B); with --ray: the number of actors (default: one per phone)",
    )
    parser.add_argument(
        "--max-in-flight",
        type=int,
        metavar="K",
        help="at most K model requests at once across the workers (default: one per worker)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="spread the task runs over a Ray cluster (ADDRESS, e.g. ray://head:10001 or auto), one actor "
        "per phone; without ADDRESS a local Ray instance; needs the ray extra (pip install 'ray[default]')",
    )
    parser.add_argument(
        "--sensitive",
        choices=("ask", "allow", "deny"),
        help="who answers sensitive actions (payment, sending, deleting...): allow (the default on the "
        "virtual phone, which has nothing real to lose), ask at the terminal (the default on a real phone) "
        "or deny (the agent is told the user declined); every answer is kept in results.jsonl; --yes = allow",
    )
    add_run_arguments(parser)  # device, models, --agent e|v2|v1, --max-steps, --yes, --quiet
    parser.set_defaults(func=cmd_eval)
    actions = parser.add_subparsers(dest="eval_command", metavar="ACTION")
    cmp = actions.add_parser("compare", help="two eval folders side by side with deltas")
    cmp.add_argument("a", type=Path, help="eval folder A")
    cmp.add_argument("b", type=Path, help="eval folder B")
    cmp.add_argument("--out", type=Path, dest="compare_out", help="also write the comparison to this file")
    cmp.set_defaults(func=cmd_compare)
    rep = actions.add_parser("report", help="recompute the metrics, reports and plots of an eval folder")
    rep.add_argument("folder", type=Path)
    rep.set_defaults(func=cmd_report)
    judge = actions.add_parser(
        "judge", help="let a model judge the rubric of ungraded runs (labelled MODEL JUDGE everywhere)"
    )
    judge.add_argument("folder", type=Path)
    judge.add_argument("--backbone", dest="judge_backbone", help="the judge's backbone preset or custom")
    judge.add_argument("--base-url", dest="judge_base_url", help="the judge's OpenAI-compatible base URL")
    judge.add_argument("--model", dest="judge_model", help="the judge's model")
    judge.add_argument("--api-key-env", dest="judge_key_env", metavar="VAR", help="variable holding its key")
    judge.set_defaults(func=cmd_judge)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _role_overrides(pairs: list[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for pair in pairs:
        role, sep, model = pair.partition("=")
        if not sep or not model.strip() or role.strip() not in AGENT_ROLES:
            raise ConfigError(
                f"--role-model {pair!r}: write ROLE=MODEL with a role among {', '.join(AGENT_ROLES)}"
            )
        overrides[f"roles.{role.strip()}.model"] = model.strip()
    return overrides


def _options(args: argparse.Namespace, folder: Path) -> EvalOptions:
    from mae.eval.runner import EvalOptions, read_options

    given = {
        k: getattr(args, k)
        for k in (
            "suite",
            "agent",
            "setting",
            "tasks",
            "repeat",
            "seed",
            "realism",
            "max_steps",
            "skip_planning_while_loading",
            "fast",
        )
        if getattr(args, k) is not None
    }
    saved = read_options(folder)
    if args.resume:
        if saved is None:
            raise ConfigError(f"nothing to resume in {folder}: it holds no eval (drop --resume to start one)")
        differs = saved.same_run(saved.model_copy(update=given))
        if differs:
            flags = ", ".join("--" + name.replace("_", "-") for name in differs)
            raise ConfigError(
                f"{folder} was started with other {flags}: drop those options to resume it, "
                "or choose a new --out"
            )
        return saved
    if saved is not None or (folder / RESULTS_FILE).exists():
        raise ConfigError(
            f"{folder} already holds an eval: add --resume to continue it, or choose another --out"
        )
    if "suite" not in given:
        raise ConfigError(
            "say what to evaluate: --suite virtual, or --suite PATH to Mobile-Eval-E task files"
        )
    return EvalOptions.model_validate(given)


def cmd_eval(args: argparse.Namespace) -> int:
    """Run (or resume) an eval and write its results, reports and plots."""
    from mae.eval.runner import EvalRunner, write_options
    from mae.eval.tasks import load_eval_tasks, select_tasks
    from mae.eval.workers import MAX_WORKERS, ParallelEvalRunner, RequestGate, phone_specs
    from mae.run.runtime import backbone_of

    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise ConfigError(f"--workers must be between 1 and {MAX_WORKERS}")
    if args.max_in_flight is not None and args.max_in_flight < 1:
        raise ConfigError("--max-in-flight must be at least 1")
    base = load_settings(args.profile, overrides={"log_dir": args.log_dir})
    folder = args.out or Path(base.log_dir) / f"eval-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    if args.agent is None and not args.resume:  # MAE_AGENT or the profile's loop.agent
        args.agent = base.loop.agent
    if args.skip_planning_while_loading is None and not args.resume:  # recorded as it runs
        args.skip_planning_while_loading = base.loop.skip_planning_while_loading
    options = _options(args, folder)
    if options.setting == "evolution" and options.agent != "e":
        raise ConfigError(
            "only Mobile-Agent-E has a long-term memory: use --setting individual for v1 and v2"
        )
    tasks = select_tasks(load_eval_tasks(options.suite, options.realism, options.seed), options.tasks)
    virtual = options.suite.partition(":")[0] == "virtual"
    device = args.device or ("virtual" if virtual else None)
    settings = load_run_settings(
        args,
        {
            "device": device,
            "log_dir": folder / "runs",
            "loop.agent": options.agent,
            # a resumed eval keeps its limit and its loop option
            **(
                {
                    "loop.max_steps": options.max_steps,
                    "loop.skip_planning_while_loading": bool(options.skip_planning_while_loading),
                    "loop.fast": bool(options.fast),
                }
                if args.resume
                else {}
            ),
            **_role_overrides(args.role_model),
        },
    )
    if args.resume and options.backbone and backbone_of(settings) != options.backbone:
        raise ConfigError(
            f"{folder} was run with the backbone {options.backbone}, not {backbone_of(settings)}: resume it "
            "with the same --backbone, --model and --base-url, or choose a new --out"
        )
    if args.ray is not None:
        return _eval_on_ray(args, folder, options, tasks, settings)
    specs = phone_specs(settings.device, args.workers) if args.workers and args.workers > 1 else None
    if specs is None and args.max_in_flight is not None:
        raise ConfigError("--max-in-flight bounds the requests of several workers: add --workers N")
    runtimes: list[Runtime] = []
    stop = threading.Event()
    try:
        chosen_specs: list[str | None] = list(specs) if specs else [None]
        for spec in chosen_specs:
            chosen = settings if spec is None else settings.model_copy(update={"device": spec})
            runtimes.append(build_runtime(chosen))
        runtime = runtimes[0]
        virtual_phone = all(callable(getattr(opened.device, "state", None)) for opened in runtimes)
        approver = _approver(args, options, virtual_phone)
        options.backbone = runtime.backbone
        options.max_steps = settings.loop.max_steps
        options.skip_planning_while_loading = settings.loop.skip_planning_while_loading
        options.fast = settings.loop.fast
        write_options(folder, options)
        _say(f"eval folder: {folder} ({len(tasks)} task(s) × {options.repeat}, {options.setting} setting)")
        progress = (lambda _message: None) if args.quiet else _say
        if specs is None:
            runner = EvalRunner(
                folder,
                options,
                tasks,
                runtime,
                approver=approver,
                progress=progress,
                stop_event=stop,
            )
        else:
            runner = ParallelEvalRunner(
                folder,
                options,
                tasks,
                runtimes,
                gate=RequestGate(args.max_in_flight or len(runtimes)),
                approver=approver,
                progress=progress,
                stop_event=stop,
            )
        try:
            runner.run()
        except KeyboardInterrupt:
            stop.set()
    finally:
        for opened in runtimes:
            opened.close()
    left_over = runner.left_over if isinstance(runner, ParallelEvalRunner) else 0
    return _finish(folder, runner.halted, stop.is_set(), left_over)


def _approver(args: argparse.Namespace, options: EvalOptions, virtual_phone: bool) -> Approver:
    """The approver of ``--sensitive`` (``--yes`` = allow; by default allow on the virtual phone, ask on a
    real one), recorded in ``options``."""
    from mae.eval.approvals import choose_policy, policy_approver

    options.sensitive = choose_policy(args.sensitive, args.yes, virtual_phone)
    if not args.quiet:
        _say(
            f"sensitive actions: {SENSITIVE_TEXT[options.sensitive]} (each answer is kept in {RESULTS_FILE})"
        )
    return policy_approver(options.sensitive, make_approver(False))


SENSITIVE_TEXT = {
    "allow": "approved without asking",
    "ask": "asked at this terminal",
    "deny": "declined without asking (the agent is told and goes on)",
}


def _eval_on_ray(
    args: argparse.Namespace, folder: Path, options: EvalOptions, tasks: list[EvalTask], settings: Settings
) -> int:
    """``--ray``: the task runs on Ray actors, one per phone; the eval folder stays here."""
    from mae.eval.ray_pool import RayEvalRunner, connect_ray
    from mae.eval.runner import write_options
    from mae.run.runtime import backbone_of

    stop = threading.Event()
    connection = connect_ray(None if args.ray == "local" else args.ray)
    try:
        options.backbone = backbone_of(settings)
        options.max_steps = settings.loop.max_steps
        options.skip_planning_while_loading = settings.loop.skip_planning_while_loading
        options.fast = settings.loop.fast
        _approver(args, options, settings.device == "virtual")  # an actor cannot ask: ask declines there
        write_options(folder, options)
        _say(f"eval folder: {folder} ({len(tasks)} task(s) × {options.repeat}, {options.setting} setting)")
        runner = RayEvalRunner(
            folder,
            options,
            tasks,
            settings,
            actors=args.workers,
            max_in_flight=args.max_in_flight,
            assume_yes=options.sensitive == "allow",
            progress=(lambda _message: None) if args.quiet else _say,
            stop_event=stop,
        )
        try:
            runner.run()
        except KeyboardInterrupt:
            stop.set()
    finally:
        connection.close()
    return _finish(folder, runner.halted, stop.is_set(), runner.left_over)


def _finish(folder: Path, halted: str | None, stopped: bool, left_over: int = 0) -> int:
    """Write the reports of ``folder`` and say how to continue; the command's exit code."""
    from mae.errors import ExitReason
    from mae.eval.report import write_reports
    from mae.run.results import EXIT_CODES

    resume = f"python -m mae eval --out {folder} --resume"
    if halted:
        _say(f"the eval stopped because the model provider failed; fix it, then continue with  {resume}")
    if not (folder / RESULTS_FILE).exists():
        _say("no task finished, so there is nothing to report yet")
        return EXIT_CODES[ExitReason.MODEL_ERROR] if halted else 130 if stopped else 1
    paths = write_reports(folder)
    for name in ("report.md", "report.html"):
        print(f"wrote {paths[name]}")
    if halted:
        return EXIT_CODES[ExitReason.MODEL_ERROR]
    if stopped:
        _say(f"interrupted: continue with  {resume}")
        return 130
    if left_over:
        _say(f"{left_over} task run(s) did not run because every phone failed; fix them, then {resume}")
        return EXIT_CODES[ExitReason.DEVICE_ERROR]
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from mae.eval.report import compare

    text = compare(args.a, args.b)
    print(text, end="")
    if args.compare_out:
        Path(args.compare_out).write_text(text, encoding="utf-8")
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    """Model-judge the ungraded runs of a folder, then rewrite its reports; 1 when some failed."""
    from mae.eval.model_judge import judge_folder
    from mae.eval.records import read_results
    from mae.eval.report import write_reports
    from mae.llm.client import ChatClient

    read_results(args.folder)  # a clear error for a folder that is not an eval
    settings = load_settings(
        overrides={
            "backbone": args.judge_backbone,
            "base_url": args.judge_base_url,
            "model": args.judge_model,
            "api_key_env": args.judge_key_env,
        }
    )
    profile = settings.model_copy(update={"roles": {}}).profile_for("manager")  # the global backbone
    client = ChatClient(profile)
    client.check_key("judge")
    judged, problems = judge_folder(args.folder, client, progress=_say)
    for problem in problems:
        _say(f"not judged: {problem}")
    print(f"model judge ({profile.provider}:{profile.model}) marked {judged} task run(s)")
    write_reports(args.folder)
    return 1 if problems else 0


def cmd_report(args: argparse.Namespace) -> int:
    from mae.eval.report import write_reports

    for name, path in write_reports(args.folder).items():
        print(f"wrote {path}" if name.startswith("report") else f"plot: {path}")
    return 0
