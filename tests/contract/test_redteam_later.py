"""Issue 34 red-team review: places that run code later, and package-manager trust, in
spellings the first matrices missed.

Found on main at c47d713 (``bench/redteam.py``), each MEDIUM: dpkg's own configuration
(``/etc/dpkg/dpkg.cfg.d``: ``post-invoke=CMD`` runs as root at the next install),
logrotate, binfmt and tmpfiles drop-ins, ``/etc/gitconfig``, ``/etc/sudo.conf``, apt sources
and keys, the CA store; a copy *into* such a directory (``cp x.repo /etc/yum.repos.d/``: the
pattern named its files, the write named the directory); ``chown alice /usr/local/sbin`` (a
directory in root's PATH); ``update-alternatives --install/--set`` to a program in ``/tmp``
(now banned, as a hook program another user can write); apk's ``--keys-dir``, ``--root``,
``--repositories-file`` and ``--force-overwrite``; ``~/.bash_aliases`` (LOW: the issue's
``alias ls="rm -rf ~"``), which ``~/.bashrc`` sources.
"""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess
from anna_common.risk.rules.base import Code

CTX = {d: AssessContext(distro=d, home="/home/alice")
       for d in ("debian", "fedora", "suse", "arch", "alpine")}

HIGH = [
    ("debian", "echo 'post-invoke=/usr/bin/id' | sudo tee /etc/dpkg/dpkg.cfg.d/x",
     Code.PERSISTENCE, "/etc/dpkg/dpkg.cfg.d/x"),
    ("debian", "sudo tee -a /etc/dpkg/dpkg.cfg < /tmp/x", Code.PERSISTENCE, "dpkg.cfg"),
    ("debian", "sudo tee /etc/logrotate.d/x < /tmp/x", Code.PERSISTENCE, "logrotate.d"),
    ("arch", "sudo tee /etc/binfmt.d/x.conf < /tmp/x", Code.PERSISTENCE, "binfmt.d"),
    ("arch", "sudo tee /etc/tmpfiles.d/x.conf < /tmp/x", Code.PERSISTENCE, "tmpfiles.d"),
    ("arch", "sudo cp /tmp/g /etc/gitconfig", Code.PERSISTENCE, "/etc/gitconfig"),
    ("arch", "echo 'Path askpass /tmp/x' | sudo tee -a /etc/sudo.conf", Code.PERSISTENCE,
     "/etc/sudo.conf"),
    ("debian", "sudo cp /tmp/ca.crt /usr/local/share/ca-certificates/", Code.PERSISTENCE,
     "ca-certificates"),
    ("debian", "sudo cp /tmp/k.gpg /etc/apt/trusted.gpg.d/", Code.PERSISTENCE,
     "trusted.gpg.d"),
    ("fedora", "sudo cp x.repo /etc/yum.repos.d/", Code.PERSISTENCE, "yum.repos.d"),
    ("debian", "echo 'deb http://example.org/debian stable main' | sudo tee "
     "/etc/apt/sources.list.d/x.list", Code.PERSISTENCE, "sources.list.d"),
    ("arch", "echo 'alias ls=\"rm -rf ~\"' >> ~/.bash_aliases", Code.PERSISTENCE,
     "~/.bash_aliases"),
    ("debian", "sudo chown alice /usr/local/sbin", Code.SYSTEM_PERMISSIONS, "root's PATH"),
    ("debian", "sudo chmod 0777 /usr/local/bin", Code.SYSTEM_PERMISSIONS, "/usr/local/bin"),
    ("debian", "sudo update-alternatives --install /usr/bin/editor editor /usr/bin/vim.basic 50",
     Code.EMBEDDED_SHELL, "--install"),
    ("debian", "sudo update-alternatives --set editor \"$X\"", Code.SYSTEM_WRITE, "--set"),
    ("alpine", "sudo apk --keys-dir /tmp/k add x", Code.UNTRUSTED_BUILD, "--keys-dir"),
    ("alpine", "sudo apk add --keys-dir=/tmp/k x", Code.UNTRUSTED_BUILD, "--keys-dir"),
    ("alpine", "sudo apk --root /tmp/r add x", Code.UNTRUSTED_BUILD, "--root"),
    ("alpine", "sudo apk --repositories-file /tmp/r add x", Code.UNTRUSTED_BUILD,
     "--repositories-file"),
    ("alpine", "sudo apk -X http://example.org/ add x", Code.UNTRUSTED_BUILD, "--repository"),
    ("alpine", "sudo apk add --force-overwrite x", Code.UNTRUSTED_BUILD, "--force-overwrite"),
    ("debian", "sudo add-apt-repository ppa:someone/ppa", Code.UNTRUSTED_BUILD, "repositories"),
    ("debian", "sudo add-apt-repository 'deb http://example.org/ stable main'",
     Code.UNTRUSTED_BUILD, "keys"),
    ("debian", "sudo apt-key add /tmp/k", Code.UNTRUSTED_BUILD, "apt-key add"),
    ("debian", "sudo apt-key adv --recv-keys 0xDEADBEEF", Code.UNTRUSTED_BUILD, "adv"),
    ("fedora", "sudo rpmbuild -bb /tmp/x.spec", Code.SCRIPT_FILE, "spec file"),
    ("debian", "sudo pip install --index-url http://example.org/simple x",
     Code.UNTRUSTED_BUILD, "example.org"),
    ("debian", "sudo pip3 install -i http://example.org/ x", Code.UNTRUSTED_BUILD, "-i"),
    ("debian", "sudo pip install git+http://example.org/x.git", Code.UNTRUSTED_BUILD, "git+"),
    ("debian", "sudo pip install /tmp/pkg", Code.UNTRUSTED_BUILD, "/tmp/pkg"),
    ("debian", "sudo gpg --no-default-keyring --keyring /etc/apt/trusted.gpg.d/x.gpg "
     "--import /tmp/k", Code.UNTRUSTED_BUILD, "trusted.gpg.d"),
    ("debian", "curl -fsSL http://example.org/key | sudo gpg --dearmor -o "
     "/usr/share/keyrings/x.gpg", Code.UNTRUSTED_BUILD, "/usr/share/keyrings/x.gpg"),
    ("debian", "sudo gpg --dearmor --output=/etc/apt/keyrings/x.gpg k.asc",
     Code.UNTRUSTED_BUILD, "/etc/apt/keyrings/x.gpg"),
    ("fedora", "sudo dnf config-manager setopt repo.gpgcheck=0", Code.UNTRUSTED_BUILD,
     "gpgcheck=0"),
    ("fedora", "sudo dnf5 config-manager setopt pluginpath=/usr/lib/p", Code.EMBEDDED_SHELL,
     "pluginpath"),
]


