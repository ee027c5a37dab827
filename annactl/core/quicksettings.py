"""The client's directories, and its settings read without pydantic when that is exact.

:class:`~annactl.core.config.ClientSettings` is a pydantic model, whose import alone costs a
fifth of ``annactl apply ID``'s start-up budget (15x a bare interpreter,
``bench/startup.py``). Applying a stored plan reads six settings; :func:`quick_settings`
reads them from ``ANNA_*`` variables and the TOML file itself, but only when every setting
present there is one whose parsing it can reproduce *exactly* (strings, paths, booleans
spelled ``true``/``false``/``1``/``0``, a choice among the allowed values). Anything else —
a number, a list, an unknown key, an odd spelling, an unreadable file — returns None and
the caller takes :func:`~annactl.core.config.load_settings`, whose coded errors
(``CONFIG_INVALID``) are unchanged. A test holds both readers to the same answers.
:func:`raw_values` gives ``load_settings`` the values unparsed (the model parses them) when
pydantic-settings would hand them over unchanged, so planning needs no pydantic-settings.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/anna`` (default ``~/.config/anna``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "anna"


def state_dir() -> Path:
    """``$XDG_STATE_HOME/anna`` (default ``~/.local/state/anna``): history, memory, caches."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "anna"


def runtime_dir() -> Path:
    """``$XDG_RUNTIME_DIR/anna`` when set, else the state dir: where a per-user annad listens."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    return Path(base) / "anna" if base else state_dir()


def config_file() -> Path:
    """The TOML file read by :class:`ClientSettings` (``ANNA_CONFIG`` overrides it)."""
    override = os.environ.get("ANNA_CONFIG")
    return Path(override) if override else config_dir() / "config.toml"


SETTINGS = frozenset({
    "llm_provider", "llm_url", "llm_model", "llm_api_key", "llm_timeout", "llm_connect_timeout",
    "llm_budget", "llm_keep_alive", "llm_ids", "llm_compact", "llm_cache", "llm_record",
    "llm_replay", "llm_forms",
    "max_model_calls", "max_prompt_bytes", "max_session_calls", "max_session_tokens",
    "allowed_models", "trace", "trace_raw", "templates", "evaluate", "socket", "system_socket",
    "autostart", "reconnect_wait_s", "state_dir", "language", "profile", "profiles"})
"""Every field of :class:`ClientSettings` (a test checks): the ``ANNA_*`` names it reads."""
_CHOSEN: dict[str, str] = {}
"""``--model``/``--profile`` from the command line (:func:`choose`), for every
:func:`~annactl.core.config.load_settings` of this process."""
_BOOL = {"true": True, "false": False, "1": True, "0": False}
"""Spellings of a boolean read here (pydantic accepts more; those go the full way)."""
_NUMBER = {int: re.compile(r"[0-9]{1,12}"), float: re.compile(r"[0-9]{1,12}(\.[0-9]{1,9})?")}
"""Spellings of a number read here: plain digits (no sign, exponent, space or ``_``)."""


def choose(*, model: str | None = None, profile: str | None = None) -> None:
    """What the command line chose for every model call of this process (``annactl -m NAME``,
    ``--profile NAME``): set once by :func:`annactl.cli.main`, read by ``load_settings``."""
    _CHOSEN.clear()
    if model is not None:
        _CHOSEN["llm_model"] = model
    if profile is not None:
        _CHOSEN["profile"] = profile


def chosen() -> dict[str, str]:
    """A copy of what :func:`choose` set."""
    return dict(_CHOSEN)


@dataclass(frozen=True)
class Number:
    """A numeric setting and its bounds (as declared on :class:`ClientSettings`)."""

    kind: type[int] | type[float]
    """``int`` or ``float``."""
    low: float
    """The smallest value allowed (``low_open``: values above it only)."""
    high: float = float("inf")
    """The largest value allowed."""
    low_open: bool = False
    """``gt`` rather than ``ge``."""


KINDS: dict[str, Any] = {
    "llm_provider": ("ollama", "openai"), "llm_url": str, "llm_model": str,
    "llm_api_key": str, "llm_keep_alive": str, "llm_ids": ("positional", "free"),
    "llm_compact": bool, "llm_forms": ("auto", "contract", "small"),
    "llm_cache": ("off", "read", "write", "readwrite"), "llm_record": Path,
    "llm_replay": Path, "trace": bool, "trace_raw": bool, "templates": bool,
    "evaluate": bool, "socket": Path, "system_socket": Path, "autostart": bool,
    "state_dir": Path, "language": str, "profile": str,
    "llm_timeout": Number(float, 0, 3600, low_open=True),
    "llm_budget": Number(float, 0, 3600),
    "llm_connect_timeout": Number(float, 0, 120, low_open=True),
    "max_model_calls": Number(int, 1, 32), "max_prompt_bytes": Number(int, 1024),
    "max_session_calls": Number(int, 1), "max_session_tokens": Number(int, 1000),
    "reconnect_wait_s": Number(float, 0, 86400),
}
"""The settings read here and their kind (a tuple: one of these strings; a :class:`Number`
with its bounds). A setting not named (the list ``allowed_models``, the ``profiles`` tables)
sends the caller the full way when it is set at all (``profiles`` only for planning: applying
a stored plan asks no model); a test checks the bounds against the model's."""


