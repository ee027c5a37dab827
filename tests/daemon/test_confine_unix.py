"""AF_UNIX to annad, D-Bus and systemd from a check, a root read and a preview: blocked.

Runs tests/daemon/confine_unix_driver.py in a private mount namespace (``unshare -m``), so
the listeners it puts where annad, D-Bus and systemd listen exist only there. Only a bus read
verb gets a Unix socket, and its view keeps only D-Bus's and systemd's sockets: annad's is
not there.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None
                                or shutil.which("busctl") is None,
                                reason="needs root, util-linux unshare and busctl")
REPO = Path(__file__).resolve().parents[2]
NAMES = ("annad", "dbus", "systemd", "session")


@pytest.fixture(scope="module")
def report() -> dict[str, object]:
    """The driver's findings (one run for all the tests here)."""
    place = Path(f"/var/tmp/anna-unix-{secrets.token_hex(4)}")
    place.mkdir(mode=0o755)
    probe = place / "confine_probe.py"
    shutil.copy(Path(__file__).with_name("confine_probe.py"), probe)
    probe.chmod(0o644)
    try:
        done = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable,
                               str(Path(__file__).with_name("confine_unix_driver.py")),
                               str(REPO), str(probe)], capture_output=True, text=True,
                              check=False, timeout=300, cwd="/")
    finally:
        shutil.rmtree(place, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


@pytest.mark.parametrize("mode", ["check", "root-check", "preview"])
def test_no_unix_socket_reaches_annad_dbus_or_systemd(report: dict[str, object],
                                                      mode: str) -> None:
    output = str(report[mode])
    assert output.count("BLOCKED EACCES") == len(NAMES), output
    assert "ESCAPED" not in output
    assert report["reached_by_attempts"] == dict.fromkeys(NAMES, 0)


def test_a_bus_read_verb_reaches_only_the_bus_sockets(report: dict[str, object]) -> None:
    """``busctl … list`` may connect, but its /run holds D-Bus's and systemd's sockets only:
    annad's directory is not there at all."""
    verbs = report["verbs"]
    assert isinstance(verbs, dict)
    reached = report["reached_by_verbs"]
    assert isinstance(reached, dict)
    assert reached["annad"] == 0
    assert "No such file or directory" in verbs["annad"]
    assert reached["dbus"] >= 1 and reached["session"] >= 1, (reached, verbs)
