"""The sensitive-action gate against the bypasses an anonymous review found (issue 39), one table row each:
a tap beside a button inside a long text's box, card numbers split over Type calls or written with dots
or spaces, a password typed as a sentence or into a password field. The cart case runs on the virtual
phone with the real Perceptor (OCR and the phone's accessibility tree), as an agent run sees it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mae.actions.registry import ActionCall, make_atomic
from mae.actions.safety import SafetyPolicy, digits_joined
from mae.device.virtual import VirtualPhone
from mae.perception.a11y import A11yTree, parse_uiautomator
from mae.perception.elements import Element
from mae.perception.fusion import fuse
from mae.perception.icons import make_icon_detector
from mae.perception.ocr import make_ocr
from mae.perception.perceptor import Perceptor

Step = tuple[str, dict[str, Any]]


def run_gate(policy: SafetyPolicy, steps: list[Step], elements: list[Element]) -> list[str | None]:
    """The gate's answer to each action in turn (one policy: consecutive calls share what it saw)."""
    answers = []
    for name, arguments in steps:
        call = ActionCall(name=name, arguments=arguments)
        answers.append(policy.check(call, [make_atomic(name, arguments)], "Do it", elements))
        policy.commit()  # it ran (the gate's own tests approve what they ask)
    return answers


CARD_FIELD = Element(
    kind="text", text="", box=(40, 600, 1040, 700), role="field", control=(40, 600, 1040, 700)
)
NAME_FIELD = Element(
    kind="text", text="Alice", box=(40, 400, 1040, 500), role="field", control=(40, 400, 1040, 500)
)
PASSWORD_A11Y = Element(kind="text", text="", box=(40, 800, 1040, 900), role="field", password=True)
PIN_LABELLED = Element(kind="text", text="Enter PIN", box=(40, 800, 1040, 900), role="field")
TITLE = Element(
    kind="text",
    text="Ninja Foodi 8 qt 2-Basket Air Fryer with DualZone Technology",
    box=(48, 900, 1000, 1000),
)
DELETE = Element(
    kind="text", text="Delete", box=(880, 1010, 1030, 1050), role="button", control=(850, 980, 1080, 1080)
)

BYPASSES: list[tuple[str, list[Step], list[Element], str]] = [
    (
        "tap inside a long title's box, on a button's tap area",
        [("Tap", {"x": 950, "y": 990})],
        [TITLE, DELETE],
        "deleting",
    ),
    (
        "tap near a button, no tree",
        [("Tap", {"x": 950, "y": 995})],
        [TITLE, DELETE.model_copy(update={"control": None})],
        "deleting",
    ),
    (
        "card number over two Type calls",
        [("Type", {"text": "4111 1111"}), ("Type", {"text": " 1111 1111"})],
        [NAME_FIELD],
        "card number",
    ),
    (
        "second half typed after the first landed in the field",
        [("Type", {"text": "1111 1111"})],
        [NAME_FIELD, CARD_FIELD.model_copy(update={"text": "4111 1111 "})],
        "card number",
    ),
    ("card number with dots", [("Type", {"text": "4111.1111.1111.1111"})], [], "card number"),
    (
        "a space between every digit",
        [("Type", {"text": "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"})],
        [],
        "card number",
    ),
    ("password in a sentence", [("Type", {"text": "my password is hunter2"})], [NAME_FIELD], "password"),
    ("tap a field the tree flags as password", [("Tap", {"x": 500, "y": 850})], [PASSWORD_A11Y], "password"),
    (
        "type after tapping a PIN field",
        [("Tap", {"x": 500, "y": 850}), ("Type", {"text": "2468"})],
        [PIN_LABELLED],
        "password",
    ),
]


@pytest.mark.parametrize("case", BYPASSES, ids=[c[0] for c in BYPASSES])
def test_each_bypass_is_gated(case: tuple[str, list[Step], list[Element], str]) -> None:
    _name, steps, elements, rule = case
    answers = run_gate(SafetyPolicy(), steps, elements)
    assert answers[-1] is not None and answers[-1].startswith(rule), answers


KEPT: list[tuple[str, list[Step], list[Element]]] = [
    ("tap on the title, away from Delete", [("Tap", {"x": 200, "y": 930})], [TITLE, DELETE]),
    ("a phone number", [("Type", {"text": "+1 217 555 0199"})], [NAME_FIELD]),
    ("a search after another field's text", [("Type", {"text": "air fryer"})], [NAME_FIELD]),
    (
        "typing after leaving the PIN field",
        [("Tap", {"x": 500, "y": 450}), ("Type", {"text": "Bob"})],
        [NAME_FIELD, PIN_LABELLED],
    ),
    ("a word that starts like pin", [("Type", {"text": "pinterest recipes"})], []),
    (  # Back leaves the field (Enter does not: card forms move to the next box with it)
        "a split number after Back",
        [("Type", {"text": "4111 1111"}), ("Back", {}), ("Type", {"text": "1111 1111"})],
        [],
    ),
]


