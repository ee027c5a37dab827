"""Honest words about an undo: an action that needs no undo (``daemon-reload``) does not fail
a rollback, and annactl says where a plan was when the daemon stopped answering.

Real services are never touched: the undo takes its runner as a parameter, and a runner that
plays ``systemctl`` answers here; the client's follower reads a stream built from real
events with a fake daemon that does not answer and a fake clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from anna_common.errors import DaemonError
from anna_common.protocol.models import ExecEvent, ExecEventType, PlanStatus
from anna_common.validate import validate
from annactl.commands.follow import Follower
from annactl.commands.prepared import Prepared
from annactl.core.environment import local_context
from annad.backups.backup import BlobStore
from annad.backups.manifest import StepManifest
from annad.confine.credentials import Identity
from annad.confine.runner import RunResult
from annad.execution.prestate import reloads, untyped_live
from annad.execution.undo import UndoEnv, undo_step
from annad.execution.undostatus import rollback_status
from tests.daemonfix import make_plan


class Systemctl:
    """Plays ``systemctl daemon-reload`` (exit 0) and records each call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def run_argv(self, argv: list[str], *, timeout: float = 10.0, max_output: int = 65536,
                 identity: Identity | None = None, env: Mapping[str, str] | None = None
                 ) -> RunResult:
        self.calls.append(argv)
        return RunResult(exit_code=0, output="")

    def run_shell(self, command: str, **_: object) -> RunResult:
        raise AssertionError("no shell command expected")


def test_daemon_reload_needs_no_undo_and_is_reloaded_after_the_files() -> None:
    command = "systemctl daemon-reload && systemctl --user daemon-reload"
    assert untyped_live(command) == []  # not an unchecked live program: nothing to undo
    assert reloads(command) == ["system", "user"]
    assert untyped_live("systemctl reset-failed") == []
    assert untyped_live("systemctl isolate rescue.target") == ["systemctl"]


def test_a_rollback_of_a_daemon_reload_is_rolled_back(tmp_path: Path) -> None:
    fake = Systemctl()
    manifest = StepManifest(plan_id="p", index=0, step_id="reload", scope="system", uid=0,
                            gid=0, home=str(tmp_path), reloads=["system"])
    env = UndoEnv(runner=fake, blobs=BlobStore(tmp_path / "blobs"), timeout=5,
                  max_output=1000, restrict_user_scope=False)
    results = undo_step(manifest, env)
    assert [(r.action, r.ok) for r in results] == [("daemon_reload", True)]
    assert fake.calls == [["systemctl", "daemon-reload"]]
    assert rollback_status(results)[0] is PlanStatus.ROLLED_BACK


class _Down:
    def get_plan(self, plan_id: str) -> Any:
        raise DaemonError("annad at /x is not answering: Connection refused")


def _stream_to_step(index: int, total: int) -> Iterator[ExecEvent]:
    for kind, at in ((ExecEventType.PLAN_STARTED, None), (ExecEventType.STEP_STARTED, index)):
        yield ExecEvent(type=kind, plan_id="p1", index=at, total=total,
                        step_id=None if at is None else f"s{at}", ts=time.time())


def test_the_client_says_in_which_step_the_daemon_stopped_answering() -> None:
    annotated = validate(make_plan([(f"s{i}", f"echo {i} > ~/{i}.txt", "LOW")
                                    for i in (1, 2, 3)]), local_context()).plan
    assert annotated is not None
    now = [0.0]
    follower = Follower(_Down(), Prepared(plan_id="p1", digest=annotated.digest,  # type: ignore[arg-type]
                                          annotated=annotated),
                        wait_s=1, clock=lambda: now[0],
                        pause=lambda s: now.__setitem__(0, now[0] + s))
    list(follower.events(_stream_to_step(2, 3)))  # the stream ends with no plan_finished
    notices: list[str | None] = []
    try:
        for event in follower.final_record():
            notices.append(event.message)
    except DaemonError as exc:  # it never answers again: the bound ends the wait
        assert "was running" in exc.message
    assert notices and notices[0] and "in step 2 of 3 (s2)" in notices[0], notices
    assert "after the plan's end" not in notices[0]
