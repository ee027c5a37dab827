"""A person in group anna and people outside it, once the system daemon is installed.

``/run/anna`` is ``2750 root:anna``: outside the group nobody can even reach the socket.
Such a person's annactl must work (their own per-user daemon runs their own changes) and,
for a plan that needs root, say so before asking anything, with the command that fixes it.
"""

from __future__ import annotations

import json

import pytest

from tests.daemonfix import make_plan
from tests.systemd.machine import Container


def _status(machine: Container, user: str, **kwargs: bool) -> dict[str, object]:
    proc = machine.run(["annactl", "status", "--json"], user=user, **kwargs)  # type: ignore[arg-type]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    status: dict[str, object] = json.loads(proc.stdout)
    return status


def test_a_member_of_anna_uses_the_system_daemon(machine: Container) -> None:
    status = _status(machine, "alice")
    health = status["health"]
    assert status["socket"] == "/run/anna/annad.sock"
    assert isinstance(health, dict)
    assert (health["mode"], health["caller_authorised"], health["caller_uid"]) == \
        ("system", True, machine.users["alice"].uid)


def test_outside_group_anna_annactl_works_through_a_per_user_daemon(machine: Container) -> None:
    denied = machine.run(["stat", "/run/anna/annad.sock"], user="bob")
    assert denied.returncode != 0 and "Permission denied" in denied.stderr
    status = _status(machine, "bob")  # was: PermissionError from Path.exists()
    health = status["health"]
    assert status["socket"] == f"/run/user/{machine.users['bob'].uid}/anna/annad.sock"
    assert isinstance(health, dict) and health["mode"] == "user"
    for argv in (["annactl", "history", "--json"], ["annactl", "doctor", "--json"]):
        proc = machine.run(argv, user="bob")
        assert "Traceback" not in proc.stderr and "PermissionError" not in proc.stdout, argv
        json.loads(proc.stdout)
    # the person's own changes run there, captured: bob's per-user daemon (not root) mounts
    # its overlays in a user namespace inside the container (its state dir is in /home, a
    # local disk; on the container's overlay root the capture probe's mount fails, EINVAL,
    # and the daemon says "Anna's state directory is on overlay (/)")
    plan = make_plan([("s1", "touch /home/bob/made-by-anna", "LOW")])
    proc = machine.run(["annactl", "apply", "-", "--yes", "--json"], user="bob",
                       stdin=json.dumps(plan))
    # uncaptured, the step would be HIGH ("runs live; Anna cannot undo it"): --yes refuses it
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "succeeded", record
    assert machine.run(["test", "-f", "/home/bob/made-by-anna"]).returncode == 0
    rolled = machine.run(["annactl", "rollback", record["plan_id"], "--yes", "--json"],
                         user="bob")
    assert rolled.returncode == 0, rolled.stdout + rolled.stderr
    shown = json.loads(machine.ok(["annactl", "show", record["plan_id"], "--json"], user="bob"))
    assert shown["status"] == "rolled_back", shown["status"]
    assert machine.run(["test", "-e", "/home/bob/made-by-anna"]).returncode != 0


ROOT_PLAN = make_plan([("s1", "systemctl restart anna-probe.service", "MEDIUM")])


@pytest.mark.parametrize("flags", [[], ["--yes"]], ids=["asked", "yes"])
def test_a_root_plan_outside_group_anna_is_refused_before_asking(
        machine: Container, probe_unit: str, flags: list[str]) -> None:
    before = machine.ok(["systemctl", "show", "--value", "--property=InvocationID", probe_unit])
    proc = machine.run(["annactl", "apply", "-", *flags], user="bob",
                       stdin=json.dumps(ROOT_PLAN))
    assert proc.returncode == 9, proc.stdout + proc.stderr
    assert "SCOPE_REQUIRES_ROOT" in proc.stderr
    assert "bob is not in that group" in proc.stderr
    # bob is no administrator and set-up is done: the hint is to ask one (issue 36.7)
    assert "ask an administrator to add you to group anna" in proc.stderr
    assert "usermod -aG anna bob" in proc.stderr and "annactl setup" not in proc.stderr
    assert "[y/N]" not in proc.stderr and "pass --yes" not in proc.stderr, proc.stderr
    assert proc.stderr.count("SCOPE_REQUIRES_ROOT") == 1  # said once
    after = machine.ok(["systemctl", "show", "--value", "--property=InvocationID", probe_unit])
    assert after == before, "nothing may run"


def test_a_member_whose_session_predates_the_group_is_told_to_log_in_again(
        machine: Container, probe_unit: str) -> None:
    del probe_unit
    machine.ok(["usermod", "-aG", "anna", "bob"])
    try:
        status = _status(machine, "bob", old_session=True)
        assert isinstance(status["health"], dict) and status["health"]["mode"] == "user"
        proc = machine.run(["annactl", "apply", "-"], user="bob", old_session=True,
                           stdin=json.dumps(ROOT_PLAN))
        assert proc.returncode == 9, proc.stdout + proc.stderr
        assert "this session started before that" in proc.stderr
        assert "log in again (or start a shell with: newgrp anna)" in proc.stderr
        # a new login has the group: the system daemon, authorised
        fresh = _status(machine, "bob")
        assert isinstance(fresh["health"], dict) and fresh["health"]["mode"] == "system"
    finally:
        machine.ok(["gpasswd", "-d", "bob", "anna"])
