"""Bounded notes: past the budget the Notetaker consolidates them, and a failed consolidation keeps them."""

from __future__ import annotations

from conftest import RunFn
from loop_scripting import Script, Step, section

from mae.agents.notes_budget import NOTES_BUDGET_CHARS, parse_consolidated
from mae.agents.parsing import ReplyProblem
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

OPEN = {"name": "Open_App", "arguments": {"app_name": "Notes"}}
HOME = {"name": "Home", "arguments": {}}
KEY_FACT = "Ninja DZ201 on Amazon: $159.99"


def growing_notes(consolidated: str | None) -> tuple[Script, list[int]]:
    """A Notetaker that adds a long fact every step and answers consolidation with ``consolidated``
    (None: repeats the notes unchanged, which is refused as not shorter)."""
    lengths: list[int] = []

    def notes(request: RecordedRequest) -> str:
        if "### Current Important Notes ###" in request.text:
            current = section(request.text, "Current Important Notes")
            return current if consolidated is None else consolidated
        existing = section(request.text, "Existing Important Notes")
        existing = "" if existing.startswith("(none") else existing
        step = len(lengths) + 1
        fact = f"Step {step}: result {step} costs ${100 + step}.00 " + "and has a long description. " * 12
        updated = "\n".join(x for x in (existing or KEY_FACT, fact.strip()) if x)
        lengths.append(len(updated))
        return updated

    steps = [Step(f"Look {i}", OPEN if i % 2 else HOME) for i in range(8)]
    return Script(steps, notes=notes), lengths


def test_loop_notes_past_the_budget_are_consolidated(run: RunFn, fake_server: FakeModelServer) -> None:
    script, _ = growing_notes(f"{KEY_FACT}\nCheapest other: result 1 at $101.00")
    fake_server.responder = script
    result, _ = run("Find the cheapest air fryer and note its price")
    assert result.finished, result.message
    consolidations = [r for r in fake_server.requests_for("notetaker") if "Current Important Notes" in r.text]
    assert consolidations, "the notes passed the budget, so the Notetaker was asked to consolidate"
    assert "at most 900 characters" in consolidations[0].text
    for request in fake_server.requests_for("manager"):
        assert len(section(request.text, "Important Notes")) <= NOTES_BUDGET_CHARS + 450
    assert KEY_FACT in result.memory.notes and len(result.memory.notes) <= NOTES_BUDGET_CHARS + 450


def test_loop_notes_stay_when_consolidation_fails(run: RunFn, fake_server: FakeModelServer) -> None:
    script, lengths = growing_notes(None)
    fake_server.responder = script
    result, _ = run("Find the cheapest air fryer and note its price")
    assert result.finished, result.message
    assert len(result.memory.notes) == lengths[-1], "an unusable consolidation keeps the notes as they were"


def test_notes_consolidation_replies_are_read_tolerantly_and_checked() -> None:
    before = "A" * 2000
    assert (
        parse_consolidated("Sure.\r\n### Important Notes ###\r\nPrice: $5\r\n", before).notes == "Price: $5"
    )
    for reply, problem in [
        ("### Important Notes ###\nNone", "is empty"),
        (f"### Important Notes ###\n{before}", "no shorter than before"),
        ("I cannot do that.", "Important Notes"),
    ]:
        try:
            parse_consolidated(reply, before)
        except ReplyProblem as exc:
            assert problem in exc.message
        else:
            raise AssertionError(f"accepted {reply[:40]!r}")


def test_loop_consolidation_that_loses_a_price_is_repaired_and_logged(
    run: RunFn, fake_server: FakeModelServer
) -> None:
    # the model keeps only the key fact, drops every step's price silently, and does so again when told
    script, _ = growing_notes(KEY_FACT)
    fake_server.responder = script
    result, events = run("Find the cheapest air fryer and note its price")
    assert result.finished, result.message
    consolidations = [r for r in fake_server.requests_for("notetaker") if "Current Important Notes" in r.text]
    retries = [r for r in consolidations if "the notes lost facts the old notes held" in r.text]
    assert retries, "a reply that lost facts got the corrective retry naming them"
    assert "$101.00" in retries[0].text
    notes = result.memory.notes
    assert KEY_FACT in notes and "$101.00" in notes and "$102.00" in notes, notes
    for line in notes.splitlines():
        assert notes.splitlines().count(line) == 1, f"put back twice: {line}"
    warnings = [e for e in events if e.type == "warning" and "consolidated notes lost" in str(e.data)]
    assert warnings, "the run log says which facts were put back"
