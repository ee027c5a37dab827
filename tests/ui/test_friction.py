"""Issue 36.8: friction follows the risk. One alias appended to the person's own
~/.bashrc is LOW through the real daemon (approved with one confirmation, previewed with
its diff, committed: the judge of the observed change agrees); an alias that shadows a
command stays HIGH and its typed word names the file; ``?`` at a y/N question shows what
the answers do instead of meaning No."""

from __future__ import annotations

from tests.daemonfix import make_plan

from .conftest import Anna
from .ptyrun import PtyProcess

ALIAS = "alias ll='ls -la'"


def test_one_appended_alias_is_low_and_lands(anna: Anna) -> None:
    rc = anna.daemon.home / ".bashrc"
    rc.write_text("# my rc\n")
    plan = anna.plan_file(make_plan([("alias", f'echo "{ALIAS}" >> ~/.bashrc', "LOW")],
                                    goal="Add ll"))
    code, out = anna.json("apply", str(plan), "--yes")  # --yes covers LOW: no word to type
    assert code == 0 and out["status"] == "succeeded", out
    step = out["annotated"]["steps"][0]
    assert step["final_risk"] == "LOW" and "appends one line to ~/.bashrc" in str(step)
    assert rc.read_text() == f"# my rc\n{ALIAS}\n"


def test_the_preview_shows_the_appended_line(anna: Anna) -> None:
    rc = anna.daemon.home / ".bashrc"
    rc.write_text("# my rc\n")
    plan = anna.plan_file(make_plan([("alias", f'echo "{ALIAS}" >> ~/.bashrc', "LOW")]))
    proc = anna.run("apply", str(plan))  # no terminal, no --yes: shown, then declined
    assert proc.returncode == 4, proc.stderr
    lines = [line.strip() for line in proc.stdout.splitlines()]
    assert f"+{ALIAS}" in lines and "# my rc" in lines, proc.stdout  # the diff, in context
    assert "Risk:  LOW" in proc.stdout and rc.read_text() == "# my rc\n"


def test_a_shadowing_alias_stays_high_and_names_the_file(anna: Anna) -> None:
    rc = anna.daemon.home / ".bashrc"
    rc.write_text("# my rc\n")
    plan = anna.plan_file(make_plan([("alias", "echo \"alias ls='rm -i'\" >> ~/.bashrc",
                                      "LOW")]))
    term = PtyProcess([*anna.argv, "apply", str(plan)], anna.env)
    term.expect(r"Run this HIGH plan\? \[y/N\]")
    term.send("?\r")  # help, then the same question again: not a No
    term.expect(r"y or yes: go ahead")
    term.expect(r"(?s)go ahead.*Run this HIGH plan\? \[y/N\]")
    term.send("y\r")
    term.expect(r"Type '~/.bashrc' to run it:")
    term.send("\r")
    assert term.wait() == 4
    assert rc.read_text() == "# my rc\n"
