"""Model calls, sequential calls, input tokens and images per step of Mobile-Agent-E (in each loop
profile: the paper's order, each fast-mode switch on its own, fast mode), Mobile-Agent-v2 and v1.

One scripted run of each on the same multi-app task on the virtual phone (find the Ninja DZ201's price on
Amazon, write it in a new note), the models being the local fake server answering after ``--latency``
seconds (so overlapping calls show), the Perceptor the real one (rapidocr + contour icons, no captions)
unless ``--truth`` uses the phone's own elements. Sequential calls per step and s/op at 3.5 s per call
are defined in ``profiles.py``. Input tokens are the fake server's estimate (characters / 4, plus 85 per
image); the images are counted as sent. Beside them: the Mobile-Agent-E paper's Table 5 reasoning time
per operation.

    python benchmarks/agent_calls.py [--truth] [--json] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from profiles import PROFILES, CountingPhone, call_figures

from mae.config import LoopSettings, PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient, ModelProfile
from mae.perception.elements import Perception
from mae.run.loop import PerceptorLike, run_task
from mae.run.runtime import build_perceptor
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest

TASK = "Find the price of the Ninja DZ201 air fryer on Amazon and write it in a new note in Notes."

TABLE_5_REASONING_S = {
    "Mobile-Agent-v2": {"Gemini": 9.8, "Claude": 21.4, "GPT": 12.3},
    "Mobile-Agent-E": {"Gemini": 16.5, "Claude": 25.5, "GPT": 17.4},
    "Mobile-Agent-E + Evo": {"Gemini": 12.9, "Claude": 24.8, "GPT": 14.9},
}
"""Mobile-Agent-E paper, Table 5: seconds of reasoning per operation (v1 is not in the table)."""
# v1 writes its own operations (Open app, Click text, Type, Back), mapped through the Perceptor's W_V.

Action = dict[str, Any]


class Task:
    """The task's operations, computed from the phone's state when the agent asks."""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone
        self.price = ""

    def center(self, text: str) -> tuple[int, int]:
        for element in self.phone.ground_truth():
            if element.text == text:
                return element.center
        raise RuntimeError(f"{text!r} is not on the virtual phone's screen {self.phone.screen_name}")

    def remember_price(self) -> None:
        texts = [e.text for e in self.phone.ground_truth()]
        start = next(i for i, t in enumerate(texts) if t.startswith("Ninja DZ201"))
        self.price = next(t for t in texts[start:] if t.startswith("$"))

    def tap(self, text: str) -> Action:
        x, y = self.center(text)
        return {"name": "Tap", "arguments": {"x": x, "y": y}}

    def atomic(self) -> list[Callable[[], Action | str]]:
        """The operations as atomic actions (the baselines' action space)."""

        def open_notes() -> Action:
            self.remember_price()
            return {"name": "Open_App", "arguments": {"app_name": "Notes"}}

        return [
            lambda: {"name": "Open_App", "arguments": {"app_name": "Amazon"}},
            lambda: self.tap("Search Amazon"),
            lambda: {"name": "Type", "arguments": {"text": "ninja air fryer 8 qt"}},
            lambda: {"name": "Enter", "arguments": {}},
            open_notes,
            lambda: self.tap("new note"),
            lambda: {"name": "Type", "arguments": {"text": f"Ninja DZ201 price on Amazon: {self.price}"}},
            lambda: {"name": "Back", "arguments": {}},
        ]

    def v1_style(self) -> list[Callable[[], Action | str]]:
        """v1's own operations where they exist (its icon taps need captions: the new-note tap stays JSON)."""
        steps = self.atomic()

        def open_notes() -> str:
            self.remember_price()
            return "Open app (Notes)"

        return [
            lambda: "Open app (Amazon)",
            lambda: "Click text (Search Amazon)",
            lambda: "Type (ninja air fryer 8 qt)",
            steps[3],
            open_notes,
            steps[5],
            lambda: f"Type (Ninja DZ201 price on Amazon: {self.price})",
            lambda: "Back",
        ]

    def with_shortcut(self) -> list[Callable[[], Action | str]]:
        """E's version: the search is one call of the initial Tap_Type_and_Enter Shortcut."""
        steps = self.atomic()

        def search() -> Action:
            x, y = self.center("Search Amazon")
            return {
                "name": "Tap_Type_and_Enter",
                "arguments": {"x": x, "y": y, "text": "ninja air fryer 8 qt"},
            }

        return [steps[0], search, *steps[4:]]


def _sections(**sections: str) -> str:
    return "\n\n".join(f"### {title.replace('_', ' ')} ###\n{text}" for title, text in sections.items())


class Responder:
    """Replies per agent: the next scripted operation, A for every judgement, Finished/Stop at the end."""

    def __init__(self, agent: str, task: Task, phone: CountingPhone, latency_s: float = 0.0) -> None:
        self.agent = agent
        ops = {"e": task.with_shortcut, "v2": task.atomic, "v1": task.v1_style}
        self.ops = ops[agent]()
        self.task = task
        self.asked = 0
        self.phone = phone
        self.latency_s = latency_s
        self.sizes = [3 if i == 1 else 1 for i in range(len(self.ops))]  # E's search is a Shortcut

    def next_action(self) -> str:
        index, self.asked = self.asked, self.asked + 1
        return self.action(index)

    def action(self, index: int) -> str:
        if index >= len(self.ops):
            return "Stop" if self.agent != "e" else json.dumps({"name": "Wait", "arguments": {}})
        action = self.ops[index]()
        return action if isinstance(action, str) else json.dumps(action)

    def __call__(self, request: RecordedRequest) -> FakeReply | None:
        text = self.reply(request)
        return None if text is None else FakeReply(text=text, delay_s=self.latency_s)

    def e_reply(self, role: str, text: str) -> str:
        """E's agents; what is done is read from the phone, so a speculative Operator asked early and
        the Operator asked again after it was discarded get the same action."""
        done = self.phone.actions_done(self.sizes)
        notes = f"Ninja DZ201 price on Amazon: {self.task.price}" if self.task.price else "None"
        if role == "manager":
            finished = done >= len(self.ops)
            return _sections(Plan="1. Amazon\n2. Notes", Current_Subgoal="Finished" if finished else "Go on")
        if role == "operator":
            return _sections(Thought="Next.", Action=self.action(done), Description="As planned.")
        if role == "reflector":
            sections = {"Outcome": "A", "Error_Description": "None", "Progress_Status": "On track."}
            if "### Subgoal Done ###" in text:  # the Amazon part ends with the search, Notes with Back
                sections["Subgoal_Done"] = "Yes" if done in (2, len(self.ops)) else "No"
            if "### Existing Important Notes ###" in text:
                sections["Important_Notes"] = notes
            return _sections(**sections)
        return _sections(Important_Notes=notes)

    def reply(self, request: RecordedRequest) -> str | None:
        role, text = request.role or "", request.text
        if self.agent == "e":
            return self.e_reply(role, text)
        if self.agent == "v2":
            if role == "manager":
                return _sections(Thought="Update.", Completed_Contents=f"{self.asked} operations done.")
            if role == "operator":
                action = self.next_action()
                memory = self.task.price or "None"
                return _sections(Thought="Next.", Action=action, Operation="As planned.", Memory=memory)
            return _sections(Thought="As expected.", Answer="A")
        if "### Completed ###" in text:
            return _sections(Thought="All done.", Completed="Yes")
        return _sections(Observation="The screen.", Thought="Next.", Action=self.next_action())


class TruthPerceptor:
    """W_V from the virtual phone's own elements (``--truth``)."""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone

    def perceive(self, image: Any, keyboard_active: bool | None = None) -> Perception:
        width, height = image.size
        elements = self.phone.ground_truth()
        return Perception(
            width=width, height=height, elements=elements, keyboard_active=bool(keyboard_active)
        )


def one_run(
    agent: str,
    perceptor: PerceptorLike | None,
    log_dir: Path,
    loop: dict[str, Any] | None = None,
    latency_s: float = 0.0,
) -> dict[str, Any]:
    phone = CountingPhone()
    responder = Responder(agent, Task(phone), phone, latency_s)
    with FakeModelServer(responder=responder) as server:
        client = ChatClient(
            ModelProfile.model_validate(
                {
                    "provider": "fake",
                    "base_url": server.base_url,
                    "model": "fake-vlm",
                    "api_key_env": None,
                    "image": {"resize": "none"},  # the scripts tap screen pixels
                }
            )
        )
        result = run_task(
            TASK,
            device=phone,
            client=client,
            perceptor=perceptor or TruthPerceptor(phone),
            settings=LoopSettings.model_validate({"agent": agent, **(loop or {})}),
            log_dir=log_dir,
        )
    notes = [n.text for n in phone.state().notes if not n.seeded]
    if not result.finished or not any("Ninja DZ201" in n and "$" in n for n in notes):
        raise RuntimeError(f"the scripted {agent} run did not complete: {result.exit_reason.value}")
    if len(result.actions) != len(responder.ops):
        raise RuntimeError(
            f"the scripted {agent} run took {len(result.actions)} actions, not {len(responder.ops)}"
        )
    return call_figures(result, client.records)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", action="store_true", help="perceive with the phone's own elements")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--latency", type=float, default=0.2, help="seconds the fake model takes per call (default 0.2)"
    )
    args = parser.parse_args()
    perceptor = (
        None if args.truth else build_perceptor(PerceptionSettings.model_validate({"captions": "none"}))
    )
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="mae-agents-") as tmp:
        for profile, loop in PROFILES.items():
            rows[f"e, {profile}"] = one_run("e", perceptor, Path(tmp), loop, args.latency)
        for agent in ("v2", "v1"):
            rows[agent] = one_run(agent, perceptor, Path(tmp), None, args.latency)
    e, v2 = rows["e, paper order"], rows["v2"]
    ratio = {
        "calls_per_step_e_over_v2": round(e["model_calls_per_step"] / v2["model_calls_per_step"], 2),
        "input_tokens_per_step_e_over_v2": round(e["input_tokens_per_step"] / v2["input_tokens_per_step"], 2),
        "table_5_reasoning_e_over_v2": {
            k: round(TABLE_5_REASONING_S["Mobile-Agent-E"][k] / v, 2)
            for k, v in TABLE_5_REASONING_S["Mobile-Agent-v2"].items()
        },
    }
    report = {"perception": "truth" if args.truth else "rapidocr+contour", "agents": rows, "ratios": ratio}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"one scripted run per agent and profile, perception: {report['perception']}")
    header = ("agent, profile", "actions", "calls", "calls/step", "seq/step", "s/op@3.5", "in tok/step")
    print(f"{header[0]:32} " + " ".join(f"{h:>11}" for h in header[1:]))
    for name, row in rows.items():
        figures = (
            row["actions"],
            row["model_calls"],
            row["model_calls_per_step"],
            row["sequential_calls_per_step"],
            row["s_per_op_at_3_5"],
            row["input_tokens_per_step"],
        )
        print(f"{name:32} " + " ".join(f"{f:>11}" for f in figures))
    print(
        f"E / v2 per step (paper order): {ratio['calls_per_step_e_over_v2']}x model calls, "
        f"{ratio['input_tokens_per_step_e_over_v2']}x input tokens; Table 5 reasoning time E / v2: "
        + ", ".join(f"{k} {v}x" for k, v in ratio["table_5_reasoning_e_over_v2"].items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
