"""The Perceptor: OCR, icon grounding and icon captions turning a screenshot into elements."""

from mae.perception.elements import Element, Perception
from mae.perception.perceptor import Perceptor

__all__ = ["Element", "Perception", "Perceptor"]