@pytest.mark.parametrize("case", KEPT, ids=[c[0] for c in KEPT])
def test_ordinary_actions_stay_ungated(case: tuple[str, list[Step], list[Element]]) -> None:
    _name, steps, elements = case
    assert run_gate(SafetyPolicy(), steps, elements) == [None] * len(steps)


def test_digits_are_joined_across_separators_only() -> None:
    assert digits_joined("4111.1111 1111-1111") == "4111111111111111"
    assert digits_joined("room 4, floor 2") == "room 4, floor 2"  # only between two digits
    assert digits_joined("1, 2 and 3") == "12 and 3"


def test_the_virtual_cart_delete_is_gated_from_above_its_label() -> None:
    phone = VirtualPhone()
    phone.open_app("Amazon")
    shop = phone.current_app
    assert shop is not None
    shop.add_to_cart(shop.store.featured[0])  # type: ignore[attr-defined]
    phone.tap(980, 176)  # the cart icon in the store's header
    perceptor = Perceptor(make_ocr("rapidocr"), make_icon_detector("contour"))
    seen = perceptor.perceive(phone.screenshot(), False, tree=phone.ui_tree)
    delete = next(e for e in seen.elements if e.text == "Delete")
    x, y = delete.center[0], delete.center[1] - 40  # 40 px above the label, where the review tapped
    title = [e for e in seen.elements if e.kind == "text" and len(e.text.split()) > 6]
    policy = SafetyPolicy()
    reason = policy.check(
        ActionCall(name="Tap", arguments={"x": x, "y": y}),
        [make_atomic("Tap", {"x": x, "y": y})],
        "Open the product",
        seen.elements,
    )
    assert reason is not None and reason.startswith("deleting"), (reason, [e.text for e in title])
    phone.tap(x, y)  # the tap does land on Delete: the gate guarded what would have happened
    assert shop.cart == []  # type: ignore[attr-defined]


REAL_LOGIN = Path(__file__).parent / "data" / "safeum_login_dump.xml"
"""A real ``uiautomator dump`` of a login screen (SafeUM messenger; dumps/034.xml of the real-device
corpus, from AbdurRehman1129/safeum-automation@ba83bd29, window_dump.xml): a "Login" field and a
"Password" field whose node has ``password="true"``."""


def test_a_real_password_field_is_a_sensitive_target() -> None:
    nodes = parse_uiautomator(REAL_LOGIN.read_text(encoding="utf-8")).nodes
    secret = [n for n in nodes if n.password]
    login = next(n for n in nodes if n.editable and not n.password)
    assert len(secret) == 1 and secret[0].editable
    elements = fuse([], A11yTree(source="uiautomator", nodes=nodes))
    field = next(e for e in elements if e.password)
    assert field.role == "field" and field.control == secret[0].bounds

    def center(box: tuple[int, int, int, int]) -> dict[str, Any]:
        return {"x": (box[0] + box[2]) // 2, "y": (box[1] + box[3]) // 2}

    into_login = run_gate(
        SafetyPolicy(), [("Tap", center(login.bounds)), ("Type", {"text": "alice"})], elements
    )
    assert into_login == [None, None]
    into_secret = run_gate(
        SafetyPolicy(), [("Tap", center(secret[0].bounds)), ("Type", {"text": "x"})], elements
    )
    assert all(answer is not None and answer.startswith("password") for answer in into_secret)


def _type(policy: SafetyPolicy, text: str) -> str | None:
    call = ActionCall(name="Type", arguments={"text": text})
    return policy.check(call, [make_atomic("Type", {"text": text})], "Type it", [])


def test_a_card_number_stays_gated_when_asked_twice_and_declined() -> None:
    """An independent fuzz found MCP's act typing a declined card number: the approval round checks the
    action a second time, which used to add its digits to the typed run twice (24 digits, no card)."""
    policy = SafetyPolicy()
    assert _type(policy, "41111111") is None
    policy.commit()
    first = _type(policy, "11111111")
    again = _type(policy, "11111111")  # the client's second call, carrying the person's answer
    assert first is not None and first.startswith("card number") and again == first
    # declined: nothing was typed, so the run is still the first half
    assert _type(policy, "11111111") == first


@pytest.mark.parametrize("between", ["Wait", "Enter"])
def test_a_card_number_split_by_a_wait_or_enter_is_gated(between: str) -> None:
    """The same fuzz typed 4111111111111111 in two halves with Wait() or Enter() between them."""
    policy = SafetyPolicy()
    assert _type(policy, "41111111") is None
    policy.commit()
    assert policy.check(ActionCall(name=between, arguments={}), [make_atomic(between, {})], "", []) is None
    policy.commit()
    reason = _type(policy, "11111111")
    assert reason is not None and reason.startswith("card number")


def test_opening_another_app_ends_the_typed_run() -> None:
    policy = SafetyPolicy()
    assert _type(policy, "41111111") is None
    policy.commit()
    home = policy.check(ActionCall(name="Home", arguments={}), [make_atomic("Home", {})], "Go home", [])
    assert home is None
    policy.commit()
    assert _type(policy, "11111111") is None
