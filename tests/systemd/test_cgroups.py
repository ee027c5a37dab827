"""The runs' cgroups on a real systemd: annad.service's Delegate= gives each run a leaf.

annad.service asks for ``Delegate=pids memory``; the container's systemd hands it its own
cgroup there (tests/systemd/init.sh makes the container's controller hierarchies its own),
and annad makes one leaf per confined run beneath it, with ``pids.max`` and a memory cap.
A capless-root check and a root step's preview run here only because of that leaf (without
one both are refused): what they print of their own cgroup shows it, and the limits read
from outside while the check waits are the daemon's, written into it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from tests.daemonfix import make_plan
from tests.systemd.machine import RUN_TIMEOUT_S, Container
from tests.waiting import wait_until

PROCESSES = 256
"""RunLimits().processes: a check's and a preview's pids.max."""
MEMORY = 1024 ** 3
"""RunLimits().run_memory: their memory cap."""
UNIT = "/system.slice/annad.service"
LEAF = re.compile(rf"^\d+:(pids|memory|):{re.escape(UNIT)}/anna-run-(ns\d+-)?(\d+)-(\d+)$",
                  re.M)
"""A line of /proc/self/cgroup in a run's leaf (v1 pids or memory, or the v2 unified one)."""


def _leaves(machine: Container) -> list[str]:
    """The run leaves beneath annad.service now, seen from outside annad."""
    found = machine.run(["find", "/sys/fs/cgroup", "-maxdepth", "6", "-type", "d",
                         "-path", f"*{UNIT}/anna-run-*"])
    return found.stdout.split()


def _main_pid(machine: Container) -> str:
    return machine.ok(["systemctl", "show", "--value", "--property=MainPID",
                       "annad.service"]).strip()


def test_annad_service_gets_its_delegated_cgroups(machine: Container) -> None:
    props = machine.ok(["systemctl", "show", "annad.service", "--property=Delegate",
                        "--property=DelegateControllers"])
    assert "Delegate=yes" in props and "pids" in props and "memory" in props, props
    own = machine.ok(["cat", f"/proc/{_main_pid(machine)}/cgroup"])
    # hybrid: its own cgroup in the pids and memory hierarchies; v2: the unified one
    assert re.search(rf"^\d+:pids:{UNIT}(/anna-daemon)?$", own, re.M) or \
        re.search(rf"^0::{UNIT}/anna-daemon$", own, re.M), own
    assert "cgroup" not in machine.ok(["journalctl", "-u", "annad.service", "--no-pager",
                                       "-o", "cat", "-p", "warning"]), "annad warned"


def _open_gate(path: Path) -> bool:
    """Write ``go`` into the FIFO once the check reads it (False while nobody does)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # no reader yet
            return False
        raise
    try:
        os.write(fd, b"go\n")
    finally:
        os.close(fd)
    return True


GATE = "/srv/anna-root/gate"
"""A FIFO only root may read: a check that reads it reads as capless root, and waits there."""


class GatedCheck:
    """Root's check, run by annad in the background; one that reads :data:`GATE` waits
    there until released."""

    def __init__(self, machine: Container, command: str) -> None:
        self.machine = machine
        machine.ok(["mkdir", "-p", "--mode=0700", GATE.rsplit("/", 1)[0]])
        if machine.run(["test", "-p", GATE]).returncode != 0:
            machine.ok(["mkfifo", "--mode=0600", GATE])
        self.gate = Path(f"/proc/{machine.pid1}/root{GATE}")
        plan = make_plan([("s1", "true", "INFO")], checks=[("c1", command)])
        with tempfile.TemporaryFile() as stdin:
            stdin.write(json.dumps(plan).encode())
            stdin.seek(0)
            self.apply = subprocess.Popen(machine.argv(["annactl", "apply", "-", "--json"]),
                                          stdin=stdin, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)

    def leaves(self) -> list[str]:
        """The run's leaf (a directory per hierarchy with the controllers), once the run is
        in it: annad makes the directories one hierarchy after another, all before the run
        joins any (pair 11 read the pids one alone, the memory one not made yet)."""

        def joined() -> list[str]:
            found = _leaves(self.machine)
            if not any(self.machine.run(["cat", f"{leaf}/cgroup.procs"]).stdout.strip()
                       for leaf in found):
                return []
            return _leaves(self.machine)

        return wait_until(joined, "the check's leaf, joined",
                          saw=lambda: self.machine.run(["find", "/sys/fs/cgroup", "-maxdepth",
                                                        "6", "-path", f"*{UNIT}*"]).stdout)

    def release(self, *, gate: bool = True) -> dict[str, object]:
        """Let the check go on (``gate``) and wait for it; annactl's record of it."""
        # (never blocks: once the check is gone there is no reader, and the wait fails)
        if gate:
            wait_until(lambda: _open_gate(self.gate), "the check to read its FIFO",
                       saw=self.apply.poll)
        out, err = self.apply.communicate(timeout=RUN_TIMEOUT_S)
        assert self.apply.returncode == 0, out + err
        result: dict[str, object] = json.loads(out)["checks"][0]
        assert result["ran"], result
        return result


