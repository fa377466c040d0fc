"""What ``pip install -r requirements.txt`` brings: one OpenCV build, the one the OCR package needs."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OPENCV_BUILDS = {
    "opencv-python",
    "opencv-python-headless",
    "opencv-contrib-python",
    "opencv-contrib-python-headless",
}


def _names(requirements: str) -> list[str]:
    names = []
    for line in requirements.splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            match = re.match(r"[A-Za-z0-9._-]+", line)
            assert match, line
            names.append(match.group(0).lower().replace("_", "-"))
    return names


def test_one_opencv_build_the_same_one_rapidocr_requires() -> None:
    ours = [name for name in _names((REPO / "requirements.txt").read_text()) if name in OPENCV_BUILDS]
    required = importlib.metadata.requires("rapidocr-onnxruntime") or []
    theirs = {_names(req.split(";")[0])[0] for req in required} & OPENCV_BUILDS
    assert len(ours) == 1 and {ours[0]} == theirs, (
        f"requirements.txt asks for {ours}, rapidocr-onnxruntime for {sorted(theirs)}: two OpenCV builds "
        "overwrite each other's cv2 files; require only the one rapidocr pulls in"
    )
    for extra in ("requirements-dev.txt", "requirements-gpu.txt"):
        assert not set(_names((REPO / extra).read_text())) & OPENCV_BUILDS


def test_cv2_imports_with_what_perception_uses() -> None:
    import cv2
    import numpy as np

    image = np.zeros((20, 20), np.uint8)
    image[5:15, 5:15] = 255
    contours, _ = cv2.findContours(image, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    assert len(contours) == 1 and cv2.boundingRect(contours[0]) == (5, 5, 10, 10)