@pytest.mark.parametrize(("distro", "command", "code", "words"), HIGH)
def test_a_place_that_runs_code_later_is_high(distro: str, command: str, code: Code,
                                              words: str) -> None:
    verdict = assess(command, CTX[distro])
    assert verdict.risk == RiskLevel.HIGH, (command, verdict.reasons)
    assert code in verdict.codes, verdict.codes
    assert any(words in r for r in verdict.reasons), verdict.reasons


BANNED = [
    ("debian", "sudo update-alternatives --install /usr/bin/editor editor /tmp/x 100", "/tmp/x"),
    ("debian", "sudo update-alternatives --quiet --set editor /tmp/x", "/tmp/x"),
    ("debian", "sudo update-alternatives --set editor /home/bob/x", "/home/bob/x"),
    ("fedora", "sudo alternatives --set java /tmp/java", "/tmp/java"),
]


@pytest.mark.parametrize(("distro", "command", "path"), BANNED)
def test_an_alternative_another_user_can_write_is_banned(distro: str, command: str,
                                                         path: str) -> None:
    verdict = assess(command, CTX[distro])
    assert verdict.banned, (command, verdict.reasons)
    assert Code.BAN_UNTRUSTED_CODE in verdict.codes
    assert any(path in r and "another user can write" in r for r in verdict.reasons)


ORDINARY = [
    ("debian", "update-alternatives --query editor", RiskLevel.INFO),
    ("debian", "update-alternatives --display editor", RiskLevel.INFO),
    ("debian", "sudo update-alternatives --auto editor", RiskLevel.MEDIUM),
    ("debian", "sudo update-alternatives --remove editor /usr/bin/nano", RiskLevel.MEDIUM),
    ("debian", "sudo install -m755 x /usr/local/bin/x", RiskLevel.MEDIUM),
    ("debian", "sudo cp nginx.conf /etc/nginx/", RiskLevel.MEDIUM),
    ("alpine", "sudo apk add vim", RiskLevel.MEDIUM),
    ("alpine", "sudo apk --root / add vim", RiskLevel.MEDIUM),
    ("debian", "apt-key list", RiskLevel.INFO),
    ("debian", "sudo pip install x", RiskLevel.MEDIUM),
    ("debian", "gpg -o /tmp/x.gpg --dearmor k.asc", RiskLevel.MEDIUM),
    ("debian", "gpg --verify x.sig", RiskLevel.MEDIUM),
    ("fedora", "sudo dnf config-manager setopt fastestmirror=1", RiskLevel.MEDIUM),
    ("debian", "pip install --user -i http://example.org/ x", RiskLevel.LOW),
    ("debian", "add-apt-repository --list", RiskLevel.INFO),
]


@pytest.mark.parametrize(("distro", "command", "most"), ORDINARY)
def test_ordinary_neighbours_stay_where_they_were(distro: str, command: str,
                                                  most: RiskLevel) -> None:
    verdict = assess(command, CTX[distro])
    assert verdict.risk <= most, (command, verdict.reasons)
    assert not verdict.banned
