"""Failed systemd units, through the runner (the only spawn site).

Machines without systemd are normal (containers, other inits): that is
``available=False`` with a reason, never an error. Unit names and descriptions
are untrusted strings (anyone who can write a unit file chooses them).

systemd 246 and later understand ``--output=json`` for ``list-units``; older
ones reject it, and then the plain table is parsed instead.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anna_common.telemetry import FailedUnit, ServicesInfo
from annad.confine.runner import RunResult, run_argv

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0
"""systemctl gets this long; a hung manager must not hold up the snapshot."""
MAX_UNITS = 100
"""Failed units reported at most."""
MAX_TEXT = 256
"""Longest unit name or description kept."""
BASE = ["systemctl", "list-units", "--state=failed", "--no-pager", "--no-legend", "--plain",
        "--full"]
"""The read-only query; the JSON form adds ``--output=json``."""
UNIT_FILES = ["systemctl", "list-unit-files", "--type=service,socket,timer", "--no-pager",
              "--no-legend", "--plain", "--full"]
"""Installed unit files (name, state, preset per line): the names templates look units up in."""
MAX_UNIT_FILES = 3000
"""Unit file names kept at most (a desktop has about 400)."""

Run = Callable[[list[str]], RunResult]
"""How systemctl is run (the runner's ``run_argv`` by default)."""


def _default_run(argv: list[str]) -> RunResult:
    # LC_ALL=C: the text fallback is parsed, so its columns must not be translated.
    return run_argv(argv, timeout=TIMEOUT_S, env={"LC_ALL": "C", "SYSTEMD_COLORS": "0"})


def _unit(name: Any, load: Any = "", active: Any = "", sub: Any = "",
          description: Any = "") -> FailedUnit | None:
    if not isinstance(name, str) or not name:
        return None
    texts = [v if isinstance(v, str) else "" for v in (load, active, sub, description)]
    return FailedUnit(name=name[:MAX_TEXT], load=texts[0][:32], active=texts[1][:32],
                      sub=texts[2][:32], description=texts[3][:MAX_TEXT])


def parse_units_json(output: str) -> list[FailedUnit] | None:
    """Units from ``--output=json``; None when the output holds no JSON array.

    The runner merges stderr into the output, so a warning may precede the array:
    decoding starts at the first ``[``.
    """
    start = output.find("[")
    if start == -1:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(output, start)
    except ValueError:
        return None
    if not isinstance(data, list):
        return None
    units = [_unit(item.get("unit"), item.get("load", ""), item.get("active", ""),
                   item.get("sub", ""), item.get("description", ""))
             for item in data if isinstance(item, dict)]
    return [u for u in units if u is not None][:MAX_UNITS]


def parse_units_text(output: str) -> list[FailedUnit]:
    """Units from the plain table: ``UNIT LOAD ACTIVE SUB DESCRIPTION`` per line.

    Older systemd prints a ``●`` (or ``*``) marker before failed units even with
    ``--plain``; it is dropped.
    """
    units: list[FailedUnit] = []
    for line in output.splitlines():
        parts = line.strip().lstrip("●*").split(None, 4)
        if len(parts) >= 4 and "." in parts[0]:
            unit = _unit(*parts)
            if unit is not None:
                units.append(unit)
    return units[:MAX_UNITS]


def _first_line(result: RunResult) -> str:
    if result.error:
        return result.error[:200]
    text = result.output.strip().splitlines()
    return (text[0] if text else f"exit status {result.exit_code}")[:200]


def collect_services(systemd_run: Path = Path("/run/systemd/system"), *,
                     run: Run = _default_run) -> ServicesInfo:
    """Failed units, or why systemd could not be asked."""
    if not systemd_run.is_dir():
        return ServicesInfo(available=False,
                            reason=f"systemd is not running (no {systemd_run})")
    result = run([*BASE, "--output=json"])
    if result.error:
        return ServicesInfo(available=False, reason=f"systemctl: {_first_line(result)}")
    units = parse_units_json(result.output) if result.ok else None
    if units is None:
        log.debug("systemctl JSON output unavailable (%s); trying the table", _first_line(result))
        result = run(list(BASE))
        if not result.ok:
            return ServicesInfo(available=False, reason=f"systemctl: {_first_line(result)}")
        units = parse_units_text(result.output)
    return ServicesInfo(available=True, failed=units, unit_files=unit_files(run))


def parse_unit_files(output: str) -> list[str]:
    """Unit names from ``list-unit-files``: the first word of each line that names a unit."""
    names = {line.split(None, 1)[0] for line in output.splitlines()
             if line.strip() and "." in line.split(None, 1)[0]}
    return sorted(n[:MAX_TEXT] for n in names)[:MAX_UNIT_FILES]


def unit_files(run: Run) -> list[str]:
    """Installed unit files' names; empty when systemctl cannot list them (then templates
    check a unit with a required ``systemctl cat``, as before)."""
    result = run(list(UNIT_FILES))
    return parse_unit_files(result.output) if result.ok else []
