"""What one browser tab shows in its phone view, and the live refresh of that picture.

The picture a tab shows is kept at full resolution together with the Perceptor's boxes computed for
that very picture (or none), so an overlay is never drawn over a different screen. While no run
holds the phone (and between a run's steps), ``LivePicture.refresh`` takes a new screenshot and tells
the page to update only when the screen changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from PIL import Image

from mae.run.loop import PerceptorLike
from mae.ui.devices import display_image, screen_signature
from mae.ui.live import LiveRun
from mae.ui.views import Box, draw_boxes


def perceive_boxes(perceptor: PerceptorLike, image: Image.Image) -> list[Box]:
    """The Perceptor's boxes for ``image``."""
    perception = perceptor.perceive(image, None)
    return [(e.kind, e.box) for e in perception.elements]


@dataclass
class Picture:
    """A full-resolution picture and the boxes computed for it (None: not perceived)."""

    image: Image.Image
    boxes: list[Box] | None = None
    signature: bytes = b""
    from_run: bool = False
    """True when the picture came from a run's events (an annotated action or a step's screen)."""


@dataclass
class TabState:
    """One browser tab: the run it watches (owned by the server) and the picture it shows."""

    run: LiveRun | None = None
    picture: Picture | None = None
    show_boxes: bool = False
    quiet_until: float = 0.0
    """After a failed live refresh (an unplugged phone), the live view waits until then (monotonic)."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def shown(self) -> Image.Image | None:
        """The picture as sent to the browser: scaled, with boxes when asked and known."""
        picture = self.picture
        if picture is None:
            return None
        image = picture.image
        if self.show_boxes and picture.boxes:
            image = draw_boxes(image, picture.boxes)
        return display_image(image)

    def set_picture(
        self, image: Image.Image, boxes: list[Box] | None = None, *, from_run: bool = False
    ) -> None:
        self.picture = Picture(image, boxes, screen_signature(image), from_run)

    def refresh(
        self,
        screenshot: Callable[[], Image.Image],
        perceptor: Callable[[], PerceptorLike] | None = None,
        *,
        force: bool = False,
    ) -> bool:
        """Take a screenshot; True when it differs from the picture shown (or ``force``) and was taken.

        With the overlay on, the boxes are computed for the new picture (``perceptor``).
        """
        with self.lock:
            image = screenshot()
            signature = screen_signature(image)
            current = self.picture
            same = current is not None and current.signature == signature and not current.from_run
            needs_boxes = (
                self.show_boxes and perceptor is not None and (current is None or current.boxes is None)
            )
            if same and not force and not needs_boxes:
                return False
            boxes = current.boxes if same and current is not None else None
            if self.show_boxes and perceptor is not None and boxes is None:
                boxes = perceive_boxes(perceptor(), image)
            self.picture = Picture(image, boxes, signature)
            return True
