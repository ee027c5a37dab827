"""Live values with typed pre-state: a sysctl key and a desktop setting are read before the
step and, after the rollback command, read again — put back when the command left them
wrong — so their rollback is ``rolled_back`` because Anna checked it, not on the word of a
command (issue 19, items 4 and 5).

The sysctl daemon runs in a network namespace of its own (``unshare -n``): the key,
``net.ipv4.ip_default_ttl``, is per network namespace, and the test checks the machine's
own value is untouched. gsettings runs on its keyfile backend in the daemon's temporary home
(the step's own ``GSETTINGS_BACKEND=keyfile`` prefix, which the pre-state reads with too).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.daemonfix import netns_root_daemon, run_and_roll_back

if TYPE_CHECKING:
    from tests.daemonfix import RunningDaemon

KEY = "net.ipv4.ip_default_ttl"
HOST_VALUE = "/proc/sys/net/ipv4/ip_default_ttl"


@pytest.fixture(scope="module")
def netns_daemon() -> Iterator[RunningDaemon]:
    """A root daemon in a network namespace of its own."""
    with netns_root_daemon("sysctl") as daemon:
        yield daemon


def _inside(daemon: RunningDaemon) -> str:
    """The key's value in the daemon's network namespace (read through its pid)."""
    assert daemon.proc is not None
    return subprocess.run(["nsenter", "-t", str(daemon.proc.pid), "-n", "sysctl", "-n", KEY],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize(("rollback", "found"), [
    (f"sysctl -w {KEY}=64", "as before the plan"),
    (f"sysctl -w {KEY}=77", "put back to '64' (it was '77')"),  # a wrong rollback command
    (None, "put back to '64' (it was '99')"),  # none at all: the pre-state is the undo
])
def test_a_sysctl_key_is_checked_and_put_back(netns_daemon: RunningDaemon,
                                              rollback: str | None, found: str) -> None:
    host = Path(HOST_VALUE).read_text()
    assert _inside(netns_daemon) == "64"
    result = run_and_roll_back(netns_daemon.client(), f"sysctl -w {KEY}=99", rollback)
    assert result.status == "rolled_back", result
    (state,) = [u for u in result.undo if u.action == "live_state"]
    assert state.ok and state.target == KEY and found in state.message, state
    assert not any(u.action == "unverified" for u in result.undo)
    assert _inside(netns_daemon) == "64"
    assert Path(HOST_VALUE).read_text() == host  # the machine's own value


def test_sysctl_from_a_file_is_not_typed_and_its_undo_is_unverified(
        netns_daemon: RunningDaemon) -> None:
    conf = netns_daemon.base / "ttl.conf"
    conf.write_text(f"{KEY} = 98\n")
    result = run_and_roll_back(netns_daemon.client(), f"sysctl -p {conf}",
                                f"sysctl -w {KEY}=64")
    assert result.status == "rollback_unverified", result
    assert _inside(netns_daemon) == "64"


SCHEMA = "org.gnome.desktop.background"


def _get(daemon: RunningDaemon) -> str:
    return subprocess.run(
        ["gsettings", "get", SCHEMA, "picture-uri"], capture_output=True, text=True,
        check=True, env={"HOME": str(daemon.home), "GSETTINGS_BACKEND": "keyfile",
                         "PATH": "/usr/bin:/bin"}).stdout.strip()


@pytest.mark.skipif(shutil.which("gsettings") is None, reason="gsettings is not installed "
                    "(.ci/run installs libglib2.0-bin and gsettings-desktop-schemas)")
@pytest.mark.shared_daemon
def test_a_desktop_setting_is_checked_and_put_back(user_daemon: RunningDaemon) -> None:
    before = _get(user_daemon)
    prefix = "GSETTINGS_BACKEND=keyfile gsettings set " + SCHEMA + " picture-uri "
    result = run_and_roll_back(user_daemon.client(), prefix + "'file:///srv/new.png'",
                                prefix + "'file:///srv/wrong.png'")
    assert result.status == "rolled_back", result
    (state,) = [u for u in result.undo if u.action == "live_state"]
    assert state.ok and "put back" in state.message and "wrong.png" in state.message, state
    assert _get(user_daemon) == before
