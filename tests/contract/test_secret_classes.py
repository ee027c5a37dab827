"""Secrets by content class: a backup or copy of a secret file, a service's credentials and
Anna's own state are secret reads (never INFO, never run unasked); a variable that names the
programs or libraries that run, filled from input, is code.
"""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess
from anna_common.risk.secretpaths import originals

CTX = AssessContext(distro="arch", home="/home/alice")

SECRET_READS: dict[str, tuple[str, ...]] = {
    "backups and copies of secret files": (
        "cat /etc/shadow.pacsave", "cat /etc/shadow.pacnew", "sudo cat /etc/gshadow-",
        "cat /var/backups/shadow.bak", "cat /var/backups/gshadow.bak",
        "cat /etc/shadow.dpkg-old", "head -1 /etc/shadow~", "cat /etc/shadow.bak.1.gz",
        "cat ~/.ssh/id_rsa.bak", "cat ~/.ssh/.id_ed25519.swp",
        "cat /etc/ssl/private/server.key.old", "zcat /etc/shadow.gz",
        "cp /etc/shadow.pacsave /tmp/s", "grep root /etc/gshadow.rpmsave",
        "cat /etc/sudoers.pacnew", "base64 /etc/shadow.orig",
    ),
    "service credential files": (
        "cat /etc/mysql/debian.cnf", "sudo cat /etc/sssd/sssd.conf", "cat ~/.my.cnf",
        "cat /etc/postfix/sasl_passwd", "cat /etc/ldap.secret", "cat /etc/nslcd.conf",
        "cat /etc/samba/smbpasswd", "cat /etc/nginx/.htpasswd", "cat /etc/davfs2/secrets",
        "cat /etc/rsyncd.secrets", "cat /etc/openvpn/client/auth.txt",
        "cat /etc/credstore/db.password", "cat /etc/letsencrypt/live/example.com/privkey.pem",
    ),
    "Anna's own state": (
        "cat /var/lib/anna/journal.sqlite", "sqlite3 /var/lib/anna/journal.sqlite .dump",
        "cp -r /var/lib/anna /tmp/a", "cat ~/.local/state/anna/annad/journal.sqlite",
        "tar czf /tmp/a.tgz /var/lib/anna", "cat /var/lib/anna/backups/1/etc/shadow",
        "grep -r pass /var/lib/anna/backups", "strings /var/lib/anna/journal.sqlite",
        "sudo cat /root/.local/state/anna/x", "cat /home/bob/.local/state/anna/history.db",
    ),
}
"""Class → reads that must be at least HIGH and never read-only."""

NOT_SECRET = (
    "cat /etc/passwd", "cat /etc/passwd-", "cat /etc/hosts.bak", "cat /etc/pacman.conf.pacnew",
    "cat .env.example", "tail /var/log/pacman.log", "ls /var/backups",
    "cat /etc/mysql/my.cnf", "cat /etc/group-",
)
"""Look-alikes that stay ordinary reads."""

CODE_FROM_INPUT = (
    "read PATH; ls", "IFS= read -r LD_PRELOAD; ls", "mapfile -t BASH_ENV < /tmp/x; bash x",
    "readarray ENV < /tmp/x; sh", "printf -v PATH %s \"$1\"; ls", "read -r PAGER; man ls",
    "read -r GIT_SSH_COMMAND; git fetch", "declare -n p=PATH; read -r p; ls",
    "local -n p=LD_PRELOAD; read p; ls", "read -r PROMPT_COMMAND", "read -a PYTHONPATH; python3 x",
    "echo /tmp | read PATH; ls",
)
"""Variables that name programs or libraries, filled from input."""


@pytest.mark.parametrize(("cls", "command"), [(c, x) for c, xs in SECRET_READS.items()
                                              for x in xs])
def test_secret_by_content_class_is_a_secret_read(cls: str, command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == RiskLevel.HIGH and not verdict.read_only, (cls, verdict.codes)
    assert "SECRET_READ" in verdict.codes, (cls, verdict.codes)


def test_every_class_has_ten_variants() -> None:
    assert all(len(v) >= 10 for v in SECRET_READS.values())
    assert len(CODE_FROM_INPUT) >= 10


@pytest.mark.parametrize("command", NOT_SECRET)
def test_look_alikes_are_not_secret(command: str) -> None:
    assert "SECRET_READ" not in assess(command, CTX).codes


@pytest.mark.parametrize("command", CODE_FROM_INPUT)
def test_code_variable_from_input_is_high(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == RiskLevel.HIGH, verdict.codes


def test_plain_variable_from_input_stays_low() -> None:
    assert assess("read -r name; echo \"$name\"", CTX).risk == RiskLevel.LOW


def test_originals_of_copy_names() -> None:
    assert "/etc/shadow" in originals("/etc/shadow.pacsave")
    assert "/etc/shadow" in originals("/var/backups/shadow.bak")
    assert "/home/a/.ssh/id_rsa" in originals("/home/a/.ssh/.id_rsa.swp")
    assert originals("/etc/shadow") == []
