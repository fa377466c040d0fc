"""The built-in virtual phone: a deterministic Android-like phone rendered with Pillow.

``VirtualPhone`` implements ``mae.device.base.Device``; ``load_task_suite`` returns the auto-graded
tasks that run on it. See ``docs/virtual-phone.md``.
"""

from __future__ import annotations

from mae.device.virtual.phone import VirtualPhone
from mae.device.virtual.tasks import Check, GradeResult, VirtualTask, load_task_suite

__all__ = ["Check", "GradeResult", "VirtualPhone", "VirtualTask", "load_task_suite"]
