"""What ``annactl setup`` shows, asks and reports (the work is in :mod:`.setup`)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from annactl.core.exit_codes import ExitStatus
from annactl.core.sysaccess import GROUP

if TYPE_CHECKING:
    from annactl.commands.setup_plan import Setup
    from annactl.ui.console import Consoles

OUTCOMES = {
    "dry_run": ("DRY_RUN", ExitStatus.SUCCESS),
    "done": ("OK", ExitStatus.SUCCESS),
    "failed": (str(ErrorCode.EXECUTION_FAILED), ExitStatus.EXECUTION_FAILED),
    "not_answering": (str(ErrorCode.DAEMON_UNAVAILABLE), ExitStatus.DAEMON_UNAVAILABLE),
}
"""Each outcome's ``code`` in ``--json`` and exit status."""


def _line(argv: list[str]) -> str:
    return shlex.join(argv)


def show(consoles: Consoles, setup: Setup) -> None:
    """The commands, as root, before anything runs."""
    from annactl.ui.console import inert

    out = consoles.out
    out.print(f"annactl setup will run, as root{'' if _root() else ' (through sudo)'}:",
              markup=False, highlight=False)
    for number, step in enumerate(setup.steps, 1):
        out.print(f"  {number}. {inert(step.why)}", markup=False, highlight=False)
        out.print(f"     {inert(_line(step.argv))}", markup=False, highlight=False)
    for note in setup.notes:
        out.print(f"Note: {inert(note)}", markup=False, highlight=False)


def _root() -> bool:
    import os

    return os.getuid() == 0


def ask_consent(consoles: Consoles, setup: Setup, *, yes: bool, as_json: bool) -> None:
    """Return when the person agreed (or passed ``--yes``); raise DECLINED otherwise."""
    from annactl.ui import confirm

    if yes:
        return
    if as_json or not consoles.interactive:
        raise confirm.declined("setting up the system daemon changes the machine and needs "
                               "your consent; there is no terminal to ask on; nothing was run",
                               hint="pass --yes (annactl setup --dry-run shows what it does)")
    if not confirm.TerminalPrompter(consoles.err).yes_no(
            f"Run these {len(setup.steps)} commands as root? [y/N]"):
        raise confirm.declined("declined; nothing was changed")


def report(consoles: Consoles, setup: Setup, *, outcome: str, daemon: dict[str, Any] | None,
           as_json: bool) -> int:
    """Print the outcome (one JSON document with ``--json``) and return the exit status."""
    from annactl.ui.console import emit_json, inert

    code, status = OUTCOMES[outcome]
    relogin = outcome == "done" and setup.user is not None
    if as_json:
        emit_json(consoles, {
            "code": code, "outcome": outcome, "units": str(setup.units), "annad": setup.annad,
            "user": setup.user, "group": GROUP, "steps": [s.as_dict() for s in setup.steps],
            "notes": setup.notes, "daemon": daemon, "relogin_needed": relogin})
        return int(status)
    if outcome == "dry_run":
        show(consoles, setup)
        consoles.out.print("Nothing was run (--dry-run).", markup=False, highlight=False)
        return int(status)
    if outcome == "failed":
        failed = next(s for s in setup.steps if s.status == "failed")
        raise AnnaError(f"setup stopped at: {_line(failed.argv)}: {failed.output.strip()}; "
                        "the steps after it were not run", code=ErrorCode.EXECUTION_FAILED,
                        hint="fix the cause and run annactl setup again (every step can run "
                        "twice)")
    if outcome == "not_answering":
        state = (daemon or {}).get("active_state", "unknown")
        raise AnnaError(f"annad.service was started but is {state}",
                        code=ErrorCode.DAEMON_UNAVAILABLE,
                        hint="see: journalctl -u annad.service")
    consoles.out.print(f"annad.service is running (pid {(daemon or {}).get('main_pid', '?')}).",
                       markup=False, highlight=False)
    if relogin:
        consoles.out.print(f"{inert(str(setup.user))} is now in group {GROUP}. Log in again "
                           f"(or start a shell with: newgrp {GROUP}) before the next annactl "
                           "command: group membership starts with a new session.",
                           markup=False, highlight=False)
    return int(status)
