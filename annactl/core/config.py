"""Client settings: ``~/.config/anna/config.toml`` and ``ANNA_*`` environment variables.

Precedence, highest first: explicit arguments, ``ANNA_*`` environment variables,
the TOML file, defaults. Built once in the command's entry (never at import).
The API key is a :class:`~pydantic.SecretStr`: it is never logged or shown.

The model is :class:`~annactl.core.clientsettings.ClientSettings` (plain pydantic, its
schema built on first validation). When every value present is one this module parses
exactly as the model would (:func:`~annactl.core.quicksettings.exact_values`: strings,
paths, plain booleans and numbers within the bounds), the model is made from them without
validating (``model_construct``): the validator's build and run cost ~70 ms of every
planning command's CPU (``bench/request_cpu.py``). Otherwise, when
every value present is one pydantic-settings would hand to the model unchanged (a string
from a variable, a TOML value), :func:`load_settings` gives them to the model itself
(:func:`~annactl.core.quicksettings.raw_values`); anything else — and any value the model
refuses — goes through pydantic-settings (:mod:`annactl.core.envsettings`), whose
answers and errors are the reference (a test holds both ways to the same answers).
"""

from __future__ import annotations

from typing import Any

from annactl.core.clientsettings import DEFAULT_URLS, ClientSettings

# the directories are computed without pydantic (annactl/core/quicksettings.py); re-exported
from annactl.core.quicksettings import (
    chosen,
    config_dir,
    config_file,
    exact_values,
    raw_values,
    runtime_dir,
    state_dir,
)

__all__ = ["DEFAULT_URLS", "ClientSettings", "config_dir", "config_file", "load_settings",
           "runtime_dir", "state_dir"]


def load_settings(**overrides: Any) -> ClientSettings:
    """Build settings: the sources, then the chosen profile's values over them, then the
    command line's ``--model`` and ``overrides`` over everything.

    Raises :class:`~anna_common.errors.AnnaError` (CONFIG_INVALID) on bad input, and for a
    profile the file does not define.
    """
    picked = chosen()
    overrides = {**{k: v for k, v in picked.items() if k != "profile"}, **overrides}
    settings = _build(overrides)
    name = picked.get("profile") or settings.profile
    if not name:
        return settings
    profile = settings.profiles.get(name)
    if profile is None:
        from anna_common.errors import AnnaError, ErrorCode

        known = ", ".join(sorted(settings.profiles)) or "none"
        raise AnnaError(f"no profile {name!r} in {config_file()} (profiles: {known})",
                        code=ErrorCode.CONFIG_INVALID,
                        hint=f"add a [profiles.{name}] table, or choose one of the profiles")
    values = profile.model_dump(exclude_none=True)
    return _build({**values, "profile": name, **overrides})


def _build(overrides: dict[str, Any]) -> ClientSettings:
    """The settings from the sources under ``overrides``."""
    exact = None if overrides else exact_values()
    if exact is not None:
        return _constructed(exact)
    from pydantic import ValidationError

    raw = raw_values()
    if raw is not None:
        try:
            return ClientSettings(**{**raw, **overrides})
        except ValidationError:
            pass  # the reference reader says what is wrong, in its words
    return _full(overrides)


def _constructed(values: dict[str, Any]) -> ClientSettings:
    """The model from values already parsed exactly (:func:`exact_values`), unvalidated;
    the API key as the model's validator makes it (empty: none, else secret)."""
    from pydantic import SecretStr

    key = values.get("llm_api_key")
    if key is not None:
        values = {**values, "llm_api_key": SecretStr(key) if key else None}
    return ClientSettings.model_construct(**values)


def _full(overrides: dict[str, Any]) -> ClientSettings:
    """The settings as pydantic-settings reads them (its errors are the ones shown)."""
    from pydantic import ValidationError

    from anna_common.errors import AnnaError, ErrorCode

    try:
        from annactl.core.envsettings import EnvSettings

        return EnvSettings(**overrides)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        raise AnnaError(
            f"invalid configuration: {where}: {first.get('msg', 'invalid value')}",
            code=ErrorCode.CONFIG_INVALID,
            hint=f"check {config_file()} and ANNA_* environment variables",
        ) from None
    except (OSError, ValueError) as exc:
        raise AnnaError(f"cannot read configuration: {exc}", code=ErrorCode.CONFIG_INVALID,
                        hint=f"check {config_file()}") from None
