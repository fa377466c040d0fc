"""What every agent call shares: screens encoded once per model, and one corrective retry.

``ask`` sends a rendered prompt with images to a role's model, parses the reply, and when the reply is
unusable appends it as an assistant turn plus a user turn saying what was wrong, once. Provider
failures (``ModelError``) propagate; model mistakes come back as ``AgentResult.problem``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from PIL import Image
from pydantic import BaseModel

from mae.agents.parsing import MAX_REPLY_CHARS, ProblemKind, ReplyProblem
from mae.llm.client import ChatClient, Message
from mae.llm.coordinates import CoordinateMapper, describe_frame, describe_model_frame, mapper_for
from mae.llm.images import EncodedImage
from mae.perception.elements import Perception

T = TypeVar("T", bound=BaseModel)

log = logging.getLogger(__name__)

CORRECTION = (
    "Your previous reply could not be used: {problem}.\n"
    "Answer again, following the required output format exactly."
)


class Screen:
    """One screenshot and its perception (W_V), with the image encoded at most once per model policy."""

    def __init__(self, image: Image.Image, perception: Perception) -> None:
        self.image = image
        self.perception = perception
        self._encoded: dict[str, EncodedImage] = {}
        self._lock = threading.Lock()

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size

    def encoded(self, client: ChatClient, role: str) -> EncodedImage:
        """The image as ``role``'s model receives it (cached per image policy)."""
        key = client.profile(role).image.model_dump_json()
        with self._lock:
            cached = self._encoded.get(key)
        if cached is None:
            cached = client.encode(role, self.image)
            with self._lock:
                self._encoded[key] = cached
        return cached

    def mapper(self, client: ChatClient, role: str) -> CoordinateMapper:
        """Screen <-> model coordinates in the convention of ``role``'s model (``mae.llm.coordinates``)."""
        profile = client.profile(role)
        sent = self.encoded(client, role).size
        return mapper_for(profile.coordinate_space, self.size, sent, profile.model_resize)

    def model_frame(self, client: ChatClient, role: str) -> str:
        """Words for people on the frame ``role``'s model writes points in ("in its 768×1664 image");
        empty when it writes screen pixels (``mae.llm.coordinates.describe_model_frame``)."""
        space = client.profile(role).coordinate_space
        return describe_model_frame(space, self.mapper(client, role))

    def frame(self, client: ChatClient, role: str) -> str:
        """The prompt's words for the attached image's size and the coordinate frame ``role``'s model
        reads and writes points in (``mae.llm.coordinates.describe_frame``)."""
        space = client.profile(role).coordinate_space
        return describe_frame(space, self.mapper(client, role), self.encoded(client, role).size)

    def pair_frame(self, client: ChatClient, role: str, before_size: tuple[int, int]) -> str:
        """For a reflector shown this screen (second) after one sent at ``before_size`` (first): both
        images' sizes and the frame the element lists are in (this image's)."""
        after_size = self.encoded(client, role).size
        text = f"The second image is {self.frame(client, role)}"
        if before_size != after_size:
            text += (
                f" The first image is the screen before, sent smaller: {before_size[0]} pixels wide and "
                f"{before_size[1]} pixels high; the coordinates listed for it are in the second image's "
                "frame."
            )
        else:
            text += " The first image is the same size, in the same frame."
        return text

    def describe(self, client: ChatClient, role: str) -> str:
        """W_V as prompt lines, coordinates in the space ``role``'s model answers in."""
        mapper = self.mapper(client, role)
        lines = [element.line(*mapper.to_model(*element.center)) for element in self.perception.elements]
        lines += self.perception.status_lines  # the keyboard left out, a screen still loading
        return "\n".join(lines) if lines else "(nothing was recognised on this screen)"


@dataclass
class AgentTurn:
    """One model call of an agent, as the trajectory records it."""

    agent: str
    attempt: int
    prompt: str
    raw: str
    parsed: dict[str, Any] | None
    problem: str | None
    model: str
    latency_s: float
    input_tokens: int
    output_tokens: int
    images: int

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class AgentResult(Generic[T]):
    """A parsed reply (``value``), or the last problem when even the corrected reply was unusable."""

    agent: str
    value: T | None
    turns: list[AgentTurn] = field(default_factory=list)
    problem: str | None = None
    problem_kind: ProblemKind | None = None

    @property
    def raw(self) -> str:
        return self.turns[-1].raw if self.turns else ""

    @property
    def seconds(self) -> float:
        return sum(t.latency_s for t in self.turns)

    @property
    def tokens(self) -> dict[str, int]:
        return {
            "input": sum(t.input_tokens for t in self.turns),
            "output": sum(t.output_tokens for t in self.turns),
        }


TurnListener = Callable[[AgentTurn], None]


def ask(
    client: ChatClient,
    role: str,
    prompt: str,
    images: Sequence[EncodedImage],
    parse: Callable[[str], T],
    *,
    agent: str | None = None,
    corrective_retries: int = 1,
    on_turn: TurnListener | None = None,
) -> AgentResult[T]:
    """Ask ``role``'s model, parse its reply, and correct an unusable reply up to ``corrective_retries``."""
    name = agent or role
    messages = [Message("user", prompt, list(images))]
    result: AgentResult[T] = AgentResult(agent=name, value=None)
    sent = prompt
    for attempt in range(1, corrective_retries + 2):
        reply = client.complete(role, messages)
        text = reply.text
        if len(text) > MAX_REPLY_CHARS:
            log.warning(
                "%s replied with %d characters; only the first %d are read", name, len(text), MAX_REPLY_CHARS
            )
            text = text[:MAX_REPLY_CHARS]
        value: T | None = None
        problem: ReplyProblem | None = None
        try:
            value = parse(text)
        except ReplyProblem as exc:
            problem = exc
        except Exception as exc:  # last line of defence: a reply never crashes a run
            log.warning("reading the %s reply failed unexpectedly", name, exc_info=True)
            problem = ReplyProblem(
                f"the reply could not be read ({_plain(exc)}); answer again with plain text sections and "
                "ordinary JSON"
            )
        if problem is not None and reply.cut_off:
            problem = ReplyProblem(
                f"it was cut off at the length limit (answer more briefly): {problem.message}", problem.kind
            )
        turn = AgentTurn(
            agent=name,
            attempt=attempt,
            prompt=sent,
            raw=text,
            parsed=value.model_dump(mode="json") if value is not None else None,
            problem=problem.message if problem else None,
            model=reply.record.model,
            latency_s=reply.record.latency_s,
            input_tokens=reply.record.input_tokens,
            output_tokens=reply.record.output_tokens,
            images=reply.record.images,
        )
        result.turns.append(turn)
        if on_turn is not None:
            on_turn(turn)
        if problem is None:
            result.value, result.problem, result.problem_kind = value, None, None
            return result
        result.problem, result.problem_kind = problem.message, problem.kind
        sent = CORRECTION.format(problem=problem.message)
        messages = [*messages, Message("assistant", text), Message("user", sent)]
    return result


def _plain(error: Exception) -> str:
    """A short description of an unexpected parsing failure, without class names or paths."""
    if isinstance(error, RecursionError | MemoryError):
        return "it is nested too deeply or too large"
    text = " ".join(str(error).split())[:120]
    return text or "its content is malformed"
