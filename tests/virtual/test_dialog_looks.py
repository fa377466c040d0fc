"""Dialogs over a dimmed app, and their order and look drawn per app and seed."""

from __future__ import annotations

from PIL import Image, ImageStat

from mae.device.virtual import VirtualPhone
from mae.device.virtual.realism import DISMISS_LABELS, NAG_KINDS, STYLES, Realism

POPUPS = Realism(enabled=True, loading=False, slow_open=False)
APPS = ("Maps", "Amazon", "Walmart", "Chrome", "X", "Best Buy", "Notes", "Trips")
NAV = {"back button", "home button", "recent apps button"}


def _phone_with(style: str, kind: str = "", app: str = "Amazon") -> VirtualPhone:
    """A phone showing, on ``app``, a dialog of ``style`` (and ``kind``) on top, other dialogs closed."""
    for seed in range(60):
        phone = VirtualPhone(realism_settings=POPUPS.model_copy(update={"seed": seed}))
        phone.open_app(app)
        while (shown := phone.realism.dialog(app)) is not None:
            if shown.style == style and (not kind or shown.kind == kind):
                return phone
            phone.back()
    raise AssertionError(f"no seed shows a {style} {kind} dialog on {app}")


def _mean(image: Image.Image, box: tuple[int, int, int, int]) -> float:
    return float(sum(ImageStat.Stat(image.crop(box).convert("L")).mean))


def test_a_card_shows_the_app_dimmed_behind_it_and_only_the_dialog_is_perceivable() -> None:
    phone = _phone_with("card")
    dimmed = phone.screenshot()
    dialog = phone.realism.dialog("Amazon")
    assert dialog is not None
    phone.back()
    while phone.realism.dialog("Amazon") is not None:
        phone.back()
    plain = phone.screenshot()
    # The app's header and search box, above any centred dialog: same picture, darker.
    band = (0, 100, 1080, 400)
    assert _mean(dimmed, band) < 0.6 * _mean(plain, band)
    lifted = dimmed.crop(band).point(lambda v: min(255, round(v / 0.4)))  # undo a 60 % black scrim
    assert abs(_mean(lifted, (0, 0, 1080, 300)) - _mean(plain, band)) < 6
    assert ImageStat.Stat(dimmed.crop(band).convert("L")).stddev[0] > 10  # not a flat grey
    # Nothing of the app is tappable, in the ground truth or in the accessibility tree.
    phone2 = _phone_with("card")
    texts = {e.text for e in phone2.ground_truth()}
    assert "Search Amazon" not in texts and "Search Amazon" in {e.text for e in phone.ground_truth()}
    labels = {name for name, _ in phone2.tap_targets()} - NAV
    shown = phone2.realism.dialog("Amazon")
    assert shown is not None
    assert labels <= {b.label for b in shown.buttons} | {"close"}
    tree = phone2.ui_tree()
    assert not any("Search Amazon" in n.label for n in tree.nodes)
    assert {n.label for n in tree.nodes if n.clickable} - NAV == labels


def test_a_sheet_is_lighter_and_a_fullscreen_interstitial_hides_the_app() -> None:
    sheet = _phone_with("sheet")
    card = _phone_with("card")
    band = (0, 100, 1080, 400)
    assert _mean(sheet.screenshot(), band) > _mean(card.screenshot(), band)
    full = _phone_with("fullscreen")
    shot = full.screenshot()
    assert ImageStat.Stat(shot.crop(band).convert("L")).mean[0] > 250  # white, no app behind
    assert "Search Amazon" not in {e.text for e in full.ground_truth()}


def test_a_tap_on_the_scrim_closes_a_sheet_or_card_but_not_a_permission_dialog() -> None:
    phone = _phone_with("sheet")
    shown = phone.realism.dialog("Amazon")
    phone.tap(540, 300)
    assert phone.log[-1].effect == "tapped outside the dialog, which closed it"
    assert phone.realism.dismissed[-1].endswith(":outside")
    assert phone.realism.dialog("Amazon") is not shown
    assert phone.screen_name == "Amazon/home"  # the tap did not reach the app
    permission = _phone_with("card", kind="permission")
    permission.tap(540, 300)
    assert permission.log[-1].effect == "nothing there"
    assert permission.realism.dialog("Amazon") is not None
    card = _phone_with("card", kind="whats_new")
    dialog = card.realism.dialog("Amazon")
    assert dialog is not None and dialog.kind != "permission"
    # inside the card, off its buttons: nothing happens
    box = card.ui_tree().window
    assert box is not None
    card.tap(box[0] + 30, box[1] + 30)
    assert card.realism.dialog("Amazon") is dialog


