"""The real view: read commands print the same run directly and through the confinement.

Each command runs twice as the same owner (``nobody``, the uid a root owner's unasked
commands get), once directly and once through :func:`annad.confine.runner.run_confined`.
Where a command only reads, the outputs must be equal — compared whole where nothing races,
and by what cannot race (totals, the set of mount points, a count within a margin) where
counters move between the two runs. What the confinement itself changes is named, not
hidden: its own ``/dev`` (a minimal tmpfs), the masks over Anna's state (``anna-empty``),
and every mount read-only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from annad.confine.credentials import Identity
from annad.confine.mounts import DEVICES
from annad.confine.runner import run_confined
from annad.confine.stepenv import step_environment

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces as root")
NOBODY = 65534
OWNER = Identity(uid=NOBODY, gid=NOBODY, groups=(NOBODY,), home="/", user="nobody")


def direct(command: str) -> str:
    """``command`` as the owner, unconfined, with a step's environment."""
    done = subprocess.run(["/bin/bash", "--noprofile", "--norc", "-c", command],
                          user=NOBODY, group=NOBODY, extra_groups=[NOBODY],
                          env=step_environment(OWNER, None), cwd="/", capture_output=True,
                          text=True, check=False, timeout=60)
    return done.stdout + done.stderr


def confined(command: str) -> str:
    """``command`` through the confinement."""
    result = run_confined(command, OWNER, timeout=60)
    assert result.error is None, result.error
    return result.output


def _close(margin: float) -> Callable[[str, str], bool]:
    return lambda a, b: abs(float(a) - float(b)) <= margin


def _equal(a: str, b: str) -> bool:
    return a == b


def _same_lines(a: str, b: str) -> bool:
    return sorted(a.splitlines()) == sorted(b.splitlines())


def _mounts(text: str) -> set[str]:
    """Mount points, without what the confinement adds on purpose (its /dev, the masks)."""
    points = set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[0].startswith("anna-"):
            continue
        point = fields[2] if " on " in line else fields[-1]
        if point == "/dev" or point.startswith("/dev/"):
            continue
        points.add(point)
    return points


def _same_mounts(a: str, b: str) -> bool:
    return _mounts(a) == _mounts(b) and len(_mounts(a)) > 1


ATTEMPTS = 5
"""Back-to-back pairs of runs tried before outputs are called different."""
READS: list[tuple[str, Callable[[str, str], bool]]] = [
    ("ss -tln", _same_lines),
    ("ss -uln", _same_lines),
    ("ip -brief addr", _equal),
    ("ip route", _equal),
    ("cut -d. -f1 /proc/uptime", _close(3)),
    ("cut -d' ' -f1 /proc/loadavg", _close(2)),
    ("df -P | awk '{print $1, $2, $6}'", _same_mounts),
    ("free -b | awk '/Mem:/ {print $2}'", _equal),
    ("lsblk -o NAME,SIZE,TYPE", _equal),
    ("id", _equal),
    ("ls /etc", _equal),
    ("mount", _same_mounts),
    ("uname -a; hostname; nproc", _equal),
    ("cat /etc/os-release", _equal),
    ("who; getent passwd root", _equal),
]
"""Read commands and how their two outputs are compared."""


@pytest.mark.parametrize(("command", "same"), READS, ids=[c for c, _ in READS])
def test_a_read_prints_the_same_through_the_confinement(
        command: str, same: Callable[[str, str], bool]) -> None:
    for tool in ("ss", "ip", "lsblk", "df"):
        if f"{tool} " in command and shutil.which(tool) is None:
            pytest.skip(f"no {tool} here")
    # what the machine runs can change between the two runs (another suite's listeners and
    # processes come and go): the outputs must agree in one of a few back-to-back pairs
    seen = []
    for _ in range(ATTEMPTS):
        plain, walled = direct(command), confined(command)
        assert plain.strip(), f"{command!r} printed nothing directly"
        if same(plain.strip(), walled.strip()):
            return
        seen.append((plain, walled))
    pytest.fail(f"{command!r} never printed the same: {seen}")


def _alive() -> set[str]:
    return {p.name for p in Path("/proc").iterdir() if p.name.isdigit()}


def test_ps_sees_every_process_of_the_machine() -> None:
    """``ps -e`` lists, directly and confined alike, every process alive through both runs
    (compared by pid: processes of other work come and go between the runs)."""
    before = _alive()
    plain, walled = direct("ps -e -o pid="), confined("ps -e -o pid=")
    stable = before & _alive()
    assert len(stable) > 10
    assert stable <= set(plain.split()) and stable <= set(walled.split())


def test_systemctl_reads_the_same_where_systemd_runs() -> None:
    """``systemctl`` read verbs get the bus (and only the bus): same units either way."""
    if not os.path.isdir("/run/systemd/system"):
        pytest.skip("systemd is not PID 1 here (the container tests cover it)")
    command = "systemctl list-units --no-legend --plain --all | awk '{print $1}'"
    assert _same_lines(direct(command), confined(command))


def test_the_confinement_changes_what_it_says_it_changes() -> None:
    """Every mount read-only, /dev Anna's own: the differences above are these, on purpose."""
    mounts = confined("cat /proc/self/mountinfo")
    assert all(" ro," in line or " ro " in line for line in mounts.splitlines()), mounts
    expected = {*DEVICES, "fd", "stdin", "stdout", "stderr", "shm", "pts"}
    assert set(confined("ls /dev").split()) == expected & set(direct("ls /dev").split()) | {
        "fd", "stdin", "stdout", "stderr", "shm", "pts"}
