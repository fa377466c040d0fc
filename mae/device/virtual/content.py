"""Seeded content of the virtual phone's apps, loaded from JSON files users can extend.

The built-in files live in ``mae/device/virtual/data/``. A user data directory (the ``data_dir``
argument of ``VirtualPhone``) may hold files of the same names; their entries are merged in: items of
a list with the same ``id`` (``label`` for apps) replace the built-in ones, new items are appended.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from mae.device.virtual.icons import IconSpec
from mae.errors import ConfigError

DATA_DIR = Path(__file__).parent / "data"
SUITE_DATA_DIR = DATA_DIR / "suite"
"""Content added for the harder evaluation suite, merged over ``DATA_DIR`` like a user directory."""
FRONTIER_DATA_DIR = DATA_DIR / "frontier"
"""Content added for the frontier tier's scenarios, merged after ``SUITE_DATA_DIR``: ``<name>.json``
and ``<name>.<part>.json`` (one part per scenario family, e.g. ``browser.travel.json``)."""
CONTENT_FILES = ("apps", "maps", "shopping", "browser", "social", "notes", "trips")


class ListRow(BaseModel):
    title: str
    subtitle: str = ""
    icon: str = ""


class AppSpec(BaseModel):
    """One installed app: launcher label, package name, behaviour and icon."""

    label: str
    package: str
    kind: Literal["maps", "notes", "shop", "market", "browser", "social", "list", "trips"]
    aliases: list[str] = Field(default_factory=list)
    icon: IconSpec
    store: str = ""
    title: str = ""
    rows: list[ListRow] = Field(default_factory=list)


class HomeLayout(BaseModel):
    grid: list[str]
    dock: list[str] = Field(default_factory=list)
    date_line: str = "Tuesday, May 14"
    weather_line: str = "72°F  Sunny"


class AppsFile(BaseModel):
    apps: list[AppSpec]
    home: HomeLayout


class Review(BaseModel):
    author: str
    rating: float
    text: str
    title: str = ""
    date: str = ""


RealismTag = Literal["", "sponsored", "near_duplicates", "out_of_stock"]
"""Content shown only when that realism feature is on (see ``mae.device.virtual.realism``)."""


class Place(BaseModel):
    """A point of interest in Maps."""

    id: str
    realism: RealismTag = ""
    name: str
    category: str
    tags: list[str] = Field(default_factory=list)
    city: str
    address: str
    phone: str
    rating: float
    reviews_count: int
    price: str = ""
    distance_mi: float
    drive_min: int
    hours: str
    status: str
    highlights: list[str] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)
    x: float = 0.5
    y: float = 0.5


class MapsFile(BaseModel):
    home_city: str = "Champaign"
    places: list[Place]


class ProductImage(BaseModel):
    symbol: str = "cart"
    color: str = "#5F6368"


class Product(BaseModel):
    id: str
    realism: RealismTag = ""
    title: str
    price: float
    was_price: float | None = None
    badge: str = ""
    rating: float
    ratings_count: int
    keywords: list[str] = Field(default_factory=list)
    image: ProductImage = Field(default_factory=ProductImage)
    about: list[str] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)
    attrs: dict[str, str] = Field(
        default_factory=dict, description="what a store's filter sheet filters on (Capacity: 2 TB)"
    )
    in_stock: bool = Field(default=True, description="False: listed as out of stock whatever the realism")
    protection: float | None = Field(
        default=None, description="price of the 2-year protection plan a market app offers with it"
    )

    @property
    def on_sale(self) -> bool:
        return self.was_price is not None and self.was_price > self.price


class Store(BaseModel):
    id: str
    name: str
    search_hint: str
    header: str = "#FFFFFF"
    accent: str = "#0B57D0"
    sale_label: str = "Sale"
    featured: list[str] = Field(default_factory=list)
    filters: list[str] = Field(
        default_factory=list, description="product attributes a market app's filter sheet offers"
    )
    products: list[Product]


class ShoppingFile(BaseModel):
    stores: list[Store]


class WebLink(BaseModel):
    """A link at the end of a web page: its text and where it goes (``web:<id>``, ``paper:<id>``...)."""

    label: str
    target: str


class WebPage(BaseModel):
    id: str
    realism: RealismTag = ""
    url: str
    title: str
    snippet: str
    keywords: list[str] = Field(default_factory=list)
    body: list[str] = Field(default_factory=list)
    links: list[WebLink] = Field(default_factory=list)
    listed: bool = Field(default=True, description="found by the search engine (False: only through links)")
    opens: str = ""


class Paper(BaseModel):
    id: str
    title: str
    authors: str
    venue: str
    year: int
    citations: int
    abstract: str
    cites: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


class BrowserFile(BaseModel):
    engine: str = "Google"
    web: list[WebPage]
    scholar: list[Paper]


class Topic(BaseModel):
    id: str
    topic: str
    context: str
    posts_count: str
    query: str


class Post(BaseModel):
    id: str
    author: str
    handle: str
    time: str
    text: str
    replies: int = 0
    reposts: int = 0
    likes: int = 0
    keywords: list[str] = Field(default_factory=list)
    feed: bool = False


class SocialFile(BaseModel):
    trending: list[Topic]
    posts: list[Post]


class SeedNote(BaseModel):
    title: str = ""
    body: str = ""


class NotesFile(BaseModel):
    notes: list[SeedNote] = Field(default_factory=list)


class City(BaseModel):
    """A destination of the Trips app, offered as a suggestion while the user types."""

    id: str
    name: str
    region: str
    abbr: str = Field(default="", description="the state's or country's short form (IL, MO)")
    popularity: int = Field(description="suggestions are listed most popular first")

    @property
    def label(self) -> str:
        return f"{self.name}, {self.region}"


class Hotel(BaseModel):
    """A place to stay in the Trips app; ``rank`` orders the "Recommended" sort."""

    id: str
    realism: RealismTag = ""
    city: str
    name: str
    stars: int
    rating: float = Field(description="guest rating out of 10")
    reviews_count: int
    price: int = Field(description="price per night in dollars")
    free_cancellation: bool = False
    breakfast: bool = False
    pets: bool = False
    parking: bool = False
    pool: bool = False
    distance_mi: float
    address: str
    rank: int = 0


class TripsFile(BaseModel):
    cities: list[City] = Field(default_factory=list)
    hotels: list[Hotel] = Field(default_factory=list)


class Content(BaseModel):
    """Everything the apps show."""

    apps: AppsFile
    maps: MapsFile
    shopping: ShoppingFile
    browser: BrowserFile
    social: SocialFile
    notes: NotesFile
    trips: TripsFile = Field(default_factory=TripsFile)

    def store(self, store_id: str) -> Store:
        for store in self.shopping.stores:
            if store.id == store_id:
                return store
        raise ConfigError(f"no store {store_id!r} in shopping.json; add it or fix the app's 'store'")


_IDENTITY_KEYS = ("id", "label", "task_id")


def merge(base: Any, extra: Any) -> Any:
    """Merge user data into built-in data (see the module docstring)."""
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(base)
        for key, value in extra.items():
            out[key] = merge(base[key], value) if key in base else value
        return out
    if isinstance(base, list) and isinstance(extra, list):
        key = next(
            (k for k in _IDENTITY_KEYS if all(isinstance(i, dict) and k in i for i in base + extra)), None
        )
        if key is None or not base + extra:
            return base + [item for item in extra if item not in base]
        merged = {item[key]: item for item in base}
        for item in extra:
            merged[item[key]] = merge(merged[item[key]], item) if item[key] in merged else item
        return list(merged.values())
    return extra


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; fix or remove the file") from None


def load_raw(name: str, data_dir: Path | None = None) -> Any:
    """The built-in ``<name>.json`` merged with the suite's, the frontier tier's parts (in name order)
    and the user's file of the same name, where there are such files."""
    data = read_json(DATA_DIR / f"{name}.json")
    if (SUITE_DATA_DIR / f"{name}.json").is_file():
        data = merge(data, read_json(SUITE_DATA_DIR / f"{name}.json"))
    for part in sorted([*FRONTIER_DATA_DIR.glob(f"{name}.json"), *FRONTIER_DATA_DIR.glob(f"{name}.*.json")]):
        data = merge(data, read_json(part))
    if data_dir is not None and (data_dir / f"{name}.json").is_file():
        data = merge(data, read_json(data_dir / f"{name}.json"))
    return data


