"""Perception: screenshots to texts and icons with screen coordinates (paper §2.1).

``Perceptor`` is loaded on first use (PEP 562): importing ``mae.perception.elements`` does not load
OpenCV, numpy or the OCR models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mae.perception.elements import Element, Perception

if TYPE_CHECKING:
    from mae.perception.perceptor import Perceptor

__all__ = ["Element", "Perception", "Perceptor"]


def __getattr__(name: str) -> Any:
    if name == "Perceptor":
        from mae.perception.perceptor import Perceptor

        globals()[name] = Perceptor
        return Perceptor
    raise AttributeError(f"module 'mae.perception' has no attribute {name!r}")
