"""``--mode annad``: the exported playbook runs the plan through the host's own Anna.

Real parts end to end: a real per-user annad (tests/daemonfix.py), the real annactl
(``export``, ``fleet apply``, and ``apply`` as the playbook's task runs it), the real
ansible-playbook on ``localhost`` with ``-c local``. Plans touch only the daemon's
temporary directory.
"""

from __future__ import annotations

import json

from annactl.commands.playbook import HOST_FAILED_TASK, VERDICT_UNVERIFIED
from tests.daemonfix import make_plan

from .conftest import Site, fleet_json
from .plans import exported


def test_success_runs_through_the_hosts_annad(site: Site) -> None:
    target = site.work / "motd.txt"
    plan_id = site.store(make_plan([("write", f"echo fleet > {target}", "LOW")],
                                   rollback={"write": f"rm -f {target}"}))
    rc, out, err = fleet_json(site, plan_id)
    assert rc == 0, json.dumps(out) + err
    assert target.read_text() == "fleet\n"
    assert out["hosts"] == [{"host": "localhost", "result": "changed", "ok": 5, "changed": 1,
                             "failed": 0, "skipped": 3, "rolled_back": False, "reason": ""}]
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
    rc, out, _ = fleet_json(site, plan_id)
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
    rc, out, err = fleet_json(site, plan_id, "--check")
    assert rc == 0, json.dumps(out) + err
    assert sorted(p.name for p in site.work.iterdir()) == before
    assert [p["status"] for p in site.plans()] == ["submitted"]
    assert out["check"] is True and out["hosts"][0]["result"] == "ok"
    assert out["hosts"][0]["changed"] == 0


def test_export_records_the_approval_and_passes_allow_high_only_for_high(site: Site) -> None:
    low = site.store(make_plan([("write", f"echo x > {site.work}/x", "LOW")]))
    proc = site.annactl("export", low, "--ansible", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "--allow-high" not in proc.stdout
    high = site.store(make_plan([("edit", "cp /tmp/fstab.new /etc/fstab", "HIGH")]))
    declined = site.annactl("export", high, "--ansible", "--yes")
    assert declined.returncode == 4 and not declined.stdout  # --yes alone does not cover HIGH
    out = site.tmp / "high.yml"
    proc = site.annactl("export", high, "--ansible", "--yes", "--allow-high", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert '!unsafe "--allow-high"' in text
    approval = exported(text)["approval"]
    digest = site.record(high)["digest"]
    assert approval == {**approval, "word": "/etc/fstab", "confirmations": 2, "risk": "HIGH",
                        "plan_digest": digest}
    low_text = site.annactl("export", low, "--ansible", "--yes").stdout
    assert exported(low_text)["approval"]["confirmations"] == 1


def test_failed_host_task_is_named_as_fleet_expects() -> None:
    assert HOST_FAILED_TASK.startswith("Anna:")


def test_check_mode_asks_the_hosts_annad_and_its_policy(site: Site) -> None:
    target = site.work / "x.txt"
    plan_id = site.store(make_plan([("write", f"echo x > {target}", "LOW")]))
    # the host's administrator forbids what the plan writes (added after the approval)
    (site.daemon.base / "policy.toml").write_text(
        f'[[rule]]\nid = "no-work"\naction = "deny"\npath = "{site.work}/**"\n')
    rc, out, _ = fleet_json(site, plan_id, "--check")
    assert rc == 5
    host = out["hosts"][0]
    assert host["result"] == "failed" and "POLICY_DENIED" in host["reason"], host
    assert "no-work" in host["reason"]
    assert not target.exists()
    assert [p["status"] for p in site.plans()] == ["submitted"]  # the host stored nothing


def test_a_live_step_undone_on_its_rollback_commands_word_is_not_called_rolled_back(
        site: Site) -> None:
    """The host undid a live step (a signal: nothing Anna records) only by running its
    rollback command: the verdict says so, and the host does not count as rolled back."""
    plan_id = site.store(make_plan(
        [("sig", "kill -CONT $$", "LOW"),
         ("boom", f"cp {site.work}/missing.txt {site.work}/never.txt", "LOW")],
        rollback={"sig": "kill -CONT $$"}))  # HIGH: a signal to a pid known at run time
    rc, out, err = fleet_json(site, plan_id, "--allow-high")
    assert rc != 0 and "hosts" in out, json.dumps(out) + err
    host = out["hosts"][0]
    assert host["rolled_back"] is False, json.dumps(host)
    assert host["reason"].startswith(
        f"Anna on localhost: status failed ({VERDICT_UNVERIFIED});"), json.dumps(host)
