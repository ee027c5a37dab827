"""One undo per path: what the daemon restores from its own backup is never touched again by
the plan's rollback command, and every path is compared with its pre-plan state at the end.

A real per-user daemon in a temporary HOME. The rollback commands below are the model's kind:
each undoes by hand what the step did, on the very path the daemon also restores from its
own backup. Done twice (restore, then the command) they destroy the person's own data
(``sed -i '$d'`` removes the person's last line) or fail a perfect undo (``rmdir`` of a
directory the restore already removed).
"""

from __future__ import annotations

import pytest

from anna_common.plan import ActionPlan
from anna_common.protocol.models import RollbackResponse
from anna_common.risk import tiers
from tests.daemonfix import RunningDaemon, make_plan, run_and_roll_back

BASHRC = "# the person's own\nexport EDITOR=vim\nalias ll='ls -l'\n"


def _failed(result: RollbackResponse) -> list[tuple[str, str, str]]:
    return [(u.action, u.target, u.message) for u in result.undo if not u.ok]


@pytest.mark.shared_daemon
def test_a_restored_file_is_not_undone_twice_by_the_rollback_command(
        user_daemon: RunningDaemon) -> None:
    rc = user_daemon.home / ".bashrc"
    rc.write_text(BASHRC)
    result = run_and_roll_back(user_daemon.client(), "echo \"alias x='ls'\" >> ~/.bashrc",
                               "sed -i '$d' ~/.bashrc")
    assert rc.read_text() == BASHRC, "the person's own last line was deleted"
    assert result.status == "rolled_back", result.undo
    command = [u for u in result.undo if u.action == "rollback_command"]
    assert command and command[0].ok, result.undo
    assert "restores from its own backup" in command[0].message, command[0].message


@pytest.mark.shared_daemon
def test_an_rmdir_of_a_directory_the_restore_removes_does_not_fail_the_rollback(
        user_daemon: RunningDaemon) -> None:
    made = user_daemon.home / "made-by-plan"
    result = run_and_roll_back(user_daemon.client(), f"mkdir {made}", f"rmdir {made}")
    assert not made.exists()
    assert result.status == "rolled_back", _failed(result)


@pytest.mark.shared_daemon
def test_a_rollback_command_writing_a_restored_file_does_not_overwrite_the_restore(
        user_daemon: RunningDaemon) -> None:
    target = user_daemon.home / "notes.txt"
    target.write_text("the person's notes\n")
    result = run_and_roll_back(user_daemon.client(), f"printf 'step\\n' > {target}",
                               f"printf 'rollback command\\n' > {target}")
    assert target.read_text() == "the person's notes\n"
    assert result.status == "rolled_back", _failed(result)


@pytest.mark.shared_daemon
def test_a_rollback_command_that_changes_a_path_the_plan_never_touched_is_incomplete(
        user_daemon: RunningDaemon) -> None:
    """The comparison at the end covers what the undo touched too: a rollback command that
    deletes a file of the person's that no step changed is never ``rolled_back``."""
    mine = user_daemon.home / "keep-me.txt"
    mine.write_text("mine\n")
    made = user_daemon.home / "made.txt"
    result = run_and_roll_back(user_daemon.client(), f"touch {made}",
                               f"rm -f {made} {mine}")
    assert result.status == "rollback_incomplete", result.undo
    assert str(mine) in [u.target for u in result.undo if not u.ok], _failed(result)


@pytest.mark.shared_daemon
def test_the_file_stays_whole_when_the_person_appended_after_the_plan(
        user_daemon: RunningDaemon) -> None:
    """A conflict (the person changed the file since) leaves the file alone, the rollback
    command's change to it included: the person's data wins."""
    rc = user_daemon.home / ".bashrc"
    rc.write_text(BASHRC)
    client = user_daemon.client()
    response = client.submit(ActionPlan.model_validate(make_plan(
        [("s", "echo \"alias x='ls'\" >> ~/.bashrc", "MEDIUM")],
        rollback={"s": "sed -i '$d' ~/.bashrc"})))
    annotated = response.annotated
    high = annotated.final_risk == "HIGH"  # a shell rc file runs code later
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=high,
                                 confirm_word=tiers.plan_word(annotated) if high else None))
    assert events[-1].status == "succeeded", [(e.type, e.message) for e in events]
    with rc.open("a") as out:
        out.write("export PAGER=less\n")
    after_person = rc.read_text()
    result = client.rollback(response.plan_id, confirm_word=tiers.rollback_word(annotated))
    assert rc.read_text() == after_person
    assert result.status in ("rollback_failed", "rollback_incomplete"), result.undo
