"""Task lists on the virtual phone: the evolution setting shares and grows the memory, individual does not."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from memory_testkit import make_client
from PIL import Image

import mae.cli.run_cmd as run_cmd
from mae.cli import main
from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError
from mae.memory.longterm import MemoryStore
from mae.perception.elements import Perception
from mae.run.evolution import BetweenTasks, MemorySession, TaskSpec, load_tasks, run_task_list, runtime_runner
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

TASKS = [
    {"task_id": "t1_notes", "instruction": "Open the Notes app", "type": "single_app", "apps": ["Notes"]},
    {"task_id": "t2_maps", "instruction": "Open the Maps app", "type": "single_app", "apps": ["Maps"]},
    {
        "task_id": "t3_notes",
        "instruction": "Open the Notes app once more",
        "type": "single_app",
        "apps": ["Notes"],
    },
]
TIP_ONE = "Open an app with Open_App instead of looking for its icon (learned in task 1)."
TIP_TWO = "Maps opens on a map view; its search box is at the top (learned in task 2)."
NEW_SHORTCUT = {
    "name": "Open_Notes_Directly",
    "arguments": [],
    "description": "Open the Notes app in one step.",
    "precondition": "Any screen; the Notes app is installed.",
    "atomic_action_sequence": [{"name": "Open_App", "arguments_map": {"app_name": "Notes"}}],
}
BASE_TIPS = [
    "Do not add payment information; sign in as a guest; close pop-ups.",
    "No apps are open in the background at the start.",
    "Partial text from earlier input is not an error.",
    "New Notes need no title unless asked.",
]


class GroundTruth:
    """W_V straight from the virtual phone's display list."""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        return Perception(
            width=image.size[0],
            height=image.size[1],
            elements=self.phone.ground_truth(),
            keyboard_active=bool(keyboard_active),
        )


def section(text: str, title: str) -> str:
    match = re.search(rf"### {re.escape(title)} ###\n(.*?)(?:\n### |\Z)", text, re.S)
    return match.group(1).strip() if match else ""


class Agents:
    """Answers every role: one-step tasks, and reflectors that learn a tip (and a Shortcut) per task."""

    def __init__(self) -> None:
        self.manager_calls = 0
        self.reflections = 0

    def __call__(self, request: RecordedRequest) -> str | None:
        role, text = request.role, request.text
        if role == "manager":
            self.manager_calls += 1
            done = self.manager_calls % 2 == 0
            subgoal = "Finished" if done else "Open the app"
            return f"### Thought ###\nx\n### Plan ###\n1. Open the app\n### Current Subgoal ###\n{subgoal}\n"
        if role == "operator":
            instruction = section(text, "User Request")
            if "once more" in instruction and "Open_Notes_Directly" in text:
                action: dict[str, Any] = {"name": "Open_Notes_Directly", "arguments": {}}
            else:
                app = re.search(r"Open the (\w+) app", instruction)
                action = {"name": "Open_App", "arguments": {"app_name": app.group(1) if app else "Notes"}}
            return (
                f"### Thought ###\nx\n### Action ###\n{json.dumps(action)}\n### Description ###\nOpen it.\n"
            )
        if role == "reflector":
            return (
                "### Outcome ###\nA\n### Error Description ###\nNone\n### Progress Status ###\nApp opened.\n"
            )
        if role == "notetaker":
            return "### Important Notes ###\nNone\n"
        if role == "experience" and "### Current Tips ###" in text:
            self.reflections += 1
            learned = [TIP_ONE, TIP_TWO][: min(self.reflections, 2)]
            tips = "\n".join(f"{i}. {tip}" for i, tip in enumerate([*BASE_TIPS, *learned], 1))
            return f"### Thought ###\nx\n### Updated Tips ###\n{tips}\n"
        if role == "experience":
            new = [NEW_SHORTCUT] if self.reflections == 1 else []
            body = json.dumps(new)
            return f"### Thought ###\nx\n### New Shortcuts ###\n{body}\n### Revised Shortcuts ###\n[]\n"
        return None


def task_of(request: RecordedRequest) -> str:
    return section(request.text, "User Request").split("\n\n")[0]  # the guidance follows it


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(
        json.dumps({"length": 3, "scenario": "TEST", "scenario_id": 9, "tasks": TASKS}), encoding="utf-8"
    )
    return path


