"""``annactl setup``: install and start the system daemon, with the person's consent.

The README's set-up gives a per-user daemon, which runs only the person's own changes.
Packages and system services need the system daemon (root, under systemd). This command
does what docs/operations.md "Installing the units" says, from the units in this
installation's ``systemd/`` folder, as root (through ``sudo`` when not root):

1. the unit, the sysusers and tmpfiles files go to ``/etc`` (the administrator's place: a
   distribution package owns ``/usr/lib``), plus a drop-in naming *this* installation's
   ``annad`` when it is not ``/usr/bin/annad``;
2. ``systemd-sysusers`` creates group ``anna``, ``systemd-tmpfiles`` ``/run/anna``;
3. the person is added to group ``anna`` (``usermod -aG``);
4. ``annad.service`` is enabled and started (``Type=notify``: once active, it serves).

It shows every command first and asks (``--yes`` skips the question; without a terminal and
without ``--yes`` nothing runs); ``--dry-run`` only shows them; ``--json`` prints one
document. Without systemd it refuses and says so. Group membership takes effect in new
login sessions: the person is told to log in again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode

if TYPE_CHECKING:
    from annactl.commands.setup_plan import Setup
    from annactl.ui.console import Consoles

def refuse_without_systemd(marker: Path = Path("/run/systemd/system")) -> None:
    """The system daemon is a systemd service: say so plainly where systemd is not PID 1
    (``marker``: the directory systemd creates when it boots the machine, sd_booted(3))."""
    if not marker.is_dir() or shutil.which("systemctl") is None:
        raise AnnaError("this machine does not run systemd (no /run/systemd/system), and the "
                        "system daemon is a systemd service; nothing was changed",
                        code=ErrorCode.USAGE_ERROR,
                        hint="the per-user daemon keeps running your own changes")


def _as_root(argv: list[str]) -> list[str]:
    if os.getuid() == 0:
        return argv
    if shutil.which("sudo") is None:
        raise AnnaError("setting up the system daemon needs root, and sudo is not installed",
                        code=ErrorCode.PERMISSION_DENIED,
                        hint="run annactl setup as root")
    # without a terminal sudo cannot ask for a password: fail at once instead of hanging
    return ["sudo", *([] if sys.stdin.isatty() else ["-n"]), "--", *argv]


def execute(setup: Setup) -> bool:
    """Run the steps in order, stopping at the first failure; True when all ran."""
    for step in setup.steps:
        proc = subprocess.run(_as_root(step.argv), stdin=None if sys.stdin.isatty()
                              else subprocess.DEVNULL, capture_output=True, text=True,
                              check=False)
        step.output = (proc.stdout + proc.stderr)[-2000:]
        step.status = "ran" if proc.returncode == 0 else "failed"
        if proc.returncode != 0:
            for rest in setup.steps[setup.steps.index(step) + 1:]:
                rest.status = "not run"
            return False
    return True


def service_state() -> dict[str, Any]:
    """annad.service as systemd reports it (anyone may ask), and its health when this user
    can reach the socket (root; a member of group anna in a session that has the group).

    ``systemctl enable --now`` returns once the start job is done, and annad.service is
    ``Type=notify``: ``active`` means annad has bound its socket and said READY=1.
    """
    systemctl = shutil.which("systemctl") or "/usr/bin/systemctl"
    proc = subprocess.run([systemctl, "show", "annad.service", "--property=ActiveState",
                           "--property=SubState", "--property=MainPID"],
                          capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    props = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    state: dict[str, Any] = {"active_state": props.get("ActiveState", "unknown"),
                             "sub_state": props.get("SubState", "unknown"),
                             "main_pid": int(props.get("MainPID", "0") or 0), "health": None}
    from annactl.commands.status import unix_get
    from annactl.core.config import load_settings

    # not reachable from this session yet: the group starts with a new login
    with contextlib.suppress(AnnaError):
        state["health"] = unix_get(load_settings().system_socket, "/v1/health", timeout=5.0)
    return state


def run(consoles: Consoles, *, yes: bool, dry_run: bool, as_json: bool) -> int:
    """``annactl setup``: show, ask, run, report (see the module docstring)."""
    from annactl.commands.setup_plan import plan
    from annactl.commands.setup_view import ask_consent, report, show

    refuse_without_systemd()
    with tempfile.TemporaryDirectory(prefix="anna-setup-") as scratch:
        drop_in = Path(scratch) / "annactl-setup.conf"
        setup = plan(drop_in)
        if dry_run:
            return report(consoles, setup, outcome="dry_run", daemon=None, as_json=as_json)
        if not as_json:
            show(consoles, setup)
        ask_consent(consoles, setup, yes=yes, as_json=as_json)
        if not execute(setup):
            return report(consoles, setup, outcome="failed", daemon=None, as_json=as_json)
    daemon = service_state()
    return report(consoles, setup, daemon=daemon, as_json=as_json,
                  outcome="done" if daemon["active_state"] == "active" else "not_answering")

