"""Launchable apps of a phone: who they are (label, package, launcher activity) and finding one by name.

The package manager tells the shell which activities the launcher shows (``cmd package
query-activities``), but not their labels: ``dumpsys package`` and ``cmd package`` print resource ids,
not strings. So a label comes from a table of well-known apps below (with the other names people
use), or else a readable name derived from the package (``com.tripadvisor.tripadvisor`` ->
``Tripadvisor``). An app known by neither is found on the home screen by ``mae.device.adb`` (OCR
fallback).
"""

from __future__ import annotations

import difflib
import re

from pydantic import BaseModel, Field

from mae.errors import ActionError

LAUNCHER_QUERY = (
    "cmd package query-activities --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER"
)
PACKAGE_LIST = "pm list packages"

KNOWN_APPS: dict[str, tuple[str, ...]] = {
    # package: (label shown under the icon, other names people use)
    "com.google.android.apps.maps": ("Maps", "Google Maps"),
    "com.android.chrome": ("Chrome", "Google Chrome"),
    "com.google.android.youtube": ("YouTube",),
    "com.google.android.googlequicksearchbox": ("Google", "Google Search"),
    "com.google.android.keep": ("Keep Notes", "Google Keep", "Keep"),
    "com.samsung.android.app.notes": ("Samsung Notes",),
    "com.miui.notes": ("Notes",),
    "com.twitter.android": ("X", "Twitter"),
    "com.amazon.mShop.android.shopping": ("Amazon Shopping", "Amazon"),
    "com.walmart.android": ("Walmart",),
    "com.bestbuy.android": ("Best Buy",),
    "com.mcdonalds.app": ("McDonald's", "MacDonald's", "McDonalds"),
    "com.bd.nproject": ("Lemon8",),
    "com.fandango": ("Fandango",),
    "com.booking": ("Booking.com", "Booking"),
    "com.tripadvisor.tripadvisor": ("Tripadvisor", "TripAdvisor"),
    "com.android.settings": ("Settings",),
    "com.android.vending": ("Play Store", "Google Play", "Google Play Store"),
    "com.google.android.gm": ("Gmail",),
    "com.google.android.apps.messaging": ("Messages",),
    "com.google.android.dialer": ("Phone",),
    "com.google.android.contacts": ("Contacts",),
    "com.google.android.calendar": ("Calendar", "Google Calendar"),
    "com.google.android.apps.photos": ("Photos", "Google Photos"),
    "com.google.android.deskclock": ("Clock",),
    "com.google.android.calculator": ("Calculator",),
    "com.google.android.GoogleCamera": ("Camera",),
    "com.google.android.apps.docs": ("Drive", "Google Drive"),
    "com.google.android.apps.nbu.files": ("Files", "Files by Google"),
    "com.google.android.apps.translate": ("Translate", "Google Translate"),
    "com.google.android.apps.youtube.music": ("YT Music", "YouTube Music"),
    "com.google.android.apps.walletnfcrel": ("Wallet", "Google Wallet"),
    "com.google.android.apps.tachyon": ("Meet", "Google Meet"),
    "com.sec.android.app.sbrowser": ("Samsung Internet", "Internet"),
    "com.sec.android.app.camera": ("Camera",),
    "com.samsung.android.messaging": ("Messages",),
    "com.samsung.android.dialer": ("Phone",),
    "com.sec.android.gallery3d": ("Gallery",),
    "com.sec.android.app.myfiles": ("My Files",),
    "com.sec.android.app.clockpackage": ("Clock",),
    "com.sec.android.app.popupcalculator": ("Calculator",),
    "com.samsung.android.calendar": ("Calendar",),
    "com.android.contacts": ("Contacts",),
    "com.android.dialer": ("Phone",),
    "com.android.messaging": ("Messaging", "Messages"),
    "com.android.camera2": ("Camera",),
    "com.android.deskclock": ("Clock",),
    "com.android.calculator2": ("Calculator",),
    "com.android.calendar": ("Calendar",),
    "com.android.documentsui": ("Files",),
    "com.android.gallery3d": ("Gallery",),
    "com.android.email": ("Email",),
    "com.android.music": ("Music",),
    "org.mozilla.firefox": ("Firefox",),
    "com.whatsapp": ("WhatsApp",),
    "com.instagram.android": ("Instagram",),
    "com.facebook.katana": ("Facebook",),
    "com.reddit.frontpage": ("Reddit",),
    "com.spotify.music": ("Spotify",),
    "com.netflix.mediaclient": ("Netflix",),
    "com.zhiliaoapp.musically": ("TikTok",),
    "com.ubercab": ("Uber",),
    "com.airbnb.android": ("Airbnb",),
    "com.yelp.android": ("Yelp",),
    "com.ebay.mobile": ("eBay",),
    "com.tencent.mm": ("WeChat",),
    "com.microsoft.office.outlook": ("Outlook",),
}

