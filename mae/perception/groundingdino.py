"""GroundingDINO icon grounding, as in the paper: open-set detection prompted with "icon".

Weights come from a hub id (default ``IDEA-Research/grounding-dino-tiny``) or a local directory, through
``mae.llm.weights.resolve`` (offline-aware). The model runs on CUDA in half precision when a GPU is
visible, else on the CPU in fp32. Detections go through ``filter_detections``: boxes over 5% of the
screen and duplicates are dropped. torch and transformers are imported only when a detector is built.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from mae.perception.elements import Element
from mae.perception.geometry import clip_box, filter_detections
from mae.perception.local_models import (
    LoadedModel,
    dtype_kwargs,
    inference,
    load_failed,
    load_once,
    pick_device,
    pick_dtype,
    require_torch,
    weights_source,
)

if TYPE_CHECKING:
    import torch

DEFAULT_MODEL = "IDEA-Research/grounding-dino-tiny"


def normalize_prompt(prompt: str) -> str:
    """GroundingDINO expects lower-case phrases, each ending with a period ("icon.")."""
    text = " ".join(prompt.strip().lower().split())
    if not text:
        raise ValueError("the GroundingDINO prompt is empty; use e.g. 'icon.'")
    return text if text.endswith(".") else f"{text}."


def _load(source: str, local_only: bool, device: str, dtype: torch.dtype) -> LoadedModel:
    from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

    try:
        # transformers 5 picks the torchvision image processor when torchvision is installed and the
        # PIL one otherwise; transformers 4 uses the PIL/numpy one by default.
        processor = AutoProcessor.from_pretrained(source, local_files_only=local_only)
        model = AutoModelForZeroShotObjectDetection.from_pretrained(
            source, local_files_only=local_only, **dtype_kwargs(dtype)
        )
    except (OSError, ValueError, ImportError, KeyError, TypeError) as exc:
        raise load_failed("GroundingDINO", source, exc) from exc
    model = model.to(device).eval()
    return LoadedModel(model=model, processor=processor, device=device, dtype=dtype)


class GroundingDinoDetector:
    """Icon boxes from GroundingDINO prompted with ``prompt`` (default "icon.")."""

    name = "groundingdino"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        prompt: str = "icon.",
        box_threshold: float = 0.05,
        text_threshold: float = 0.05,
        device: str | None = None,
        dtype: str | torch.dtype | None = None,
        max_area_fraction: float = 0.05,
        iou_threshold: float = 0.5,
    ) -> None:
        require_torch("GroundingDINO icon detection")
        self.model_id = model
        self.prompt = normalize_prompt(prompt)
        self.box_threshold = box_threshold
        self.text_threshold = text_threshold
        self.max_area_fraction = max_area_fraction
        self.iou_threshold = iou_threshold
        source, local_only = weights_source(model)
        chosen_device = pick_device(device)
        chosen_dtype = pick_dtype(dtype, chosen_device, prefer_bf16=False)
        key = ("groundingdino", source, chosen_device, str(chosen_dtype))
        self.loaded: LoadedModel = load_once(
            key, lambda: _load(source, local_only, chosen_device, chosen_dtype)
        )

    @property
    def device(self) -> str:
        return self.loaded.device

    def raw_detections(self, image: np.ndarray) -> list[Element]:
        """Every box over the thresholds, best score first, before size and duplicate filtering."""
        rgb = _as_rgb(image)
        height, width = rgb.shape[:2]
        processor, model = self.loaded.processor, self.loaded.model
        with inference(self.loaded.device):
            inputs = processor(images=Image.fromarray(rgb), text=self.prompt, return_tensors="pt")
            inputs = inputs.to(self.loaded.device)
            inputs["pixel_values"] = inputs["pixel_values"].to(self.loaded.dtype)
            outputs = model(**inputs)
            results = processor.post_process_grounded_object_detection(
                outputs,
                inputs["input_ids"],
                text_threshold=self.text_threshold,
                target_sizes=[(height, width)],
                **{_threshold_keyword(processor): self.box_threshold},
            )[0]
            scores = results["scores"].float().cpu().tolist()
            boxes = results["boxes"].float().cpu().tolist()
        return boxes_to_elements(boxes, scores, width, height, source=self.name)

    def detect(self, image: np.ndarray) -> list[Element]:
        """Icon elements of an RGB ``uint8`` image: thresholded, small enough, without duplicates."""
        height, width = image.shape[:2]
        return filter_detections(
            self.raw_detections(image),
            width,
            height,
            max_area_fraction=self.max_area_fraction,
            iou_threshold=self.iou_threshold,
        )


def boxes_to_elements(
    boxes: list[list[float]], scores: list[float], width: int, height: int, *, source: str
) -> list[Element]:
    """Icon elements from ``(x0, y0, x1, y1)`` pixel boxes, clipped to the screen; empty boxes dropped."""
    elements = []
    for box, score in sorted(zip(boxes, scores, strict=True), key=lambda pair: -pair[1]):
        clipped = clip_box(box, width, height)
        if clipped[2] > clipped[0] and clipped[3] > clipped[1]:
            elements.append(Element(kind="icon", box=clipped, source=source, score=round(float(score), 4)))
    return elements


def _threshold_keyword(processor: Any) -> str:
    """The box-score keyword of ``post_process_grounded_object_detection``: ``threshold`` in current
    transformers, ``box_threshold`` in older releases."""
    parameters = inspect.signature(processor.post_process_grounded_object_detection).parameters
    return "threshold" if "threshold" in parameters else "box_threshold"


def _as_rgb(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return np.ascontiguousarray(np.stack([image] * 3, axis=-1).astype(np.uint8))
    return np.ascontiguousarray(image[..., :3].astype(np.uint8, copy=False))


__all__ = ["DEFAULT_MODEL", "GroundingDinoDetector", "boxes_to_elements", "normalize_prompt"]
