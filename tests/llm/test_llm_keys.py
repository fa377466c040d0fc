"""Keys stay with their own provider: preset hosts, typed keys, public demos."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mae.config import Settings
from mae.errors import ConfigError
from mae.llm import keys
from mae.llm.errors import ModelAuthError
from mae.llm.keys import redact_url
from mae.llm.providers import ModelProfile
from mae.ui.forms import CUSTOM_KEY_ENV, RunForm, settings_from_form

ENV = {"OPENAI_API_KEY": "sk-server", "MY_KEY": "sk-mine"}


def profile(url: str, env: str | None = "OPENAI_API_KEY") -> ModelProfile:
    return ModelProfile(provider="openai", base_url=url, model="gpt-4o", api_key_env=env)


@pytest.fixture(autouse=True)
def local_demo() -> Iterator[None]:
    keys.configure_server_keys(share=False, host="127.0.0.1", environ={})
    yield
    keys.configure_server_keys(share=False, host="127.0.0.1", environ={})


def test_server_key_goes_only_to_its_preset_host() -> None:
    assert keys.resolve_key(profile("https://api.openai.com/v1"), {}, ENV) == "sk-server"
    with pytest.raises(ModelAuthError, match=r"only sent to api\.openai\.com, not to evil\.example"):
        keys.resolve_key(profile("https://evil.example/v1"), {}, ENV)
    # a key typed for the session goes where the session sends it
    assert (
        keys.resolve_key(profile("https://evil.example/v1"), {"OPENAI_API_KEY": "sk-typed"}, ENV)
        == "sk-typed"
    )
    # a variable no preset uses was named for this URL by whoever configured it
    assert keys.resolve_key(profile("http://10.0.0.5/v1", "MY_KEY"), {}, ENV) == "sk-mine"
    assert keys.resolve_key(profile("http://10.0.0.5/v1", None), {}, ENV) == "EMPTY"


@pytest.mark.parametrize(
    ("share", "host", "environ"),
    [(True, "127.0.0.1", {}), (False, "0.0.0.0", {}), (False, "127.0.0.1", {"SPACE_ID": "me/demo"})],
)
def test_public_demo_never_uses_server_keys_without_opt_in(
    share: bool, host: str, environ: dict[str, str]
) -> None:
    assert keys.configure_server_keys(share=share, host=host, environ=environ)
    with pytest.raises(ModelAuthError, match="enter your own key"):
        keys.resolve_key(profile("https://api.openai.com/v1"), {}, ENV)
    assert keys.resolve_key(profile("https://api.openai.com/v1"), {"OPENAI_API_KEY": "sk-v"}, ENV) == "sk-v"
    with pytest.raises(ConfigError, match="MAE_AUTH"):
        keys.configure_server_keys(share=share, host=host, environ={**environ, "MAE_ALLOW_SERVER_KEYS": "1"})
    opted_in = {**environ, "MAE_ALLOW_SERVER_KEYS": "1", "MAE_AUTH": "me:pw"}
    assert keys.configure_server_keys(share=share, host=host, environ=opted_in) is None
    assert keys.resolve_key(profile("https://api.openai.com/v1"), {}, ENV) == "sk-server"


def test_demo_form_gives_a_typed_base_url_no_server_key() -> None:
    base = Settings(backbone="custom", base_url="http://127.0.0.1:8000/v1", model="m", api_key_env="MY_KEY")
    same = settings_from_form(
        base, RunForm(backbone="custom", base_url="http://127.0.0.1:8000/v1", model="m")
    )
    assert same.profile_for("operator").api_key_env == "MY_KEY"
    typed = settings_from_form(base, RunForm(backbone="custom", base_url="http://other:1/v1", model="m"))
    assert typed.profile_for("operator").api_key_env is None
    with_key = RunForm(
        backbone="custom", base_url="http://other:1/v1", model="m", api_keys={CUSTOM_KEY_ENV: "k"}
    )
    assert settings_from_form(base, with_key).profile_for("operator").api_key_env == CUSTOM_KEY_ENV
    openai = Settings(backbone="openai", api_key_env="MY_KEY")
    typed_preset = settings_from_form(openai, RunForm(backbone="openai", base_url="http://other:1/v1"))
    assert typed_preset.profile_for("operator").api_key_env == "OPENAI_API_KEY"  # host-guarded


def test_urls_are_redacted() -> None:
    assert redact_url("https://user:sk-123@host.example/v1?api-key=sk-456") == "https://host.example/v1"


@pytest.mark.parametrize("env", ["", "   "])
def test_a_blank_key_variable_name_is_named_as_the_problem(env: str) -> None:
    with pytest.raises(ModelAuthError, match=r"name of the API key variable .* is empty") as caught:
        keys.resolve_key(profile("https://api.openai.com/v1", env), {}, ENV)
    assert "set the environment variable ," not in str(caught.value)
