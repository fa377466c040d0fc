"""The phones behind the MCP tools: which devices exist, their image spaces, the Perceptor, screenshots.

One open ``Device`` per name (``mae.ui.devices.DevicePool``), so the per-device run lock of
``mae.device.lock`` keeps two clients (or a run and an action) off one phone while different phones
work in parallel. ``virtual`` is the built-in virtual phone; ``virtual-2`` ... ``virtual-8`` are more of
them, for parallel work without hardware.
"""

from __future__ import annotations

import io
import re
import threading
from collections import OrderedDict
from collections.abc import Callable

from PIL import Image

from mae.config import PerceptionSettings
from mae.device import VIRTUAL, open_device
from mae.device.base import Device
from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError, DeviceError, MaeError
from mae.llm.client import ChatClient
from mae.llm.coordinates import CoordinateMapper
from mae.mcp.views import DeviceList, DeviceView, ImageSpace
from mae.perception.a11y import A11yTree
from mae.perception.elements import Perception
from mae.run.loop import PerceptorLike
from mae.ui.devices import DevicePool, attached, default_device, device_busy

MAX_VIRTUAL = 8
_VIRTUAL_NAME = re.compile(rf"^{VIRTUAL}(?:-([2-{MAX_VIRTUAL}]))?$")
MIN_SIDE, MAX_SIDE = 64, 4096
KEPT_SCREENSHOTS = 32
"""Screenshots kept in memory for the ``mae://screenshots/{id}`` resource (the oldest go first)."""


def is_virtual_name(name: str) -> bool:
    return _VIRTUAL_NAME.match(name) is not None


def _open(name: str) -> Device:
    if name == VIRTUAL:
        return open_device(VIRTUAL)
    if is_virtual_name(name):
        return NumberedVirtualPhone(name)
    return open_device(name)


class NumberedVirtualPhone(VirtualPhone):
    """Another built-in virtual phone that answers to its own name (``virtual-2`` ...), so every result
    and question about it names the phone the caller chose."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    @property
    def name(self) -> str:
        return self._name


def image_space(screen: tuple[int, int], max_side: int) -> ImageSpace:
    """The space of a screenshot whose long side is at most ``max_side`` (0 = screen pixels)."""
    if max_side != 0 and not MIN_SIDE <= max_side <= MAX_SIDE:
        raise ConfigError(
            f"max_side must be between {MIN_SIDE} and {MAX_SIDE} pixels, or 0 for the full screen; "
            f"got {max_side}"
        )
    width, height = screen
    scale = 1.0 if max_side == 0 else min(1.0, max_side / max(width, height))
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return ImageSpace(
        screen_width=width, screen_height=height, image_width=size[0], image_height=size[1], scale=scale
    )


def mapper_for(space: ImageSpace) -> CoordinateMapper:
    """Converts between screen pixels and the pixels of ``space``'s image."""
    return CoordinateMapper(
        (space.screen_width, space.screen_height), (space.image_width, space.image_height)
    )


def scaled(image: Image.Image, space: ImageSpace) -> Image.Image:
    size = (space.image_width, space.image_height)
    return image if image.size == size else image.resize(size, Image.Resampling.LANCZOS)


def encode(image: Image.Image, image_format: str) -> tuple[bytes, str]:
    """``image`` as PNG or JPEG bytes and its MIME type."""
    buffer = io.BytesIO()
    if image_format == "jpeg":
        image.convert("RGB").save(buffer, format="JPEG", quality=80)
        return buffer.getvalue(), "image/jpeg"
    image.save(buffer, format="PNG", optimize=False, compress_level=6)
    return buffer.getvalue(), "image/png"


