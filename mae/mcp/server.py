"""The MCP tools: phones, the Perceptor, single actions, whole agent runs, the memory and past runs.

Built on the SDK's ``MCPServer``; every tool's docstring is what a client's model reads. A failure a
caller can fix comes back as a tool error whose text is a sentence (``ToolError``), never a traceback.
Blocking work (the phone, the Perceptor, the models) runs in worker threads, so one slow call does not
hold up the others, and a cancelled call stops what it started.
"""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    CallToolResult,
    ImageContent,
    InputRequiredResult,
    ResourceLink,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field, ValidationError

from mae import __version__
from mae.actions.execution import execute
from mae.actions.reading import parse_action_text
from mae.actions.registry import ATOMIC_ACTIONS, AtomicAction, Tap, resolve_call
from mae.actions.safety import SafetyPolicy
from mae.agents.operator import to_screen
from mae.config import Settings
from mae.device.base import Device
from mae.device.lock import DeviceLock
from mae.errors import ActionError, ConfigError, MaeError
from mae.llm.client import ChatClient
from mae.mcp import approval
from mae.mcp.jobs import Ended, JobBook, Progress, Question, RunJob, settings_for_run
from mae.mcp.phones import Phones, SharedPerceptor, encode, image_space, mapper_for, perceptor_factory, scaled
from mae.mcp.views import (
    ActView,
    ElementView,
    PerceptionView,
    RunList,
    RunListing,
    ShortcutList,
    ShortcutView,
    TipsView,
)
from mae.ui.devices import screen_signature

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "mae operates Android phones (real ones over ADB, or the built-in virtual phone). Call list_devices, "
    "then screenshot and perceive to see a phone, act to run one operation, or run_task to let mae's "
    "whole agent (Mobile-Agent-E) carry out a task. Coordinates are pixels of the image space each "
    "result states (the screenshot's, downscaled to max_side); use the same max_side everywhere."
)
DEFAULT_MAX_SIDE = 1280
POLL_S = 0.05
STOP_WAIT_S = 30.0
"""How long a cancelled run_task waits for its run to stop (and free the phone)."""
MaxSide = Annotated[
    int,
    Field(
        description="longest side of the image space in pixels (64..4096); 0 = full-resolution screen pixels"
    ),
]
DeviceName = Annotated[
    str,
    Field(description="a name list_devices shows; empty = the default device (the virtual phone when none)"),
]


class ServerOptions(BaseModel):
    """How ``python -m mae mcp`` was started."""

    assume_yes: bool = Field(False, description="--yes: sensitive actions run without asking anybody")


async def blocking(work: Callable[[], T]) -> T:
    """Run ``work`` in a worker thread; a mae error becomes a tool error with its sentence."""
    try:
        return await anyio.to_thread.run_sync(work)
    except MaeError as exc:
        raise ToolError(str(exc)) from None


def answer(text: str, data: BaseModel | None = None, *extra: Any) -> CallToolResult:
    """A tool result: ``text`` first, then any extra content blocks, with ``data`` as structured content."""
    content: list[Any] = [TextContent(type="text", text=text), *extra]
    structured = data.model_dump(mode="json") if data is not None else None
    return CallToolResult(content=content, structured_content=structured)


def read_action(action: str | dict[str, Any]) -> Any:
    """The one atomic operation in ``action`` (mae's syntax or JSON), read by ``mae.actions.reading``."""
    text = json.dumps(action) if isinstance(action, dict) else action
    if not text.strip():
        raise ActionError('give one operation, e.g. Tap(540, 1200), Open_App("Notes") or Back()')
    try:
        call = parse_action_text(text)
    except ActionError as exc:
        raise ActionError(f"cannot read the action: {exc}") from None
    if call.name not in ATOMIC_ACTIONS:
        raise ActionError(
            f"{call.name} is not an atomic operation: act runs one of {', '.join(ATOMIC_ACTIONS)} (run a "
            "Shortcut's steps one by one, or use run_task)"
        )
    return call


