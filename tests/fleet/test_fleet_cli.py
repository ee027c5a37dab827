"""``annactl fleet apply``: the per-host fold of Anna's callback events, the summary, and
``--mode shell`` end to end (a failure rolled back by the playbook's rescue)."""

from __future__ import annotations

from typing import Any

import pytest

from annactl.commands.fleet import Fleet, reasons
from annactl.commands.playbook import HOST_FAILED_TASK, ROLLBACK_FAILED_TASK, ROLLED_BACK_TASK
from tests.daemonfix import make_plan

from .conftest import Site, fleet_json


def _events(*events: dict[str, Any]) -> Fleet:
    fleet = Fleet()
    for event in events:
        fleet.fold(event)
    return fleet


def test_fold_counts_and_results() -> None:
    fleet = _events(
        {"event": "task", "task": "t"},
        {"event": "ok", "host": "a", "task": "t"},
        {"event": "changed", "host": "a", "task": "t"},
        {"event": "failed", "host": "b", "task": "step 1", "msg": "boom"},
        {"event": "failed", "host": "b", "task": "undo", "msg": "x", "ignored": True},
        {"event": "failed", "host": "b", "task": ROLLED_BACK_TASK, "msg": "step 1 failed"},
        {"event": "failed", "host": "c", "task": ROLLBACK_FAILED_TASK, "msg": "undo failed"},
        {"event": "unreachable", "host": "d", "task": "t", "msg": "no route"},
        {"event": "text", "text": "[WARNING]: something"},
        {"event": "exit", "rc": 2, "stderr": ""})
    got = {h: (s.result, s.ok, s.changed, s.failed) for h, s in fleet.hosts.items()}
    assert got == {"a": ("changed", 2, 1, 0), "b": ("rolled back", 0, 0, 2),
                   "c": ("rollback failed", 0, 0, 1), "d": ("unreachable", 0, 0, 0)}
    assert not fleet.ok() and fleet.texts == ["[WARNING]: something"]
    assert reasons(fleet) == ["b: step 1 failed", "c: undo failed", "d: no route"]


@pytest.mark.parametrize("msg", [
    # the verdict is read only right after the host's own status: step output that says
    # "(rolled back" later, or a message naming another host, cannot pose as one
    "Anna on web1: status failed (nothing to roll back); step x: (rolled back",
    "Anna on db1: status failed (rolled back); from another host",
    "status failed (rolled back)",
    "Anna on web1: status failed",
])
def test_a_host_cannot_fake_its_verdict_in_output(msg: str) -> None:
    fleet = _events({"event": "failed", "host": "web1", "task": HOST_FAILED_TASK, "msg": msg})
    assert fleet.hosts["web1"].result == "failed"


def test_the_verdicts_of_the_hosts_anna() -> None:
    fleet = _events(
        {"event": "failed", "host": "a", "task": HOST_FAILED_TASK,
         "msg": "Anna on a: status failed (rolled back); step s failed"},
        {"event": "failed", "host": "b", "task": HOST_FAILED_TASK,
         "msg": "Anna on b: status rollback_failed (rollback failed); undo of s failed"})
    assert fleet.hosts["a"].result == "rolled back"
    assert fleet.hosts["b"].result == "rollback failed"


def test_no_events_is_not_success() -> None:
    assert not _events({"event": "exit", "rc": 0, "stderr": ""}).ok()


def test_shell_mode_failure_is_rolled_back_by_the_rescue(site: Site) -> None:
    first = site.work / "first.txt"
    plan_id = site.store(make_plan(
        [("write", f"echo one > {first}", "LOW"),
         ("boom", f"cp {site.work}/missing.txt {site.work}/never.txt", "LOW")],
        rollback={"write": f"rm -f {first}"}))
    rc, out, _ = fleet_json(site, plan_id, "--mode", "shell")
    assert rc == 5
    assert not first.exists()
    host = out["hosts"][0]
    assert host["result"] == "rolled back" and "missing.txt" in host["reason"]
    # shell mode does not go through the host's Anna: only the controller's plan exists
    assert [p["status"] for p in site.plans()] == ["submitted"]


def test_text_mode_prints_progress_and_the_summary(site: Site) -> None:
    target = site.work / "x.txt"
    plan_id = site.store(make_plan([("write", f"echo x > {target}", "LOW")]))
    inventory = site.tmp / "hosts.ini"
    inventory.write_text("localhost ansible_connection=local\n")
    proc = site.annactl("fleet", "apply", plan_id, "-i", str(inventory), "--yes",
                        "--mode", "shell")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Fleet summary" in proc.stdout and "changed" in proc.stdout
    assert "localhost: changed" in proc.stderr and "step 1 write" in proc.stderr
    assert target.read_text() == "x\n"


def test_missing_inventory_host_fails_cleanly(site: Site) -> None:
    plan_id = site.store(make_plan([("write", f"echo x > {site.work}/y", "LOW")]))
    proc = site.annactl("fleet", "apply", plan_id, "-i", "nohost.invalid,", "--yes",
                        "--limit", "nothing-matches")
    assert proc.returncode == 5
    assert "ran no host" in proc.stderr
