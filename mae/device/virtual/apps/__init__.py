"""The apps of the virtual phone, one module per kind; ``make_app`` builds one from its spec."""

from __future__ import annotations

from mae.device.virtual.apps.base import App, Host
from mae.device.virtual.content import AppSpec


def make_app(spec: AppSpec, host: Host) -> App:
    """Instantiate the app described by ``spec``."""
    from mae.device.virtual.apps.browser import BrowserApp
    from mae.device.virtual.apps.maps import MapsApp
    from mae.device.virtual.apps.market import MarketApp
    from mae.device.virtual.apps.notes import NotesApp
    from mae.device.virtual.apps.shop import ShopApp
    from mae.device.virtual.apps.simple import ListApp
    from mae.device.virtual.apps.social import SocialApp
    from mae.device.virtual.apps.trips import TripsApp

    kinds: dict[str, type[App]] = {
        "maps": MapsApp,
        "notes": NotesApp,
        "shop": ShopApp,
        "market": MarketApp,
        "browser": BrowserApp,
        "social": SocialApp,
        "list": ListApp,
        "trips": TripsApp,
    }
    return kinds[spec.kind](spec, host)


__all__ = ["App", "make_app"]
