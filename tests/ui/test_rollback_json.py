"""``annactl rollback ID --json``: a rollback that undid the plan is a success (``OK``, exit
0); one that could not is its failure's code and exit status. The real annactl, the real
per-user daemon, a plan touching only a temp dir."""

from __future__ import annotations

import shutil

from tests.daemonfix import make_plan

from .conftest import Anna


def _applied(anna: Anna) -> str:
    target = anna.work / "f.txt"
    target.write_text("original\n")
    plan = anna.plan_file(make_plan([("write", f"echo changed > {target}", "LOW")],
                                    goal="Change f"))
    code, applied = anna.json("apply", str(plan), "--yes")
    assert code == 0 and applied["status"] == "succeeded", applied
    return str(applied["plan_id"])


def test_a_successful_rollback_says_ok(anna: Anna) -> None:
    plan_id = _applied(anna)
    code, back = anna.json("rollback", plan_id, "--yes")
    assert (code, back["status"], back["code"]) == (0, "rolled_back", "OK"), back
    assert (anna.work / "f.txt").read_text() == "original\n"


def test_a_rollback_whose_backups_are_gone_fails_and_names_the_path(anna: Anna) -> None:
    plan_id = _applied(anna)
    shutil.rmtree(anna.daemon.state / "backups" / plan_id)
    code, back = anna.json("rollback", plan_id, "--yes")
    assert code != 0 and back["status"] == "rollback_failed", back
    assert back["code"] == "ROLLBACK_FAILED"
    assert [u["target"] for u in back["undo"] if u["action"] == "backup_missing"] == [
        str(anna.work / "f.txt")]
    assert (anna.work / "f.txt").read_text() == "changed\n"
