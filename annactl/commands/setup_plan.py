"""What ``annactl setup`` will run: the steps, from this installation's units.

See :mod:`annactl.commands.setup` for the command itself.
"""

from __future__ import annotations

import os
import pwd
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anna_common.errors import AnnaError, ErrorCode
from annactl.core.sysaccess import GROUP

UNIT = Path("/etc/systemd/system/annad.service")
DROP_IN = Path("/etc/systemd/system/annad.service.d/annactl-setup.conf")
SYSUSERS = Path("/etc/sysusers.d/anna.conf")
TMPFILES = Path("/etc/tmpfiles.d/anna.conf")
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9/._+@-]*")
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


def this_annad(python: str | None = None) -> str:
    """The ``annad`` beside ``python`` (default: the Python running this annactl), a path
    the unit can name as is."""
    script = Path(python or sys.executable).with_name("annad")
    path = str(script) if os.access(script, os.X_OK) else PACKAGED_ANNAD
    # ExecStart splits on spaces and expands %-specifiers; a newline would start a new
    # directive: only plain path characters go into the drop-in
    if not _PLAIN_PATH.fullmatch(path):
        raise AnnaError(f"this annad's path cannot be written into a unit as is: {path!r}",
                        code=ErrorCode.CONFIG_INVALID,
                        hint="install Anna in a directory whose path has only letters, "
                        "digits and . _ + - @ /")
    return path


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
