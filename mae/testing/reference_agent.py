"""A scripted stand-in for a model that plays each virtual task's reference actions (not a model).

Used with the fake model server to run ``python -m mae eval`` end to end offline: the Manager names
one subgoal per reference action and says Finished after the last, the Operator replies with that
action as JSON, the Action Reflector says A (and, when fast mode asks, that the subgoal is done and
that there are no notes), the Notetaker has no notes, the Experience Reflectors keep
the Tips (plus one) and add no Shortcut. The reference actions are screen pixels of the suite's phone
(``screen_size``); the Operator's reply puts them in the frame its prompt states, as a model would.
Policies: ``reference`` (every action) and ``halfway`` (the
first half, then Finished). ``python -m mae.testing.reference_agent --port 8765`` serves it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from typing import Literal

from mae.actions.reading import parse_action_text
from mae.actions.registry import ActionCall
from mae.agents.e_agent import LOADING_SUBGOAL
from mae.llm.coordinates import RELATIVE_SCALE, CoordinateMapper
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

Policy = Literal["reference", "halfway"]
FIRST_STEP_MARK = "name the first subgoal"
_STEP_IN_LAST_SUBGOAL = re.compile(r"### Last Subgoal ###\s*Do reference step (\d+)")
_STEP_IN_SUBGOAL = re.compile(r"### Current Subgoal ###\s*Do reference step (\d+)")
_COORDINATE = re.compile(r"^[xy]\d*$")
_LOADING_SUBGOAL = "### Current Subgoal ###\n" + LOADING_SUBGOAL.split("{", 1)[0]
WAIT = {"name": "Wait", "arguments": {}}
_RESIZED = re.compile(r"your image processor resizes to (\d+)x(\d+)")


def _manager(subgoal: str) -> str:
    plan = f"### Plan ###\n1. {subgoal}\n\n### Current Subgoal ###\n{subgoal}\n"
    return f"### Thought ###\nFollowing the plan.\n\n{plan}"


class ReferenceAgent:
    """A fake-server responder; ``tasks`` maps instructions to reference actions (default: the suite)."""

    def __init__(
        self,
        tasks: dict[str, Sequence[str]] | None = None,
        policy: Policy = "reference",
        variant: str = "all",
        screen_size: tuple[int, int] = (1080, 2340),
    ) -> None:
        if tasks is None:
            from mae.eval.tasks import virtual_tasks

            suite = [t.grader for t in virtual_tasks(variant)]
            tasks = {t.instruction: list(t.reference_actions) for t in suite}
        self.tasks = {k: list(v) for k, v in tasks.items()}
        self.policy = policy
        self.position: dict[str, int] = {}
        self.requests: list[RecordedRequest] = []
        self.screen_size = screen_size

    def actions(self, instruction: str) -> list[str]:
        actions = self.tasks[instruction]
        return actions[: len(actions) // 2] if self.policy == "halfway" else actions

    def instruction_in(self, text: str) -> str | None:
        found = [i for i in self.tasks if i in text]
        return max(found, key=len) if found else None

    def in_frame(self, call: ActionCall, request: RecordedRequest) -> ActionCall:
        """``call`` (screen pixels of the suite's phone) in the frame the prompt states: pixels of the
        image attached, of the size the model's processor makes of it, or the 0-1000 grid."""
        sizes = request.image_sizes
        if not sizes or not any(_COORDINATE.match(key) for key in call.arguments):
            return call
        resized = _RESIZED.search(request.text)
        frame = sizes[0]
        if "relative 0-1000 grid" in request.text:
            frame = (RELATIVE_SCALE, RELATIVE_SCALE)
        elif resized is not None:
            frame = int(resized.group(1)), int(resized.group(2))
        mapper = CoordinateMapper(self.screen_size, frame)
        arguments = dict(call.arguments)
        for key, value in call.arguments.items():
            if _COORDINATE.match(key) and isinstance(value, int):
                point = mapper.to_model(value, 0) if key[0] == "x" else mapper.to_model(0, value)
                arguments[key] = point[0] if key[0] == "x" else point[1]
        return ActionCall(name=call.name, arguments=arguments)

    def __call__(self, request: RecordedRequest) -> str | None:
        self.requests.append(request)
        role, text = request.role or "", request.text
        if role == "experience":
            if "### New Shortcuts ###" in text:
                return "### Thought ###\nNothing new to automate.\n\n### New Shortcuts ###\n[]\n"
            match = re.search(r"### Current Tips ###\n(.*?)\n\s*Guidelines:", text, re.S)
            tips = match.group(1).strip() if match else ""
            count = len(re.findall(r"^\d+\.", tips, re.M))
            extra = f"{count + 1}. Open the app a task names before searching in it."
            return f"### Thought ###\nKeep the tips.\n\n### Updated Tips ###\n{tips}\n{extra}\n"
        instruction = self.instruction_in(text)
        if instruction is None:
            return None
        actions = self.actions(instruction)
        # the step number travels in the subgoal, so runs of one task on several phones at once (a
        # parallel eval's repeats) do not mix up; the count kept here covers replies without it
        if role == "manager":
            last = _STEP_IN_LAST_SUBGOAL.search(text)
            if FIRST_STEP_MARK in text:
                self.position[instruction] = 0
            elif last:
                self.position[instruction] = int(last.group(1))
            index = self.position.get(instruction, 0)
            return _manager("Finished" if index >= len(actions) else f"Do reference step {index + 1}")
        if role == "operator":
            if _LOADING_SUBGOAL in text:  # E kept its plan on a loading screen: wait, as a model would
                action = f"### Action ###\n{json.dumps(WAIT)}\n\n### Description ###\nWait.\n"
                return f"### Thought ###\nLoading.\n\n{action}"
            current = _STEP_IN_SUBGOAL.search(text)
            index = int(current.group(1)) - 1 if current else self.position.get(instruction, 0)
            self.position[instruction] = index + 1
            call = self.in_frame(parse_action_text(actions[min(index, len(actions) - 1)]), request)
            action = json.dumps({"name": call.name, "arguments": call.arguments})
            description = f"### Description ###\nStep {index + 1}.\n"
            return f"### Thought ###\nNext step.\n\n### Action ###\n{action}\n\n{description}"
        if role == "reflector":
            reply = "### Outcome ###\nA\n\n### Error Description ###\nNone\n\n"
            reply += "### Progress Status ###\nOn track."
            if "### Subgoal Done ###" in text:  # fast mode asks: each subgoal is one reference action
                reply += "\n\n### Subgoal Done ###\nYes"
            if "### Existing Important Notes ###" in text:  # fast mode's notes in the same reply
                reply += "\n\n### Important Notes ###\nNone"
            return reply
        if role == "notetaker":
            return "### Important Notes ###\nNone\n"
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the reference-action agent on 127.0.0.1 (no model).")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--policy", choices=("reference", "halfway"), default="reference")
    parser.add_argument(
        "--set", default="all", help="task set of the virtual suite: hard, basic or all (default)"
    )
    args = parser.parse_args()
    agent = ReferenceAgent(policy=args.policy, variant=args.set)
    server = FakeModelServer(responder=agent, port=args.port)
    print(f"serving on {server.base_url}", flush=True)
    server._server.serve_forever()


if __name__ == "__main__":
    main()
