"""Phones: the ``Device`` protocol, real phones over ADB, and the built-in virtual phone."""

from __future__ import annotations

from mae.device.base import Device

VIRTUAL = "virtual"


def open_device(spec: str | None = None) -> Device:
    """Open the device named by ``spec``.

    ``"virtual"`` is the built-in virtual phone; anything else is an ADB serial (``host:port``
    connects over Wi-Fi). With no ``spec``, the only attached ADB phone is used, and the virtual
    phone when none is attached.
    """
    if spec == VIRTUAL:
        from mae.device.virtual import VirtualPhone

        return VirtualPhone()
    from mae.device.adb import AdbDevice, attached_serials

    if spec:
        return AdbDevice(spec)
    if attached_serials():
        return AdbDevice(None)
    from mae.device.virtual import VirtualPhone

    return VirtualPhone()


__all__ = ["VIRTUAL", "Device", "open_device"]
