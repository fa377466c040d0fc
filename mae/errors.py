"""The error hierarchy shared by every layer, and the reasons a run can end.

``MaeError`` is the root. Errors a user can cause or fix carry a message that says what to do.
Model mistakes (an unparsable reply, an invalid action) are *not* exceptions of this hierarchy: they
are fed back to the model as the next step's feedback (see ``mae.agents.parsing``).
"""

from enum import Enum


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


class ExitReason(str, Enum):
    """Why a run ended. Only ``finished`` is a success; every other reason is a termination error."""

    FINISHED = "finished"
    MAX_STEPS = "max_steps"
    CONSECUTIVE_ERRORS = "consecutive_errors"
    REPEATED_ACTION = "repeated_action"
    UNUSABLE_REPLY = "unusable_reply"
    MODEL_ERROR = "model_error"
    DEVICE_ERROR = "device_error"
    STOPPED = "stopped"
    REJECTED = "rejected"
    ERROR = "error"
