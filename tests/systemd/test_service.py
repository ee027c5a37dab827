"""annad.service on a real systemd: Type=notify, the socket's owner and mode, failed units."""

from __future__ import annotations

import json

from tests.systemd.machine import Container
from tests.waiting import wait_until


def _show(machine: Container, unit: str, *props: str) -> dict[str, str]:
    out = machine.ok(["systemctl", "show", unit, *(f"--property={p}" for p in props)])
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def test_annad_service_is_active_with_type_notify(machine: Container) -> None:
    props = _show(machine, "annad.service", "Type", "ActiveState", "SubState", "MainPID",
                  "UnitFileState")
    assert props["Type"] == "notify"
    assert (props["ActiveState"], props["SubState"]) == ("active", "running"), props
    assert props["UnitFileState"] == "enabled"
    # the main process is annad itself, and it is the system daemon
    comm = machine.ok(["cat", f"/proc/{props['MainPID']}/cmdline"]).split("\0")
    assert any(part.endswith("annad") for part in comm), comm
    # (doctor exits 8 here: there is no model server in the container)
    doctor = json.loads(machine.run(["annactl", "doctor", "--json"]).stdout)
    daemon = next(c for c in doctor["checks"] if c["name"] == "daemon")
    assert daemon["status"] == "ok" and "system daemon" in daemon["detail"], daemon


def test_socket_and_its_directory_are_root_anna_and_closed_to_others(machine: Container) -> None:
    # (annad makes the directory setgid: what it creates there keeps group anna)
    stat = machine.ok(["stat", "--format=%U:%G %a %F", "/run/anna", "/run/anna/annad.sock"])
    assert stat.splitlines() == ["root:anna 2750 directory", "root:anna 660 socket"]
    assert machine.ok(["stat", "--format=%U:%G %a", "/var/lib/anna"]).strip() == "root:root 700"


def test_a_failed_unit_reaches_the_telemetry(machine: Container, failed_unit: float) -> None:
    """The telemetry refreshes on its own (every telemetry_refresh_s): wait for a snapshot
    taken after the unit failed, then it must list the unit."""

    def fresh() -> dict[str, object] | None:
        status = json.loads(machine.ok(["annactl", "status", "--json"], user="alice"))
        telemetry = status["telemetry"]
        return telemetry if telemetry["collected_at"] > failed_unit else None

    telemetry = wait_until(fresh, "a telemetry snapshot taken after anna-fails.service failed")
    assert telemetry is not None
    services = telemetry["services"]
    assert isinstance(services, dict) and services["available"], services
    failed = {u["name"]: u for u in services["failed"]}
    assert "anna-fails.service" in failed, services
    assert failed["anna-fails.service"]["active"] == "failed"
    # the installed unit files, as systemd spells them, for the templates (issue 39.4)
    assert {"annad.service", "anna-fails.service", "systemd-journald.service"} <= set(
        services["unit_files"]), services["unit_files"][:20]
    text = machine.ok(["annactl", "status"], user="alice")
    assert "anna-fails.service" in text


def test_a_killed_annad_is_restarted_by_systemd(machine: Container) -> None:
    before = _show(machine, "annad.service", "MainPID", "NRestarts")
    machine.ok(["kill", "-KILL", before["MainPID"]])

    def restarted() -> dict[str, str] | None:
        now = _show(machine, "annad.service", "MainPID", "NRestarts", "ActiveState")
        return now if now["NRestarts"] != before["NRestarts"] and \
            now["ActiveState"] == "active" else None

    now = wait_until(restarted, "systemd to restart annad after SIGKILL")
    assert now is not None
    assert now["MainPID"] != before["MainPID"]
    wait_until(lambda: machine.run(["annactl", "status", "--json"], user="alice").returncode == 0,
               "the restarted annad to answer")


def test_the_containers_disk_is_its_root_not_the_hosts_bind_mounts(machine: Container) -> None:
    """nspawn shows the host's disk again under /run/host (bind mounts of single
    directories and files): before the fix, telemetry listed /run/host/incoming as a disk."""
    mounts = machine.ok(["findmnt", "--list", "--noheadings", "--output=TARGET"]).split()
    assert "/run/host/incoming" in mounts  # the bind mounts are there to be mistaken
    status = json.loads(machine.ok(["annactl", "status", "--json"], user="alice"))
    disks = [(d["mountpoint"], d["fstype"]) for d in status["telemetry"]["disks"]]
    assert disks == [("/", "overlay")], disks
