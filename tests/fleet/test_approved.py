"""Issue 21 item 5: a fleet runs only what was approved, and exactly as approved.

Real parts: three per-user annad daemons in temporary homes (tests/daemonfix.py) as three
inventory hosts (``ansible_connection=local``; each host's ``anna_annactl`` is annactl
pointed at its own daemon's socket), the real ``annactl export`` and the real
``ansible-playbook``.

- An edited playbook: the host it targets refuses before anything runs (its annad finds
  the plan's digest is not the approved one: nothing stored, nothing run); the others run.
- An edit of the exported plan text itself: every host stops at the first task.
- ``true``, ``false``, ``yes``, ``017``, ``1:20`` reach bash verbatim through Ansible 2.19
  (which re-types ``!unsafe`` scalars by YAML 1.1 rules).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from annactl.commands import ansible_run
from annactl.commands.fleet import Fleet
from annactl.commands.playbook import APPROVED_TASK
from tests.daemonfix import REPO, RunningDaemon, make_plan, running_daemon

from .conftest import ANNACTL, _ansible_playbook
from .plans import annotate_dict, plan_dict, playbook


@dataclass
class Host:
    """One inventory host: its own annad and the annactl that talks to it."""

    name: str
    daemon: RunningDaemon
    annactl: Path

    def plans(self) -> list[dict[str, object]]:
        client = self.daemon.client()
        try:
            return client.list_plans().model_dump(mode="json")["plans"]
        finally:
            client.close()


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[list[Host]]:
    with contextlib.ExitStack() as stack:
        found = []
        for name in ("h1", "h2", "h3"):
            daemon = stack.enter_context(running_daemon(user_mode=True))
            wrapper = tmp_path / f"annactl-{name}"
            # the host's annactl: its own daemon's socket, never an autostarted one
            wrapper.write_text(f"#!/bin/sh\nexport ANNA_SOCKET='{daemon.socket}' "
                               f"ANNA_AUTOSTART=false PYTHONPATH='{REPO}'\n"
                               f"exec '{sys.executable}' -m annactl.cli \"$@\"\n")
            wrapper.chmod(0o755)
            found.append(Host(name, daemon, wrapper))
        yield found


def _inventory(tmp_path: Path, hosts: list[Host]) -> Path:
    path = tmp_path / "hosts.ini"
    path.write_text("".join(f"{h.name} ansible_connection=local anna_annactl={h.annactl}\n"
                            for h in hosts))
    return path


def _export(host: Host, env: dict[str, str], tmp_path: Path, command: str) -> Path:
    """Store the plan on ``host`` (the controller) and export it, approved, as a playbook."""
    plan = make_plan([("motd", command, "LOW")], rollback={"motd": "rm -f ~/motd.txt"})
    client = host.daemon.client()
    try:
        from anna_common.plan import ActionPlan

        plan_id = client.submit(ActionPlan.model_validate(plan), source="file").plan_id
    finally:
        client.close()
    out = tmp_path / "play.yml"
    proc = subprocess.run([ANNACTL, "export", plan_id, "--ansible", "--yes", "-o", str(out)],
                          env={**env, "ANNA_SOCKET": str(host.daemon.socket),
                               "ANNA_AUTOSTART": "false"},
                          capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr
    return out


def _fleet(play: Path, inventory: Path, env: dict[str, str]) -> Fleet:
    """ansible-playbook with Anna's event callback, folded per host as fleet apply does."""
    invocation = ansible_run.Invocation(playbook=play, inventory=str(inventory))
    fleet = Fleet()
    proc = subprocess.run(
        invocation.argv(_ansible_playbook()), capture_output=True, text=True, timeout=600,
        check=False, env={**env, "ANSIBLE_STDOUT_CALLBACK": "anna_events",
                          "ANSIBLE_CALLBACK_PLUGINS": str(ansible_run.PLUGINS)})
    for line in proc.stdout.splitlines():
        with contextlib.suppress(ValueError):
            fleet.fold(json.loads(line))
    fleet.fold({"event": "exit", "rc": proc.returncode, "stderr": proc.stderr})
    return fleet