_GENERIC_SEGMENTS = frozenset(
    {"com", "org", "net", "io", "co", "de", "android", "app", "apps", "mobile", "client", "google", "sec"}
    | {"samsung", "miui", "www", "main", "phone", "lite", "launcher", "release", "prod", "free"}
)

_COMPONENT = re.compile(r"^\s*([A-Za-z][\w.]*)/([\w.$]+)\s*$")
_NAME = re.compile(r"^\s*name=([\w.$]+)\s*$")
_PACKAGE_NAME = re.compile(r"^\s*packageName=([\w.]+)\s*$")


class LauncherApp(BaseModel):
    """One launchable app."""

    label: str
    package: str
    activity: str | None = Field(None, description="launcher activity class; None when unknown")
    aliases: list[str] = Field(default_factory=list)

    @property
    def component(self) -> str | None:
        return f"{self.package}/{self.activity}" if self.activity else None

    def names(self) -> list[str]:
        return [self.label, *self.aliases]


def normalize(name: str) -> str:
    """Lower case, letters and digits only: ``"McDonald's"`` -> ``"mcdonalds"``."""
    return re.sub(r"[^0-9a-z]+", "", name.casefold())


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^0-9a-z]+", name.casefold()) if w}


def label_from_package(package: str) -> str:
    """A readable name for a package the table does not know (its most specific segment)."""
    segments = [s for s in package.split(".") if s and s.lower() not in _GENERIC_SEGMENTS]
    base = segments[-1] if segments else package.split(".")[-1]
    return base[:1].upper() + base[1:]


def parse_launcher_activities(output: str) -> dict[str, str]:
    """``package -> launcher activity`` from ``cmd package query-activities`` (brief or full output).

    The first launcher activity of a package wins. Returns ``{}`` for an error message.
    """
    found: dict[str, str] = {}
    activity: str | None = None
    for line in output.splitlines():
        match = _COMPONENT.match(line)
        if match:
            found.setdefault(match.group(1), match.group(2))
            continue
        name_match = _NAME.match(line)
        if name_match:
            activity = name_match.group(1)
            continue
        package_match = _PACKAGE_NAME.search(line)
        if package_match and activity:
            found.setdefault(package_match.group(1), activity)
            activity = None
    return found


def parse_package_list(output: str) -> list[str]:
    """Package names from ``pm list packages`` (lines ``package:com.example``)."""
    return [line.split(":", 1)[1].strip() for line in output.splitlines() if line.startswith("package:")]


def build_app_list(activities: dict[str, str | None]) -> list[LauncherApp]:
    """Launchable apps from ``package -> launcher activity (or None)``, labelled by table or package."""
    apps: list[LauncherApp] = []
    for package, activity in sorted(activities.items()):
        known = KNOWN_APPS.get(package)
        label, aliases = (known[0], list(known[1:])) if known else (label_from_package(package), [])
        apps.append(LauncherApp(label=label, package=package, activity=activity, aliases=aliases))
    return apps


def find_app(apps: list[LauncherApp], name: str) -> LauncherApp | None:
    """The app ``name`` stands for: a package name, a label or alias, a package segment, or the words.

    Returns ``None`` when nothing fits. Raises ``ActionError`` when several apps fit equally well.
    """
    wanted = re.sub(r"\s+app$", "", name.strip(), flags=re.IGNORECASE) or name.strip()
    by_package = {app.package: app for app in apps}
    if wanted in by_package:
        return by_package[wanted]
    key = normalize(wanted)
    if not key:
        return None
    exact = [app for app in apps if key in {normalize(n) for n in app.names()}]
    if exact:
        return exact[0]
    segment = [
        app
        for app in apps
        if key in {normalize(s) for s in app.package.split(".") if s.lower() not in _GENERIC_SEGMENTS}
    ]
    if len(segment) == 1:
        return segment[0]
    words = _words(wanted)
    partial = [app for app in apps if any(words <= _words(n) for n in app.names())]
    if len(partial) == 1:
        return partial[0]
    if len(partial) > 1:
        choices = ", ".join(sorted(app.label for app in partial))
        raise ActionError(f"several apps match {name!r}: {choices}; use the full app name")
    return None


def close_matches(apps: list[LauncherApp], name: str, limit: int = 5) -> list[str]:
    """Labels of the installed apps that look most like ``name`` (difflib)."""
    by_key: dict[str, str] = {}
    for app in apps:
        for candidate in app.names():
            by_key.setdefault(normalize(candidate), app.label)
    keys = difflib.get_close_matches(normalize(name), list(by_key), n=limit * 2, cutoff=0.5)
    labels: list[str] = []
    for key in keys:
        if by_key[key] not in labels:
            labels.append(by_key[key])
    return labels[:limit]


def unknown_app_error(apps: list[LauncherApp], name: str) -> ActionError:
    """``ActionError`` for an app that is not installed, listing close matches."""
    near = close_matches(apps, name)
    hint = f"did you mean: {', '.join(near)}?" if near else "check the name on the home screen"
    return ActionError(f"no installed app is called {name!r}; {hint}")
