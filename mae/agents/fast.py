"""Fast mode's pieces (``LoopSettings.fast``): what they add to a request and what they recognise.

- The Action Reflector may answer two more sections in the same request: whether the current subgoal is
  done (so the Manager is asked only when it has something to decide) and the updated important notes
  (so no separate Notetaker call is needed).
- A pop-up recognised by an exact dismiss label is dismissed by the Operator without a Manager round.
- A speculative Operator's action is used only when the screen it saw is still the one shown.
"""

from __future__ import annotations

from PIL import Image, ImageChops

from mae.agents.notetaker import MAX_NOTES_CHARS
from mae.agents.parsing import ReplyProblem, require_sections, says_nothing
from mae.memory.working import WorkingMemory
from mae.perception.elements import Element, Perception

DISMISS_LABELS = (
    "not now",
    "no thanks",
    "no, thanks",
    "maybe later",
    "skip",
    "got it",
    "don't allow",
    "don’t allow",
    "reject all",
    "dismiss",
)
"""Whole labels (case-insensitive) of buttons that close a pop-up without side effects. "OK", "Allow"
and "Accept" are left out (they agree to something), and so are "Close" and "Later" (tabs, fields and
reminders carry them outside pop-ups)."""

SUBGOAL_SECTION = "Subgoal Done"
NOTES_SECTION = "Important Notes"

SUBGOAL_REQUEST = f"""
### {SUBGOAL_SECTION} ###
Yes if the current subgoal is now fully achieved on the phone, No otherwise."""

NOTES_REQUEST = f"""
### {NOTES_SECTION} ###
The full, updated important notes: keep every existing note that is still relevant and add what the
screen after the action shows that the request needs (copy numbers and names exactly); no actions or
progress. Write "None" when there is nothing to keep."""

NOTES_CONTEXT = """

### Overall Plan ###
{plan}

### Existing Important Notes ###
{notes}
"""


def reflector_addendum(memory: WorkingMemory, *, subgoal_done: bool, notes: bool) -> str:
    """What fast mode appends to the Action Reflector's prompt: the extra sections it asks for (and, for
    the notes, the plan and the existing notes they are written from); '' when it asks for none."""
    if not (subgoal_done or notes):
        return ""
    text = ""
    if notes:
        text += NOTES_CONTEXT.format(plan=memory.plan or "(no plan)", notes=memory.notes or "(none yet)")
    text += "\nAfter the sections above, also write:"
    if subgoal_done:
        text += "\n" + SUBGOAL_REQUEST
    if notes:
        text += "\n" + NOTES_REQUEST
    return text + "\n"


def read_subgoal_done(text: str) -> bool | None:
    """The Reflector's answer on the subgoal: True, False, or None when it did not say clearly."""
    try:
        section = require_sections(text, [], optional=(SUBGOAL_SECTION,))[SUBGOAL_SECTION]
    except ReplyProblem:
        return None
    words = section.strip().lower().split()
    first = words[0].strip(".,:;!") if words else ""
    return True if first in ("yes", "done", "true") else False if first in ("no", "not", "false") else None


def read_notes(text: str) -> str | None:
    """The notes written in the Reflector's reply ('' for "None"); None when the section is missing."""
    try:
        sections = require_sections(text, [], optional=(NOTES_SECTION,))
    except ReplyProblem:
        return None
    notes = sections[NOTES_SECTION].strip()
    if not notes:
        return None
    if len(notes) > MAX_NOTES_CHARS:
        notes = notes[:MAX_NOTES_CHARS].rstrip() + "\n[notes cut: too long]"
    return "" if says_nothing(notes) else notes


POPUP_MAX_ELEMENTS = 20
"""A pop-up's screen lists few elements (the app behind a dialog window is left out when the phone's
accessibility tree marks the window; real dialogs list 5 to 6 texts, the virtual phone's 11 to 13). A
screen with more is an app's own page, whose "Skip" is one of its buttons (a real case: an app's
room-editing page with 37 texts)."""


def popup_dismiss(perception: Perception) -> Element | None:
    """The dismiss button of a pop-up on this screen: an element whose whole text is a known dismiss
    label, on a screen of at most ``POPUP_MAX_ELEMENTS`` elements; None when there is none (or when the
    keyboard is up: a text box is being filled)."""
    if perception.keyboard_active or len(perception.elements) > POPUP_MAX_ELEMENTS:
        return None
    for element in perception.elements:
        label = " ".join((element.text or "").split()).strip().lower()
        if label in DISMISS_LABELS:
            return element
    return None


PERMISSION_GRANTS = ("only this time", "while using the app", "allow only while using the app", "allow")
"""Answers of Android's permission prompt that grant what it asks for (for now or while in use)."""


def grant_labels(perception: Perception) -> list[str]:
    """The answers on screen that grant a permission prompt's request, as written there, once each."""
    shown = (" ".join((e.text or "").split()) for e in perception.elements)
    return list(dict.fromkeys(text for text in shown if text.lower() in PERMISSION_GRANTS))


def permission_prompt(perception: Perception) -> bool:
    """Whether the screen shows a permission prompt: a button that grants the permission is on it."""
    return bool(grant_labels(perception))


def popup_subgoal(memory: WorkingMemory, button: Element, perception: Perception) -> str:
    """The subgoal the Operator gets on a pop-up step: dismiss it (or, for a permission prompt, answer it
    as the task needs: a real model was once told to refuse the location a "nearest bakery" task needed),
    then go on with the current one."""
    then = f" Then go on with: {memory.subgoal}" if memory.subgoal else ""
    grants = grant_labels(perception)
    if grants:
        allow = " or ".join(f"“{text}”" for text in grants)
        return (
            f"A permission prompt is in the way: answer it as the task needs ({allow} when the task needs "
            f"what it asks for, “{button.text.strip()}” otherwise).{then}"
        )
    return f"A pop-up is in the way: dismiss it by tapping “{button.text.strip()}”.{then}"


THUMBNAIL_WIDTH = 128
CHANGED_LEVEL = 24
CHANGED_SHARE = 0.003
"""Two screens count as the same when under 0.3 % of a 128-pixel-wide grey thumbnail differ by more than
24 levels: a status-bar clock ticking stays under it, a dialog, a scroll or a new page does not."""


def same_picture(first: Image.Image, second: Image.Image) -> bool:
    """Whether two screenshots show the same screen (see ``CHANGED_SHARE``)."""
    if first.size != second.size:
        return False
    height = max(1, round(first.height * THUMBNAIL_WIDTH / first.width))
    small = [image.convert("L").resize((THUMBNAIL_WIDTH, height)) for image in (first, second)]
    diff = ImageChops.difference(small[0], small[1]).point(lambda v: 255 if v > CHANGED_LEVEL else 0)
    changed = diff.histogram()[255]
    return changed <= CHANGED_SHARE * THUMBNAIL_WIDTH * height
