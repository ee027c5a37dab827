"""A daemon's JSON answer read the way the protocol models are read, without pydantic.

``annactl apply ID`` must start within 15x a bare interpreter (``bench/startup.py``);
importing pydantic and building the plan and record models costs more than that on its own.
Everything the apply path does with a record, a preview or an event is to read attributes,
compare risk levels and dump them back to JSON, so its daemon client
(:class:`~annactl.core.daemon_client.DaemonClient` with ``wire=True``) hands out
:class:`Wire` views of the answers instead:

- attributes read the JSON object's keys; nested objects and lists are viewed too;
- a risk level (:data:`RISK_FIELDS`) is a real :class:`~anna_common.levels.RiskLevel`, so the
  tier rules (:mod:`anna_common.risk.tiers`) order it exactly as they order the models' — a plain
  string would compare alphabetically, and ``"HIGH" < "LOW"``;
- a missing key or a risk level outside the four raises :class:`ShapeError`; the apply path
  then falls back to the real models, which refuse the answer with a coded error;
- ``model_dump`` gives the JSON back (what the model's ``model_dump(mode="json")`` gives for
  the daemon's own dump of it), ``model_copy`` a changed copy.

The daemon is the authority on every value here: it computed the annotation, checks the
digest and the confirmations again at execute, whatever the client sends.
"""

from __future__ import annotations

import copy
from typing import Any

from anna_common.levels import RiskLevel

RISK_FIELDS = frozenset({"final_risk", "floor", "model_risk", "risk_level"})
"""Keys whose values are :class:`RiskLevel` in the protocol models (a test checks the models)."""
FREE_FORM = frozenset({"detail"})
"""Keys whose values are free-form ``dict[str, Any]`` in the models (an error's ``detail``):
read as the dict they are (``detail.get("unverified")``), not as a view."""
OMITTED_WHEN_EMPTY = {"verify_commands": (), "memory_patch": None}
"""Plan keys the plan's serializer leaves out when empty, and the value the model has then."""


class ShapeError(AttributeError):
    """The answer does not have the shape of the protocol model (a key is missing, a risk
    level is unknown). An AttributeError, so ``getattr(view, name, default)`` works."""


class Wire:
    """Attribute access over one JSON object of a daemon's answer."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._data[name]
        except KeyError:
            if name in OMITTED_WHEN_EMPTY:
                return wire(copy.copy(OMITTED_WHEN_EMPTY[name]))
            raise ShapeError(name) from None
        if name in RISK_FIELDS and value is not None:
            return _level(name, value)
        if name in FREE_FORM and isinstance(value, dict):
            return copy.deepcopy(value)
        return wire(value)

    def model_dump(self, *, mode: str = "json", exclude: set[str] | None = None,
                   exclude_none: bool = False) -> dict[str, Any]:
        """The JSON object (a deep copy), as the model's ``model_dump(mode="json")``."""
        data = {k: copy.deepcopy(v) for k, v in self._data.items() if k not in (exclude or ())}
        return _without_none(data) if exclude_none else data

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Wire:
        """A view of a copy with ``update``'s keys replaced (values may be views or models)."""
        data = dict(self._data)
        for key, value in (update or {}).items():
            data[key] = _plain(value)
        return Wire(data)

    def __repr__(self) -> str:
        return f"Wire({sorted(self._data)})"


def wire(value: Any) -> Any:
    """``value`` with every JSON object in it readable through attributes."""
    if isinstance(value, dict):
        return Wire(value)
    if isinstance(value, list):
        return [wire(item) for item in value]
    return value


def _level(name: str, value: Any) -> RiskLevel:
    try:
        return RiskLevel(value)
    except ValueError:
        raise ShapeError(f"{name}: {value!r} is not a risk level") from None


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value
