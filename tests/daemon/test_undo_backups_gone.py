"""The journal knows what was captured: a rollback whose backups or undo record are gone or
damaged names each path and ends ``rollback_failed``, never ``rolled_back``.

A real per-user daemon in a temporary HOME. Each case runs a plan of two steps that change
two of the person's files, then removes or spoils what the daemon keeps on its state disk —
as someone short of room would (``rm -rf /var/lib/anna/backups/<plan>``) — and rolls back.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from anna_common.plan import ActionPlan
from anna_common.protocol.models import RollbackResponse
from anna_common.risk import tiers
from tests.daemonfix import RunningDaemon, make_plan


def _plan_dir(daemon: RunningDaemon, plan_id: str) -> Path:
    return daemon.state / "backups" / plan_id


def _remove_plan_dir(daemon: RunningDaemon, plan_id: str) -> None:
    shutil.rmtree(_plan_dir(daemon, plan_id))


def _remove_second_manifest(daemon: RunningDaemon, plan_id: str) -> None:
    (_plan_dir(daemon, plan_id) / "001" / "manifest.json").unlink()
    (_plan_dir(daemon, plan_id) / "001" / "after.json").unlink(missing_ok=True)


def _garble_second_manifest(daemon: RunningDaemon, plan_id: str) -> None:
    for name in ("manifest.json", "after.json"):
        path = _plan_dir(daemon, plan_id) / "001" / name
        if path.exists():
            path.write_text("{ not json")


def _drop_a_target(daemon: RunningDaemon, plan_id: str) -> None:
    """An undo record edited to forget what it saved: the journal still knows."""
    for name in ("manifest.json", "after.json"):
        path = _plan_dir(daemon, plan_id) / "001" / name
        if path.exists():
            data = json.loads(path.read_text())
            data["targets"] = []
            path.write_text(json.dumps(data))


CASES: list[tuple[str, Callable[[RunningDaemon, str], None], str, bool]] = [
    ("plan_dir_removed", _remove_plan_dir, "backup_missing", True),
    ("manifest_removed", _remove_second_manifest, "backup_missing", False),
    ("manifest_garbled", _garble_second_manifest, "backup_damaged", False),
    ("manifest_forgets_a_target", _drop_a_target, "backup_damaged", False),
]


@pytest.mark.shared_daemon
@pytest.mark.parametrize(("name", "spoil", "action", "both"), CASES,
                         ids=[c[0] for c in CASES])
def test_a_rollback_with_its_backups_gone_is_never_rolled_back(
        user_daemon: RunningDaemon, name: str, spoil: Callable[[RunningDaemon, str], None],
        action: str, both: bool) -> None:
    one, two = user_daemon.home / f"{name}-1.conf", user_daemon.home / f"{name}-2.conf"
    one.write_text("one before\n")
    two.write_text("two before\n")
    client = user_daemon.client()
    response = client.submit(ActionPlan.model_validate(make_plan(
        [("a", f"echo one after > {one}", "LOW"), ("b", f"echo two after > {two}", "LOW")])))
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=False))
    assert events[-1].status == "succeeded", [(e.type, e.message) for e in events]
    spoil(user_daemon, response.plan_id)
    result: RollbackResponse = client.rollback(
        response.plan_id, confirm_word=tiers.rollback_word(response.annotated))
    assert result.status == "rollback_failed", result.undo
    named = {(u.action, u.target) for u in result.undo if not u.ok}
    assert (action, str(two)) in named, result.undo
    if both:
        assert (action, str(one)) in named, result.undo
    # nothing of the plan was touched: a partial restore is never made on broken backups
    assert one.read_text() == "one after\n" and two.read_text() == "two after\n"
    record = client.get_plan(response.plan_id)
    assert record.status == "rollback_failed"
    assert record.error is not None and record.error.code == "ROLLBACK_FAILED"