class MaeTools:
    """The state behind the tools: settings, phones, the Perceptor, runs."""

    def __init__(
        self, settings: Settings, options: ServerOptions, lister: Callable[[], list[str]] | None = None
    ) -> None:
        self.settings = settings
        self.options = options
        self.phones = Phones(settings.device, lister)
        self.perceptor: SharedPerceptor = perceptor_factory(settings.perception, self.optional_client)
        self.jobs = JobBook()
        self.safety = SafetyPolicy()

    def client(self) -> ChatClient:
        """A model client from the server's settings and environment (keys never come from callers)."""
        from mae.run.runtime import build_client

        return build_client(self.settings)

    def optional_client(self) -> ChatClient | None:
        try:
            return self.client()
        except MaeError:
            return None

    def close(self) -> None:
        self.jobs.stop_all()
        self.phones.close()

    # ------------------------------------------------------------------ phone tools
    def screenshot(self, device: str, max_side: int, image_format: str) -> CallToolResult:
        phone = self.phones.get(device)
        space = image_space(phone.screen_size(), max_side)
        data, mime = encode(scaled(phone.screenshot(), space), image_format)
        text = f"{phone.name}: screenshot {space.image_width}x{space.image_height} ({mime}); {space.text()}."
        image = ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime)
        return answer(text, space, image)

    def perceive(self, device: str, max_side: int) -> CallToolResult:
        phone = self.phones.get(device)
        space = image_space(phone.screen_size(), max_side)
        perception = self.perceptor.perceive_device(phone, phone.screenshot())
        mapper = mapper_for(space)
        elements, lines = [], []
        for element in perception.elements:
            x, y = mapper.to_model(*element.center)
            kind = element.role or element.kind
            elements.append(ElementView(kind=kind, name=element.text, x=x, y=y))
            lines.append(element.line(x, y))
        if perception.keyboard_collapsed:
            from mae.perception.elements import KEYBOARD_LINE

            lines.append(KEYBOARD_LINE)
        view = PerceptionView(
            device=phone.name,
            space=space,
            elements=elements,
            lines=lines,
            keyboard_active=perception.keyboard_active,
            warnings=perception.warnings,
        )
        return answer(view.text(), view)

    def prepare_action(
        self, device: str, action: str | dict[str, Any], max_side: int, description: str
    ) -> tuple[Device, list[AtomicAction], str | None]:
        """The phone, the action's atomic steps in screen pixels, and why it is sensitive (or None)."""
        phone = self.phones.get(device)
        call = read_action(action)
        space = image_space(phone.screen_size(), max_side)
        try:
            resolve_call(call, {}, screen=(space.image_width, space.image_height))
            screen_call = to_screen(call, {}, mapper_for(space))
            steps = resolve_call(screen_call, {}, screen=phone.screen_size())
        except ActionError as exc:
            raise ActionError(f"{exc} ({space.text()})") from None
        elements = None
        if any(isinstance(step, Tap) for step in steps):  # what a tap hits decides whether it is gated
            elements = self.perceptor.perceive_device(phone, phone.screenshot()).elements
        reason = self.safety.check(screen_call, steps, description, elements)
        return phone, steps, reason

    def run_action(self, phone: Device, steps: list[AtomicAction], max_side: int) -> tuple[ActView, Any]:
        with DeviceLock(phone, owner="an MCP client's act call"):
            before = phone.screenshot()
            app_before = phone.foreground_app()
            done = execute(phone, steps, settle_timeout_s=self.settings.loop.settle_timeout_s)
            after = phone.screenshot()
            app_after = phone.foreground_app()
        space = image_space(phone.screen_size(), max_side)
        uri = self.phones.keep(after, space)
        view = ActView(
            device=phone.name,
            action="; ".join(str(step) for step in steps),
            atomic_steps=[str(step) for step in steps],
            completed=done.completed,
            error=done.error,
            settle_seconds=round(done.settle_seconds, 3),
            seconds=round(done.seconds, 3),
            screen_changed=screen_signature(before) != screen_signature(after),
            foreground_before=app_before,
            foreground_after=app_after,
            screenshot=uri,
            space=space,
        )
        return view, scaled(after, space)

    # ------------------------------------------------------------------ memory and runs
    def memory_state(self) -> Any:
        from mae.memory.longterm import MemoryStore

        return MemoryStore(self.settings.memory_dir).load()

    def shortcuts(self) -> ShortcutList:
        from mae.memory.longterm import policy_from, status_table

        state = self.memory_state()
        rows = {row["name"]: row for row in status_table(state, policy_from(self.settings.evolution))}
        items = []
        for name, shortcut in state.shortcuts.items():
            row = rows.get(name, {})
            steps = [
                f"{step.name}({', '.join(f'{k}={v}' for k, v in step.arguments_map.items())})"
                for step in shortcut.atomic_action_sequence
            ]
            items.append(
                ShortcutView(
                    name=name,
                    signature=shortcut.signature(),
                    description=shortcut.description,
                    precondition=shortcut.precondition,
                    steps=steps,
                    status=str(row.get("status", "ok")),
                    calls=int(row.get("calls", 0)),
                    successes=int(row.get("successes", 0)),
                    failures=int(row.get("failures", 0)),
                )
            )
        return ShortcutList(version=state.version, shortcuts=items)

    def list_runs(self, limit: int) -> RunList:
        from mae.ui.history import list_runs

        folder = Path(self.settings.log_dir)
        runs = [
            RunListing(
                name=info.path.name,
                task=info.task,
                status=info.status,
                exit_reason=info.exit_reason,
                steps=info.steps,
                seconds=round(info.seconds, 2),
                started=info.started,
            )
            for info in list_runs(folder)[:limit]
        ]
        return RunList(runs=runs, folder=str(folder))

    def get_run(self, name: str) -> dict[str, Any]:
        folder = Path(self.settings.log_dir)
        run_dir = folder / name
        if not name or Path(name).name != name or name in (".", "..") or not run_dir.is_dir():
            raise ConfigError(
                f"there is no run called {name[:80]!r} in {folder}: pass a name list_runs shows"
            )
        try:
            summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ConfigError(
                f"the run {name!r} has no readable summary yet (it may have just started)"
            ) from None
        if not isinstance(summary, dict):
            raise ConfigError(f"the run {name!r} has an unreadable summary")
        summary.pop("step_timings", None)
        return {"name": name, "folder": str(run_dir), **summary}

    # ------------------------------------------------------------------ runs of the agent
    def decide_for(self, ctx: Context) -> Callable[[str, str], bool | None]:
        """What a run decides by itself about a sensitive action (None: a person must be asked)."""
        if self.options.assume_yes:
            return lambda _action, _reason: True
        if not approval.can_ask(ctx):
            return lambda _action, _reason: False
        return lambda _action, _reason: None

    def start_run(
        self, task: str, device: str, agent: str | None, max_steps: int | None, ctx: Context
    ) -> RunJob:
        from mae.run.runtime import build_runtime

        phone = self.phones.get(device)
        if self.phones.busy(phone_name := self.name_of(device)):
            raise ConfigError(
                f"device {phone_name!r} is busy: another run or action is operating it; wait for it to "
                "finish, cancel that run_task call, or use another device"
            )
        settings = settings_for_run(self.settings, agent, max_steps)
        runtime = build_runtime(settings, device=phone, perceptor=self.perceptor)
        job = RunJob(task, runtime, decide=self.decide_for(ctx), use_memory=settings.loop.agent == "e")
        if not self.options.assume_yes and not approval.can_ask(ctx):
            job.notes.append(f"sensitive actions are refused: {approval.NO_ELICITATION}")
        self.jobs.add(job)
        job.start()
        return job

    def name_of(self, device: str) -> str:
        return (device or "").strip() or self.phones.default_name()


