"""Build what a run needs from ``Settings``: the device, the model client and the Perceptor.

The CLI, the Gradio UI and the evolution runner all call ``build_runtime`` so the three stay alike.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mae.config import PerceptionSettings, Settings
from mae.device import open_device
from mae.device.base import Device
from mae.errors import ConfigError
from mae.llm.client import ChatClient
from mae.run.loop import PerceptorLike


@dataclass
class Runtime:
    """A device, a client for every agent role and a Perceptor, built from one ``Settings``."""

    settings: Settings
    device: Device
    client: ChatClient
    perceptor: PerceptorLike

    @property
    def backbone(self) -> str:
        """``provider:model`` of the Operator (what the UI and the run summary show)."""
        return backbone_of(self.settings)

    def close(self) -> None:
        """Release the device."""
        self.device.close()


def backbone_of(settings: Settings) -> str:
    """``provider:model`` of the Operator under ``settings``."""
    profile = settings.profile_for("operator")
    return f"{profile.provider}:{profile.model}"


def build_client(settings: Settings, api_keys: Mapping[str, str] | None = None) -> ChatClient:
    """A chat client whose per-role profiles come from ``settings``, checked now rather than at the first
    call: an incomplete custom backbone raises ``ConfigError``, a missing API key ``ModelAuthError``."""
    client = ChatClient(settings.profile_for, api_keys=api_keys)
    for role in ("manager", "operator", "reflector", "notetaker"):
        settings.profile_for(role)
        client.check_key(role)
    return client


def build_perceptor(perception: PerceptionSettings, client: ChatClient | None = None) -> PerceptorLike:
    """The Perceptor configured by ``perception`` (OCR, icon detector, captions via ``client``)."""
    try:
        module: Any = importlib.import_module("mae.perception")
        perceptor_class = module.Perceptor
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"the Perceptor is not available in this install ({exc})") from None
    from_settings = getattr(perceptor_class, "from_settings", None)
    if callable(from_settings):
        return from_settings(perception, client=client)
    return perceptor_class(perception)


def build_runtime(
    settings: Settings,
    api_keys: Mapping[str, str] | None = None,
    *,
    device: Device | None = None,
    perceptor: PerceptorLike | None = None,
) -> Runtime:
    """Open ``settings.device`` (or use ``device``), make the client and the Perceptor.

    ``api_keys`` maps environment-variable names to keys entered for this session (never stored).
    """
    client = build_client(settings, api_keys)
    chosen = perceptor or build_perceptor(settings.perception, client)
    return Runtime(
        settings=settings, device=device or open_device(settings.device), client=client, perceptor=chosen
    )
