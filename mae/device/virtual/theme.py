"""Colours and sizes of the virtual phone, in design units (a 1080-pixel-wide screen).

Every layout works in design units; ``Canvas`` scales them to the configured screen size. Text is dark
on light backgrounds and at least 36 design pixels tall so OCR reads it reliably.
"""

from __future__ import annotations

DESIGN_WIDTH = 1080
"""Width of the design space; a screen of another width scales every coordinate."""

STATUS_H = 96
NAV_H = 132
APPBAR_H = 168
KEYBOARD_H = 700

# Text sizes
SMALL = 36
BODY = 40
LARGE = 46
TITLE = 56
HEADLINE = 68

# Colours
WHITE = "#FFFFFF"
SURFACE = "#F8F9FA"
SURFACE_DIM = "#EEF0F3"
DIVIDER = "#DADCE0"
TEXT = "#1F1F1F"
TEXT_2 = "#4A4F55"
LINK = "#1A0DAB"
ACCENT = "#0B57D0"
ACCENT_BG = "#D3E3FD"
GREEN_TEXT = "#146C2E"
RED_TEXT = "#B3261E"
RED_BG = "#FCE8E6"
STAR = "#F4B400"
FIELD_BG = "#EEF1F6"
SELECTION = "#BBD6FB"
NAV_BG = "#F1F3F4"
NAV_FG = "#3C4043"
KEY_BG = "#FFFFFF"
KEY_SPECIAL = "#D5DAE1"
KEYBOARD_BG = "#E8EAED"
SWITCHER_BG = "#DDE1E6"
WALLPAPER_TOP = "#E3EDFB"
WALLPAPER_BOTTOM = "#F6E7EF"
