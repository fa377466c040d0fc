"""Long lists page like real apps' (infinite scroll, Load more, numbered pages) and say where they end;
the shops' home feeds do not show the answers; what was seen on any page counts for the graders.

Screenshots in ``artifacts/virtual/``: ``paged-list.png`` (a page of results with its pager),
``list-end.png`` (the last page, with the end-of-list row), ``loading-more.png`` (an infinite list's
spinner row), ``citations.png`` (Scholar's "Cited by" list saying it shows the most relevant).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mae.device.virtual import VirtualPhone
from mae.device.virtual.apps.maps import MapsApp
from mae.device.virtual.apps.paging import (
    END_TEXTS,
    LOADING_CAPTION,
    NEXT,
    PREVIOUS,
    Paging,
    paging_for,
)
from mae.device.virtual.apps.shop import FEED_SIZE, ShopApp
from mae.device.virtual.realism import DISMISS_LABELS, Realism
from mae.eval.reference import compile_plan
from mae.eval.virtual_suite import load_task_suite

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "virtual"
QUERY = "laptop"  # 7 results on Amazon with realism on


def paging_seed(style: str, app: str = "Amazon") -> int:
    """The first seed whose ``app`` pages its lists in ``style``."""
    for seed in range(100):
        if paging_for(VirtualPhone(realism_settings=Realism(enabled=True, seed=seed)), app).style == style:
            return seed
    raise AssertionError(f"no seed below 100 draws {style!r}")


def phone_with(style: str, app: str = "Amazon") -> tuple[VirtualPhone, Paging]:
    """A phone whose ``app`` pages its lists in ``style`` (the first seed that draws it)."""
    seed = paging_seed(style, app)
    phone = VirtualPhone(
        realism_settings=Realism(enabled=True, seed=seed, popups=False, loading=False, slow_open=False)
    )
    return phone, paging_for(phone, app)


def texts(phone: VirtualPhone) -> list[str]:
    return [e.text for e in phone.ground_truth()]


def tap(phone: VirtualPhone, label: str) -> None:
    box = next(box for name, box in phone.tap_targets() if name == label)
    phone.tap((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)


def dismiss_dialogs(phone: VirtualPhone) -> None:
    """Close whatever dialogs are up (their looks and dismiss words are drawn per app and seed)."""
    for _ in range(6):
        names = [name for name, _ in phone.tap_targets() if name in DISMISS_LABELS]
        if not names:
            return
        tap(phone, names[0])


def search(phone: VirtualPhone, query: str = QUERY) -> ShopApp:
    phone.open_app("Amazon")
    dismiss_dialogs(phone)
    tap(phone, "Search Amazon")
    phone.type_text(query)
    phone.enter()
    dismiss_dialogs(phone)
    app = phone.current_app
    assert isinstance(app, ShopApp)
    return app


def scroll_down(phone: VirtualPhone, times: int = 8) -> None:
    for _ in range(times):
        phone.swipe(540, 1800, 540, 700)


def product_rows_seen(phone: VirtualPhone) -> set[str]:
    """The result rows of ``QUERY`` seen so far (the home feed's rows aside)."""
    app = phone.apps["Amazon"]
    assert isinstance(app, ShopApp)
    wanted = {f"amazon:price:{p.id}" for p in app.results(QUERY)}
    return wanted & set(phone.state().seen)


def test_numbered_pages_split_the_list_and_only_the_last_page_ends_it() -> None:
    phone, paging = phone_with("pages")
    app = search(phone)
    results = app.results(QUERY)
    assert len(results) > paging.size  # the list needs more than one page
    pages = -(-len(results) // paging.size)
    assert f"1-{paging.size} of {len(results)} results" in texts(phone)
    scroll_down(phone)
    shown = texts(phone)
    assert f"Page 1 of {pages}" in shown and NEXT in shown and PREVIOUS not in shown
    assert not any(t in END_TEXTS for t in shown)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    phone.screenshot().save(ARTIFACTS / "paged-list.png")
    first_page = product_rows_seen(phone)
    assert len(first_page) == paging.size
    for _ in range(pages - 1):
        tap(phone, NEXT)
        assert phone.current_app is app and app.screen.scroll == 0  # a new page starts at its top
        scroll_down(phone)
    shown = texts(phone)
    assert f"Page {pages} of {pages}" in shown and NEXT not in shown and paging.end_text in shown
    assert f"amazon:list_end:{QUERY}" in phone.state().seen
    phone.screenshot().save(ARTIFACTS / "list-end.png")
    # every row of every page counts as seen, whichever page showed it
    assert product_rows_seen(phone) == {f"amazon:price:{p.id}" for p in results}
    tap(phone, PREVIOUS)
    phone.swipe(540, 700, 540, 1800)
    assert f"{(pages - 2) * paging.size + 1}-" in " ".join(texts(phone))


def test_load_more_appends_the_next_page() -> None:
    phone, paging = phone_with("load_more")
    app = search(phone)
    total = len(app.results(QUERY))
    assert f"{total} results" in texts(phone)
    scroll_down(phone)
    assert paging.more_label in texts(phone) and f"amazon:list_end:{QUERY}" not in phone.state().seen
    while paging.more_label in texts(phone):
        tap(phone, paging.more_label)
        scroll_down(phone)
    assert paging.end_text in texts(phone)
    assert len(product_rows_seen(phone)) == total


def test_infinite_list_shows_a_spinner_row_then_the_next_page() -> None:
    phone, paging = phone_with("infinite")
    app = search(phone)
    total = len(app.results(QUERY))
    for _ in range(8):
        phone.swipe(540, 1800, 540, 700)
        if LOADING_CAPTION in texts(phone):
            break
    assert LOADING_CAPTION in texts(phone)
    assert len(product_rows_seen(phone)) == paging.size
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    phone.screenshot().save(ARTIFACTS / "loading-more.png")
    phone.wait(1)  # the next page is there one action later
    scroll_down(phone)
    scroll_down(phone)
    assert paging.end_text in texts(phone) and LOADING_CAPTION not in texts(phone)
    assert len(product_rows_seen(phone)) == total


def test_without_realism_a_list_is_shown_whole() -> None:
    phone = VirtualPhone()
    app = search(phone)
    scroll_down(phone, 12)
    assert "End of results" in texts(phone) and NEXT not in texts(phone)
    assert len(product_rows_seen(phone)) == len(app.results(QUERY))


def test_paging_can_be_switched_off_with_the_rest_of_realism_on() -> None:
    phone = VirtualPhone(
        realism_settings=Realism(
            enabled=True,
            seed=paging_seed("pages"),
            popups=False,
            loading=False,
            slow_open=False,
            paging=False,
        )
    )
    app = search(phone)
    scroll_down(phone, 12)
    assert NEXT not in texts(phone) and len(product_rows_seen(phone)) == len(app.results(QUERY))


def test_paging_is_drawn_per_app_and_seed() -> None:
    drawn = {
        (seed, app): paging_for(VirtualPhone(realism_settings=Realism(enabled=True, seed=seed)), app)
        for seed in range(20)
        for app in ("Amazon", "Walmart", "Maps", "Chrome")
    }
    assert {p.style for p in drawn.values()} == {"infinite", "load_more", "pages"}
    assert len({p.end_text for p in drawn.values()}) == len(END_TEXTS)
    again = VirtualPhone(realism_settings=Realism(enabled=True, seed=7))
    assert paging_for(again, "Amazon") == drawn[(7, "Amazon")]
    maps = set()
    for seed in range(20):
        app = VirtualPhone(realism_settings=Realism(enabled=True, seed=seed)).apps["Maps"]
        assert isinstance(app, MapsApp)
        maps.add(app.paging.style)
    assert "pages" not in maps  # a maps app's list grows; it has no numbered pages


@pytest.mark.parametrize("style", ["infinite", "load_more", "pages"])
def test_the_reference_compiler_reaches_a_row_on_a_later_page(style: str) -> None:
    phone, paging = phone_with(style)
    last = search(phone).results(QUERY)[-1]
    compile_plan([f"see amazon:price:{last.id}", f"see amazon:list_end:{QUERY}"], phone)
    assert paging.end_text in texts(phone)


def test_the_citing_list_says_at_once_that_it_shows_the_most_relevant() -> None:
    task = {t.id: t for t in load_task_suite(suite="hard")}["h_segment_anything_most_cited"]
    phone = VirtualPhone()
    task.prepare(phone)
    compile_plan(task.plan[: task.plan.index("tap Cited by 9,412") + 1], phone)
    first_screen = texts(phone)
    assert "Cited by 9,412" in first_screen and "Showing 4 most relevant" in first_screen
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    phone.screenshot().save(ARTIFACTS / "citations.png")


# ------------------------------------------------------------------------------------ home feeds


def _typed_per_app() -> dict[str, set[str]]:
    """Every query typed into each app by the suites' reference actions and plans."""
    typed: dict[str, set[str]] = {}
    for suite in ("basic", "hard"):
        for task in load_task_suite(suite=suite):
            app = ""
            for action in task.reference_actions:
                opened = re.match(r'Open_App\("(.*)"\)$', action)
                text = re.match(r'Type\("(.*)"\)$', action)
                app = opened.group(1) if opened else app
                if text:
                    typed.setdefault(app, set()).add(text.group(1))
            for step in task.plan:
                app = step[5:] if step.startswith("open ") else app
                if step.startswith("type "):
                    typed.setdefault(app, set()).add(step[5:])
    return typed


def test_home_feeds_show_none_of_what_the_tasks_look_for() -> None:
    typed = _typed_per_app()
    phone = VirtualPhone()
    for label in ("Amazon", "Walmart", "Best Buy"):
        app = phone.apps[label]
        assert isinstance(app, ShopApp)
        featured = set(app.store.featured)
        assert len(featured) > FEED_SIZE
        queries = typed.get(label, set())
        assert queries, label
        for query in queries:
            hits = {p.id for p in app.results(query)}
            assert not hits & featured, (label, query, hits & featured)


def test_home_feed_is_drawn_per_seed() -> None:
    feeds = set()
    for seed in range(6):
        phone = VirtualPhone(realism_settings=Realism(enabled=True, seed=seed))
        app = phone.apps["Amazon"]
        assert isinstance(app, ShopApp)
        feed = tuple(p.id for p in app.feed())
        assert len(feed) == FEED_SIZE
        again = VirtualPhone(realism_settings=Realism(enabled=True, seed=seed)).apps["Amazon"]
        assert isinstance(again, ShopApp) and tuple(p.id for p in again.feed()) == feed
        feeds.add(feed)
    assert len(feeds) > 1
    phone = VirtualPhone()
    phone.open_app("Amazon")
    assert "Deals for you" in texts(phone)
    assert not any("Air Fryer" in t or "QuietComfort" in t for t in texts(phone))
