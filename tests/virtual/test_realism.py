"""Realism on the virtual phone: dialogs block and dismiss like real ones, spinners, decoys, seeds."""

from __future__ import annotations

import pytest

from mae.device.virtual import VirtualPhone
from mae.device.virtual.realism import DISMISS_LABELS, Realism, RealismRuntime

ONLY_POPUPS = Realism(enabled=True, sign_in_nag=False, loading=False, slow_open=False)
SEARCH_BOX = (540, 181)


def _centre(phone: VirtualPhone, label: str) -> tuple[int, int]:
    for name, (left, top, right, bottom) in reversed(phone.tap_targets()):
        if name == label:
            return (left + right) // 2, (top + bottom) // 2
    raise AssertionError(f"{label!r} not on screen: {[n for n, _ in phone.tap_targets()]}")


def _labels(phone: VirtualPhone) -> set[str]:
    return {name for name, _ in phone.tap_targets()}


def _search_maps(phone: VirtualPhone, query: str) -> None:
    phone.open_app("Maps")
    phone.tap(*SEARCH_BOX)
    phone.type_text(query)
    phone.enter()


def test_realism_is_off_by_default() -> None:
    phone = VirtualPhone()
    for label in phone.installed_apps():
        phone.open_app(label)
        assert phone.realism.dialog(label) is None
        assert not phone.realism.busy(label)
    _search_maps(phone, "korean restaurants champaign")
    assert phone.screen_name == "Maps/results"
    assert phone.realism.dialogs == []


def test_permission_dialog_blocks_taps_underneath_until_dismissed() -> None:
    phone = VirtualPhone(realism_settings=ONLY_POPUPS)
    phone.open_app("Maps")
    while (dialog := phone.realism.dialog("Maps")) is not None and dialog.kind != "permission":
        phone.back()
    assert dialog is not None
    phone.tap(*SEARCH_BOX)  # the search box is under the scrim, and a permission dialog ignores it
    assert phone.log[-1].effect == "nothing there"
    assert not phone.keyboard_active()
    assert phone.realism.dialog("Maps") is not None
    texts = {e.text for e in phone.ground_truth()}
    assert dialog.title.split()[0] in " ".join(texts)
    # the dialogs go one by one: Back, then a button
    while phone.realism.dialog("Maps") is not None:
        shown = phone.realism.dialog("Maps")
        assert shown is not None
        if shown.kind == "permission":
            phone.tap(*_centre(phone, "Don't allow"))
        else:
            phone.back()
    assert phone.screen_name == "Maps/home"  # Back closed a dialog, it did not leave the app
    phone.tap(*SEARCH_BOX)
    assert phone.keyboard_active()
    assert any(d.endswith(":permission:deny") for d in phone.realism.dismissed)


def test_first_run_card_closes_with_its_x_and_shows_once() -> None:
    for seed in range(30):
        phone = VirtualPhone(realism_settings=ONLY_POPUPS.model_copy(update={"seed": seed}))
        phone.open_app("Amazon")
        shown = phone.realism.dialog("Amazon")
        if shown is not None and shown.on_close is not None:
            break
    else:
        pytest.fail("no seed gave Amazon a first-run card")
    phone.tap(*_centre(phone, "close"))
    assert phone.realism.dismissed[-1] == f"Amazon:{shown.kind}:close"
    while phone.realism.dialog("Amazon") is not None:
        phone.back()
    phone.home()
    phone.open_app("Amazon")
    assert phone.realism.dialog("Amazon") is None


NAG_ONLY = Realism(enabled=True, popups=False, loading=False, slow_open=False)


def _nag_seed(app: str, at_launch: bool) -> int:
    """A seed with which ``app`` asks to sign in at launch (or after its first search)."""
    for seed in range(40):
        runtime = RealismRuntime(NAG_ONLY.model_copy(update={"seed": seed}), clock=lambda: 0.0)
        if runtime.nag_at_launch(app) == at_launch:
            return seed
    raise AssertionError(f"no seed makes {app} ask to sign in {'at launch' if at_launch else 'later'}")


