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
    stat = machine.ok(["stat", "--format=%U:%G %a %F", "/run/anna", "/run/anna/annad.sock"])
    assert stat.splitlines() == ["root:anna 750 directory", "root:anna 660 socket"]
    assert machine.ok(["stat", "--format=%U:%G %a", "/var/lib/anna"]).strip() == "root:root 700"