class SharedPerceptor:
    """The Perceptor, built on first use and used by one caller at a time (its models are shared)."""

    def __init__(self, build: Callable[[], PerceptorLike]) -> None:
        self._build = build
        self._perceptor: PerceptorLike | None = None
        self._lock = threading.Lock()
        self.accepts_tree = True

    def perceive(
        self,
        image: Image.Image,
        keyboard_active: bool | None = None,
        tree: Callable[[], A11yTree] | None = None,
    ) -> Perception:
        with self._lock:
            if self._perceptor is None:
                self._perceptor = self._build()
            if tree is not None and getattr(self._perceptor, "accepts_tree", False):
                return self._perceptor.perceive(image, keyboard_active, tree=tree)  # type: ignore[call-arg]
            return self._perceptor.perceive(image, keyboard_active)

    def perceive_device(self, device: Device, image: Image.Image) -> Perception:
        """W_V of ``image`` as the loop computes it (keyboard state and accessibility tree included)."""
        return self.perceive(image, device.keyboard_active(), tree=getattr(device, "ui_tree", None))


def perceptor_factory(
    perception: PerceptionSettings, client: Callable[[], ChatClient | None]
) -> SharedPerceptor:
    """A ``SharedPerceptor`` building ``mae.run.runtime.build_perceptor`` on first use."""

    def build() -> PerceptorLike:
        from mae.run.runtime import build_perceptor

        return build_perceptor(perception, client())

    return SharedPerceptor(build)


class Phones:
    """The devices the MCP server may operate, opened on first use and kept open."""

    def __init__(self, preferred: str | None, lister: Callable[[], list[str]] | None = None) -> None:
        self.preferred = preferred
        self._lister = lister
        self.pool = DevicePool(opener=_open)
        self._shots: OrderedDict[str, tuple[bytes, str]] = OrderedDict()
        self._shots_lock = threading.Lock()
        self._counter = 0

    def serials(self) -> list[str]:
        return attached(self._lister)

    def default_name(self, serials: list[str] | None = None) -> str:
        return default_device(self.serials() if serials is None else serials, self.preferred)

    def listing(self) -> DeviceList:
        serials = self.serials()
        default = self.default_name(serials)
        names = [*serials, VIRTUAL]
        if default not in names:
            names.insert(0, default)
        devices = [
            DeviceView(
                name=name,
                kind="virtual" if is_virtual_name(name) else "adb",
                busy=self.busy(name),
                default=name == default,
            )
            for name in names
        ]
        note = (
            f"more virtual phones: {VIRTUAL}-2 ... {VIRTUAL}-{MAX_VIRTUAL} (each a separate phone)"
            if not serials
            else ""
        )
        return DeviceList(devices=devices, note=note)

    def busy(self, name: str) -> bool:
        return self.pool.busy(name)

    def get(self, name: str | None) -> Device:
        """The device called ``name`` (the default one when empty); ``DeviceError`` saying what exists
        when there is no such phone."""
        chosen = (name or "").strip() or self.default_name()
        if not is_virtual_name(chosen) and chosen not in self.serials():
            known = ", ".join([*self.serials(), VIRTUAL]) or VIRTUAL
            raise DeviceError(
                f"there is no device called {chosen[:80]!r}: use one that list_devices shows ({known}); "
                "attach a phone over USB or connect it with `adb connect HOST:PORT` first"
            )
        try:
            return self.pool.get(chosen)
        except MaeError:
            raise
        except Exception as exc:  # an opener failing in an unforeseen way still gets a sentence
            raise DeviceError(f"cannot open device {chosen!r}: {exc}") from None

    def keep(self, image: Image.Image, space: ImageSpace, image_format: str = "png") -> str:
        """Store ``image`` (scaled to ``space``) for the screenshot resource; returns its URI."""
        data = encode(scaled(image, space), image_format)
        with self._shots_lock:
            self._counter += 1
            key = str(self._counter)
            self._shots[key] = data
            while len(self._shots) > KEPT_SCREENSHOTS:
                self._shots.popitem(last=False)
        return f"mae://screenshots/{key}"

    def kept(self, key: str) -> tuple[bytes, str]:
        with self._shots_lock:
            found = self._shots.get(key)
        if found is None:
            raise ConfigError(
                f"screenshot {key[:40]!r} is no longer kept (only the last {KEPT_SCREENSHOTS} are): "
                "call screenshot for the current screen"
            )
        return found

    def close(self) -> None:
        self.pool.close()


__all__ = ["Phones", "SharedPerceptor", "device_busy", "image_space", "mapper_for", "perceptor_factory"]
