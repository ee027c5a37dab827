"""Issue 34 item 5: an interpreter's file reads are judged like ``cat`` of the same paths.

Found on main at 8a1b4b5: ``sudo python3 -c "print(open('/etc/shadow').read())"`` was LOW (9
of 12 secret forms of the review), and with ``--yes`` root's password hashes reached the model
in the evaluation request. Now what Python code reads (its syntax tree: every path it holds,
constants folded, ``exec`` strings, ``sys.argv``) and what Perl, Ruby, Node, PHP, Lua, Tcl and
awk code names (their path tokens; awk's ``getline < "F"``) is judged as ``cat`` of it: a
secret is HIGH with SECRET_READ and the path; a path only known at run time is a read of
anything (MEDIUM, as ``cat "$f"``).
"""

from __future__ import annotations

import shlex

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess
from anna_common.risk.rules.base import Code

CTX = AssessContext(distro="arch", home="/home/alice")

SECRET_FORMS = [
    # the twelve forms: one secret file each, every way of handing the code over
    ("sudo python3 -c \"print(open('/etc/shadow').read())\"", "/etc/shadow"),
    ("sudo python3 -c \"import pathlib; print(pathlib.Path('/etc/gshadow').read_text())\"",
     "/etc/gshadow"),
    ("sudo python3 -c \"p='/etc/sudoers'; print(open(p).read())\"", "/etc/sudoers"),
    ("sudo python3 -c \"import os; print(open(os.path.join('/etc', 'ssh', "
     "'ssh_host_ed25519_key')).read())\"", "/etc/ssh/ssh_host_ed25519_key"),
    ("sudo python3 -c \"print(open('/etc/' + 'sha' + 'dow').read())\"", "/etc/shadow"),
    ("sudo python3 -c \"exec(\\\"print(open('/root/.ssh/id_rsa').read())\\\")\"",
     "/root/.ssh/id_rsa"),
    ("sudo python3 - <<'EOF'\nprint(open('/etc/shadow').read())\nEOF", "/etc/shadow"),
    ("sudo python3 <<< \"print(open('/etc/security/opasswd').read())\"",
     "/etc/security/opasswd"),
    ("echo \"import io; print(io.open('/var/lib/iwd/home.psk').read())\" | sudo python3",
     "/var/lib/iwd/home.psk"),
    ("sudo perl -e 'open(my $f, \"<\", \"/etc/shadow\"); print <$f>'", "/etc/shadow"),
    ("node -e 'console.log(require(\"fs\").readFileSync(\"/home/alice/.aws/credentials\","
     "\"utf8\"))'", "/home/alice/.aws/credentials"),
    ("sudo awk 'BEGIN{while((getline l < \"/etc/shadow\")>0) print l}'", "/etc/shadow"),
]


@pytest.mark.parametrize(("command", "path"), SECRET_FORMS)
def test_an_interpreter_reading_a_secret_is_high_naming_it(command: str, path: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == RiskLevel.HIGH, (command, verdict.reasons)
    assert str(Code.SECRET_READ) in verdict.codes, (command, verdict.codes)
    named = (path, path.replace("/home/alice", "~"))
    assert any("code reads secret material" in r and any(n in r for n in named)
               for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("command", [
    "sudo python3 -c \"import codecs; print(codecs.open('/etc/shadow').read())\"",
    "sudo python3 -c \"import os; print(os.read(os.open('/etc/shadow', os.O_RDONLY), 99))\"",
    "sudo python3 -c \"import linecache; print(linecache.getlines('/etc/shadow'))\"",
    "sudo python3 -c \"import fileinput; [print(x) for x in fileinput.input('/etc/shadow')]\"",
    "sudo python3 -c \"import glob; [print(open(f).read()) for f in glob.glob('/etc/sha*')]\"",
    "sudo python3 -c \"f = f'/etc/{\\\"shadow\\\"}'; print(open(f).read())\"",
    "sudo python3 -Ic \"print(open('/etc/shadow').read())\"",
    "sudo python3 -E -c \"print(open('/etc/shadow').read())\"",
    "sudo env python3 -c \"print(open('/etc/shadow').read())\"",
    "sudo bash -c 'python3 -c \"print(open(\\\"/etc/shadow\\\").read())\"'",
    "sudo python3 -c \"import shutil; shutil.copyfile('/etc/shadow', '/tmp/x')\"",
    "python3 -c \"print(open('/home/alice/.ssh/id_ed25519').read())\"",
    "sudo ruby -e 'puts File.read(\"/etc/shadow\")'",
    "sudo php -r 'echo file_get_contents(\"/etc/shadow\");'",
    "sudo lua -e 'print(io.open(\"/etc/shadow\"):read(\"a\"))'",
    "sudo tclsh <<< 'puts [read [open /etc/shadow]]'",
    "sudo gawk 'BEGIN{getline l < \"/etc/shadow\"; print l}'",
])
def test_more_spellings_of_the_same_read(command: str) -> None:
    for text in (command, f"sh -c {shlex.quote(command)}"):
        verdict = assess(text, CTX)
        assert verdict.risk == RiskLevel.HIGH, (text, verdict.reasons)
        assert str(Code.SECRET_READ) in verdict.codes, (text, verdict.reasons)


@pytest.mark.parametrize("command", [
    "sudo python3 -c 'import os; print(open(os.environ[\"F\"]).read())'",
    "sudo python3 -c \"import sys; name = sys.stdin.readline(); print(open(name).read())\"",
    "sudo python3 -c \"import os; d = os.getcwd(); print(open(os.path.join('/etc', d)).read())\"",
    "sudo cat \"/etc/$X\"",
    "sudo cat \"/root/$D\"",
    "sudo cat \"/etc/ssh/$K\"",
])
def test_a_read_of_a_path_anna_cannot_see_is_a_read_of_anything(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk >= RiskLevel.MEDIUM, (command, verdict.reasons)
    assert str(Code.SECRET_READ) in verdict.codes, (command, verdict.codes)
    assert any("only known at run time" in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize(("command", "risk"), [
    ("python3 -c \"print(open('/etc/hostname').read())\"", RiskLevel.LOW),
    ("python3 -c \"import os; print(os.path.exists('/etc/shadow'))\"", RiskLevel.LOW),
    ("python3 -c \"print('/etc/shadow')\"", RiskLevel.LOW),
    ("python3 -c \"import sys; print(open(sys.argv[1]).read())\" /etc/hostname",
     RiskLevel.LOW),
    ("python3 -c \"import json,sys; print(json.load(sys.stdin)['x'])\"", RiskLevel.LOW),
    ("python3 -c \"import os; [print(f) for f in os.listdir('/etc')]\"", RiskLevel.LOW),
    ("awk -F: '{print $1}' /etc/passwd", RiskLevel.INFO),
    ("awk 'BEGIN{print \"/etc/shadow\"}'", RiskLevel.INFO),
    ("cat \"/home/$USER/.bashrc\"", RiskLevel.INFO),
    ("cat \"/proc/$PID/status\"", RiskLevel.INFO),
    ("cat \"/sys/class/net/$IF/address\"", RiskLevel.INFO),
])
def test_reads_that_reveal_nothing_keep_their_tier(command: str, risk: RiskLevel) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == risk, (command, verdict.reasons)
    assert str(Code.SECRET_READ) not in verdict.codes, verdict.reasons