def friendly_validation(name: str, error: ValidationError) -> str:
    """A sentence for arguments that do not fit a tool's schema."""
    problems = []
    for item in error.errors()[:3]:
        where = ".".join(str(part) for part in item["loc"]) or "the arguments"
        problems.append(f"{where}: {item['msg'].lower()}")
    listed = "; ".join(problems)
    return f"the arguments of {name} do not fit its input schema ({listed}); fix them and call again"


class MaeMCPServer(MCPServer):
    """``MCPServer`` whose argument errors read as sentences."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(friendly_validation(name, exc.__cause__)) from None
            raise


READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
OPERATES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)


def described(server: MCPServer, annotations: ToolAnnotations) -> Callable[[F], F]:
    """``server.tool`` with the function's docstring, dedented, as the description a client reads."""

    def register(function: F) -> F:
        description = inspect.cleandoc(function.__doc__ or "")
        return server.tool(annotations=annotations, description=description)(function)

    return register


def build_server(tools: MaeTools) -> MaeMCPServer:
    """The MCP server with every mae tool registered."""
    server = MaeMCPServer(
        "mae", title="mae phone agent", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    @described(server, READ_ONLY)
    async def list_devices() -> CallToolResult:
        """List the phones this server can operate: attached ADB phones and the built-in virtual phone
        (several virtual phones are available as virtual-2 ... virtual-8). Each device runs one task or
        action at a time; different devices work in parallel. Use a name from here as `device`."""
        listing = await blocking(tools.phones.listing)
        return answer(listing.text(), listing)

    @described(server, READ_ONLY)
    async def screenshot(
        device: DeviceName = "",
        max_side: MaxSide = DEFAULT_MAX_SIDE,
        image_format: Literal["png", "jpeg"] = "png",
    ) -> CallToolResult:
        """Take a screenshot of a phone, downscaled so its longest side is at most `max_side` pixels
        (default 1280, what clients accept). The text says the image space: the image size, the screen
        size and the scale. Coordinates you read off this image are valid for `act` and `perceive` with
        the same `max_side`."""
        return await blocking(lambda: tools.screenshot(device, max_side, image_format))

    @described(server, READ_ONLY)
    async def perceive(device: DeviceName = "", max_side: MaxSide = DEFAULT_MAX_SIDE) -> CallToolResult:
        """List what is on a phone's screen as mae's Operator sees it: texts (OCR), icons and buttons
        with their names and centre coordinates, in the image space of a screenshot with the same
        `max_side`. Tap an element by passing its coordinates to `act`, e.g. Tap(x, y). Takes a few
        seconds (OCR)."""
        return await blocking(lambda: tools.perceive(device, max_side))

    @described(server, OPERATES)
    async def act(
        ctx: Context,
        action: Annotated[
            str | dict[str, Any],
            Field(
                description='one atomic operation: Tap(x, y), Swipe(x1, y1, x2, y2), Type("text"), Enter(), '
                'Back(), Home(), Open_App("Notes"), Switch_App(), Wait(); or JSON like '
                '{"name": "Tap", "arguments": {"x": 300, "y": 640}}'
            ),
        ],
        device: DeviceName = "",
        max_side: MaxSide = DEFAULT_MAX_SIDE,
        description: Annotated[
            str, Field(description="what the action is meant to do, e.g. 'Tap the Send button' (optional)")
        ] = "",
        include_screenshot: Annotated[
            bool, Field(description="also return the new screen as an image")
        ] = False,
    ) -> CallToolResult | InputRequiredResult:
        """Run one atomic operation on a phone and wait for the screen to settle. Coordinates are in the
        image space of a screenshot with the same `max_side` (0 = screen pixels). Returns what changed
        (completed steps, settle time, whether the screen changed, the foreground app) and a
        mae://screenshots/... resource with the new screen. Sensitive actions (payments, sending,
        deleting, installing, permissions, account changes) need a person's approval: the client is asked
        when it supports elicitation; otherwise they are refused unless the server runs with --yes."""
        prepared = await blocking(lambda: tools.prepare_action(device, action, max_side, description))
        phone, steps, reason = prepared
        if reason is not None and not tools.options.assume_yes:
            shown = "; ".join(str(step) for step in steps)
            state = {"kind": "act", "device": phone.name, "action": shown}
            approved = approval.answer_from(ctx) if approval.state_of(ctx) == state else None
            if approved is None:
                if not approval.can_ask(ctx):
                    raise ToolError(approval.refusal(shown, reason, approval.NO_ELICITATION))
                message = approval.question(phone.name, shown, reason)
                if not approval.can_ask_now(ctx):
                    return approval.input_required(message, state)
                approved = await approval.ask_now(ctx, message)
            if not approved:
                raise ToolError(approval.refusal(shown, reason, approval.DECLINED))
        tools.safety.commit()  # it runs: what it types joins the run the next Type calls extend
        view, image = await blocking(lambda: tools.run_action(phone, steps, max_side))
        extra: list[Any] = [
            ResourceLink(
                type="resource_link",
                uri=view.screenshot,
                name="screen after the action",
                mime_type="image/png",
            )
        ]
        if include_screenshot:
            data, mime = encode(image, "png")
            extra.append(
                ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime)
            )
        result = answer(view.text(), view, *extra)
        result.is_error = view.error is not None
        return result

    @described(server, OPERATES)
    async def run_task(
        ctx: Context,
        task: Annotated[str, Field(description="what the phone should do, in plain language")],
        device: DeviceName = "",
        agent: Annotated[
            Literal["e", "v2", "v1"] | None,
            Field(
                description="e = Mobile-Agent-E with its long-term memory; v2, v1 = the baselines "
                "(default: the server's setting, normally e)"
            ),
        ] = None,
        max_steps: Annotated[
            int | None, Field(ge=1, le=200, description="step limit (default: the server's, normally 40)")
        ] = None,
    ) -> CallToolResult | InputRequiredResult:
        """Let mae's whole agent carry out a task on a phone, step by step, and return the summary (exit
        reason, steps, progress, notes, run folder). Sends a progress notification per step (subgoal,
        action, outcome) when the call has a progress token; cancel the call to stop the run. Sensitive
        actions need a person's approval (asked through elicitation; refused when the client cannot ask,
        unless the server runs with --yes). The model comes from the server's own settings."""
        state = approval.state_of(ctx)
        if state is not None and state.get("kind") == "run":  # the answer to a question about a run
            job = tools.jobs.get(str(state.get("job")))
            if job is None or job.task != task:
                raise ToolError(
                    "the run this answer was meant for is gone (the server restarted or forgot it): call "
                    "run_task again without the answer to start the task anew"
                )
            pending, job.pending = job.pending, None
            if pending is not None:
                pending.answer(bool(approval.answer_from(ctx)))
        else:
            job = await blocking(lambda: tools.start_run(task, device, agent, max_steps, ctx))
        return await follow(job, ctx)

    async def follow(job: RunJob, ctx: Context) -> CallToolResult | InputRequiredResult:
        """Relay the run's progress and questions until it ends; a cancelled call stops the run."""
        try:
            while True:
                item = job.next_item()
                if item is None:
                    await anyio.sleep(POLL_S)
                elif isinstance(item, Progress):
                    await ctx.report_progress(item.value, item.total, item.message)
                elif isinstance(item, Question):
                    message = approval.question(job.runtime.device.name, item.action, item.reason)
                    if not approval.can_ask_now(ctx):
                        job.pending = item
                        return approval.input_required(message, {"kind": "run", "job": job.id})
                    item.answer(await approval.ask_now(ctx, message))
                elif isinstance(item, Ended):
                    return finish(job, item)
        except anyio.get_cancelled_exc_class():
            job.stop()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(job.join, STOP_WAIT_S)
            raise
        except Exception:  # the client went away mid-call: nobody follows the run any more
            job.stop()
            raise

    def finish(job: RunJob, ended: Ended) -> CallToolResult:
        if ended.result is None:
            raise ToolError(ended.error or "the run could not start")
        view = job.summary(ended.result)
        text = view.text() + "".join(f"\nnote: {note}" for note in view.remarks)
        return answer(text, view)

    @described(server, READ_ONLY)
    async def memory_tips() -> CallToolResult:
        """Read the Tips in mae's long-term memory: short lessons the agent learned from earlier tasks
        (read-only)."""
        state = await blocking(tools.memory_state)
        view = TipsView(version=state.version, tips=state.tips)
        return answer(view.text(), view)

    @described(server, READ_ONLY)
    async def memory_shortcuts() -> CallToolResult:
        """Read the Shortcuts in mae's long-term memory: named sequences of atomic operations with their
        preconditions and how often each worked (read-only)."""
        view = await blocking(tools.shortcuts)
        return answer(view.text(), view)

    @described(server, READ_ONLY)
    async def list_runs(
        limit: Annotated[int, Field(ge=1, le=200, description="most runs listed, newest first")] = 20,
    ) -> CallToolResult:
        """List past agent runs (from run_task, the CLI or the web demo), newest first, with their exit
        reason and step count. Pass a run's name to get_run for its details."""
        view = await blocking(lambda: tools.list_runs(limit))
        return answer(view.text(), view)

    @described(server, READ_ONLY)
    async def get_run(name: Annotated[str, Field(description="a run name from list_runs")]) -> CallToolResult:
        """Get one past run's summary: task, exit reason, plan, progress, notes, every action with its
        outcome, errors, and model-call totals."""
        summary = await blocking(lambda: tools.get_run(name))
        text = json.dumps(summary, indent=1, ensure_ascii=False, default=str)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=summary)

    @server.resource(
        "mae://screenshots/{shot_id}", mime_type="image/png", description="a screen after an act call"
    )
    def kept_screenshot(shot_id: str) -> bytes:
        """A screenshot taken after an act call (the last few are kept)."""
        try:
            return tools.phones.kept(shot_id)[0]
        except MaeError as exc:
            from mcp.server.mcpserver.exceptions import ResourceNotFoundError

            raise ResourceNotFoundError(str(exc)) from None

    return server
