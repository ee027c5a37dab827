"""A step's rollback command, run like a step: captured, judged, committed — or not at all.

A rollback command is model text like a step, and runs as root like one; the prediction
that rated it at submit misses what bash resolves (``cd /etc && xz -k passwd``, an aliased
``open`` in python, a nameref). So it gets a step's treatment, by observation:

- a live kind (:mod:`annad.execution.livekinds`: systemctl, the package manager, desktop
  IPC, signals…) runs live, as its typed path (:func:`annad.execution.undo.undo_step`);
- anything else runs captured (:func:`annad.capture.step.run`, the very path of a
  step), in ``rollback/`` under the step's backup dir. Its observed change set is judged
  against what the person approved for it — the tier the rollback command was shown and
  confirmed at, with the policy, secrets and Anna's own state — and lands only when within
  it, atomically per file with a commit record (a kill -9 finishes it at the next start:
  :meth:`annad.execution.executor.Executor.stop_orphans`). A refused one lands nothing and
  its undo result fails, naming each change and why. It runs before the step's files are
  restored, and what it changes at a path the daemon restores from its own backup is
  dropped before the judge (:mod:`annad.execution.undoonce`): each path is undone once;
- on a daemon that cannot capture, it does not run: the result fails and says why. It is
  never run live in the capture's place.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.levels import RiskLevel
from annad.backups.leftovers import remove_empty
from annad.backups.manifest import printable
from annad.capture import commit
from annad.capture import step as capturing
from annad.capture.judge import Approval
from annad.confine.orphans import PROCESS_FILE, record_process
from annad.execution.undoonce import dropped_words, drops
from annad.stepspec import StepSpec, Who

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from anna_common.risk.rules.base import AssessContext
    from annad.backups.manifest import StepManifest, TargetSnapshot
    from annad.backups.trash import Trash
    from annad.stepspec import Limits

    PolicyHook = Callable[[str, AssessContext, int, str], str | None]

DIRECTORY = "rollback"
"""In a step's backup dir: where its rollback command's capture and commit record live."""


@dataclass(frozen=True)
class Outcome:
    """What running a rollback command came to."""

    ok: bool
    message: str
    saved: list[TargetSnapshot] = field(default_factory=list)
    """What was at each path that landed before the command ran (its commit's backups)."""


@dataclass(frozen=True)
class RollbackCapture:
    """Runs the rollback commands of one plan captured (see the module text)."""

    plan_dir: Path
    """The plan's backup dir (step dirs ``NNN`` and ``blobs`` below it)."""
    limits: Limits
    state_dir: str
    context: Callable[[str], AssessContext]
    policy: PolicyHook | None
    problem: str | None
    """Why this daemon cannot capture (None: it can)."""
    trash: Trash | None = None
    own_config: tuple[str, ...] = ()
    """Anna's configuration files as this daemon reads them: never a rollback's to change."""

    def approval(self, manifest: StepManifest) -> Approval:
        """What the person approved for this rollback command: its tier, its scope."""
        ctx, policy = self.context(manifest.home), self.policy
        try:
            tier = RiskLevel(manifest.rollback_tier)
        except ValueError:
            tier = RiskLevel.INFO  # an altered record approves nothing that changes a file
        return Approval(tier=tier, system=manifest.rollback_scope != "user", ctx=ctx,
                        state_dir=self.state_dir, policy=lambda command: policy(
                            command, ctx, manifest.uid, manifest.home)
                        if policy is not None else None, own_config=self.own_config)

    def __call__(self, manifest: StepManifest, session: dict[str, str] | None,
                 restored: tuple[str, ...] = ()) -> Outcome:
        """Run ``manifest``'s rollback command captured, its changes at or above the paths
        ``restored`` dropped; see the module text."""
        if self.problem is not None:
            return Outcome(False, "the rollback command did not run: this daemon cannot "
                           f"capture what it writes ({self.problem}), and Anna does not run "
                           "it live unseen; what it should undo is not undone")
        step_dir = self.plan_dir / f"{manifest.index:03d}"
        directory = step_dir / DIRECTORY
        who = Who(uid=manifest.uid, gid=manifest.gid, groups=tuple(manifest.groups),
                  user=manifest.user, home=manifest.home,
                  session=dict(session or manifest.session))
        spec = StepSpec(index=manifest.index, step_id=manifest.step_id,
                        command=manifest.rollback_command or "", scope=manifest.rollback_scope,
                        tier=manifest.rollback_tier)
        record = manifest.model_copy(update={
            "targets": [], "notes": [], "packages": [], "units": [], "uncaptured": False,
            "unchecked": [], "values": [], "rollback_command": None}, deep=True)

        def spawned(pid: int) -> None:
            record_process(step_dir / PROCESS_FILE, pid)

        step_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if commit.recover(directory):  # a judged commit a killed daemon left: finished
            capturing.discard(directory, self.trash)
        capturing.discard(directory)  # a capture a killed earlier run left: never lands now
        try:
            outcome = capturing.run(capturing.StepRun(
                step=spec, who=who, directory=directory, blobs_dir=self.plan_dir / "blobs",
                limits=self.limits, on_output=lambda _chunk: None, on_spawn=spawned,
                cancel=threading.Event(), trash=self.trash,
                skip=lambda change: drops(change, restored)), record, self.approval(manifest))
        finally:
            (step_dir / PROCESS_FILE).unlink(missing_ok=True)
            remove_empty(directory, self.plan_dir)
        if outcome.refusal is not None:
            return Outcome(False, f"{outcome.refusal} ({outcome.code}); what the rollback "
                           "command should undo is not undone")
        result = outcome.result
        if not result.ok:
            why = result.error or ("timed out" if result.timed_out else
                                   f"exit {result.exit_code}")
            return Outcome(False, f"{why}: {printable(result.output.strip()[-500:])}"
                           "; nothing it wrote landed")
        changes = outcome.verdict.shown if outcome.verdict is not None else []
        shown = "; ".join(changes[:20]) + (f"; and {len(changes) - 20} more"
                                           if len(changes) > 20 else "")
        dropped = dropped_words(outcome.dropped) if outcome.dropped else ""
        return Outcome(True, f"exit 0, captured: {len(changes)} change(s) observed, judged "
                       f"and committed{': ' + shown if shown else ''}{dropped}",
                       list(record.targets))
