"""A Perceptor for tests and benchmarks that reads the virtual phone's own elements (no OCR, instant).

Not a perception model: it is exact by construction, so runs that use it measure everything but
perception (the scheduling of parallel evals, the loop, the model calls).
"""

from __future__ import annotations

from PIL import Image

from mae.device.base import Device
from mae.perception.elements import Perception


class TruthPerceptor:
    """W_V straight from a virtual phone's display list; ``for_device`` builds one per phone."""

    def __init__(self, phone: Device) -> None:
        ground_truth = getattr(phone, "ground_truth", None)
        if not callable(ground_truth):
            raise TypeError("the ground-truth Perceptor needs the virtual phone")
        self._ground_truth = ground_truth

    @classmethod
    def for_device(cls, device: Device) -> TruthPerceptor:
        return cls(device)

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        return Perception(
            width=image.width,
            height=image.height,
            elements=self._ground_truth(),
            keyboard_active=bool(keyboard_active),
        )
