"""Confined reads on a real systemd: what a check prints equals the command run directly.

Each command below runs twice as alice (group anna, so through the system daemon): once as
a necessary check of a plan (``annactl apply - --json``: checks run unasked, confined) and
once directly in the container. A read-only command must tell the same truth both ways.

The confinement keeps the machine's PID and network namespaces (walls are Landlock and
seccomp, not a hidden view), so the commands that look at processes, sockets, links, the user
manager and the volatile journal see the container itself.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess

import pytest

from tests.daemonfix import make_plan
from tests.systemd.machine import Container

READS = [
    pytest.param("systemctl is-active annad.service", id="is-active"),
    pytest.param("systemctl is-enabled annad.service", id="is-enabled"),
    # (annad.service has no mount namespace of its own since ProtectControlGroups went: it
    # sees nspawn's boot id as the container's systemd does, so "this boot" matches)
    pytest.param("systemctl status anna-fails.service --no-pager", id="status"),
    pytest.param("systemctl list-units --failed --no-legend --plain", id="list-failed"),
    pytest.param("journalctl -u anna-fails.service --no-pager -o cat", id="journalctl-u"),
    pytest.param("loginctl list-users --no-legend", id="loginctl"),
    pytest.param("cat /etc/os-release", id="os-release"),
    pytest.param("id", id="id"),
    pytest.param("systemctl --user is-active default.target", id="user-is-active"),
    pytest.param("systemctl --user list-units --no-legend --plain --type=target",
                 id="user-list-units"),
    pytest.param("ps -o pid=,comm= -p 1", id="ps-pid1"),
    pytest.param("pgrep -x systemd-logind", id="pgrep"),
    pytest.param("ss -xlH src /run/user/1000/bus", id="ss-unix"),
    pytest.param("ip -brief addr", id="ip-addr"),
]
_AGO = re.compile(r"; [^;\n]* ago$", re.MULTILINE)
"""systemctl status says how long ago a state began: the one part that moves between runs."""


def _normal(text: str) -> str:
    return _AGO.sub("; … ago", text)


@pytest.fixture(scope="module")
def confined(machine: Container, failed_unit: float) -> dict[str, tuple[int | None, str]]:
    """Every command of READS, run as a check through annad: (exit status, output)."""
    del failed_unit
    commands = [str(p.values[0]) for p in READS]
    plan = make_plan([("s1", "true", "INFO")],
                     checks=[(f"c{i}", c) for i, c in enumerate(commands)])
    proc = machine.run(["annactl", "apply", "-", "--json"], user="alice",
                       stdin=json.dumps(plan))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)["checks"]
    assert [r["command"] for r in results] == commands
    assert all(r["ran"] for r in results), [r for r in results if not r["ran"]]
    return {r["command"]: (r["exit_code"], r["output"]) for r in results}


@pytest.mark.parametrize("command", READS)
def test_a_confined_read_equals_the_command_run_directly(
        machine: Container, confined: dict[str, tuple[int | None, str]], command: str) -> None:
    direct = subprocess.run(machine.argv(shlex.split(command), user="alice"), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                            stdin=subprocess.DEVNULL, timeout=120)
    status, output = confined[command]
    assert output.strip(), f"{command} printed nothing through Anna (nothing to compare)"
    assert (status, _normal(output)) == (direct.returncode, _normal(direct.stdout))
