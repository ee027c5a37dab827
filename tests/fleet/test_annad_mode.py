"""``--mode annad``: the exported playbook runs the plan through the host's own Anna.

Real parts end to end: a real per-user annad (tests/daemonfix.py), the real annactl
(``export``, ``fleet apply``, and ``apply`` as the playbook's task runs it), the real
ansible-playbook on ``localhost`` with ``-c local``. Plans touch only the daemon's
temporary directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from anna_common.plan import ActionPlan
from annactl.commands.playbook import HOST_FAILED_TASK
from tests.daemonfix import RunningDaemon, make_plan, running_daemon

ANNACTL = str(Path(sys.executable).parent / "annactl")


@dataclass
class Site:
    """A daemon, a scratch directory and the environment annactl and Ansible run in."""

    daemon: RunningDaemon
    env: dict[str, str]
    work: Path
    tmp: Path

    def store(self, data: dict[str, Any]) -> str:
        """Submit a plan (stored, not run); its id."""
        client = self.daemon.client()
        try:
            return client.submit(ActionPlan.model_validate(data), source="file").plan_id
        finally:
            client.close()

    def annactl(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "annactl.cli", *args], env=self.env,
                              capture_output=True, text=True, timeout=240, check=False,
                              cwd=self.tmp)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def record(self, plan_id: str) -> dict[str, Any]:
        client = self.daemon.client()
        try:
            return client.get_plan(plan_id).model_dump(mode="json")
        finally:
            client.close()

    def plans(self) -> list[dict[str, Any]]:
        client = self.daemon.client()
        try:
            return client.list_plans().model_dump(mode="json")["plans"]
        finally:
            client.close()


@pytest.fixture
def site(ansible_env: dict[str, str], tmp_path: Path) -> Iterator[Site]:
    with running_daemon(user_mode=True) as daemon:
        work = daemon.base / "work"
        work.mkdir()
        env = {**ansible_env, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "false",
               "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        yield Site(daemon, env, work, tmp_path)


def _fleet(site: Site, plan_id: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    inventory = site.tmp / "hosts.ini"
    # what an administrator writes for this machine: no SSH to itself
    inventory.write_text("localhost ansible_connection=local\n")
    proc = site.annactl("fleet", "apply", plan_id, "-i", str(inventory), "--yes",
                        "--annactl", ANNACTL, "--json", *extra,
                        )
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_success_runs_through_the_hosts_annad(site: Site) -> None:
    target = site.work / "motd.txt"
    plan_id = site.store(make_plan([("write", f"echo fleet > {target}", "LOW")],
                                   rollback={"write": f"rm -f {target}"}))
    rc, out, err = _fleet(site, plan_id)
    assert rc == 0, json.dumps(out) + err
    assert target.read_text() == "fleet\n"
    assert out["hosts"] == [{"host": "localhost", "result": "changed", "ok": 4, "changed": 1,
                             "failed": 0, "skipped": 2, "rolled_back": False, "reason": ""}]
    # the host's own daemon stored and ran its own copy: same digest, succeeded
    plans = site.plans()
    assert len(plans) == 2
    assert len({site.record(p["plan_id"])["digest"] for p in plans}) == 1
    assert {p["status"] for p in plans} == {"submitted", "succeeded"}


def test_failing_step_is_rolled_back_by_the_host(site: Site) -> None:
    first = site.work / "first.txt"
    plan_id = site.store(make_plan(
        [("write", f"echo one > {first}", "LOW"),
         ("boom", f"cp {site.work}/missing.txt {site.work}/never.txt", "LOW")],
        rollback={"write": f"rm -f {first}"}))
    rc, out, _ = _fleet(site, plan_id)
    assert rc != 0
    assert not first.exists()
    host = out["hosts"][0]
    assert host["result"] == "rolled back" and host["rolled_back"] is True, json.dumps(host)
    assert host["reason"].startswith("Anna on localhost: status failed (rolled back);")
    assert "boom" in host["reason"]
    assert "missing.txt" in host["reason"]  # the host's own reason (cp's message)


def test_check_mode_changes_nothing(site: Site) -> None:
    target = site.work / "never.txt"
    plan_id = site.store(make_plan([("write", f"echo x > {target}", "LOW")]))
    before = sorted(p.name for p in site.work.iterdir())
    rc, out, err = _fleet(site, plan_id, "--check")
    assert rc == 0, json.dumps(out) + err
    assert sorted(p.name for p in site.work.iterdir()) == before
    assert [p["status"] for p in site.plans()] == ["submitted"]
    assert out["check"] is True and out["hosts"][0]["result"] == "ok"
    assert out["hosts"][0]["changed"] == 0


def test_export_records_the_approval_and_passes_allow_high_only_for_high(site: Site) -> None:
    low = site.store(make_plan([("write", f"echo x > {site.work}/x", "LOW")]))
    proc = site.annactl("export", low, "--ansible", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "--allow-high" not in proc.stdout and "confirmations: 1" in proc.stdout
    high = site.store(make_plan([("edit", "cp /tmp/fstab.new /etc/fstab", "HIGH")]))
    declined = site.annactl("export", high, "--ansible", "--yes")
    assert declined.returncode == 4 and not declined.stdout  # --yes alone does not cover HIGH
    out = site.tmp / "high.yml"
    proc = site.annactl("export", high, "--ansible", "--yes", "--allow-high", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert '!unsafe "--allow-high"' in text
    assert 'word: !unsafe "/etc/fstab"' in text and "confirmations: 2" in text
    assert 'risk: !unsafe "HIGH"' in text
    digest = site.record(high)["digest"]
    assert f'plan_digest: !unsafe "{digest}"' in text


def test_failed_host_task_is_named_as_fleet_expects() -> None:
    assert HOST_FAILED_TASK.startswith("Anna:")
