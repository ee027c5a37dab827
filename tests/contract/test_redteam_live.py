"""Issue 34 red-team review: destructive live commands in spellings the first matrix missed.

Found on main at c47d713 (``bench/redteam.py``), each MEDIUM: a unit glob walked past the
security ban (``systemctl stop 'ufw*'``, ``disable --now 'apparm?r'``) and the remote-access
guard (``'ssh*'``); ``invoke-rc.d`` was unknown and ``rc-update del NAME`` read its verb as the
name; ``pkill -P 1`` (every service PID 1 started) and ``fuser -k /`` (every process on the
root filesystem); package removal qualified or spelled as apt, dnf and zypper accept it
(``apparmor_``, ``'^openssh'``, ``:amd64``, ``=VERSION``, ``/RELEASE``, ``.x86_64``,
``dnf swap``, ``zypper in -- -NAME`` / ``'!NAME'`` / ``'~NAME'``); ``virsh -c URI undefine
--storage``.
"""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess
from anna_common.risk.rules.base import Code

CTX = {d: AssessContext(distro=d, home="/home/alice")
       for d in ("debian", "fedora", "suse", "arch", "alpine")}

BANNED = [
    ("arch", "sudo systemctl stop 'ufw*'", "ufw"),
    ("arch", "sudo systemctl disable --now 'apparm?r'", "apparmor"),
    ("arch", "sudo systemctl mask 'audit[d]'", "auditd"),
    ("arch", "sudo systemctl stop '*'", "switches off"),
    ("debian", "sudo service 'ufw*' stop", "ufw"),
    ("debian", "sudo invoke-rc.d ufw stop", "ufw"),
    ("alpine", "sudo rc-update del ufw default", "ufw"),
    ("fedora", "sudo chkconfig auditd off", "auditd"),
    ("debian", "sudo update-rc.d apparmor remove", "apparmor"),
]


@pytest.mark.parametrize(("distro", "command", "words"), BANNED)
def test_a_security_unit_in_a_new_spelling_is_banned(distro: str, command: str,
                                                     words: str) -> None:
    verdict = assess(command, CTX[distro])
    assert verdict.banned, (command, verdict.reasons)
    assert Code.BAN_SECURITY_DISABLE in verdict.codes
    assert any(words in r for r in verdict.reasons), verdict.reasons


HIGH = [
    ("debian", "sudo systemctl stop 'ssh*'", Code.CRITICAL_SERVICE, "ssh"),
    ("debian", "sudo invoke-rc.d ssh stop", Code.CRITICAL_SERVICE, "ssh"),
    ("alpine", "sudo rc-update del sshd", Code.CRITICAL_SERVICE, "sshd"),
    ("arch", "sudo pkill -9 -P 1", Code.KILL_CRITICAL, "every process of 1"),
    ("arch", "sudo pkill --parent=1", Code.KILL_CRITICAL, "every process of 1"),
    ("arch", "sudo fuser -k /", Code.KILL_CRITICAL, "filesystem of /"),
    ("arch", "sudo fuser -km /home", Code.KILL_CRITICAL, "/home"),
    ("arch", "virsh -c qemu:///system undefine vm --storage vda", Code.DISK_TOOL, "storage"),
    ("debian", "sudo apt-get install apparmor_", Code.CRITICAL_PACKAGE, "AppArmor"),
    ("debian", "sudo apt-get install vim ufw-", Code.CRITICAL_PACKAGE, "firewall"),
    ("debian", "sudo apt-get remove '^openssh'", Code.CRITICAL_PACKAGE, "SSH"),
    ("debian", "sudo apt-get remove 'openssh-serve.'", Code.CRITICAL_PACKAGE, "SSH"),
    ("debian", "sudo apt-get purge openssh-server:amd64", Code.CRITICAL_PACKAGE, "SSH"),
    ("debian", "sudo apt-get remove openssh-server=1:9.2p1-2", Code.CRITICAL_PACKAGE, "SSH"),
    ("debian", "sudo apt-get remove openssh-server/bookworm", Code.CRITICAL_PACKAGE, "SSH"),
    ("fedora", "sudo dnf swap openssh-server dropbear", Code.CRITICAL_PACKAGE, "SSH"),
    ("fedora", "sudo dnf remove openssh-server.x86_64", Code.CRITICAL_PACKAGE, "SSH"),
    ("suse", "sudo zypper in -- -openssh-server", Code.CRITICAL_PACKAGE, "SSH"),
    ("suse", "sudo zypper install '!openssh-server'", Code.CRITICAL_PACKAGE, "SSH"),
    ("suse", "sudo zypper in '~apparmor-parser'", Code.CRITICAL_PACKAGE, "AppArmor"),
    ("arch", "sudo pkill -9 -uroot", Code.KILL_CRITICAL, "every process of root"),
    ("arch", "sudo killall -uroot", Code.KILL_CRITICAL, "every process of root"),
    ("debian", "sudo apt-get remove openssh-{server,client}", Code.CRITICAL_PACKAGE, "SSH"),
    ("debian", "sudo aptitude remove ~nopenssh", Code.CRITICAL_PACKAGE, "SSH"),
    ("debian", "sudo aptitude purge '?name(openssh)'", Code.CRITICAL_PACKAGE, "SSH"),
    ("debian", "sudo apt remove '?name(openssh-server)'", Code.CRITICAL_PACKAGE, "SSH"),
    ("fedora", "sudo dnf remove -y openssh-server-9.0p1", Code.CRITICAL_PACKAGE, "SSH"),
]


@pytest.mark.parametrize(("distro", "command", "code", "words"), HIGH)
def test_a_destructive_live_spelling_is_high(distro: str, command: str, code: Code,
                                             words: str) -> None:
    verdict = assess(command, CTX[distro])
    assert verdict.risk == RiskLevel.HIGH, (command, verdict.reasons)
    assert code in verdict.codes, verdict.codes
    assert any(words in r for r in verdict.reasons), verdict.reasons


ORDINARY = [
    ("arch", "sudo systemctl restart 'nginx*'"), ("arch", "sudo systemctl stop 'nginx*'"),
    ("debian", "sudo invoke-rc.d nginx restart"), ("alpine", "sudo rc-update add nginx default"),
    ("arch", "pkill -P 4242 make"), ("arch", "sudo fuser -k /dev/ttyUSB0"),
    ("arch", "fuser -k 8080/tcp"), ("arch", "virsh --connect=qemu:///system undefine vm"),
    ("debian", "sudo apt-get install vim-gtk3"), ("debian", "sudo apt-get remove cowsay:amd64"),
    ("debian", "sudo apt-get install g++"), ("debian", "sudo apt-get remove '^cowsay'"),
    ("fedora", "sudo dnf swap vim-minimal vim-enhanced"), ("suse", "sudo zypper in vim"),
    ("arch", "pkill -ualice firefox"), ("fedora", "sudo dnf remove -y vim-9.0"),
    ("debian", "sudo aptitude remove ~ncowsay"),
]


@pytest.mark.parametrize(("distro", "command"), ORDINARY)
def test_ordinary_service_and_package_commands_stay_medium(distro: str, command: str) -> None:
    verdict = assess(command, CTX[distro])
    assert verdict.risk <= RiskLevel.MEDIUM, (command, verdict.reasons)
    assert not verdict.banned
