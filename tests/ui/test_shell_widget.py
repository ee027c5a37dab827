"""Issue 36.4: the shell widget. A real interactive bash in tmux loads ``annactl
shell-integration bash``; a request typed on its prompt becomes, on Alt-a, a command line with
Anna's risk beside it, which runs only when the person presses Enter. zsh and fish are tried
the same way when they are installed. The line's rules are checked on annotated plans."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from anna_common.findings import AnnotatedPlan
from annactl.commands.prepared import Prepared
from annactl.commands.suggest import command_line
from tests.daemonfix import make_plan
from tests.fakellm import Reply

from .conftest import Anna
from .plans import annotate_dict, plan_dict
from .tmuxrun import Tmux

RC = {
    "bash": ("bash", "PS1='$ '\neval \"$(annactl shell-integration bash)\"\n",
             ["bash", "--noprofile", "--rcfile", "{rc}", "-i"]),
    "zsh": ("zsh", "PS1='$ '\neval \"$(annactl shell-integration zsh)\"\n",
            ["env", "ZDOTDIR={dir}", "zsh", "-i"]),
    "fish": ("fish", "function fish_prompt; echo -n '$ '; end\n"
             "annactl shell-integration fish | source\n",
             ["fish", "--no-config", "-C", "source {rc}", "-i"]),
}


def _shell(anna: Anna, shell: str, runs: list[Tmux]) -> Tmux:
    program, rc_text, argv = RC[shell]
    home = anna.work / f"{shell}-home"
    home.mkdir()
    bin_dir = home / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "annactl"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m annactl.cli \"$@\"\n")
    wrapper.chmod(0o755)
    rc = home / (".zshrc" if shell == "zsh" else "rc")
    rc.write_text(rc_text)
    env = {**anna.env, "PATH": f"{bin_dir}:{anna.env['PATH']}", "ANNA_TEMPLATES": "false",
           "HOME": str(home), "HISTFILE": str(home / "history")}
    argv = [a.replace("{rc}", str(rc)).replace("{dir}", str(home)) for a in argv]
    assert shutil.which(program)
    run = Tmux(argv, env, anna.work, size=(160, 30))
    runs.append(run)
    run.wait_for(r"(?m)^\$$")
    return run


@pytest.mark.tmux
@pytest.mark.parametrize("shell", [
    "bash",
    pytest.param("zsh", marks=pytest.mark.skipif(shutil.which("zsh") is None,
                                                 reason="zsh is not installed")),
    pytest.param("fish", marks=pytest.mark.skipif(shutil.which("fish") is None,
                                                  reason="fish is not installed")),
])
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_alt_a_puts_the_command_on_the_line_and_enter_runs_it(
        anna: Anna, tmux_runs: list[Tmux], shell: str) -> None:
    target = anna.work / f"greeting-{shell}"
    plan = make_plan([("write", f"echo hello > {target}", "LOW")], goal="Write the greeting")
    anna.llm.push(Reply(json.dumps(plan)),
                  Reply(json.dumps({"answer": "Firefox uses the most.", "citations": []})))
    run = _shell(anna, shell, tmux_runs)
    run.type("write hello into the greeting file")
    run.keys("M-a")
    screen = run.wait_for(r"# anna: LOW · annactl apply \w+")
    assert f"$ echo hello > {target}" in screen
    assert "write hello into" not in screen  # the request was replaced
    assert not target.exists()  # placed, not run
    run.keys("Enter")
    run.wait_for(r"(?m)^\$$")
    assert target.read_text() == "hello\n"  # the person ran it
    run.type("what uses my memory?")
    run.keys("M-a")
    run.wait_for(r"\$ # anna: Firefox uses the most\.")
    history = anna.run("history", "--json")
    assert json.loads(history.stdout)["plans"][0]["status"] != "submitted"


def _line(annotated: AnnotatedPlan, *, root: bool = False) -> str:
    return command_line(Prepared("p1", annotated.digest, annotated), root=root)


def test_the_line_keeps_what_runs_visible() -> None:
    two = annotate_dict(plan_dict([("a", "mkdir -p /tmp/anna-ui/x", "LOW"),
                                   ("b", "pacman -S --noconfirm htop", "MEDIUM")]))
    assert _line(two) == ("mkdir -p /tmp/anna-ui/x && sudo pacman -S --noconfirm htop  "
                          "# anna: MEDIUM · annactl apply p1 runs it previewed, undoable")
    assert _line(two, root=True).startswith("mkdir -p /tmp/anna-ui/x && pacman -S")
    hidden = annotate_dict(plan_dict([("a", "echo one\nrm -rf ~/x", "LOW")]))
    assert _line(hidden) == ("# anna: the plan's commands do not fit on one line; see it "
                             "with annactl show p1, run it with annactl apply p1")
    banned = annotate_dict(plan_dict([("wipe", "rm -rf /", "LOW")]))
    assert _line(banned).startswith("# anna: BANNED, not run: ")
    answer = annotate_dict(plan_dict([], notes="Line one.\nLine two \x1b[2J\u202e[red]x[/]"))
    line = _line(answer)
    assert line == "# anna: Line one. Line two [red]x[/]"
    assert not re.search(r"[\x00-\x1f\x7f\u202e]", line)


def test_each_shell_gets_its_binding_and_bad_names_a_usage_error() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "annactl.cli", *args],
                              capture_output=True, text=True, timeout=60, check=False)

    assert "bind -x '\"\\ea\": _anna_widget'" in run("shell-integration", "bash").stdout
    assert "zle -N _anna_widget" in run("shell-integration", "zsh").stdout
    assert "bind \\ea _anna_widget" in run("shell-integration", "fish").stdout
    bad = run("shell-integration", "tcsh")
    assert bad.returncode == 2 and "no widget for 'tcsh'" in bad.stderr
    syntax = subprocess.run(["bash", "-n"], input=run("shell-integration", "bash").stdout,
                            capture_output=True, text=True, timeout=30, check=False)
    assert syntax.returncode == 0, syntax.stderr

