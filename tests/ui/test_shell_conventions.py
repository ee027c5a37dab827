"""Issue 36.5: output where shells expect it. A read-only plan's answer (its steps' output
and one summary line) on stdout, the chrome on stderr, so ``annactl "…" > out.txt`` keeps
the answer; ``annactl`` alone prints help, exit 0; every command and group takes
``--json`` (a document, or a coded refusal saying why)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.daemonfix import make_plan

from .conftest import Anna

TABLE = "┏"
"""The first corner of a Rich table: chrome."""


def test_a_read_only_answer_goes_to_stdout_and_the_chrome_to_stderr(anna: Anna) -> None:
    big = anna.work / "big"
    big.mkdir()
    (big / "f.bin").write_bytes(b"x" * 100_000)
    anna.llm.push(json.dumps(make_plan([("look", f"du -a {big} | sort -n", "INFO")],
                                       goal="Find the big files")))
    proc = anna.run("--no-templates", "find the big files in my home")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # exactly du's lines (as they are: no indentation, nothing around them), then the summary
    assert [line.split("\t")[1] for line in lines[:2]] == [str(big / "f.bin"), str(big)]
    assert lines[2:] == ["The plan succeeded: all 1 steps finished with exit code 0."]
    assert TABLE not in proc.stdout and "Result:" not in proc.stdout
    # the chrome is still shown, on stderr: the plan, the progress, the result, the evaluation
    for chrome in (TABLE, "Find the big files", "[1/1] ✔ look", "Result: succeeded",
                   "Evaluation: goals met"):
        assert chrome in proc.stderr, chrome
    assert str(big / "f.bin") not in proc.stderr


def test_a_plan_that_changes_something_keeps_its_plan_on_stdout(anna: Anna) -> None:
    target = anna.work / "note.txt"
    target.write_text("old\n")
    plan = anna.plan_file(make_plan([("write", f"echo new > {target}", "LOW")]))
    proc = anna.run("apply", str(plan), "--yes")
    assert proc.returncode == 0, proc.stderr
    assert TABLE in proc.stdout and "Result: succeeded" in proc.stdout
    assert target.read_text() == "new\n"


def test_json_is_unchanged_for_a_read_only_plan(anna: Anna) -> None:
    (anna.work / "f.txt").write_text("hello\n")
    plan = anna.plan_file(make_plan([("look", f"cat {anna.work}/f.txt", "INFO")]))
    code, doc = anna.json("apply", str(plan))
    assert code == 0 and doc["status"] == "succeeded" and "hello" in json.dumps(doc["events"])


def test_annactl_alone_prints_help_and_exits_0(anna: Anna) -> None:
    proc = anna.run()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: annactl") and "Commands" in proc.stdout
    assert proc.stderr == ""


@pytest.mark.parametrize("group", ["policy", "fleet", "recipe", "audit"])
def test_a_group_alone_prints_its_help_or_a_document(anna: Anna, group: str) -> None:
    proc = anna.run(group)
    assert proc.returncode == 0 and proc.stdout.startswith(f"Usage: annactl {group}")
    code, doc = anna.json(group)
    assert code == 0 and doc["code"] == "OK" and doc["status"] == "help", doc
    assert doc["command"] == f"annactl {group}" and doc["commands"], doc
    assert all(c["name"] and c["help"] for c in doc["commands"])


def test_annactl_json_alone_is_the_help_document(anna: Anna) -> None:
    code, doc = anna.json()
    names = {c["name"] for c in doc["commands"]}
    assert code == 0 and doc["status"] == "help" and {"ask", "policy", "export"} <= names


def test_json_before_a_groups_command_reaches_the_command(anna: Anna) -> None:
    proc = anna.run("policy", "--json", "show")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["code"] == "OK" and "rules" in json.loads(proc.stdout)


@pytest.mark.parametrize(("command", "why"), [
    ("repl", "the REPL is a conversation typed at a terminal"),
    ("tui", "the TUI is a screen at a terminal"),
    ("mcp", "mcp speaks JSON-RPC on stdio"),
])
def test_commands_without_a_json_form_say_why(anna: Anna, command: str, why: str) -> None:
    code, doc = anna.json(command)
    assert code == 2 and doc["code"] == "USAGE_ERROR", doc
    assert doc["message"].startswith("--json does not apply: " + why), doc
    assert "No such option" not in doc["message"]


def test_export_json_carries_the_approval_and_the_playbook(anna: Anna) -> None:
    target = anna.work / "note.txt"
    plan = anna.plan_file(make_plan([("write", f"echo new > {target}", "LOW")]))
    code, declined = anna.json("apply", str(plan))  # stored, not run (no --yes)
    assert code == 4 and declined["plan_id"], declined
    plan_id = str(declined["plan_id"])
    code, doc = anna.json("export", plan_id, "--ansible", "--yes")
    assert code == 0 and doc["status"] == "exported" and doc["plan_id"] == plan_id, doc
    assert doc["approval"]["risk"] == "LOW" and doc["approval"]["confirmations"] == 1
    assert plan_id in doc["playbook"] and doc["output"] is None
    out = anna.work / "play.yml"
    code, doc = anna.json("export", plan_id, "--ansible", "--yes", "-o", str(out))
    assert code == 0 and doc["playbook"] is None and doc["output"] == str(out)
    assert plan_id in out.read_text()
    # without --yes there is nobody to ask: declined, as one document
    code, doc = anna.json("export", plan_id, "--ansible")
    assert code == 4 and doc["code"] == "DECLINED", doc
    assert not target.exists()


def _commands(group: Any, path: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = [(path, group)]
    ctx = type(group).context_class(group)
    for name in group.list_commands(ctx):
        sub: Any = group.get_command(ctx, name)
        if hasattr(sub, "list_commands"):  # a group (Typer may vendor its own click)
            found += _commands(sub, f"{path} {name}")
        else:
            found.append((f"{path} {name}", sub))
    return found


def test_every_command_and_group_takes_json() -> None:
    from annactl.app import command

    walked = _commands(command(), "annactl")
    assert len(walked) > 30  # the walk reached every group's commands
    missing = [path for path, cmd in walked
               if not any("--json" in getattr(p, "opts", ()) for p in cmd.params)]
    assert missing == []


@pytest.mark.parametrize(("shell", "where"), [("zsh", ".zfunc/_annactl"),
                                             ("bash", ".bash_completions/annactl.sh"),
                                             ("fish", ".config/fish/completions/annactl.fish")])
def test_completion_installs_for_the_shell_named(anna: Anna, shell: str, where: str) -> None:
    """Issue 36.9: ``--install-completion SHELL`` installs SHELL's (Typer ignored the name,
    and without a shell it could detect said "Shell None is not supported")."""
    home = anna.work / f"home-{shell}"
    home.mkdir()
    proc = anna.run("--install-completion", shell, extra_env={"HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{shell} completion installed in {home / where}")
    assert "_ANNACTL_COMPLETE" in (home / where).read_text()
    assert "None" not in proc.stdout + proc.stderr


def test_completion_for_an_unknown_shell_is_a_usage_error(anna: Anna) -> None:
    proc = anna.run("--show-completion", "tcsh")
    assert proc.returncode == 2 and "no completion for the shell 'tcsh'" in proc.stderr
    proc = anna.run("--show-completion", "fish")
    assert proc.returncode == 0 and proc.stdout.startswith("complete --command annactl")
