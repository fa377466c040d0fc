"""The built-in virtual phone: a deterministic Android-like phone rendered with Pillow.

``VirtualPhone`` implements ``mae.device.base.Device``; the auto-graded tasks that run on it live in
``mae.eval.virtual_suite``. See ``docs/virtual-phone.md``.
"""

from __future__ import annotations

from mae.device.virtual.phone import VirtualPhone

__all__ = ["VirtualPhone"]
