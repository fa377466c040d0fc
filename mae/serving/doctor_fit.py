"""Fitting a model's tap points against the coordinate conventions mae knows, and against a free frame.

Every convention (``mae.llm.coordinates.CONVENTIONS``) predicts the frame a model's numbers are in for
a screenshot of a given screen sent at a given size: the screen, the server's resize of the image, a
0-1000 grid. Reading each reply under each convention gives a tap in screen pixels; the convention
whose taps land inside the targets explains the model. One more reading, 0-1 fractions, has no
setting in mae (its replies cannot be used), but it is recognised so the report can say so.

Besides the named readings, a free scale and offset is fitted per size the images were sent at
(Theil-Sen: the median of pairwise slopes, so a tenth of wild replies does not move it): the frame the
model *appears* to answer in. When no convention explains the replies but the free frame does, the
server resizes images in a way no convention predicts (another pixel budget); when even the free
frame does not, the model is not finding the targets at all.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from mae.llm.coordinates import (
    CONVENTIONS,
    CoordinateConvention,
    CoordinateMapper,
    CoordinateSpace,
    ModelResize,
    mapper_for,
)

Size = tuple[int, int]
Box = tuple[int, int, int, int]
PromptStyle = Literal["grounding", "operator"]
DEFAULT_TRIALS = 20
"""Requests one doctor run sends by default (half grounding, half Operator prompt)."""
DEFAULT_THRESHOLD = 0.6
"""Share of taps that must land on target under the configured convention."""
FRACTIONS = "fractions"
"""The reading with no mae setting: 0-1 fractions of the image."""
CONFIGURED = "configured"
"""The reading mae is configured with when it is none of the named conventions."""


class DoctorReply(BaseModel):
    """One calibration request and what came back."""

    index: int
    style: PromptStyle
    screen: str
    target: str
    box: Box
    screen_size: Size
    sent_size: Size = Field(description="the size mae sent the screenshot at")
    stated_size: Size = Field(description="the size the prompt said the screen is (the configured space)")
    text: str = ""
    point: tuple[float, float] | None = Field(None, description="the point read from the reply, as written")
    error: str | None = Field(None, description="why the request failed (no reply)")

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.box
        return (left + right) // 2, (top + bottom) // 2

    def hit(self, tap: tuple[int, int]) -> bool:
        left, top, right, bottom = self.box
        return left <= tap[0] <= right and top <= tap[1] <= bottom

    def error_px(self, tap: tuple[int, int]) -> float:
        return math.dist(tap, self.center)


@dataclass(frozen=True)
class Reading:
    """One way of reading a reply's numbers: a named convention, the configured one, or fractions."""

    name: str
    label: str
    setting: str | None
    mapper: Callable[[DoctorReply], CoordinateMapper]
    scale: float = 1.0
    """Numbers are multiplied by this before the mapper (fractions: by 1000, read as the 0-1000 grid)."""

    def frame(self, reply: DoctorReply) -> tuple[float, float]:
        """The size of the frame this reading says the model answers in (for the report)."""
        width, height = self.mapper(reply).model_size
        return width / self.scale, height / self.scale

    def tap(self, reply: DoctorReply) -> tuple[int, int] | None:
        if reply.point is None:
            return None
        x, y = reply.point
        if not (math.isfinite(x) and math.isfinite(y)) or max(abs(x), abs(y)) > 1e7:
            return None
        return self.mapper(reply).to_screen(round(x * self.scale), round(y * self.scale))


def readings(space: CoordinateSpace, model_resize: ModelResize | None) -> tuple[list[Reading], str]:
    """Every reading the doctor tries, and the name of the configured one (``space``/``model_resize``)."""
    found: list[Reading] = []
    configured = None
    for convention in CONVENTIONS.values():
        setting = f"MAE_COORDINATES={convention.name}"
        found.append(Reading(convention.name, convention.label, setting, _mapper_of(convention)))
        if configured is None and (convention.space, convention.model_resize) == (space, model_resize):
            configured = convention.name
    found.append(
        Reading(
            FRACTIONS,
            "0-1 fractions of the image (no mae setting reads these)",
            None,
            lambda reply: mapper_for("relative", reply.screen_size, reply.sent_size),
            scale=1000.0,
        )
    )
    if configured is None:
        found.append(
            Reading(
                CONFIGURED,
                f"the configured '{space}' coordinates",
                None,
                lambda reply: mapper_for(space, reply.screen_size, reply.sent_size, model_resize),
            )
        )
        configured = CONFIGURED
    return found, configured


def _mapper_of(convention: CoordinateConvention) -> Callable[[DoctorReply], CoordinateMapper]:
    return lambda reply: convention.mapper(reply.screen_size, reply.sent_size)


class ReadingFit(BaseModel):
    """How well one reading explains the replies."""

    name: str
    label: str
    setting: str | None
    hits: int
    readable: int
    total: int
    median_error_px: float | None
    taps: list[tuple[int, int] | None]
    same_as: list[str] = Field(default_factory=list, description="readings that give the same taps here")

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 0.0


