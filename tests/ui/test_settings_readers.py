"""``load_settings`` gives the plain model the raw values itself when pydantic-settings would
hand them over unchanged (:func:`annactl.core.quicksettings.raw_values`); both ways must say
the same: every field's value, or the same ``CONFIG_INVALID`` message."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from anna_common.errors import AnnaError
from annactl.core import config
from annactl.core.quicksettings import raw_values

CASES: list[tuple[dict[str, str], str | None, bool]] = [
    ({}, None, True),
    ({"ANNA_AUTOSTART": "no", "ANNA_LLM_TIMEOUT": "1e3"}, None, True),   # pydantic's spellings
    ({"anna_llm_budget": " 20 ", "ANNA_MAX_MODEL_CALLS": "7"}, None, True),
    ({"ANNA_LLM_API_KEY": ""}, None, True),                            # empty key: none
    ({"ANNA_LLM_API_KEY": "sk-secret", "ANNA_LANGUAGE": "fr"}, None, True),
    ({"ANNA_SOCKET": "{tmp}/env.sock"}, 'socket = "{tmp}/toml.sock"\nllm_timeout = 3\n', True),
    ({}, 'allowed_models = ["a", "b"]\ntrace = true\n', True),           # a TOML list as is
    ({"ANNA_STATE_DIR": ""}, None, True),
    ({"ANNA_AUTOSTART": "maybe"}, None, True),                           # refused both ways
    ({"ANNA_MAX_MODEL_CALLS": "33"}, None, True),
    ({"ANNA_LLM_PROVIDER": "gpt"}, 'llm_ids = "free"\n', True),
    ({}, 'llm_timeout = true\n', True),
    ({"ANNA_ALLOWED_MODELS": '["m"]'}, None, False),                     # JSON: theirs only
    ({"ANNA_SOCKET": "a", "anna_socket": "b"}, None, False),             # two spellings
    ({}, 'colour = "red"\n', False),                                     # unknown key
    ({}, 'socket = [\n', False),                                         # not TOML
]


def _setup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str],
           toml: str | None) -> None:
    for key in [k for k in os.environ if k.lower().startswith("anna_")]:
        monkeypatch.delenv(key)
    path = tmp_path / "config.toml"
    monkeypatch.setenv("ANNA_CONFIG", str(path))
    if toml is not None:
        path.write_text(toml.replace("{tmp}", str(tmp_path)))
    for key, value in env.items():
        monkeypatch.setenv(key, value.replace("{tmp}", str(tmp_path)))


def _read(build: Callable[[], config.ClientSettings]) -> dict[str, object] | str:
    try:
        settings = build()
    except AnnaError as exc:
        return f"{exc.code}: {exc.message}"
    return {name: getattr(settings, name) for name in config.ClientSettings.model_fields}


@pytest.mark.parametrize(("env", "toml", "raw"), CASES)
def test_both_readers_say_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                   env: dict[str, str], toml: str | None, raw: bool) -> None:
    _setup(monkeypatch, tmp_path, env, toml)
    assert (raw_values() is not None) == raw
    ours, theirs = _read(config.load_settings), _read(lambda: config._full({}))
    assert ours == theirs
    overrides = {"llm_model": "m", "llm_timeout": 9.5}  # arguments win over both sources
    ours = _read(lambda: config.load_settings(**overrides))
    assert ours == _read(lambda: config._full(overrides))
    if isinstance(ours, dict):
        assert ours["llm_model"] == "m" and ours["llm_timeout"] == 9.5


def test_planning_settings_do_not_import_pydantic_settings(tmp_path: Path) -> None:
    probe = ("import sys; from annactl.core.config import load_settings; s = load_settings(); "
             "print(s.llm_timeout, 'pydantic_settings' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("anna_")}
    env["ANNA_CONFIG"] = str(tmp_path / "config.toml")
    light = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env={**env, "ANNA_LLM_TIMEOUT": "7"}, check=True, timeout=60)
    assert light.stdout.split() == ["7.0", "False"]
    full = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**env, "ANNA_LLM_TIMEOUT": "7", "ANNA_ALLOWED_MODELS": "[]"},
                          check=True, timeout=60)
    assert full.stdout.split() == ["7.0", "True"]  # the comparison above can fail


def test_plain_settings_are_made_without_building_the_validator(tmp_path: Path) -> None:
    probe = ("from annactl.core.config import ClientSettings, load_settings; s = load_settings(); "
             "print(s.llm_timeout, s.llm_api_key, ClientSettings.__pydantic_complete__)")
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("anna_")}
    env["ANNA_CONFIG"] = str(tmp_path / "config.toml")
    plain = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env={**env, "ANNA_LLM_TIMEOUT": "7", "ANNA_LLM_API_KEY": "sk-x"},
                           check=True, timeout=60)
    assert plain.stdout.split() == ["7.0", "**********", "False"]  # the key stays secret
    odd = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**env, "ANNA_AUTOSTART": "yes"}, check=True, timeout=60)
    assert odd.stdout.split()[-1] == "True"  # a spelling only pydantic reads: validated


PROFILE_TOML = 'profile = "fast"\n[profiles.fast]\nllm_model = "m2"\nllm_budget = 5\n'


@pytest.mark.parametrize(("env", "toml"), [
    ({}, PROFILE_TOML),
    ({"ANNA_LLM_MODEL": "env-model", "ANNA_PROFILE": "fast"}, '[profiles.fast]\nllm_budget = 5\n'),
    ({}, '[profiles.fast]\nllm_modle = "m2"\n'),                       # a typo: refused
])
def test_both_readers_read_profiles_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              env: dict[str, str], toml: str) -> None:
    _setup(monkeypatch, tmp_path, env, toml)
    assert raw_values() is not None
    ours = _read(lambda: config._build({}))  # the sources, before a profile is applied
    assert ours == _read(lambda: config._full({}))
    from annactl.core.quicksettings import quick_settings

    assert quick_settings() is not None  # applying a stored plan asks no model: still fast


def test_a_chosen_profile_wins_over_the_environment_and_model_over_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from annactl.core.quicksettings import choose

    _setup(monkeypatch, tmp_path, {"ANNA_LLM_MODEL": "env-model", "ANNA_LLM_BUDGET": "9"},
           PROFILE_TOML)
    settings = config.load_settings()
    assert (settings.llm_model, settings.llm_budget, settings.profile) == ("m2", 5.0, "fast")
    try:
        choose(model="typed")
        settings = config.load_settings()
        assert (settings.llm_model, settings.llm_budget) == ("typed", 5.0)
        choose(profile="none")
        with pytest.raises(AnnaError, match=r"no profile 'none'.*profiles: fast"):
            config.load_settings()
    finally:
        choose()
