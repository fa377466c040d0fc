"""Action and Reflection Accuracy by code: a proxy for the paper's human-judged AA and RA.

The paper's AA and RA are judged by a person looking at every step. On the virtual suite the code only
knows which rubric items held after each step, so it can only approximate them; reports show the
result under its own name, "AA (code proxy)" and "RA (code proxy)", never in the paper's columns.

An action counts as wrong when:

- it did not run, or the phone did not change (a tap on nothing, a refused action);
- it lost a rubric item that does not hold at the end (the final state lost it: stopping on the
  dearer store's page after finding the cheaper one);
- items were still missing at the end and nothing was gained from it on: it led away from every
  remaining item for good (the actions after the run's last progress, in a run that fell short).

Leaving a page to explore is not wrong: the item the page held may stop holding for a while (the first
store's product page while the agent checks the second store, Back from an out-of-stock product) as
long as it holds again at the end or the run goes on to gain items. What the proxy cannot see: a
detour that changes the screen and is undone later (opening the wrong product, then Back) counts as
right, because exploring looks the same to the rubric; a person's marks in the Judge view replace it.

A verdict of the Action Reflector is right when it said A exactly for the actions counted right;
verdicts the phone made itself (an action that never ran, a stop, a refusal) are not judged, and
Mobile-Agent v1 has no Action Reflector.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel


class ProxyAction(BaseModel):
    """What the proxy needs of one action."""

    executed: bool
    effect: bool | None
    outcome: str
    self_judged: bool = False


def action_correctness(held: Sequence[Sequence[bool]], actions: Sequence[ProxyAction]) -> list[bool]:
    """Per action, whether the proxy counts it right; ``held[i]`` = rubric items holding after action
    ``i`` (``held[0]``: at the start), so ``len(held) == len(actions) + 1``."""
    final = held[-1]
    missing_at_end = not all(final)
    gained_from: list[bool] = [False] * (len(actions) + 1)
    for i in range(len(actions), 0, -1):  # gained_from[i]: some item newly holds at step i or later
        gained = any(after and not before for before, after in zip(held[i - 1], held[i], strict=True))
        gained_from[i] = gained or (gained_from[i + 1] if i < len(actions) else False)
    out = []
    for i, action in enumerate(actions, 1):
        lost_for_good = any(
            before and not after and not end
            for before, after, end in zip(held[i - 1], held[i], final, strict=True)
        )
        led_away = missing_at_end and not gained_from[i]
        out.append(bool(action.executed and action.effect and not lost_for_good and not led_away))
    return out


def reflection_correctness(
    correct: Sequence[bool], actions: Sequence[ProxyAction], has_reflector: bool = True
) -> list[bool | None]:
    """Per action, whether the Action Reflector's verdict matches the proxy (None: not judged)."""
    return [
        None if not has_reflector or action.self_judged else (action.outcome == "A") == ok
        for ok, action in zip(correct, actions, strict=True)
    ]