@dataclass(frozen=True)
class QuickSettings:
    """What applying a stored plan reads of the client settings (their default values are
    :class:`~annactl.core.config.ClientSettings`'s; a test checks)."""

    socket: Path | None = None
    """``ANNA_SOCKET``: the daemon socket to use."""
    system_socket: Path = Path("/run/anna/annad.sock")
    """Where the system daemon listens."""
    autostart: bool = True
    """Start a per-user annad when no daemon answers."""
    state_dir: Path = field(default_factory=state_dir)
    """History, memory, cache and traces."""
    evaluate: bool = True
    """Ask the model to evaluate a plan it made (a stored plan is evaluated by Anna)."""
    reconnect_wait_s: float = 300.0
    """How long to wait for a daemon that stopped answering mid-plan."""


def quick_settings() -> QuickSettings | None:
    """The settings, when reading them here is exact; None: use ``load_settings()``."""
    parsed = exact_values(stored_plan=True)
    if parsed is None:
        return None
    wanted = {k: v for k, v in parsed.items() if k in QuickSettings.__dataclass_fields__}
    return QuickSettings(**wanted)


def exact_values(*, stored_plan: bool = False) -> dict[str, Any] | None:
    """Every setting present (TOML under ``ANNA_*``), parsed here, when that is exactly what
    the model's validation would make of it; None otherwise (the caller validates).
    ``stored_plan``: for applying a stored plan, which asks no model, so the ``profiles``
    tables are left out; otherwise they send the caller the full way."""
    values = _toml_values(frozenset(KINDS) | {"profiles"} if stored_plan else frozenset(KINDS))
    if values is None:
        return None
    values.pop("profiles", None)  # model settings: applying a stored plan asks no model
    env = _env_values()
    if env is None:
        return None
    values.update(env)
    parsed: dict[str, Any] = {}
    for name, raw in values.items():
        value = _parse(KINDS[name], raw)
        if value is _REFUSED:
            return None
        parsed[name] = value
    return parsed


_REFUSED = object()


def _parse(kind: Any, raw: Any) -> Any:
    if kind is str:
        return raw if isinstance(raw, str) else _REFUSED
    if kind is Path:
        return Path(raw) if isinstance(raw, str) and raw else _REFUSED
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        return _BOOL.get(raw, _REFUSED) if isinstance(raw, str) else _REFUSED
    if isinstance(kind, Number):
        return _number(kind, raw)
    return raw if isinstance(raw, str) and raw in kind else _REFUSED


def _number(kind: Number, raw: Any) -> Any:
    if isinstance(raw, str) and _NUMBER[kind.kind].fullmatch(raw):
        value: float = kind.kind(raw)
    elif type(raw) is kind.kind or (kind.kind is float and type(raw) is int):
        value = raw  # TOML's own number (never a bool: True is an int to Python)
    else:
        return _REFUSED
    above = value > kind.low if kind.low_open else value >= kind.low
    return kind.kind(value) if above and value <= kind.high else _REFUSED


def _env_values() -> dict[str, str] | None:
    """``ANNA_*`` variables naming a setting (any case, as pydantic-settings matches them)."""
    found: dict[str, str] = {}
    for key, value in os.environ.items():
        lowered = key.lower()
        if not lowered.startswith("anna_") or lowered[5:] not in SETTINGS:
            continue  # not a setting: the full reader ignores it too
        name = lowered[5:]
        if name in found or name not in KINDS:
            return None  # two spellings of one variable, or a kind not read here
        found[name] = value
    return found


def raw_values() -> dict[str, Any] | None:
    """The settings as pydantic-settings would hand them to the model: the TOML file's values
    under the ``ANNA_*`` variables' strings; None when its reading would differ (a list in a
    variable, which it decodes as JSON; two spellings of one variable; an unknown key; a file
    it cannot read), so the caller takes it (:mod:`annactl.core.envsettings`)."""
    values = _toml_values(SETTINGS)
    env = _env_values()
    if values is None or env is None:
        return None
    values.update(env)
    return values


def _toml_values(known: frozenset[str] = frozenset(KINDS)) -> dict[str, Any] | None:
    """The TOML file's settings ({} when there is no file), None when it is not plain (a key
    not in ``known``)."""
    try:
        with config_file().open("rb") as handle:
            # imported only when there is a file: most runs have none, and tomllib's import
            # (its patterns compiled) is ~1 % of answering "how is my system?" offline
            import tomllib

            data = tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None  # the full reader reports it (CONFIG_INVALID)
    if not set(data) <= known:
        return None  # unknown keys are refused there (extra="forbid"), numbers checked there
    return dict(data)