def test_evolution_three_tasks_share_memory_through_the_cli(
    tmp_path: Path, tasks_file: Path, fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    phone = VirtualPhone()
    resets: list[str] = []
    real_reset = phone.reset

    def counting_reset() -> None:
        resets.append(phone.screen_name)
        real_reset()

    monkeypatch.setattr(phone, "reset", counting_reset)

    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        return build_runtime(settings, api_keys, device=phone, perceptor=GroundTruth(phone))

    monkeypatch.setattr(run_cmd, "build_runtime", fake_build_runtime)
    fake_server.responder = Agents()
    memory_dir = tmp_path / "memory"
    code = main([
        "run", "--tasks", str(tasks_file), "--setting", "evolution", "--device", "virtual",
        "--backbone", "custom", "--base-url", fake_server.base_url, "--model", "fake-vlm",
        "--log-dir", str(tmp_path / "runs"), "--memory-dir", str(memory_dir), "--quiet",
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert fake_server.unexpected == []

    operator_requests = fake_server.requests_for("operator")
    first = [r.text for r in operator_requests if task_of(r) == TASKS[0]["instruction"]]
    second = [r.text for r in operator_requests if task_of(r) == TASKS[1]["instruction"]]
    third = [r.text for r in operator_requests if task_of(r) == TASKS[2]["instruction"]]
    assert first and second and third
    assert all(TIP_ONE not in text and "Open_Notes_Directly" not in text for text in first)
    assert all(TIP_ONE in section(text, "Tips") for text in second), "task 2 sees the tip task 1 stored"
    assert all("Open_Notes_Directly()" in section(text, "Shortcuts") for text in second)
    assert all(TIP_TWO in text and TIP_ONE in text for text in third)
    manager_second = [
        r.text for r in fake_server.requests_for("manager") if task_of(r) == TASKS[1]["instruction"]
    ]
    assert all("Open_Notes_Directly" in text for text in manager_second)

    tips_prompts = [
        r.text for r in fake_server.requests_for("experience") if "### Current Tips ###" in r.text
    ]
    assert len(tips_prompts) == 3, "the reflectors ran after every task"
    assert TASKS[1]["instruction"] in section(tips_prompts[0], "Upcoming Tasks")
    assert TASKS[2]["instruction"] in section(tips_prompts[0], "Upcoming Tasks")
    assert TASKS[1]["instruction"] not in section(tips_prompts[1], "Upcoming Tasks")
    assert section(tips_prompts[2], "Upcoming Tasks") == "(none known)"

    assert resets == ["Notes/list", "Maps/home"], "the phone was reset after task 1 and after task 2"
    assert phone.screen_name.startswith("Notes"), "task 3 opened Notes through the learned Shortcut"

    store = MemoryStore(memory_dir)
    state = store.load()
    assert state.version == 3 and TIP_TWO in state.tips
    usage = state.usage["Open_Notes_Directly"]
    assert (usage.calls, usage.successes, usage.failures) == (1, 1, 0)
    assert [h.task for h in store.history()] == [t["instruction"] for t in TASKS]

    reports = list((tmp_path / "runs").glob("evolution-*.json"))
    assert len(reports) == 1
    report = json.loads(reports[0].read_text(encoding="utf-8"))
    assert [o["memory_version_used"] for o in report["outcomes"]] == [0, 1, 2]
    assert [o["experience"]["version"] for o in report["outcomes"]] == [1, 2, 3]
    assert report["outcomes"][0]["experience"]["added"] == ["Open_Notes_Directly"]
    run_dirs = [Path(o["run_dir"]) for o in report["outcomes"]]
    assert all((d / "experience.json").is_file() and (d / "experience.jsonl").is_file() for d in run_dirs)
    assert "evolution: 3 of 3 task(s) finished" in out


def test_evolution_individual_setting_uses_initial_memory_and_writes_nothing(
    tmp_path: Path, tasks_file: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path / "memory")
    store.set_tips("1. A tip the individual setting must not see.\n")
    settings = Settings.model_validate(
        {"memory_dir": str(tmp_path / "memory"), "log_dir": str(tmp_path / "runs")}
    )
    phone = VirtualPhone()
    client = make_client(fake_server)
    fake_server.responder = Agents()
    session = MemorySession(settings, client, use_store=False)
    between = BetweenTasks("reset", phone)
    report = run_task_list(
        load_tasks(tasks_file),
        session,
        runtime_runner(phone, client, GroundTruth(phone), settings),
        setting="individual",
        between=between,
    )
    assert report.finished_count == 3 and report.not_run == []
    assert fake_server.requests_for("experience") == []
    assert all("must not see" not in r.text for r in fake_server.requests_for("operator"))
    assert all("no apps are open in the background" in r.text for r in fake_server.requests_for("operator"))
    assert store.versions() == [1], "the individual setting never writes the store"
    assert all(o.experience is None and o.memory_version_used is None for o in report.outcomes)


def test_evolution_stops_the_list_when_the_between_step_fails(
    tmp_path: Path, tasks_file: Path, fake_server: FakeModelServer
) -> None:
    settings = Settings.model_validate(
        {"memory_dir": str(tmp_path / "memory"), "log_dir": str(tmp_path / "runs")}
    )
    phone = VirtualPhone()
    client = make_client(fake_server)
    fake_server.responder = Agents()
    session = MemorySession(settings, client)
    between = BetweenTasks("command", phone, command="echo cannot restore >&2; exit 3")
    report = run_task_list(
        load_tasks(tasks_file),
        session,
        runtime_runner(phone, client, GroundTruth(phone), settings),
        setting="evolution",
        between=between,
        report_path=tmp_path / "report.json",
    )
    assert len(report.outcomes) == 1 and report.outcomes[0].finished
    assert report.outcomes[0].error and "cannot restore" in report.outcomes[0].error
    assert report.outcomes[0].experience is not None, "the task's reflection happened before the failing step"
    assert report.not_run == ["t2_maps", "t3_notes"]
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["not_run"] == [
        "t2_maps",
        "t3_notes",
    ]


def test_evolution_task_files_and_between_modes(tmp_path: Path) -> None:
    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "mobile-eval-e" / "scenario_1_v1.json"
    if shared.is_file():
        tasks = load_tasks(shared)
        assert len(tasks) == 5 and tasks[0].task_id == "1_late_night_korean_food"
        assert tasks[0].model_extra and "rubrics" in tasks[0].model_extra
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(["Open Notes", "Open Maps"]), encoding="utf-8")
    assert [t.task_id for t in load_tasks(plain)] == ["task_1", "task_2"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tasks": [{"task_id": "x"}]}), encoding="utf-8")
    with pytest.raises(ConfigError, match="task 1 of"):
        load_tasks(bad)
    with pytest.raises(ConfigError, match="no tasks"):
        plain.write_text("{}", encoding="utf-8")
        load_tasks(plain)

    class AdbLike:
        name = "emulator-5554"

    with pytest.raises(ConfigError, match="cannot reset itself"):
        BetweenTasks("reset", AdbLike())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="--reset-command"):
        BetweenTasks("command", AdbLike())  # type: ignore[arg-type]
    marker = tmp_path / "marker.txt"
    step = BetweenTasks(
        "command", AdbLike(), command=f'printf "%s|%s" "$MAE_DEVICE" "$MAE_NEXT_TASK" > {marker}'
    )  # type: ignore[arg-type]
    step(TaskSpec(instruction="Open Maps"))
    assert marker.read_text(encoding="utf-8") == "emulator-5554|Open Maps"
    asked: list[str] = []
    BetweenTasks("enter", AdbLike(), ask=asked.append)(TaskSpec(instruction="Open Maps"))  # type: ignore[arg-type]
    assert asked and "press Enter" in asked[0]
    assert BetweenTasks.default_mode(VirtualPhone()) == "reset"
    assert BetweenTasks.default_mode(AdbLike(), "adb reboot") == "command"  # type: ignore[arg-type]


def test_evolution_single_run_loads_the_store_and_reflects_unless_no_evolve(
    tmp_path: Path,
    fake_server: FakeModelServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    phone = VirtualPhone()

    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        return build_runtime(settings, api_keys, device=phone, perceptor=GroundTruth(phone))

    monkeypatch.setattr(run_cmd, "build_runtime", fake_build_runtime)
    memory_dir = tmp_path / "memory"
    store = MemoryStore(memory_dir)
    store.set_tips("1. A tip stored before the run.\n")
    argv = [
        "run", "Open the Notes app", "--device", "virtual", "--backbone", "custom", "--base-url",
        fake_server.base_url, "--model", "fake-vlm", "--log-dir", str(tmp_path / "runs"), "--quiet",
    ]  # fmt: skip

    fake_server.responder = Agents()
    assert main([*argv, "--memory-dir", str(memory_dir), "--no-evolve"]) == 0
    assert all("A tip stored before the run." in r.text for r in fake_server.requests_for("operator"))
    assert fake_server.requests_for("experience") == [] and store.versions() == [1]

    monkeypatch.setenv("MAE_MEMORY_DIR", str(memory_dir))
    phone.reset()
    assert main(argv) == 0
    assert len(fake_server.requests_for("experience")) == 2
    assert store.versions() == [1, 2] and TIP_ONE in store.load().tips
    assert fake_server.unexpected == []
