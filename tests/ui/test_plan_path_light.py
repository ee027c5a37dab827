"""A planning request with a daemon loads neither httpx nor the risk engine (issue 38.2): the
model server is spoken to over http.client (annactl/planning/llm/transport.py) and the
daemon judges the model's plan (``POST /v1/judge``); a plan the daemon refuses is validated
here, so its repair names the same findings as before. (Speed itself is measured in
``bench/request_cpu.py``, never here.)"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.fakellm import plan_json

from .conftest import Anna

HEAVY = ("httpx", "httpcore", "h11", "anna_common.risk.assess", "anna_common.shell.grammar",
         "tree_sitter", "anna_common.risk.rules.packages", "annactl.planning.templates",
         "rich.syntax", "pygments", "anna_common.validate", "anna_common.risk.rules.base")
"""What the client needed before: its own validation and httpx; the offline templates (to
pick a form and to ask whether a model's plan records first) and pygments (the commands'
highlighting, which a pipe never shows); the validator and the rules' vocabulary, for
the assessment context alone (anna_common/risk/context.py)."""
PROBE = ("import sys; sys.argv = ['annactl', *sys.argv[1:]]; from annactl.cli import main; "
         f"code = main(); names = {HEAVY!r}; "
         "print('LOADED', *sorted(n for n in names if n in sys.modules), file=sys.stderr); "
         "raise SystemExit(code)")
REQUEST = "set volume to 9 in my app config"
EDIT = {"id": "edit", "description": "set volume",
        "command": "sed -i s/volume=3/volume=9/ ~/.config/app.conf",
        "risk_level": "LOW", "rollback_id": None, "requires_confirmation": True}


def _ask(anna: Anna) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, "ask", "--dry-run", "--no-templates",
                           REQUEST], env=anna.env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=False, timeout=90)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED"))
    return proc, line.split()[1:]


def test_a_plan_judged_by_the_daemon_loads_no_risk_engine_no_httpx_no_templates(
        anna: Anna) -> None:
    (anna.daemon.home / ".config").mkdir(parents=True, exist_ok=True)
    (anna.daemon.home / ".config" / "app.conf").write_text("volume=3\n")
    anna.llm.push(plan_json(goals=["Set volume to 9 in ~/.config/app.conf"],
                            command_plan=[EDIT]))
    proc, loaded = _ask(anna)
    assert proc.returncode == 0, proc.stderr
    assert "dry run" in proc.stdout + proc.stderr and "+volume=9" in proc.stdout + proc.stderr
    assert loaded == [], loaded
    assert len(anna.llm.chat_bodies()) == 1  # valid at once: no repair


def test_a_plan_the_daemon_refuses_is_repaired_with_the_findings_made_here(anna: Anna) -> None:
    (anna.daemon.home / ".config").mkdir(parents=True, exist_ok=True)
    (anna.daemon.home / ".config" / "app.conf").write_text("volume=3\n")
    broken = {**EDIT, "rollback_id": "no-such-rollback"}  # a dangling reference: invalid
    anna.llm.push(plan_json(goals=["Set volume to 9 in ~/.config/app.conf"],
                            command_plan=[broken]),
                  plan_json(goals=["Set volume to 9 in ~/.config/app.conf"],
                            command_plan=[EDIT]))
    proc, loaded = _ask(anna)
    assert proc.returncode == 0, proc.stderr
    bodies = anna.llm.chat_bodies()
    assert len(bodies) == 2, bodies  # the repair
    repair = json.dumps(bodies[1]["messages"][-1])
    assert "no-such-rollback" in repair, repair  # the finding names what was wrong
    assert "anna_common.risk.assess" in loaded, loaded  # validated here, as before
    assert "httpx" not in loaded


def test_a_final_plan_equal_to_the_one_stored_for_its_checks_is_not_judged_again(
        anna: Anna) -> None:
    """The refined plan is the one stored to run its checks: not judged again (its submit
    was its validation), and submitted once more as its revision, which makes the request's
    one preview (the plan stored for its checks was not previewed)."""
    import sqlite3

    from tests.waiting import WAIT_S

    (anna.daemon.home / ".config").mkdir(parents=True, exist_ok=True)
    (anna.daemon.home / ".config" / "app.conf").write_text("volume=3\n")
    plan = plan_json(goals=["Set volume to 9 in ~/.config/app.conf"],
                     necessary_checks=[{"id": "look", "description": "current setting",
                                        "command": "cat ~/.config/app.conf",
                                        "risk_level": "INFO", "required": True}],
                     command_plan=[EDIT])
    anna.llm.push(plan, plan)  # the refinement changes nothing
    proc, _loaded = _ask(anna)
    assert proc.returncode == 0, proc.stderr
    assert len(anna.llm.chat_bodies()) == 2  # the plan and its refinement
    assert "+volume=9" in proc.stdout + proc.stderr
    with sqlite3.connect(anna.daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        rows = db.execute("SELECT plan_id, kind FROM events ORDER BY id").fetchall()
    kinds = [kind for _id, kind in rows]
    assert kinds.count("plan_submitted") == 1 and kinds.count("plan_revised") == 1, kinds
    assert kinds.count("checks_run") == 1, kinds
    assert len({plan_id for plan_id, _kind in rows if plan_id}) == 1, rows
