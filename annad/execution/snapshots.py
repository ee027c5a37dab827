"""Machine-level snapshots around a plan, when the machine has them: snapper and etckeeper.

Anna's own undo restores what each step wrote; these are a second, coarser net that the
machine's own tools keep:

- **snapper**: when a snapper config exists for ``/`` or ``/home``, a MEDIUM or HIGH plan
  is wrapped in ``snapper create --type pre`` / ``--type post`` with the description
  ``anna plan ID``; the numbers are journalled and ``annactl rollback`` offers
  ``snapper -c CONFIG undochange PRE..POST`` as the plan-level undo.
- **etckeeper**: when the etc root (``/etc``, or ``etc_root`` in the settings) is an
  etckeeper repository, uncommitted changes are committed before the plan (``anna plan ID
  (before)``) and the plan's own changes after it (``anna plan ID``).

Only the system daemon takes snapshots (a per-user daemon cannot); a tool that is missing
or fails never stops a plan: what happened is journalled (``snapshot`` events) and shown.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.plan import RiskLevel
from anna_common.protocol.models import SnapshotRecord

if TYPE_CHECKING:
    from annad.execution.prestate import HelperRunner
    from annad.journal.store import Journal

log = logging.getLogger(__name__)

EVENT = "snapshot"
"""Journal event kind of one snapshot record."""
SNAPPER_SUBVOLUMES = ("/", "/home")
"""Snapper configs of these subvolumes are used."""
TIMEOUT_S = 300.0
"""Longest a snapshot tool may take."""


@dataclass(frozen=True)
class SnapshotTools:
    """Where the tools are and what they act on (from the daemon settings)."""

    enabled: bool
    etc_root: Path
    snapper: str = "snapper"
    etckeeper: str = "etckeeper"
    etckeeper_conf_dir: Path | None = None
    """``ETCKEEPER_CONF_DIR`` for etckeeper (its own configuration and hooks)."""


class Snapshots:
    """Takes the snapshots of one plan run and journals them."""

    def __init__(self, tools: SnapshotTools, runner: HelperRunner, journal: Journal) -> None:
        self.tools = tools
        self.runner = runner
        self.journal = journal
        self._pre: dict[str, list[SnapshotRecord]] = {}

    def before(self, plan_id: str, risk: RiskLevel) -> None:
        """Pre snapshots (etckeeper commit of pending changes, snapper pre)."""
        if not self.tools.enabled:
            return
        taken: list[SnapshotRecord] = []
        if self._etckeeper_repo():
            commit = self._etckeeper_commit(f"anna plan {plan_id} (before)")
            taken.append(SnapshotRecord(tool="etckeeper", config=str(self.tools.etc_root),
                                        pre=commit, ok=bool(commit), message="" if commit
                                        else "no commit before the plan"))
        if risk >= RiskLevel.MEDIUM:
            for config in self._snapper_configs():
                number, why = self._snapper_create(config, ["--type", "pre"], plan_id)
                taken.append(SnapshotRecord(tool="snapper", config=config, pre=number,
                                            ok=bool(number), message=why))
        self._pre[plan_id] = taken

    def after(self, plan_id: str) -> list[SnapshotRecord]:
        """Post snapshots for what :meth:`before` took; each record is journalled."""
        records = []
        for pre in self._pre.pop(plan_id, []):
            record = pre
            if pre.tool == "etckeeper":
                commit = self._etckeeper_commit(f"anna plan {plan_id}")
                record = pre.model_copy(update={"post": commit, "ok": bool(commit and pre.pre),
                                                "message": pre.message or (
                                                    "" if commit else "no commit after it")})
            elif pre.pre:
                number, why = self._snapper_create(
                    pre.config, ["--type", "post", "--pre-number", pre.pre], plan_id)
                record = pre.model_copy(update={
                    "post": number, "ok": bool(number), "message": why,
                    "undo": f"snapper -c {pre.config} undochange {pre.pre}..{number}"
                    if number else ""})
            self.journal.event(EVENT, plan_id, snapshot=record.model_dump())
            records.append(record)
        return records

    # ------------------------------------------------------------------ etckeeper

    def _etckeeper_repo(self) -> bool:
        root = self.tools.etc_root
        return (root / ".etckeeper").is_file() and (root / ".git").exists()

    def _etckeeper_commit(self, message: str) -> str:
        """Commit what is pending; the commit id HEAD is at afterwards ('' if unknown)."""
        env = {"HOME": os.environ.get("HOME", "/root")}
        if self.tools.etckeeper_conf_dir is not None:
            env["ETCKEEPER_CONF_DIR"] = str(self.tools.etckeeper_conf_dir)
        root = str(self.tools.etc_root)
        result = self.runner.run_argv([self.tools.etckeeper, "commit", "-d", root, message],
                                      timeout=TIMEOUT_S, env=env)
        if result.exit_code not in (0, 1):  # 1: nothing to commit
            log.warning("etckeeper commit in %s failed: %s", root,
                        (result.error or result.output)[-300:])
        head = self.runner.run_argv(["git", "-C", root, "rev-parse", "--verify", "HEAD"],
                                    timeout=60, env=env)
        text = head.output.strip()
        return text if head.exit_code == 0 and len(text) == 40 else ""

    # ------------------------------------------------------------------ snapper

    def _snapper_configs(self) -> list[str]:
        result = self.runner.run_argv([self.tools.snapper, "--jsonout", "list-configs"],
                                      timeout=60)
        if result.exit_code != 0:
            return []  # no snapper, or no configs: nothing to wrap the plan in
        try:
            configs = json.loads(result.output).get("configs", [])
        except (ValueError, AttributeError):
            return []
        return [str(c.get("config")) for c in configs if isinstance(c, dict)
                and c.get("subvolume") in SNAPPER_SUBVOLUMES and c.get("config")]

    def _snapper_create(self, config: str, kind: list[str], plan_id: str) -> tuple[str, str]:
        result = self.runner.run_argv(
            [self.tools.snapper, "-c", config, "create", *kind, "--print-number",
             "--cleanup-algorithm", "number", "--description", f"anna plan {plan_id}"],
            timeout=TIMEOUT_S)
        number = result.output.strip().splitlines()[-1:] if result.output else []
        if result.exit_code == 0 and number and number[0].isdigit():
            return number[0], ""
        why = (result.error or result.output or "no output").strip()[-300:]
        log.warning("snapper create in config %s failed: %s", config, why)
        return "", f"snapper create failed: {why}"


def records_of(journal: Journal, plan_id: str) -> list[SnapshotRecord]:
    """The snapshots journalled for a plan."""
    found = []
    for _plan, kind, _step, body in journal.events_of(plan_id, EVENT):
        if kind == EVENT:
            try:
                found.append(SnapshotRecord.model_validate(body.get("snapshot", {})))
            except ValueError:
                continue
    return found