def test_a_capless_root_check_runs_in_a_leaf_with_its_limits(machine: Container) -> None:
    """The check waits while its leaf is read from outside (annad makes leaves 0700 under
    its UMask: the run itself cannot look in)."""
    check = GatedCheck(machine, f"id -u; cat /proc/self/cgroup {GATE}")
    try:
        leaves = check.leaves()
        assert len({leaf.rsplit("/", 1)[1] for leaf in leaves}) == 1, leaves
        # annad in the container's PID namespace: its leaves name the namespace and its pid
        assert re.fullmatch(rf"anna-run-ns\d+-{_main_pid(machine)}-\d+",
                            leaves[0].rsplit("/", 1)[1]), leaves
        limits = {}
        for leaf in leaves:
            for name in ("pids.max", "memory.limit_in_bytes", "memory.max"):
                read = machine.run(["cat", f"{leaf}/{name}"])
                if read.returncode == 0:
                    limits[name] = int(read.stdout)
        assert limits in ({"pids.max": PROCESSES, "memory.limit_in_bytes": MEMORY},
                          {"pids.max": PROCESSES, "memory.max": MEMORY}), (leaves, limits)
    finally:
        result = check.release()
    output = str(result["output"])
    assert result["exit_code"] == 0, result
    assert output.startswith("0\n") and output.endswith("\ngo\n"), output  # uid 0; the gate
    shown = {m.group(0).rsplit("/", 1)[1] for m in LEAF.finditer(output)}
    assert shown == {leaves[0].rsplit("/", 1)[1]}, output  # its own leaf
    assert _leaves(machine) == [], "the run's leaf was left behind"


def test_a_capless_root_fork_bomb_stops_at_pids_max(machine: Container) -> None:
    """uid 0 is exempt from RLIMIT_NPROC: only the leaf's pids.max refuses these forks. The
    children live long enough for any machine to reach the cap; bash gives up its retries,
    or the check's time limit ends it — either way with every process of the leaf."""
    # (listing the directory only root may read makes it a capless-root read)
    check = GatedCheck(machine, f"id -u; ls {GATE.rsplit('/', 1)[0]}; "
                                f"for i in $(seq {PROCESSES + 50}); do sleep 20 & done; wait")
    try:
        pids = next(leaf for leaf in check.leaves()
                    if machine.run(["test", "-e", f"{leaf}/pids.max"]).returncode == 0)
        wait_until(lambda: _counter(machine, f"{pids}/pids.events", "max") > 0,
                   "a fork refused at pids.max",
                   saw=lambda: machine.run(["cat", f"{pids}/pids.current"]).stdout)
        assert int(machine.ok(["cat", f"{pids}/pids.max"])) == PROCESSES
        assert int(machine.ok(["cat", f"{pids}/pids.current"])) <= PROCESSES
    finally:
        result = check.release(gate=False)
    output = str(result["output"])
    assert output.startswith("0\ngate\n"), output
    assert "fork: retry: Resource temporarily unavailable" in output, output  # EAGAIN
    assert _leaves(machine) == [], "the run's leaf was left behind"


def _counter(machine: Container, path: str, name: str) -> int:
    for line in machine.run(["cat", path]).stdout.splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return int(value)
    return 0


def test_a_root_steps_preview_runs_in_a_leaf(machine: Container) -> None:
    """The preview's step writes its own cgroup into a file of /etc: the diff shows it."""
    plan = make_plan([("s1", "cat /proc/self/cgroup > /etc/anna-cgroup", "MEDIUM")])
    proc = machine.run(["annactl", "apply", "-"], user="alice", stdin=json.dumps(plan))
    assert proc.returncode == 4, proc.stdout + proc.stderr  # shown, then declined
    assert "/etc/anna-cgroup" in proc.stdout, proc.stdout
    shown = [line.lstrip("+ ") for line in proc.stdout.splitlines()
             if f"{UNIT}/anna-run-" in line]
    assert any(LEAF.match(line) for line in shown), proc.stdout
    assert machine.run(["test", "-e", "/etc/anna-cgroup"]).returncode == 1, "the preview wrote"
    assert _leaves(machine) == [], "the preview's leaf was left behind"
