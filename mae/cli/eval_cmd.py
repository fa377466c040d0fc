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
    from mae.runtime import Runtime

RESULTS_FILE = "results.jsonl"


def build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
    """``mae.runtime.build_runtime``, imported only when an eval runs (keeps ``--help`` fast)."""
    from mae.runtime import build_runtime as build

    return build(settings, api_keys)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``eval`` subcommand with its ``compare`` and ``report`` actions."""
    parser = subparsers.add_parser(
        "eval", help="evaluate an agent on the virtual suite or Mobile-Eval-E tasks (SS, AA, RA, TE)"
    )
    parser.add_argument(
        "--suite",
        help="'virtual' (the hard suite; or virtual:basic, virtual:all; graded by code), or a Mobile-Eval-E "
        "task file or folder (judged)",
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
        for k in ("suite", "agent", "setting", "tasks", "repeat", "seed", "realism", "max_steps")
        if getattr(args, k) is not None
    }
    saved = read_options(folder)
    if args.resume:
        if saved is None:
            raise ConfigError(f"nothing to resume in {folder}: it holds no eval (drop --resume to start one)")
        differs = saved.same_run(saved.model_copy(update=given))
        if differs:
            raise ConfigError(
                f"{folder} was started with other {', '.join(differs)}: drop those options to resume it, "
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
    from mae.eval.report import write_reports
    from mae.eval.runner import EvalRunner, write_options
    from mae.eval.tasks import load_eval_tasks, select_tasks
    from mae.results import EXIT_CODES, ExitReason
    from mae.runtime import backbone_of

    base = load_settings(args.profile, overrides={"log_dir": args.log_dir})
    folder = args.out or Path(base.log_dir) / f"eval-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    if args.agent is None and not args.resume:  # MAE_AGENT or the profile's loop.agent
        args.agent = base.loop.agent
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
            **(
                {"loop.max_steps": options.max_steps} if args.resume else {}
            ),  # a resumed eval keeps its limit
            **_role_overrides(args.role_model),
        },
    )
    if args.resume and options.backbone and backbone_of(settings) != options.backbone:
        raise ConfigError(
            f"{folder} was run with the backbone {options.backbone}, not {backbone_of(settings)}: resume it "
            "with the same --backbone, --model and --base-url, or choose a new --out"
        )
    runtime = build_runtime(settings)
    stop = threading.Event()
    try:
        options.backbone = runtime.backbone
        options.max_steps = settings.loop.max_steps
        write_options(folder, options)
        _say(f"eval folder: {folder} ({len(tasks)} task(s) × {options.repeat}, {options.setting} setting)")
        runner = EvalRunner(
            folder,
            options,
            tasks,
            runtime,
            approver=make_approver(args.yes),
            progress=(lambda _message: None) if args.quiet else _say,
            stop_event=stop,
        )
        try:
            runner.run()
        except KeyboardInterrupt:
            stop.set()
    finally:
        runtime.close()
    resume = f"python -m mae eval --out {folder} --resume"
    if runner.halted:
        _say(f"the eval stopped because the model provider failed; fix it, then continue with  {resume}")
    if not (folder / RESULTS_FILE).exists():
        _say("no task finished, so there is nothing to report yet")
        return EXIT_CODES[ExitReason.MODEL_ERROR] if runner.halted else 130 if stop.is_set() else 1
    paths = write_reports(folder)
    for name in ("report.md", "report.html"):
        print(f"wrote {paths[name]}")
    if runner.halted:
        return EXIT_CODES[ExitReason.MODEL_ERROR]
    if stop.is_set():
        _say(f"interrupted: continue with  {resume}")
        return 130
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
