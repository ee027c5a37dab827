"""``apply ID --skip STEP`` and ``--edit STEP=COMMAND``: a new plan, validated, judged and
previewed again, with its own digest; the original is recorded as never run."""

from __future__ import annotations

import json

from tests.daemonfix import make_plan

from .conftest import Anna


def _two_steps(anna: Anna) -> tuple[str, object, object]:
    a, b = anna.work / "a.txt", anna.work / "b.txt"
    a.write_text("a\n")
    b.write_text("b\n")
    plan = make_plan([("write_a", f"echo changed > {a}", "LOW"),
                      ("write_b", f"echo changed > {b}", "LOW")], goal="Change two files")
    proc = anna.run("apply", str(anna.plan_file(plan)), "--json")  # no --yes: declined
    doc = json.loads(proc.stdout)
    assert doc["code"] == "DECLINED" and doc["plan_id"], doc
    return str(doc["plan_id"]), a, b


def test_skip_a_step_makes_a_new_plan_that_runs_without_it(anna: Anna) -> None:
    plan_id, a, b = _two_steps(anna)
    code, original = anna.json("show", plan_id)
    code, ran = anna.json("apply", plan_id, "--skip", "write_a", "--yes")
    assert code == 0 and ran["status"] == "succeeded", ran
    assert ran["plan_id"] != plan_id and ran["digest"] != original["record"]["digest"]
    assert [s["id"] for s in ran["annotated"]["steps"]] == ["write_b"]
    assert "skipped write_a" in ran["plan"]["notes_for_user"]
    assert a.read_text() == "a\n" and b.read_text() == "changed\n"
    code, shown = anna.json("show", plan_id)
    assert shown["status"] == "dry_run"


def test_edit_a_step_is_judged_again(anna: Anna) -> None:
    plan_id, a, b = _two_steps(anna)
    code, ran = anna.json("apply", plan_id, "--edit", f"write_a=echo edited > {a}", "--yes")
    assert code == 0 and ran["status"] == "succeeded", ran
    assert a.read_text() == "edited\n" and b.read_text() == "changed\n"
    # an edit into a banned command is refused like any plan: nothing runs
    plan_id, a, b = _two_steps(anna)
    code, refused = anna.json("apply", plan_id, "--edit", "write_a=rm -rf /", "--yes")
    assert code == 3 and refused["code"] == "PLAN_BANNED", refused
    assert a.read_text() == "a\n" and b.read_text() == "b\n"
    # an edit that raises the risk to HIGH needs what HIGH needs
    plan_id, a, b = _two_steps(anna)
    code, declined = anna.json("apply", plan_id, "--edit", "write_b=echo x >> ~/.bashrc",
                               "--yes")
    assert code == 4 and declined["code"] in ("DECLINED", "CONFIRMATION_REQUIRED"), declined
    assert declined["plan_id"] != plan_id
    assert a.read_text() == "a\n" and b.read_text() == "b\n"


def test_unknown_or_conflicting_steps_are_usage_errors(anna: Anna) -> None:
    plan_id, _, _ = _two_steps(anna)
    code, doc = anna.json("apply", plan_id, "--skip", "nope", "--yes")
    assert code == 2 and doc["code"] == "USAGE_ERROR" and "write_a" in str(doc["hint"])
    code, doc = anna.json("apply", plan_id, "--skip", "write_a", "--skip", "write_b", "--yes")
    assert code == 2 and "nothing left" in doc["message"]
    code, doc = anna.json("apply", plan_id, "--edit", "write_a", "--yes")
    assert code == 2 and "STEP_ID=COMMAND" in doc["message"]
