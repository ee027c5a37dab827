"""``annactl fleet apply ID -i INVENTORY [--limit …]``: one approval, many machines.

Exports the stored plan as a playbook (:mod:`.export`: the approval is asked here, once),
runs ``ansible-playbook`` with it (:mod:`.ansible_run`), shows a line per host as tasks
finish, and ends with a summary table: ok / changed / failed / rolled back per host.
With ``--mode annad`` (default) each host's own Anna validates, backs up, runs and rolls
back; with ``--mode shell`` the playbook's ``rescue`` runs the plan's rollback commands.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annactl.commands import ansible_run
from annactl.commands.export import render_playbook
from annactl.commands.playbook import (
    HOST_FAILED_TASK,
    ROLLBACK_FAILED_TASK,
    ROLLED_BACK_TASK,
    VERDICT_FAILED,
    VERDICT_UNDONE,
)
from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from rich.table import Table

    from annactl.ui.console import Consoles


@dataclass
class HostState:
    """What one host did, as the events told it."""

    name: str
    ok: int = 0
    changed: int = 0
    failed: int = 0
    skipped: int = 0
    rolled_back: bool = False
    rollback_failed: bool = False
    unreachable: bool = False
    task: str = ""
    reason: str = ""

    @property
    def result(self) -> str:
        """``ok``, ``changed``, ``rolled back``, ``rollback failed``, ``failed``,
        ``unreachable``."""
        if self.unreachable:
            return "unreachable"
        if self.rollback_failed:
            return "rollback failed"
        if self.rolled_back:
            return "rolled back"
        if self.failed:
            return "failed"
        return "changed" if self.changed else "ok"

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` entry for this host."""
        return {"host": self.name, "result": self.result, "ok": self.ok,
                "changed": self.changed, "failed": self.failed, "skipped": self.skipped,
                "rolled_back": self.rolled_back, "reason": self.reason}


class Fleet:
    """Folds the callback's events into per-host states."""

    def __init__(self) -> None:
        self.hosts: dict[str, HostState] = {}
        self.rc: int | None = None
        self.stderr = ""
        self.texts: list[str] = []

    def host(self, name: str) -> HostState:
        """The state of ``name`` (created on first sight)."""
        return self.hosts.setdefault(name, HostState(name))

    def fold(self, event: dict[str, Any]) -> HostState | None:
        """Apply one event; the host it was about, if any."""
        kind = event.get("event")
        if kind == "exit":
            self.rc, self.stderr = int(event.get("rc", 1)), str(event.get("stderr", ""))
            return None
        if kind == "text":
            self.texts.append(str(event.get("text", "")))
            return None
        name = event.get("host")
        if not isinstance(name, str):
            return None
        state = self.host(name)
        task = str(event.get("task", ""))
        state.task = task
        if kind == "ok":
            state.ok += 1
        elif kind == "changed":
            state.ok += 1
            state.changed += 1
        elif kind == "skipped":
            state.skipped += 1
        elif kind == "unreachable":
            state.unreachable, state.reason = True, str(event.get("msg", ""))
        elif kind == "failed" and not event.get("ignored"):
            self._failed(state, task, str(event.get("msg", "")))
        return state

    @staticmethod
    def _failed(state: HostState, task: str, msg: str) -> None:
        state.failed += 1
        state.reason = msg
        if task == ROLLED_BACK_TASK:
            state.rolled_back = True
        elif task == ROLLBACK_FAILED_TASK:
            state.rollback_failed = True
        elif task == HOST_FAILED_TASK:
            # the host's own Anna said what happened: the verdict sits right after its
            # status at the start of the message (later text is the host's step output,
            # which must not be able to pose as a verdict)
            head = msg.split(")", 1)[0]
            if head.startswith(f"Anna on {state.name}: status "):
                state.rolled_back = head.endswith(f"({VERDICT_UNDONE}")
                state.rollback_failed = head.endswith(f"({VERDICT_FAILED}")

    def ok(self) -> bool:
        """Every host succeeded (and ansible-playbook agreed)."""
        return self.rc == 0 and bool(self.hosts) and all(
            h.result in ("ok", "changed") for h in self.hosts.values())


def summary_table(fleet: Fleet) -> Table:
    """Host, ok, changed, failed, rolled back, result (the reasons follow the table)."""
    from rich.table import Table
    from rich.text import Text

    from annactl.ui.console import inert

    table = Table(title="Fleet summary", title_justify="left")
    for column in ("host", "ok", "changed", "failed", "rolled back", "result"):
        table.add_column(column, overflow="fold")
    styles = {"ok": "green", "changed": "green", "rolled back": "yellow"}
    for state in sorted(fleet.hosts.values(), key=lambda s: s.name):
        table.add_row(Text(inert(state.name, max_chars=80)), str(state.ok), str(state.changed),
                      str(state.failed), "yes" if state.rolled_back else "no",
                      Text(state.result, style=styles.get(state.result, "bold red")))
    return table


def reasons(fleet: Fleet) -> list[str]:
    """``host: reason`` for every host that did not succeed (inert, one line each)."""
    from annactl.ui.console import inert

    return [f"{inert(s.name, max_chars=80)}: {inert(s.reason, max_chars=600)}".replace("\n", " ")
            for s in sorted(fleet.hosts.values(), key=lambda s: s.name)
            if s.result not in ("ok", "changed") and s.reason]


def _progress_line(state: HostState, event: dict[str, Any]) -> str:
    from annactl.ui.console import inert

    kind = str(event.get("event", ""))
    return f"{inert(state.name, max_chars=60)}: {kind:<11} {inert(state.task, max_chars=100)}"


def apply(consoles: Consoles, plan_id: str, *, inventory: str, limit: str | None, mode: str,
          check: bool, yes: bool, allow_high: bool, annactl_path: str | None,
          as_json: bool) -> int:
    """Approve once, run everywhere, report per host."""
    from annactl.ui.console import emit_json

    text, _approval = render_playbook(consoles, plan_id, mode=mode, yes=yes,
                                      allow_high=allow_high)
    fleet = Fleet()
    with tempfile.TemporaryDirectory(prefix="anna-fleet-") as tmp:
        playbook = Path(tmp) / "plan.yml"
        playbook.write_text(text, encoding="utf-8")
        extra = {"anna_annactl": annactl_path} if annactl_path else {}
        invocation = ansible_run.Invocation(playbook=playbook, inventory=inventory,
                                            limit=limit, check=check, extra_vars=extra)
        for event in ansible_run.events(invocation):
            state = fleet.fold(event)
            if state is not None and not as_json and event.get("event") != "task":
                consoles.err.print(_progress_line(state, event), markup=False,
                                   highlight=False)
    if as_json:
        emit_json(consoles, {"status": "succeeded" if fleet.ok() else "failed",
                             "plan_id": plan_id, "mode": mode, "check": check,
                             "rc": fleet.rc, "hosts": [h.as_json() for h in
                                                       sorted(fleet.hosts.values(),
                                                              key=lambda s: s.name)]})
    else:
        consoles.out.print(summary_table(fleet))
        for line in reasons(fleet):
            consoles.out.print(line, markup=False, highlight=False, soft_wrap=True)
        if not fleet.hosts:
            from annactl.ui.console import inert

            consoles.err.print("ansible-playbook ran no host: " +
                               inert(fleet.stderr.strip()[-500:], max_chars=500),
                               markup=False, highlight=False)
    return ExitStatus.SUCCESS if fleet.ok() else ExitStatus.EXECUTION_FAILED
