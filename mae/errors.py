"""The error hierarchy shared by every layer.

``MaeError`` is the root. Errors a user can cause or fix carry a message that says what to do.
Model mistakes (an unparsable reply, an invalid action) are *not* exceptions of this hierarchy: they
are fed back to the model as the next step's feedback (see ``mae.agents.parsing``).
"""


class MaeError(Exception):
    """Base class of every error mae raises on purpose."""


class ConfigError(MaeError):
    """A setting is missing or invalid (bad profile file, unknown backbone, ...)."""


class DeviceError(MaeError):
    """The phone could not be reached or refused an operation. The message says what to do."""


class DeviceBusyError(DeviceError):
    """Another run is already operating this device."""


class ActionError(MaeError):
    """An action is invalid for this device (unknown app, coordinates off screen, ...)."""


class MemoryStoreError(MaeError):
    """The long-term memory store could not be read or written."""
