"""``python -m mae perceive IMAGE...``: the Perceptor's elements and per-stage timings for screenshots."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from mae.config import load_settings
from mae.device.adb_screen import MAX_SCREEN_PIXELS
from mae.errors import ConfigError
from mae.perception.elements import Perception


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``perceive`` subcommand."""
    parser = subparsers.add_parser(
        "perceive", help="list the texts and icons the Perceptor finds in screenshots"
    )
    parser.add_argument("images", nargs="+", type=Path, metavar="IMAGE", help="screenshot files")
    parser.add_argument("--json", action="store_true", help="one JSON object per image: elements, timings")
    parser.add_argument("--ocr", choices=["rapidocr", "paddleocr"], help="OCR backend (default rapidocr)")
    parser.add_argument(
        "--icons", choices=["contour", "groundingdino", "none"], help="icon detector (default contour)"
    )
    parser.add_argument(
        "--captions",
        metavar="auto|none|backbone|MODEL|local:PATH",
        help="icon captions: auto (on for cheap preset caption models with a key), off, the captioner "
        "role's model, a model name on its endpoint, or in-process Qwen2.5-VL from a directory or hub id "
        "(default auto)",
    )
    parser.add_argument(
        "--no-merge", action="store_true", help="one element per OCR line (do not merge wrapped lines)"
    )
    parser.add_argument("--profile", type=Path, help="settings profile (TOML) for the caption model")
    parser.set_defaults(func=cmd_perceive)


def cmd_perceive(args: argparse.Namespace) -> int:
    from mae.llm.client import ChatClient  # heavy imports only when the command runs (start-up time)
    from mae.perception import Perceptor

    settings = load_settings(
        args.profile,
        overrides={
            "perception.ocr": args.ocr,
            "perception.icons": args.icons,
            "perception.captions": args.captions,
        },
    )
    client = ChatClient(settings.profile_for) if settings.perception.captions != "none" else None
    perceptor = Perceptor.from_settings(settings.perception, client)
    perceptor.merge = not args.no_merge
    for path in args.images:
        image = read_screenshot(path)
        result = perceptor.perceive(image)
        if args.json:
            print(json.dumps({"image": str(path), **result.model_dump(mode="json")}))
        else:
            print(_as_text(path, result))
    return 0


MIN_SIDE = 32
MAX_PIXELS = MAX_SCREEN_PIXELS
MAX_ASPECT = 20


def read_screenshot(path: Path) -> Image.Image:
    """An RGB image fit for the Perceptor; ``ConfigError`` for unreadable, tiny, huge or strip images
    (checked from the header, before the pixels are decoded)."""
    if path.is_dir():
        raise ConfigError(f"{path} is a folder: give the screenshot files in it, e.g. {path / 'screen.png'}")
    if not path.exists():
        raise ConfigError(f"there is no file {path}: give the path of a screenshot (PNG or JPEG)")
    try:
        with Image.open(path) as opened:
            width, height = opened.size
            if width * height > MAX_PIXELS:
                raise ConfigError(
                    f"image {path} is {width}x{height} pixels, too large for a phone screenshot "
                    f"(at most {MAX_PIXELS // 1_000_000} million pixels)"
                )
            if min(width, height) < MIN_SIDE or max(width, height) > MAX_ASPECT * min(width, height):
                raise ConfigError(
                    f"image {path} is {width}x{height} pixels: give a screenshot at least {MIN_SIDE} pixels "
                    f"on each side and no more than {MAX_ASPECT} times longer than wide"
                )
            return opened.convert("RGB")
    except UnidentifiedImageError:
        raise ConfigError(
            f"cannot read image {path}: it is not a picture; give a PNG or JPEG screenshot"
        ) from None
    except PermissionError:
        raise ConfigError(
            f"cannot read image {path}: permission denied; give a screenshot you may read"
        ) from None
    except (OSError, Image.DecompressionBombError, ValueError) as exc:
        raise ConfigError(f"cannot read image {path}: {exc}") from None


def _as_text(path: Path, result: Perception) -> str:
    lines = [f"{path} ({result.width}x{result.height}): {len(result.texts)} texts, {len(result.icons)} icons"]
    for element in result.elements:
        x, y = element.center
        lines.append(f"  {element.kind:<4} [{x:>4}, {y:>4}]  {element.label}")
    if result.keyboard_collapsed:
        lines.append("  (on-screen keyboard shown: its keys are not listed)")
    lines.append("  timings: " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result.timings.items()))
    lines.extend(f"  warning: {w}" for w in result.warnings)
    return "\n".join(lines)
