"""Inspectable state of the virtual phone: notes, carts, the route shown, the action and event logs."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Note(BaseModel):
    """A note of the Notes app."""

    id: int
    title: str = ""
    body: str = ""
    seeded: bool = Field(
        default=False, description="came with the phone's content (not written during the task)"
    )

    @property
    def text(self) -> str:
        return f"{self.title}\n{self.body}".strip()


class CartItem(BaseModel):
    product_id: str
    title: str
    price: float
    quantity: int = 1


class Route(BaseModel):
    """Directions shown by Maps."""

    place_id: str
    destination: str
    origin: str = "Your location"
    mode: str = "drive"
    minutes: int
    miles: float


class LogEntry(BaseModel):
    """One operation applied to the phone."""

    index: int
    action: str
    app: str = Field(description="app label in front before the operation ('' = home screen)")
    screen: str = Field(description="screen before the operation")
    effect: str
    clock_s: float


class Event(BaseModel):
    """Something meaningful an app did, for grading: opened an app, searched, viewed an item..."""

    step: int
    app: str
    kind: str
    value: str


class PhoneState(BaseModel):
    """A snapshot of everything a task can be graded on."""

    app: str = Field(description="label of the app in front; '' on the home screen or app switcher")
    screen: str
    item: str = Field(default="", description="id of what the screen shows (place, product, paper, query...)")
    keyboard: bool
    notes: list[Note]
    carts: dict[str, list[CartItem]]
    route: Route | None
    recents: list[str]
    clock_s: float
    log: list[LogEntry]
    events: list[Event]
    seen: list[str]