def test_order_look_and_labels_vary_per_app_and_seed_and_repeat_for_a_seed() -> None:
    def launch(seed: int) -> list[tuple[str, str, str, tuple[str, ...]]]:
        phone = VirtualPhone(realism_settings=POPUPS.model_copy(update={"seed": seed}))
        seen = []
        for app in APPS:
            phone.open_app(app)
            for d in (d for d in phone.realism.dialogs if d.app == app):
                seen.append((app, d.kind, d.style, tuple(b.label for b in d.buttons)))
        return seen

    assert launch(5) == launch(5)
    runs = [launch(seed) for seed in range(12)]
    styles = {style for run in runs for _, _, style, _ in run}
    assert styles == set(STYLES)
    words = {label for run in runs for *_, labels in run for label in labels}
    assert len(words & set(DISMISS_LABELS)) >= 5
    orders = set()
    for run in runs:
        for app in APPS:
            kinds = tuple(k for a, k, _, _ in run if a == app)
            if "permission" in kinds and len(kinds) > 1:
                orders.add(kinds.index("permission"))
    assert len(orders) >= 2  # the permission dialog comes first for some, later for others
    nag_at_launch = {
        (app, seed) for seed, run in enumerate(runs) for app, kind, _, _ in run if kind == "sign_in"
    }
    assert nag_at_launch and len(nag_at_launch) < 12 * len(APPS)
    assert all(app not in ("Notes",) for app, _ in nag_at_launch)


def test_every_obstacle_goes_with_back_or_with_a_dismiss_button_and_leaves_the_app_as_it_was() -> None:
    kinds = {"maps", "browser", "social", "shop", "trips"}
    assert set(NAG_KINDS) == kinds
    for seed in range(5):
        by_button = VirtualPhone(realism_settings=POPUPS.model_copy(update={"seed": seed}))
        by_back = VirtualPhone(realism_settings=POPUPS.model_copy(update={"seed": seed}))
        for app in APPS:
            by_button.open_app(app)
            by_back.open_app(app)
            while by_button.realism.dialog(app) is not None:
                targets = dict(reversed(by_button.tap_targets()))
                label = next((name for name in DISMISS_LABELS if name in targets), None)
                assert label is not None, f"seed {seed}: no dismiss button on {app}: {list(targets)}"
                left, top, right, bottom = targets[label]
                by_button.tap((left + right) // 2, (top + bottom) // 2)
            while by_back.realism.dialog(app) is not None:
                by_back.back()
                assert by_back.current_app is not None
            assert by_button.screen_name == by_back.screen_name == f"{app}/{by_back.apps[app].root().name}"
            assert by_button.screenshot().tobytes() == by_back.screenshot().tobytes()


def test_dimmed_display_list_paints_what_a_scrim_over_the_painted_app_would() -> None:
    from PIL import ImageChops

    from mae.device.virtual import render

    phone = VirtualPhone()
    phone.open_app("Amazon")
    frame = phone._frame
    plain = frame.paint()
    scrim = Image.new("RGB", plain.size, (0, 0, 0))
    expected = Image.blend(plain, scrim, 0.6)
    got = render.paint(frame.width, frame.height, frame.background, render.dimmed(frame.ops, 0.6))
    band = (0, 96, 1080, 2208)  # the app (the canvas background outside it is not part of the list)
    assert (
        max(ImageChops.difference(expected.crop(band), got.crop(band)).getextrema(), key=lambda e: e[1])[1]
        <= 2
    )


def test_rows_readable_above_a_sheet_count_as_seen_and_rows_under_it_do_not() -> None:
    """Horror-movie task, real model: three Night Harbor posts lay above X's "Sign in for a better
    experience" sheet, plainly readable through its scrim; the model read and summarised them, yet the
    grader counted none as seen (rows behind a dialog were never marked), and "Read several reviews"
    was lost. Rows wholly above the dialog are seen; rows it covers are not."""
    phone = _phone_with("sheet", app="X")
    dialog_top = phone._dialog_box[1] if phone._dialog_box else 0
    under_sheet = {key for key in phone.seen_now() if key.startswith("x:post:")}
    assert under_sheet and dialog_top > 600
    while phone.realism.dialog("X") is not None:
        phone.back()
    plain = [key for key in phone.seen_now() if key.startswith("x:post:")]
    assert under_sheet < set(plain)  # the rows the sheet covers are not seen
    assert under_sheet == set(plain[: len(under_sheet)])  # the top rows are