def test_a_host_given_an_edited_playbook_refuses_before_running(
        hosts: list[Host], ansible_env: dict[str, str], tmp_path: Path) -> None:
    play = _export(hosts[0], ansible_env, tmp_path, "echo fleet > ~/motd.txt")
    # an edit aimed at one host: h2 is sent another command than the one approved
    text = play.read_text()
    approved = 'content: "{{ anna.plan }}"'
    assert text.count(approved) == 1
    play.write_text(text.replace(approved, 'content: "{{ anna.plan if inventory_hostname != '
                                 "'h2' else (anna.plan | replace('echo fleet', "
                                 "'echo EDITED')) }}\""))
    fleet = _fleet(play, _inventory(tmp_path, hosts), ansible_env)
    results = {name: state.result for name, state in fleet.hosts.items()}
    assert results == {"h1": "changed", "h2": "failed", "h3": "changed"}, fleet.stderr
    for host in (hosts[0], hosts[2]):
        assert (host.daemon.home / "motd.txt").read_text() == "fleet\n"
    # h2: refused by its own annad before anything of the plan was stored or run
    assert not (hosts[1].daemon.home / "motd.txt").exists()
    assert hosts[1].plans() == []
    reason = fleet.hosts["h2"].reason
    assert reason.startswith("Anna on h2: status refused (nothing to roll back); "
                             "DIGEST_MISMATCH"), reason
    assert "not the plan that was approved" in reason
    assert [p["status"] for p in hosts[2].plans()] == ["succeeded"]


def test_an_edit_of_the_exported_plan_stops_every_host_at_the_first_task(
        hosts: list[Host], ansible_env: dict[str, str], tmp_path: Path) -> None:
    play = _export(hosts[0], ansible_env, tmp_path, "echo fleet > ~/motd.txt")
    text = play.read_text()
    assert text.count("echo fleet") == 1
    play.write_text(text.replace("echo fleet", "echo EDITED"))
    fleet = _fleet(play, _inventory(tmp_path, hosts), ansible_env)
    assert {s.result for s in fleet.hosts.values()} == {"failed"}
    assert {s.task for s in fleet.hosts.values()} == {APPROVED_TASK}
    assert all("edited after the export; nothing ran" in s.reason
               for s in fleet.hosts.values())
    for host in hosts:
        assert not (host.daemon.home / "motd.txt").exists()
    assert hosts[1].plans() == [] and hosts[2].plans() == []


def _bin(tmp_path: Path) -> tuple[Path, Path]:
    """Programs named ``017``, ``1:20`` and ``yes`` that log their own name."""
    bindir, log = tmp_path / "bin", tmp_path / "ran.log"
    bindir.mkdir()
    for name in ("017", "1:20", "yes"):
        program = bindir / name
        program.write_text(f"#!/bin/sh\nprintf '%s\\n' '{name}' >> '{log}'\n")
        program.chmod(0o755)
    return bindir, log


def test_yaml_1_1_look_alikes_reach_bash_verbatim(tmp_path: Path, run_playbook,
                                                  ansible_env: dict[str, str]) -> None:
    bindir, log = _bin(tmp_path)
    plan = annotate_dict(plan_dict(
        [("true", "true", "LOW"), ("yes", "yes", "LOW"), ("017", "017", "LOW"),
         ("1:20", "1:20", "LOW"), ("false", "false", "LOW")],
        checks=[("yes", "017")], rollback=[("no", "1:20")], rollback_ids={"017": "no"}))
    path = tmp_path / "play.yml"
    path.write_text(playbook(plan, "shell"))
    ran = run_playbook(path, "-v", env={"PATH": f"{bindir}:{ansible_env['PATH']}"})
    # the check, four steps, then `false` fails as false (not "False: command not found")
    # and the rescue runs the one undo: 1:20 (as written, not 80)
    assert log.read_text().splitlines() == ["017", "yes", "017", "1:20", "1:20"], ran.out
    assert '"cmd": "false"' in ran.out and "command not found" not in ran.out
    assert "rescued=1" in ran.out and "failed=1" in ran.out


def test_the_same_look_alikes_pass_the_hosts_digest_check(
        hosts: list[Host], ansible_env: dict[str, str], tmp_path: Path) -> None:
    # through a host's annad the plan text must hash to the approved digest: a value
    # Ansible re-typed on the way would be refused there
    play = _export(hosts[0], ansible_env, tmp_path,
                   "printf '%s\\n' true false yes 017 1:20 > ~/motd.txt")
    fleet = _fleet(play, _inventory(tmp_path, hosts[1:2]), ansible_env)
    assert fleet.hosts["h2"].result == "changed", fleet.hosts["h2"].reason
    assert (hosts[1].daemon.home / "motd.txt").read_text().split() == [
        "true", "false", "yes", "017", "1:20"]
