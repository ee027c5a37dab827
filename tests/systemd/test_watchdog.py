"""Issue 35 item 5 on a real systemd: the watchdog restarts a hung annad, annactl says what it
sees meanwhile, and Anna's warnings reach journald at their priority with their PLAN_ID.

The unit is the one from ``systemd/`` as installed by the documented commands, with its own
``WatchdogSec=30s`` and ``TimeoutAbortSec=15s``: nothing is shortened for the test.
"""

from __future__ import annotations

import json

from tests.daemonfix import make_plan
from tests.systemd.machine import Container
from tests.waiting import wait_until

SYSTEM_SOCKET = "/run/anna/annad.sock"
RESTART_WAIT_S = 150.0
"""WatchdogSec (30 s) + TimeoutAbortSec (15 s) + RestartSec (2 s), on a loaded machine."""


def _show(machine: Container, *props: str) -> dict[str, str]:
    out = machine.ok(["systemctl", "show", "annad.service", *(f"--property={p}" for p in props)])
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def _answers(machine: Container) -> bool:
    """alice is served by the system daemon (a per-user daemon's answer is not its answer)."""
    proc = machine.run(["annactl", "status", "--json"], user="alice")
    if proc.returncode != 0:
        return False
    return json.loads(proc.stdout).get("socket") == SYSTEM_SOCKET


def _served_by_system(machine: Container) -> None:
    """Wait until alice's annactl reaches the system daemon; fail showing what it reached."""
    wait_until(lambda: _answers(machine), "alice's annactl to reach the system daemon",
               saw=lambda: machine.run(["annactl", "status", "--json"], user="alice").stdout
               [:600] + machine.run(["id", "alice"]).stdout +
               machine.run(["ls", "-la", "/run/anna"]).stdout)


def test_a_stopped_annad_is_said_then_restarted_by_the_watchdog(machine: Container) -> None:
    _served_by_system(machine)
    before = _show(machine, "MainPID", "NRestarts", "WatchdogUSec")
    assert before["WatchdogUSec"] in ("30s", "30000000"), before
    machine.ok(["kill", "-STOP", before["MainPID"]])
    # meanwhile: annactl says the system daemon does not answer, and where to look
    proc = machine.run(["annactl", "status", "--json"], user="alice")
    body = json.loads(proc.stdout)
    assert proc.returncode == 7 and body["code"] == "DAEMON_UNAVAILABLE", proc.stdout
    assert "did not answer" in body["message"] and "journalctl -u annad" in body["hint"]
    assert "annactl setup" not in proc.stdout + proc.stderr

    def restarted() -> dict[str, str] | None:
        now = _show(machine, "MainPID", "NRestarts", "ActiveState")
        return now if now["MainPID"] not in ("0", before["MainPID"]) and \
            now["ActiveState"] == "active" else None

    now = wait_until(restarted, "the watchdog to restart the stopped annad",
                     timeout=RESTART_WAIT_S)
    assert now is not None and int(now["NRestarts"]) > int(before["NRestarts"])
    log = machine.ok(["journalctl", "-u", "annad.service", "--no-pager", "-o", "cat"])
    assert "Watchdog timeout" in log, log[-2000:]
    wait_until(lambda: _answers(machine), "the restarted annad to answer")


def test_a_stopped_unit_is_installed_but_not_running_not_set_up_again(
        machine: Container) -> None:
    _served_by_system(machine)
    machine.ok(["systemctl", "stop", "annad.service"])
    try:
        proc = machine.run(["annactl", "status", "--json"], user="alice")
        body = json.loads(proc.stdout)
        assert proc.returncode == 7, proc.stdout + proc.stderr
        assert "installed but not running" in body["message"], body
        assert "systemctl status annad" in body["hint"]
    finally:
        machine.ok(["systemctl", "start", "annad.service"])
    wait_until(lambda: _answers(machine), "annad to answer again")


def test_a_failed_plan_is_a_warning_in_the_journal_with_its_plan_id(machine: Container) -> None:
    wait_until(lambda: _answers(machine), "annad to answer")
    plan = make_plan([("s1", "ls /nonexistent-anna-watchdog-test", "LOW")])
    proc = machine.run(["annactl", "apply", "-", "--yes", "--json"], user="alice",
                       stdin=json.dumps(plan))
    record = json.loads(proc.stdout)
    assert record["status"] == "failed", proc.stdout + proc.stderr
    plan_id = record["plan_id"]

    def warning() -> str | None:
        out = machine.run(["journalctl", "-u", "annad.service", "-p", "warning", "--no-pager",
                           "-o", "json", f"PLAN_ID={plan_id}"]).stdout
        return out or None

    out = wait_until(warning, f"a warning for plan {plan_id} in the journal")
    assert out is not None
    entries = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert any(f"plan {plan_id} failed" in e["MESSAGE"] for e in entries), entries
    assert all(int(e["PRIORITY"]) <= 4 and e["SYSLOG_IDENTIFIER"] == "annad" for e in entries)
    # and the info lines are at 6 (journalctl -p warning leaves them out)
    infos = machine.ok(["journalctl", "-u", "annad.service", "-p", "6..6", "--no-pager",
                        "-o", "cat"])
    assert "policy:" in infos
