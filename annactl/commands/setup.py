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
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from annactl.core.sysaccess import GROUP

if TYPE_CHECKING:
    from annactl.ui.console import Consoles

UNIT = Path("/etc/systemd/system/annad.service")
DROP_IN = Path("/etc/systemd/system/annad.service.d/annactl-setup.conf")
SYSUSERS = Path("/etc/sysusers.d/anna.conf")
TMPFILES = Path("/etc/tmpfiles.d/anna.conf")
PACKAGED_ANNAD = "/usr/bin/annad"
"""Where annad.service's ``ExecStart`` expects the daemon (a distribution package puts it)."""


@dataclass
class Step:
    """One command of the set-up, run as root."""

    why: str
    """What it does, in words for people."""
    argv: list[str]
    status: str = "pending"
    """``pending``, ``ran``, ``failed`` or ``not run``."""
    output: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The step in ``--json``."""
        return {"why": self.why, "argv": self.argv, "status": self.status,
                "output": self.output}


@dataclass
class Setup:
    """What ``annactl setup`` will do on this machine."""

    units: Path
    """The folder holding annad.service, anna.sysusers and anna.tmpfiles."""
    annad: str
    """The daemon the unit will run."""
    user: str | None
    """Who is added to group anna (None when root sets up for nobody in particular)."""
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def units_dir() -> Path:
    """This installation's ``systemd/`` folder (a source checkout or an editable install),
    else the packaged units' folder."""
    import annactl

    beside = Path(annactl.__file__).resolve().parent.parent / "systemd"
    if (beside / "annad.service").is_file():
        return beside
    raise AnnaError("cannot find annad.service beside this annactl",
                    code=ErrorCode.CONFIG_INVALID,
                    hint="install Anna from a source checkout (pip install -e .) or from "
                    "the package (packaging/PKGBUILD), which installs the units itself")


def this_annad() -> str:
    """The ``annad`` of the Python running this annactl."""
    script = Path(sys.executable).with_name("annad")
    return str(script) if os.access(script, os.X_OK) else PACKAGED_ANNAD


def target_user() -> str | None:
    """The person to add to group anna: the caller, or whoever ran ``sudo annactl setup``."""
    if os.getuid() != 0:
        return pwd.getpwuid(os.getuid()).pw_name
    name = os.environ.get("SUDO_USER")
    return name if name and name != "root" else None


def plan(drop_in: Path) -> Setup:
    """The steps, in order (``drop_in``: a file holding the ExecStart drop-in's text)."""
    units = units_dir()
    setup = Setup(units=units, annad=this_annad(), user=target_user())
    steps = setup.steps
    steps.append(Step("install the service unit",
                      ["install", "-Dm644", str(units / "annad.service"), str(UNIT)]))
    if setup.annad != PACKAGED_ANNAD:
        drop_in.write_text(f"# written by annactl setup: this installation's annad\n"
                           f"[Service]\nExecStart=\nExecStart={setup.annad}\n")
        steps.append(Step(f"make the unit run {setup.annad}",
                          ["install", "-Dm644", str(drop_in), str(DROP_IN)]))
        if _writable_by_others(Path(setup.annad)):
            setup.notes.append(f"annad.service will run {setup.annad} as root: whoever can "
                               "change that installation can act as root; for a shared "
                               "machine install the package instead")
    steps += [
        Step(f"declare group {GROUP}",
             ["install", "-Dm644", str(units / "anna.sysusers"), str(SYSUSERS)]),
        Step("declare the socket and state directories",
             ["install", "-Dm644", str(units / "anna.tmpfiles"), str(TMPFILES)]),
        Step(f"create group {GROUP}", ["systemd-sysusers", str(SYSUSERS)]),
        Step("create /run/anna and /var/lib/anna", ["systemd-tmpfiles", "--create",
                                                    str(TMPFILES)]),
        Step("make systemd read the new unit", ["systemctl", "daemon-reload"]),
    ]
    if setup.user is not None:
        steps.append(Step(f"let {setup.user} run plans (group {GROUP})",
                          ["usermod", "-aG", GROUP, setup.user]))
    steps.append(Step("start annad now and at every boot",
                      ["systemctl", "enable", "--now", "annad.service"]))
    return setup


def _writable_by_others(path: Path) -> bool:
    """Someone other than root may change ``path`` or a directory above it."""
    for place in [path, *path.parents]:
        try:
            info = place.stat()
        except OSError:
            return True
        if info.st_uid != 0 or info.st_mode & 0o022:
            return True
    return False


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