def fit_reading(reading: Reading, replies: Sequence[DoctorReply]) -> ReadingFit:
    """Taps, hits and the median distance to the target's centre under ``reading``."""
    taps = [reading.tap(reply) for reply in replies]
    errors = [reply.error_px(tap) for reply, tap in zip(replies, taps, strict=True) if tap is not None]
    hits = sum(1 for reply, tap in zip(replies, taps, strict=True) if tap is not None and reply.hit(tap))
    return ReadingFit(
        name=reading.name,
        label=reading.label,
        setting=reading.setting,
        hits=hits,
        readable=len(errors),
        total=len(replies),
        median_error_px=round(statistics.median(errors), 1) if errors else None,
        taps=taps,
    )


def fit_all(found: Sequence[Reading], replies: Sequence[DoctorReply]) -> list[ReadingFit]:
    """Every reading fitted, each knowing which others read these replies the same way."""
    fits = [fit_reading(reading, replies) for reading in found]
    frames = {r.name: [r.frame(reply) for reply in replies] for r in found}
    for fit in fits:
        fit.same_as = [o.name for o in fits if o.name != fit.name and frames[o.name] == frames[fit.name]]
    return fits


def best_fit(fits: Sequence[ReadingFit], prefer: Sequence[str] = ()) -> ReadingFit | None:
    """The reading that explains the replies best: the most hits (within one reply or 5 %), then the
    smallest median error; among readings that give identical taps, the first of ``prefer``."""
    if not fits:
        return None
    top = max(fit.hits for fit in fits)
    if top == 0:
        return None
    margin = max(1, round(0.05 * fits[0].total))
    near = [fit for fit in fits if fit.hits >= top - margin]
    best = min(
        near, key=lambda f: (f.median_error_px if f.median_error_px is not None else math.inf, -f.hits)
    )
    group = [best.name, *best.same_as]
    for name in prefer:
        if name in group:
            return next(fit for fit in fits if fit.name == name)
    return best


class FrameFit(BaseModel):
    """The frame the model appears to answer in, for the screenshots sent at one size."""

    sent_size: Size
    screen_sizes: list[Size]
    replies: int
    frame: tuple[int, int] | None = Field(None, description="apparent width and height of the model's frame")
    offset: tuple[int, int] = Field(
        (0, 0), description="where the frame's (0, 0) appears to be, in its units"
    )
    predicted: dict[str, tuple[float, float]] = Field(default_factory=dict, description="frame by reading")


class FreeFit(BaseModel):
    """The free scale/offset fit over all replies."""

    groups: list[FrameFit]
    hits: int
    total: int
    taps: list[tuple[int, int] | None]

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 0.0


def _line(fractions: list[float], values: list[float]) -> tuple[float, float] | None:
    """``values ~ slope * fractions + intercept``, robustly; through the origin with too few points."""
    slopes = [
        (values[j] - values[i]) / (fractions[j] - fractions[i])
        for i in range(len(fractions))
        for j in range(i + 1, len(fractions))
        if abs(fractions[j] - fractions[i]) >= 0.05
    ]
    if len({round(f, 2) for f in fractions}) >= 3 and slopes:
        slope = statistics.median(slopes)
        intercept = statistics.median(v - slope * f for f, v in zip(fractions, values, strict=True))
    else:
        ratios = [v / f for f, v in zip(fractions, values, strict=True) if f >= 0.02]
        if not ratios:
            return None
        slope, intercept = statistics.median(ratios), 0.0
    return (slope, intercept) if slope > 0 and math.isfinite(slope) else None


def fit_free(found: Sequence[Reading], replies: Sequence[DoctorReply]) -> FreeFit:
    """Fit a scale and offset per axis for each size the screenshots were sent at."""
    taps: list[tuple[int, int] | None] = [None] * len(replies)
    groups: list[FrameFit] = []
    for sent in dict.fromkeys(reply.sent_size for reply in replies):
        members = [(i, r) for i, r in enumerate(replies) if r.sent_size == sent]
        usable = [(i, r) for i, r in members if r.point is not None and all(map(math.isfinite, r.point))]
        group = FrameFit(
            sent_size=sent,
            screen_sizes=list(dict.fromkeys(r.screen_size for _, r in members)),
            replies=len(members),
            predicted={reading.name: reading.frame(members[0][1]) for reading in found},
        )
        groups.append(group)
        if not usable:
            continue
        lines = []
        for axis in (0, 1):
            fractions = [r.center[axis] / r.screen_size[axis] for _, r in usable]
            values = [r.point[axis] for _, r in usable if r.point is not None]
            lines.append(_line(fractions, values))
        x_line, y_line = lines
        if x_line is None or y_line is None:
            continue
        group.frame = (round(x_line[0]), round(y_line[0]))
        group.offset = (round(x_line[1]), round(y_line[1]))
        for i, reply in usable:
            assert reply.point is not None
            fx = (reply.point[0] - x_line[1]) / x_line[0]
            fy = (reply.point[1] - y_line[1]) / y_line[0]
            if max(abs(fx), abs(fy)) < 1e4:
                taps[i] = (round(fx * reply.screen_size[0]), round(fy * reply.screen_size[1]))
    hits = sum(1 for reply, tap in zip(replies, taps, strict=True) if tap is not None and reply.hit(tap))
    return FreeFit(groups=groups, hits=hits, total=len(replies), taps=taps)
