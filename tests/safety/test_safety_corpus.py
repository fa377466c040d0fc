"""The sensitive-action gate on a corpus of actions: 30+ that must be gated, 30+ that must not.

Each case is (description, action, label of the element under the tap point or None). The gate decides
on the action and its target, so a sensitive word further on in a description does not gate it.
"""

from __future__ import annotations

from typing import Any

import pytest

from mae.actions.registry import ActionCall, make_atomic
from mae.actions.safety import SafetyPolicy, description_target, tap_targets
from mae.perception.elements import Element

TAP = ("Tap", {"x": 500, "y": 500})

GATED: list[tuple[str, tuple[str, dict[str, Any]], str | None]] = [
    ("Tap the button to finish", TAP, "Place your order"),
    ("Confirm", TAP, "Pay now"),
    ("Go on", TAP, "Proceed to checkout"),
    ("Tap the green button", TAP, "Buy now"),
    ("Tap it", TAP, "Buy"),
    ("Start the trial", TAP, "Subscribe"),
    ("Complete it", TAP, "Complete purchase"),
    ("Add my card", TAP, "Add payment method"),
    ("Tap the paper plane", TAP, "Send"),
    ("Tap the icon", TAP, "send message"),
    ("Share the draft", TAP, "Post"),
    ("Tap the blue button", TAP, "Tweet"),
    ("Answer her", TAP, "Reply"),
    ("Make it public", TAP, "Publish"),
    ("Tap the button", TAP, "Submit"),
    ("Tap the trash can", TAP, "Delete"),
    ("Get rid of it", TAP, "Delete note"),
    ("Tap", TAP, "Move to trash"),
    ("Clean up", TAP, "Clear all data"),
    ("Tap the button", TAP, "Install"),
    ("Remove the app", TAP, "Uninstall"),
    ("Keep the permission", TAP, "Always allow"),
    ("Leave the account", TAP, "Sign out"),
    ("Tap the link", TAP, "Sign in with Google"),
    ("Tap the option", TAP, "Change password"),
    # nothing named under the tap point: the description's leading phrase names the target
    ("Send the message to Alice", TAP, None),
    ("Tap the send button to send the message", TAP, None),
    ("Tap 'Place your order' to pay", TAP, None),
    ("Delete the old note", TAP, None),
    ("Tap Install to get the app", TAP, None),
    ("I will tap Post to publish the tweet", TAP, None),
    ("Click on Buy Now", TAP, None),
    ("Enter the card number", ("Type", {"text": "4111 1111 1111 1111"}), None),
    ("Enter the number", ("Type", {"text": "5500-0000-0000-0004"}), None),
]

NOT_GATED: list[tuple[str, tuple[str, dict[str, Any]], str | None]] = [
    ("Open the first post", TAP, "Walking in the park this morning with the dog and friends"),
    ("Open the first post", TAP, None),
    ("Remove filter", TAP, None),
    ("Tap Remove filter", TAP, "Remove filter"),
    ("Sign in as guest", TAP, "Continue as guest"),
    ("Sign in as guest", TAP, None),
    ("Tap the search box", TAP, "Search here"),
    ("Open Amazon to search for the air fryer", ("Open_App", {"app_name": "Amazon"}), None),
    ("Scroll down to see more results", ("Swipe", {"x1": 500, "y1": 1500, "x2": 500, "y2": 500}), None),
    ("Add the controller to the cart", TAP, "Add to cart"),
    ("Type the price into the new note", ("Type", {"text": "$49.99"}), None),
    ("Tap the sent folder", TAP, "Sent"),
    ("Open the posts tab", TAP, "Posts"),
    ("Tap the result to check the payment options", TAP, "Ninja Air Fryer AF101"),
    ("Look at the delivery details before paying later", TAP, "Delivery details"),
    ("Type the address", ("Type", {"text": "1600 Amphitheatre Parkway"}), None),
    ("Type the phone number", ("Type", {"text": "+1 217 555 0100"}), None),
    ("Go back without deleting anything", ("Back", {}), None),
    ("Tap the search icon to search for delete shortcuts", TAP, "Search"),
    ("Open the first review to read what buyers say", TAP, "4.5 out of 5 stars"),
    ("Tap Directions", TAP, "Directions"),
    ("Open the notes app to post the summary later", ("Open_App", {"app_name": "Notes"}), None),
    ("Tap the Korean restaurant", TAP, "Korean restaurant, $, 0.6 mi"),
    ("Tap the Settings icon", TAP, "Settings"),
    ("Tap Share to see options", TAP, "Share"),
    ("Tap the cart icon", TAP, "Cart"),
    ("Tap the back arrow", TAP, "back"),
    ("Go home", ("Home", {}), None),
    ("Wait for the page", ("Wait", {}), None),
    ("Tap the text field to type the message", TAP, "Type a message"),
    ("Open the payment history screen? no: tap Orders", TAP, "Your orders"),
    ("Tap Sign in later", TAP, "Not now"),
    ("Open the post by Alice", TAP, None),
    ("Read the messages", ("Open_App", {"app_name": "Messages"}), None),
    # answering a permission prompt the task needs (real case: h_korean_late_night, Maps' location prompt)
    ("Allow location access only this time to see nearby restaurants", TAP, "Only this time"),
    ("Accept the prompt", TAP, "Allow"),
    ("Accept location", TAP, "While using the app"),
    ("Dismiss the notification prompt", TAP, "Don't allow"),
]


def gate(description: str, action: tuple[str, dict[str, Any]], label: str | None) -> str | None:
    name, arguments = action
    elements = [Element(kind="text", text="Unrelated", box=(0, 100, 300, 160))]
    if label is not None:
        elements.append(Element(kind="icon", text=label, box=(420, 460, 580, 540), named_by="a11y"))
    return SafetyPolicy().check(
        ActionCall(name=name, arguments=arguments), [make_atomic(name, arguments)], description, elements
    )


def test_safety_corpus_figures() -> None:
    gated = [case for case in GATED if gate(*case) is not None]
    passed = [case for case in NOT_GATED if gate(*case) is None]
    assert len(GATED) >= 30 and len(NOT_GATED) >= 30
    assert len(gated) == len(GATED), [c for c in GATED if c not in gated]
    assert len(passed) == len(NOT_GATED), [c for c in NOT_GATED if c not in passed]


@pytest.mark.parametrize("case", GATED, ids=lambda c: f"{c[0]}|{c[2]}")
def test_safety_gates(case: tuple[str, tuple[str, dict[str, Any]], str | None]) -> None:
    assert gate(*case) is not None


@pytest.mark.parametrize("case", NOT_GATED, ids=lambda c: f"{c[0]}|{c[2]}")
def test_safety_passes(case: tuple[str, tuple[str, dict[str, Any]], str | None]) -> None:
    assert gate(*case) is None


def test_safety_reason_names_the_target() -> None:
    assert gate("Finish", TAP, "Place your order") == "payment: tapping 'Place your order'"
    reason = gate("Send the message to Alice", TAP, None)
    assert reason == "sending a message: described as 'Send the message to Alice'"


def test_safety_target_lookup() -> None:
    near = Element(kind="icon", text="Send", box=(100, 100, 140, 140))
    assert tap_targets([near], 120, 120) == [near]
    assert tap_targets([near], 170, 120) == [near]  # within reach of a finger
    assert tap_targets([near], 400, 400) == []
    assert description_target("I will tap on the 'Send' button") == "Send' button"
