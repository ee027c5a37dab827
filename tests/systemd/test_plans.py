"""Plans on a real systemd: previews with real unit states, a live step and its undo."""

from __future__ import annotations

import json

from tests.daemonfix import make_plan
from tests.systemd.machine import Container
from tests.waiting import wait_until


def _apply(machine: Container, plan: dict[str, object], *args: str, user: str = "alice"
           ) -> tuple[int, str, str]:
    proc = machine.run(["annactl", "apply", "-", *args], user=user, stdin=json.dumps(plan))
    return proc.returncode, proc.stdout, proc.stderr


def _state(machine: Container, unit: str, *, user: str | None = None) -> tuple[str, str]:
    scope = ["--user"] if user else []
    enabled = machine.run(["systemctl", *scope, "is-enabled", unit], user=user).stdout.strip()
    active = machine.run(["systemctl", *scope, "is-active", unit], user=user).stdout.strip()
    return enabled, active


def test_enable_preview_shows_the_real_states(machine: Container, probe_unit: str) -> None:
    assert _state(machine, probe_unit) == ("disabled", "inactive")
    plan = make_plan([("s1", f"systemctl enable --now {probe_unit}", "MEDIUM")])
    status, out, err = _apply(machine, plan)  # no terminal, no --yes: shown, then declined
    assert status == 4, err
    assert f"{probe_unit}: disabled, inactive → enabled, active" in out
    assert f"/etc/systemd/system/multi-user.target.wants/{probe_unit}" in out
    assert _state(machine, probe_unit) == ("disabled", "inactive"), "the preview changed it"


def test_a_live_restart_step_and_its_undo(machine: Container, probe_unit: str) -> None:
    machine.ok(["systemctl", "start", probe_unit])
    before = machine.ok(["systemctl", "show", "--value", "--property=MainPID", probe_unit])
    plan = make_plan([("s1", f"systemctl restart {probe_unit}", "MEDIUM"),
                      ("s2", f"systemctl stop {probe_unit}", "MEDIUM")])
    status, out, err = _apply(machine, plan, "--yes", "--json")
    assert status == 0, out + err
    record = json.loads(out)
    assert record["status"] == "succeeded", record
    assert _state(machine, probe_unit)[1] == "inactive"
    status = machine.run(["annactl", "rollback", record["plan_id"], "--yes", "--json"],
                         user="alice").returncode
    # the restart ran the unit's own program again (ExecStart=), which Anna does not see:
    # the undo puts the states back and says it is not verified (issue 34), exit 14
    assert status == 14
    # the stop is undone (started again) and the restart's pre-state (active) holds
    wait_until(lambda: _state(machine, probe_unit)[1] == "active", f"{probe_unit} active again")
    after = machine.ok(["systemctl", "show", "--value", "--property=MainPID", probe_unit])
    assert after != before  # really restarted, then really started again
    shown = json.loads(machine.ok(["annactl", "show", record["plan_id"], "--json"],
                                  user="alice"))
    assert shown["status"] == "rollback_unverified", shown["status"]
    machine.ok(["systemctl", "stop", probe_unit])


def test_a_started_unit_whose_effect_anna_cannot_see_is_never_rolled_back(
        machine: Container) -> None:
    """Issue 34 item 2: ``systemctl start`` of a unit that writes a file. Before, the undo
    stopped it, read the state again and the plan ended ``rolled_back`` while the file the
    unit wrote stayed. Now the unit is put back and the rollback says what it cannot check."""
    unit = "anna-writes.service"
    machine.write(f"/etc/systemd/system/{unit}",
                  "[Service]\nType=oneshot\nRemainAfterExit=yes\n"
                  "ExecStart=/bin/sh -c 'echo ran > /var/tmp/anna-unit-wrote'\n")
    machine.ok(["systemctl", "daemon-reload"])
    machine.run(["rm", "-f", "/var/tmp/anna-unit-wrote"])
    plan = make_plan([("s1", f"systemctl start {unit}", "MEDIUM")],
                     rollback={"s1": f"systemctl stop {unit}"})
    status, out, err = _apply(machine, plan, "--yes", "--json")
    assert status == 0, out + err
    record = json.loads(out)
    step = record["annotated"]["steps"][0]
    assert "unverified_undo" in step["codes"], step
    assert any("runs the unit's own programs" in r for r in step["reasons"]), step["reasons"]
    assert record["annotated"]["rollback_status"] != "available"
    assert machine.ok(["cat", "/var/tmp/anna-unit-wrote"]).strip() == "ran"
    rolled = machine.run(["annactl", "rollback", record["plan_id"], "--yes", "--json"],
                         user="alice")
    assert rolled.returncode == 14, rolled.stdout + rolled.stderr
    result = json.loads(rolled.stdout)
    assert result["status"] == "rollback_unverified", result
    undo = [u for u in result["undo"] if u["target"] == unit]
    assert undo and undo[-1]["action"] == "unverified" and undo[-1]["ok"], result["undo"]
    assert "Anna did not see" in undo[-1]["message"]
    assert _state(machine, unit)[1] == "inactive"  # its state is back …
    assert machine.ok(["cat", "/var/tmp/anna-unit-wrote"]).strip() == "ran"  # … not its effect
    machine.run(["rm", "-f", "/var/tmp/anna-unit-wrote", f"/etc/systemd/system/{unit}"])
    machine.ok(["systemctl", "daemon-reload"])


def test_user_unit_preview_asks_the_callers_manager(machine: Container) -> None:
    """Before the fix the daemon asked root's (absent) manager: "unknown, unknown"."""
    home = machine.users["alice"].home
    machine.write(f"{home}/.config/systemd/user/anna-user.service",
                  "[Service]\nExecStart=/bin/sleep infinity\n\n[Install]\n"
                  "WantedBy=default.target\n", user="alice")
    machine.ok(["systemctl", "--user", "daemon-reload"], user="alice")
    plan = make_plan([("s1", "systemctl --user enable --now anna-user.service", "LOW")])
    status, out, err = _apply(machine, plan)
    assert status == 4, err
    assert "anna-user.service: disabled, inactive → enabled, active" in out, out
    assert "unknown" not in out


def test_a_symlink_is_previewed_without_a_mode(machine: Container) -> None:
    home = machine.users["alice"].home
    plan = make_plan([("s1", f"ln -s /etc/os-release {home}/anna-link", "LOW")])
    status, out, err = _apply(machine, plan)
    assert status == 4, err
    assert f"{home}/anna-link" in out and "symlink -> /etc/os-release" in out, out
    assert "0777" not in out, "a symlink's mode means nothing; it looked world-writable"
