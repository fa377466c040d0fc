"""Decoding what ``screencap`` writes: PNG (``screencap -p``) or the raw framebuffer (``screencap``).

The raw format is a little-endian header ``width, height, format`` (12 bytes, Android 8 and older)
or ``width, height, format, dataspace`` (16 bytes, Android 9+), then the pixels row by row. Older
phones write whole stride-wide rows; the row width is inferred from the payload size.
"""

from __future__ import annotations

import io
import math
import struct

import numpy as np
from PIL import Image, UnidentifiedImageError

from mae.errors import DeviceError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_END = b"IEND\xaeB`\x82"

MAX_SCREEN_PIXELS = 40_000_000
"""The largest screenshot accepted (a 4K tablet has 8.3 million pixels); checked before decoding."""

RGBA_8888, RGBX_8888, RGB_888, RGB_565, BGRA_8888 = 1, 2, 3, 4, 5
BYTES_PER_PIXEL = {RGBA_8888: 4, RGBX_8888: 4, RGB_888: 3, RGB_565: 2, BGRA_8888: 4}


class ScreencapError(DeviceError):
    """``screencap`` returned bytes that are not a screen image (truncated, or an error message)."""


def check_size(width: int, height: int) -> None:
    """Raise ``ScreencapError`` for a screen too large to be a phone's (before any pixel is decoded)."""
    if width * height > MAX_SCREEN_PIXELS:
        raise ScreencapError(
            f"the phone sent a {width}x{height} screenshot, too large for a phone screen (at most "
            f"{MAX_SCREEN_PIXELS // 1_000_000} million pixels); check `adb shell wm size` and reset it with "
            "`adb shell wm size reset`"
        )


def _pixels(data: bytes) -> np.ndarray:
    """The raw framebuffer as an ``(h, w, bytes_per_pixel)`` array (a view of ``data``)."""
    if len(data) < 12:
        raise ScreencapError(f"raw screencap too short ({len(data)} bytes)")
    width, height, fmt = struct.unpack_from("<III", data)
    bpp = BYTES_PER_PIXEL.get(fmt)
    if bpp is None or width == 0 or height == 0:
        raise ScreencapError(f"raw screencap has an unknown header (w={width}, h={height}, format={fmt})")
    check_size(width, height)
    column = height * bpp  # bytes per pixel column; the payload is stride columns
    for header in (16, 12):
        payload = len(data) - header
        if payload >= width * column and payload % column == 0:
            stride = payload // column
            arr = np.frombuffer(data, dtype=np.uint8, offset=header, count=height * stride * bpp)
            return arr.reshape(height, stride, bpp)[:, :width]
    raise ScreencapError(
        f"raw screencap is truncated: {len(data)} bytes for {width}x{height} format {fmt} "
        "(the connection may have dropped)"
    )


def validate_png(data: bytes) -> None:
    """Raise ``ScreencapError`` unless ``data`` starts and ends like a complete PNG (cheap check)."""
    if not data.startswith(PNG_MAGIC):
        text = data[:200].decode("utf-8", errors="replace").strip()
        raise ScreencapError(f"screencap -p did not return a PNG: {text or 'no data'}")
    if not data.endswith(PNG_END):
        raise ScreencapError(
            f"screencap -p returned a truncated PNG ({len(data)} bytes); the connection may have dropped"
        )


def validate_raw(data: bytes) -> None:
    """Raise ``ScreencapError`` unless ``data`` is a complete raw screencap."""
    _pixels(data)


def raw_format(data: bytes) -> int:
    """The pixel format code of a raw screencap."""
    return int(struct.unpack_from("<I", data, 8)[0])


def _to_rgb(pixels: np.ndarray, fmt: int) -> np.ndarray:
    if fmt in (RGBA_8888, RGBX_8888, RGB_888):
        return pixels[..., :3]
    if fmt == BGRA_8888:
        return pixels[..., 2::-1]
    value = pixels[..., 0].astype(np.uint16) | (pixels[..., 1].astype(np.uint16) << 8)
    red = ((value >> 11) & 0x1F) * 255 // 31
    green = ((value >> 5) & 0x3F) * 255 // 63
    blue = (value & 0x1F) * 255 // 31
    return np.stack([red, green, blue], axis=-1).astype(np.uint8)


def decode_raw(data: bytes) -> Image.Image:
    """The RGB image in a raw screencap."""
    rgb = _to_rgb(_pixels(data), raw_format(data))
    return Image.fromarray(np.ascontiguousarray(rgb), "RGB")


def decode_png(data: bytes) -> Image.Image:
    """The RGB image in a PNG screencap."""
    validate_png(data)
    if data[12:16] == b"IHDR":  # the size from the header, before PIL allocates anything
        check_size(*struct.unpack(">II", data[16:24]))
    try:
        image = Image.open(io.BytesIO(data))
        check_size(*image.size)
        image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise ScreencapError(
            f"screencap -p returned a broken PNG ({exc}); the connection may have dropped"
        ) from exc
    return image.convert("RGB")


def decode(data: bytes, method: str) -> Image.Image:
    """Decode a screencap taken with ``method`` (``"png"`` or ``"raw"``)."""
    return decode_png(data) if method == "png" else decode_raw(data)


def raw_thumbnail(data: bytes, width: int) -> np.ndarray:
    """A grey-scale thumbnail about ``width`` pixels wide, sampled straight from a raw screencap."""
    pixels = _pixels(data)
    step = max(1, math.ceil(pixels.shape[1] / width))
    rgb = _to_rgb(pixels[::step, ::step], raw_format(data)).astype(np.uint16)
    grey = (rgb[..., 0] * 77 + rgb[..., 1] * 150 + rgb[..., 2] * 29) >> 8
    return grey.astype(np.uint8)


def encode_raw(
    image: Image.Image, fmt: int = RGBA_8888, header: int = 16, stride: int | None = None
) -> bytes:
    """Raw screencap bytes of ``image`` (what a phone would send); used by tests and benchmarks."""
    rgb = np.asarray(image.convert("RGB"), dtype=np.uint8)
    height, width = rgb.shape[:2]
    if fmt in (RGBA_8888, RGBX_8888):
        pixels = np.concatenate([rgb, np.full((height, width, 1), 255, np.uint8)], axis=-1)
    elif fmt == BGRA_8888:
        pixels = np.concatenate([rgb[..., ::-1], np.full((height, width, 1), 255, np.uint8)], axis=-1)
    elif fmt == RGB_888:
        pixels = rgb
    elif fmt == RGB_565:
        r, g, b = (rgb[..., i].astype(np.uint16) for i in range(3))
        value = ((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3)
        pixels = np.stack([value & 0xFF, value >> 8], axis=-1).astype(np.uint8)
    else:
        raise ValueError(f"unknown format {fmt}")
    stride = stride or width
    if stride > width:
        pad = np.zeros((height, stride - width, pixels.shape[2]), np.uint8)
        pixels = np.concatenate([pixels, pad], axis=1)
    head = struct.pack("<III", width, height, fmt) + (struct.pack("<I", 0) if header == 16 else b"")
    return head + pixels.tobytes()
