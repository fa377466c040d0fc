"""What the MCP tools return: typed results, each with the text a model reads.

Every tool answers with a text block (``text()``) and the same facts as structured content
(``model_dump``). Coordinates are always given in a stated image space (``ImageSpace``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ImageSpace(BaseModel):
    """The pixel space a screenshot was sent in, and how it maps to the phone's screen."""

    screen_width: int
    screen_height: int
    image_width: int
    image_height: int
    scale: float = Field(description="image pixels per screen pixel (1.0 = screen pixels)")

    def text(self) -> str:
        if self.scale == 1.0:
            return f"coordinates are screen pixels ({self.screen_width}x{self.screen_height})"
        return (
            f"coordinates are pixels of the {self.image_width}x{self.image_height} image (the "
            f"{self.screen_width}x{self.screen_height} screen scaled by {self.scale:.4g}); use the same "
            "max_side in perceive and act so their coordinates agree"
        )


class DeviceView(BaseModel):
    """One phone the server can operate."""

    name: str
    kind: Literal["virtual", "adb"]
    busy: bool = Field(description="a run or an action holds the phone right now")
    default: bool = Field(description="used when a tool is called without a device")

    def text(self) -> str:
        what = "built-in virtual phone" if self.kind == "virtual" else "Android phone over ADB"
        flags = [flag for flag, on in (("default", self.default), ("busy", self.busy)) if on]
        return f"{self.name}: {what}" + (f" ({', '.join(flags)})" if flags else "")


class DeviceList(BaseModel):
    devices: list[DeviceView]
    note: str = ""

    def text(self) -> str:
        lines = [device.text() for device in self.devices]
        return "\n".join(lines + ([self.note] if self.note else []))


class ElementView(BaseModel):
    """One element the Perceptor found, its centre in the stated image space."""

    kind: str = Field(description="text, icon, button or field")
    name: str
    x: int
    y: int


class PerceptionView(BaseModel):
    device: str
    space: ImageSpace
    elements: list[ElementView]
    lines: list[str] = Field(description="the element list as the Operator sees it")
    keyboard_active: bool
    warnings: list[str] = Field(default_factory=list)

    def text(self) -> str:
        head = f"{self.device}: {len(self.elements)} elements; {self.space.text()}."
        body = "\n".join(self.lines) or "(nothing was recognised on this screen)"
        tail = "".join(f"\nwarning: {w}" for w in self.warnings)
        return f"{head}\n{body}{tail}"


class ActView(BaseModel):
    """What one action did."""

    device: str
    action: str = Field(description="the action in screen pixels")
    atomic_steps: list[str]
    completed: int = Field(description="atomic steps that ran")
    error: str | None = None
    settle_seconds: float = Field(description="seconds spent waiting for the screen to settle")
    seconds: float
    screen_changed: bool
    foreground_before: str
    foreground_after: str
    screenshot: str = Field(description="resource URI of the screen after the action")
    space: ImageSpace

    def text(self) -> str:
        status = (
            f"done: {'; '.join(self.atomic_steps)}"
            if self.error is None
            else f"failed after {self.completed} of {len(self.atomic_steps)} steps: {self.error}"
        )
        app = (
            f"foreground app {self.foreground_before} -> {self.foreground_after}"
            if self.foreground_before != self.foreground_after
            else f"foreground app still {self.foreground_after}"
        )
        changed = "the screen changed" if self.screen_changed else "the screen did not change"
        return (
            f"{status} on {self.device} ({self.seconds:.2f} s, settled in {self.settle_seconds:.2f} s); "
            f"{changed}; {app}. New screenshot: {self.screenshot} (or call screenshot)."
        )


class RunView(BaseModel):
    """The summary of one agent run."""

    task: str
    device: str
    agent: str
    exit_reason: str
    finished: bool
    message: str
    steps: int
    progress: str
    notes: str
    seconds: float
    model_calls: int
    run_folder: str
    remarks: list[str] = Field(default_factory=list, description="memory and approval notes")

    def text(self) -> str:
        status = "finished" if self.finished else f"stopped ({self.exit_reason})"
        lines = [
            f"{status} after {self.steps} step(s) in {self.seconds:.1f} s on {self.device} "
            f"(agent {self.agent}, {self.model_calls} model calls)",
        ]
        if self.message:
            lines.append(f"message: {self.message}")
        lines.append(f"progress: {self.progress or '(none)'}")
        lines.append(f"notes: {self.notes or '(none)'}")
        lines.append(f"run folder: {self.run_folder}")
        return "\n".join(lines)


class RunListing(BaseModel):
    name: str = Field(description="pass this to get_run")
    task: str
    status: str
    exit_reason: str
    steps: int
    seconds: float
    started: float


class RunList(BaseModel):
    runs: list[RunListing]
    folder: str

    def text(self) -> str:
        if not self.runs:
            return f"no runs in {self.folder} yet"
        return "\n".join(
            f"{r.name}: {r.exit_reason or r.status}, {r.steps} step(s), {r.seconds:.1f} s: {r.task}"
            for r in self.runs
        )


class ShortcutView(BaseModel):
    name: str
    signature: str
    description: str
    precondition: str
    steps: list[str]
    status: str
    calls: int
    successes: int
    failures: int


class ShortcutList(BaseModel):
    version: int
    shortcuts: list[ShortcutView]

    def text(self) -> str:
        lines = [f"long-term memory version {self.version}: {len(self.shortcuts)} Shortcut(s)"]
        for item in self.shortcuts:
            status = "" if item.status == "ok" else f" [{item.status}]"
            lines.append(f"- {item.signature}{status}: {item.description}")
            if item.precondition:
                lines.append(f"  precondition: {item.precondition}")
            lines.append(f"  steps: {', '.join(item.steps)}")
            lines.append(f"  used {item.calls} time(s): {item.successes} ok, {item.failures} failed")
        return "\n".join(lines)


class TipsView(BaseModel):
    version: int
    tips: str

    def text(self) -> str:
        return f"long-term memory version {self.version}, Tips:\n{self.tips.strip() or '(none)'}"
