"""Run events: what the loop reports as it goes, for the CLI, the UI and the trajectory.

The loop emits ``Event`` objects to a listener; consumers switch on ``type``. The ``data`` keys of each
type are listed in ``EVENT_TYPES`` and kept JSON-serialisable (images travel as file paths or as the
``image`` attribute, never inside ``data``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

EVENT_TYPES: dict[str, str] = {
    "run_started": "task, device, backbone, run_dir, max_steps, agent (e|v2|v1)",
    "stage_started": "stage (perceive|manager|operator|execute|reflector|notetaker|experience; baselines: "
    "v1_agent|v1_check|planning|decision|reflection|undo)",
    "stage_finished": "stage, seconds, result (parsed reply as a dict), raw (model text), tokens, problem",
    "model_call": "role, model, latency_s, input_tokens, output_tokens, images, ok, error",
    "action": "action (text in screen pixels), written (as the model wrote it), frame (the model's frame "
    "in words, empty when screen pixels), description, steps (atomic ops), shortcut, image_path, "
    "image = annotated",
    "screen": "image_path, shortcut_step (Shortcut steps only), image = the screen after an action",
    "outcome": "outcome (A|B|C), progress, error_description",
    "approval_needed": "action, description, reason (sensitive-action policy)",
    "approval": "approved (bool), action",
    "fast_mode": "what fast mode did this step (Mobile-Agent-E): manager (asked|skipped) or speculation "
    "(used|discarded), and reason",
    "warning": "message",
    "run_finished": "exit_reason, finished (bool), steps, seconds, totals, run_dir, message",
}
"""Event types and the keys of their ``data``."""


@dataclass
class Event:
    """One thing that happened during a run."""

    type: str
    step: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    image: Image.Image | None = None
    time: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if self.type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {self.type!r}")

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "step": self.step, "time": self.time, "data": self.data}


EventListener = Callable[[Event], None]