@lru_cache(maxsize=8)
def load_content(data_dir: Path | None = None) -> Content:
    """Load (and cache) the content, merged with ``data_dir`` when given."""
    if data_dir is not None and not data_dir.is_dir():
        raise ConfigError(f"virtual phone data directory {data_dir} does not exist")
    raw = {name: load_raw(name, data_dir) for name in CONTENT_FILES}
    try:
        return Content.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"virtual phone content is invalid at {where}: {first['msg']}") from None


# ---------------------------------------------------------------------------------------- searching

STOPWORDS = frozenset(
    {
        "a", "an", "the", "in", "on", "at", "near", "nearby", "me", "my", "for", "of", "and", "or", "to",
        "with", "best", "top", "find", "show", "good", "cheap", "cheapest", "under", "over", "is", "are",
        "around", "close", "il", "ca", "ny", "please", "some", "any",
    }
)  # fmt: skip


def stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """Lower-cased, singularised words of ``text`` without stop words."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("'", ""))
    return [stem(w) for w in words if w not in STOPWORDS]


def match_score(query: str, document: str) -> int:
    """How many query words the document contains (0 when fewer than half of them)."""
    wanted = tokens(query)
    if not wanted:
        return 0
    have = set(tokens(document))
    hits = sum(1 for word in wanted if word in have)
    return hits if hits * 2 >= len(wanted) else 0


def fmt_count(value: int) -> str:
    return f"{value:,}"


def fmt_short(value: int) -> str:
    """1234 -> 1.2K, as social apps show counts."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1_000:
        return f"{value / 1_000:.1f}K"
    return str(value)


def fmt_price(value: float) -> str:
    return f"${value:,.2f}"
