"""``annactl status`` on a narrow terminal (issue 23): cells fold, but a number never leaves
its unit ("23.5" at the end of a line, "GiB" alone on the next); where nothing folds the
output is what it was, byte for byte."""

from __future__ import annotations

import io
import itertools
import re

import pytest
from rich.console import Console
from rich.text import Text

from annactl.commands.status import status_view
from annactl.ui.units import UNITS, Unsplit

GIB = 1024 ** 3
DATA = {
    "socket": "/run/user/1000/anna/annad.sock", "age_s": 4.6, "health": {"mode": "user"},
    "telemetry": {
        "system": {"hostname": "vm", "distro_name": "Debian GNU/Linux 12 (bookworm)",
                   "kernel": "6.18.44-fc-v657", "uptime_seconds": 35_400},
        "cpu": {"percent": 42.0, "model": "AMD EPYC", "cores_logical": 2, "load_1": 1.5,
                "load_5": 1.25, "load_15": 1.0},
        "memory": {"percent": 8.8, "used_bytes": 2.1 * GIB, "total_bytes": 23.5 * GIB},
        "disks": [{"mountpoint": "/", "percent": 28.5, "used_bytes": 28.9 * GIB,
                   "total_bytes": 252 * GIB},
                  {"mountpoint": "/home/someone/long", "percent": 91.0,
                   "used_bytes": 1900 * GIB, "total_bytes": 2048 * GIB}],
        "temperatures": [{"label": "Package id 0", "celsius": 54.0}],
        "services": {"available": True, "failed": []},
        "desktop": {}, "packages": {"available": False, "reason": "not pacman"},
        "errors": [],
    },
}
_NUMBER_AT_END = re.compile(r"\d$")
_UNIT_FIRST = re.compile(r"^\s*(?:" + "|".join(re.escape(u) for u in UNITS) + r")(?!\w)")


def _render(renderable: object, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, highlight=False,
            soft_wrap=False).print(renderable)
    return out.getvalue()


@pytest.mark.parametrize("width", [36, 40, 50, 60, 64, 72])
def test_no_unit_is_split_from_its_number(width: int) -> None:
    lines = [line.rstrip() for line in _render(status_view(DATA), width).splitlines()]
    for before, after in itertools.pairwise(lines):
        if _NUMBER_AT_END.search(before):
            assert not _UNIT_FIRST.match(after), (width, before, after)
    flat = " ".join(" ".join(lines).split())
    for pair in ("2.1 GiB", "23.5 GiB", "28.9 GiB", "252.0 GiB", "54 °C", "4.6 s"):
        assert pair in flat, (width, pair)
    for line in lines:
        assert len(line) <= width


def test_sixty_columns_folds_the_cell_not_the_value() -> None:
    lines = _render(status_view(DATA), 60).splitlines()
    memory = next(i for i, line in enumerate(lines) if line.startswith("Memory"))
    text = lines[memory] + "\n" + lines[memory + 1]
    assert "23.5 GiB" in text.replace("\n", " ") and lines[memory + 1].strip() != "GiB"
    assert all(line.strip() not in UNITS for line in lines)


@pytest.mark.parametrize("width", [60, 80, 120])
def test_unsplit_changes_nothing_where_nothing_folds(width: int) -> None:
    text = Text("██░░  28.5%  28.9 GiB / 252.0 GiB", style="bold")
    text.stylize("red", 0, 2)
    assert _render(Unsplit(text), width) == _render(text, width)
    coloured = io.StringIO(), io.StringIO()
    for buffer, renderable in zip(coloured, (Unsplit(text), text), strict=True):
        Console(file=buffer, width=width, force_terminal=True, color_system="truecolor",
                highlight=False).print(renderable)
    assert coloured[0].getvalue() == coloured[1].getvalue()  # the styles stay where they were


def test_the_wide_status_is_unchanged() -> None:
    """At 120 columns every row fits: the table reads as one line per row, as before."""
    lines = _render(status_view(DATA), 120).splitlines()
    assert [line.split()[0] for line in lines[:2]] == ["Host", "CPU"]
    assert any(line.startswith("Memory") and line.rstrip().endswith("2.1 GiB / 23.5 GiB")
               for line in lines)
    assert lines[-1] == "user daemon at /run/user/1000/anna/annad.sock; telemetry 4.6 s old"
