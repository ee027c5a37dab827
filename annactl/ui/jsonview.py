"""Read a daemon's JSON answer through attributes, as the renderers read protocol models.

``annactl show`` must start within 12x a bare interpreter; building the pydantic classes of
the plan models alone costs more than that. The renderers only read attributes (strings,
numbers, lists), so ``show`` hands them a :class:`JsonView` of the record, and validates it
with the real models (coded errors) only when the view does not have the expected shape.
"""

from __future__ import annotations

from typing import Any


class ShapeError(Exception):
    """The JSON lacks a field a renderer read (the caller falls back to the real models)."""


class JsonView:
    """Attribute access over a JSON object; nested objects and lists are viewed too."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._data[name]
        except KeyError:
            raise ShapeError(name) from None
        return view(value)

    def __repr__(self) -> str:
        return f"JsonView({sorted(self._data)})"


def view(value: Any) -> Any:
    """``value`` with every JSON object in it readable through attributes."""
    if isinstance(value, dict):
        return JsonView(value)
    if isinstance(value, list):
        return [view(item) for item in value]
    return value