def test_sign_in_nag_after_the_first_search() -> None:
    seed = _nag_seed("Walmart", at_launch=False)
    phone = VirtualPhone(realism_settings=NAG_ONLY.model_copy(update={"seed": seed}))
    phone.open_app("Walmart")
    assert phone.realism.dialog("Walmart") is None
    phone.tap(540, 318)
    phone.type_text("ribeye")
    phone.enter()
    nag = phone.realism.dialog("Walmart")
    assert nag is not None and nag.kind == "sign_in"
    phone.tap(*_centre(phone, "Sign in"))  # signing in fails, as it would without an account
    failed = phone.realism.dialog("Walmart")
    assert failed is not None and failed.kind == "sign_in_failed"
    phone.tap(*_centre(phone, "OK"))
    assert phone.realism.dialog("Walmart") is None
    phone.tap(540, 318)
    phone.type_text("oranges")
    phone.enter()
    assert phone.realism.dialog("Walmart") is None  # only once per app


def test_sign_in_nag_at_launch_shows_once_and_its_dismiss_word_closes_it() -> None:
    seed = _nag_seed("Amazon", at_launch=True)
    phone = VirtualPhone(realism_settings=NAG_ONLY.model_copy(update={"seed": seed}))
    phone.open_app("Amazon")
    nag = phone.realism.dialog("Amazon")
    assert nag is not None and nag.kind == "sign_in"
    word = next(b.label for b in nag.buttons if b.label != "Sign in")
    assert word in DISMISS_LABELS
    phone.tap(*_centre(phone, word))
    assert phone.realism.dialog("Amazon") is None
    phone.tap(540, 318)
    phone.type_text("laptop")
    phone.enter()
    assert phone.realism.dialog("Amazon") is None  # asked at launch: not asked again
    assert phone.screen_name == "Amazon/results"


def test_search_results_load_behind_a_spinner() -> None:
    phone = VirtualPhone(
        realism_settings=Realism(enabled=True, popups=False, sign_in_nag=False, slow_open=False)
    )
    _search_maps(phone, "korean restaurants champaign")
    assert phone.realism.busy("Maps") == "spinner"
    assert any(e.text == "loading spinner" for e in phone.ground_truth())
    phone.tap(540, 500)  # where the first result will be
    assert phone.screen_name == "Maps/results"
    assert not [e for e in phone.events if e.kind == "view_place"]
    phone.wait(5)
    assert not phone.realism.busy("Maps")
    phone.tap(540, 500)
    assert phone.screen_name == "Maps/place"


def test_slow_app_shows_a_blank_splash() -> None:
    settings = Realism(enabled=True, popups=False, sign_in_nag=False, loading=False)
    for seed in range(30):
        phone = VirtualPhone(realism_settings=settings.model_copy(update={"seed": seed}))
        phone.open_app("Notes")
        if phone.realism.busy("Notes") == "splash":
            break
    else:
        pytest.fail("no seed made Notes slow to open")
    assert _labels(phone) <= {"back button", "home button", "recent apps button"}
    phone.wait(5)
    assert "new note" in _labels(phone)


def test_sponsored_and_look_alike_results_only_with_realism() -> None:
    plain, real = VirtualPhone(), VirtualPhone(realism_settings=Realism(enabled=True))
    titles = {}
    for name, phone in (("plain", plain), ("real", real)):
        titles[name] = [p.title for p in phone.apps["Amazon"].results("nintendo switch joy-con")]  # type: ignore[attr-defined]
    assert titles["real"][0].startswith("Silicone Thumb Grips")  # the ad comes first
    assert any("(Renewed)" in t for t in titles["real"])
    assert not any("Thumb Grips" in t or "(Renewed)" in t for t in titles["plain"])
    places = [p.id for p in real.apps["Maps"].results("bakery")]  # type: ignore[attr-defined]
    assert places[0] == "crumbs-and-co"
    assert "crumbs-and-co" not in [p.id for p in plain.apps["Maps"].results("bakery")]  # type: ignore[attr-defined]


def test_each_feature_switches_off_on_its_own() -> None:
    phone = VirtualPhone(realism_settings=Realism(enabled=True, sponsored=False))
    titles = [p.title for p in phone.apps["Amazon"].results("nintendo switch joy-con")]  # type: ignore[attr-defined]
    assert not any("Thumb Grips" in t for t in titles)
    assert any("(Renewed)" in t for t in titles)


def test_out_of_stock_item_cannot_go_in_the_cart() -> None:
    phone = VirtualPhone(realism_settings=Realism(enabled=True, popups=False, sign_in_nag=False))
    phone.open_app("Best Buy")
    phone.wait(5)
    shop = phone.apps["Best Buy"]
    shop.open_product("bb-lg-b3-55")  # type: ignore[attr-defined]
    phone.wait(1)
    texts = {e.text for e in phone.ground_truth()}
    assert {"Out of stock", "Currently unavailable"} <= texts
    assert "Add to cart" not in _labels(phone)
    shop.add_to_cart("bb-lg-b3-55")  # type: ignore[attr-defined]
    assert not phone.carts.get("bestbuy")


def test_keyboard_covers_the_lower_part_of_the_app() -> None:
    covered = VirtualPhone(
        realism_settings=Realism(enabled=True, popups=False, sign_in_nag=False, loading=False)
    )
    plain = VirtualPhone()
    bottoms = {}
    for name, phone in (("covered", covered), ("plain", plain)):
        phone.open_app("Amazon")
        phone.wait(5)
        phone.tap(540, 318)
        phone.type_text("laptop")
        phone.enter()
        phone.tap(540, 318)  # focus the search box again: the keyboard comes up over the results
        assert phone.keyboard_active()
        box = phone.scroll_box()
        assert box is not None
        bottoms[name] = box[3]
        phone.tap(540, 2000)  # a result row in the covered phone, a key in both
        assert phone.screen_name == "Amazon/results"
        phone.back()  # hides the keyboard
        assert not phone.keyboard_active()
    assert bottoms["covered"] > bottoms["plain"]


def test_same_seed_same_phone_other_seed_other_dialogs() -> None:
    def run(seed: int) -> tuple[bytes, list[str]]:
        phone = VirtualPhone(width=540, height=1170, realism_settings=Realism(enabled=True, seed=seed))
        kinds = []
        for app in ("Maps", "Amazon", "Walmart", "Chrome", "X", "Best Buy", "Notes"):
            phone.open_app(app)
            kinds += [f"{d.app}:{d.kind}" for d in phone.realism.dialogs if d.app == app]
            kinds.append(f"{app}:{phone.realism.busy(app)}")
        return phone.screenshot().tobytes(), kinds

    assert run(3) == run(3)
    assert len({tuple(run(seed)[1]) for seed in range(4)}) > 1


def test_permission_wording_and_sign_in_wording_vary_as_on_a_real_phone() -> None:
    runtime = RealismRuntime(Realism(enabled=True, loading=False, slow_open=False), clock=lambda: 0.0)
    notify = runtime._notifications("Amazon")
    assert [b.label for b in notify.buttons] == ["Allow", "Don't allow"]  # no "While using the app"
    location = runtime._permission("Maps", "access this device's location")
    assert "While using the app" in [b.label for b in location.buttons]
    wordings = set()
    for seed in range(12):
        runtime = RealismRuntime(Realism(enabled=True, seed=seed), clock=lambda: 0.0)
        for app in ("Amazon", "Walmart", "X", "Maps"):
            nag = runtime._nag(app)
            labels = [b.label for b in nag.buttons]
            assert labels[0] == "Sign in" and labels[1] in DISMISS_LABELS  # dismissable as on a real phone
            wordings.add(nag.body.replace(app, "{app}"))
    assert len(wordings) >= 3
