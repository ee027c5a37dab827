"""Issue 34, "Also": destructive live commands are HIGH, with the reason.

Found on main at 8a1b4b5, each MEDIUM: ``pkill -9 -u root``, ``journalctl
--vacuum-size=1``, removing openssh-server or apparmor, ``virsh undefine
--remove-all-storage``, ``systemctl enable --now /home/x.service``. They run live (nothing
is captured) and no undo brings them back: killing every process of a user, vacuuming the
journal, removing the remote-access or MAC package in any family's spelling, deleting VM
storage, enabling a unit from a file another user can write.
"""

from __future__ import annotations

import shlex

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess
from anna_common.risk.rules.base import Code

CTX = {d: AssessContext(distro=d, home="/home/alice")
       for d in ("debian", "fedora", "suse", "arch", "alpine", "gentoo")}

KILL = Code.KILL_CRITICAL
PKG = Code.CRITICAL_PACKAGE

DESTRUCTIVE = [
    # every process of a user, or of everyone
    ("arch", "sudo pkill -9 -u root", KILL, "every process of root"),
    ("arch", "sudo pkill -u root", KILL, "every process of root"),
    ("arch", "pkill -KILL -u alice", KILL, "every process of alice"),
    ("arch", "sudo pkill --signal 9 --uid 0", KILL, "every process of 0"),
    ("arch", "sudo pkill --euid=root", KILL, "every process of root"),
    ("arch", "sudo pkill -U 1000", KILL, "every process of 1000"),
    ("arch", "sudo pkill -t pts/0", KILL, "every process of pts/0"),
    ("arch", "sudo killall -u root", KILL, "every process of root"),
    ("arch", "sudo killall -9 --user alice", KILL, "every process of alice"),
    ("arch", "sudo skill -KILL -u alice", KILL, "every process of alice"),
    ("arch", "sudo pkill -9 .", KILL, "matches every process name"),
    ("arch", "sudo pkill -f '.*'", KILL, "matches every process name"),
    ("arch", "sudo killall -r '.*'", KILL, "matches every process name"),
    ("arch", "sudo pkill -v sshd", KILL, "every process but sshd"),
    ("arch", "sudo killall5 -9", KILL, "every process"),
    # the journal
    ("arch", "sudo journalctl --vacuum-size=1", Code.HISTORY_TAMPER, "deletes archived logs"),
    ("arch", "sudo journalctl --vacuum-size 1K", Code.HISTORY_TAMPER, "deletes archived logs"),
    ("arch", "sudo journalctl --vacuum-time=1s", Code.HISTORY_TAMPER, "archived logs"),
    ("arch", "sudo journalctl --vacuum-files=1", Code.HISTORY_TAMPER, "archived logs"),
    ("arch", "sudo journalctl --vacuum-t=1s", Code.HISTORY_TAMPER, "archived logs"),
    ("arch", "sudo journalctl --rotate --vacuum-time=1s", Code.HISTORY_TAMPER, "archived"),
    # remote access and MAC, any family
    ("debian", "sudo apt remove openssh-server", PKG, "remote access (SSH)"),
    ("debian", "sudo apt-get purge -y openssh-server", PKG, "remote access (SSH)"),
    ("debian", "sudo apt-get install openssh-server-", PKG, "remote access (SSH)"),
    ("debian", "sudo apt remove 'openssh-*'", PKG, "remote access (SSH)"),
    ("debian", "sudo apt remove ssh", PKG, "remote access (SSH)"),
    ("debian", "sudo dpkg -r dropbear-bin", PKG, "remote access (SSH)"),
    ("debian", "sudo apt remove apparmor", PKG, "mandatory access control (AppArmor)"),
    ("debian", "sudo dpkg --purge apparmor", PKG, "mandatory access control (AppArmor)"),
    ("debian", "sudo apt-get remove --purge selinux-basics", PKG, "(SELinux)"),
    ("fedora", "sudo dnf remove openssh-server", PKG, "remote access (SSH)"),
    ("fedora", "sudo dnf erase selinux-policy-targeted", PKG, "(SELinux)"),
    ("fedora", "sudo yum remove openssh-server", PKG, "remote access"),
    ("fedora", "sudo rpm -e --nodeps selinux-policy", PKG, "(SELinux)"),
    ("fedora", "sudo dnf remove firewalld", PKG, "the firewall"),
    ("suse", "sudo zypper rm openssh-server", PKG, "remote access (SSH)"),
    ("suse", "sudo zypper remove apparmor-parser", PKG, "(AppArmor)"),
    ("arch", "sudo pacman -Rns apparmor", PKG, "(AppArmor)"),
    ("arch", "sudo pacman -R audit", PKG, "the audit system"),
    ("alpine", "sudo apk del openssh-server", PKG, "remote access (SSH)"),
    ("gentoo", "sudo emerge --unmerge openssh", PKG, "remote access (SSH)"),
    # VM storage
    ("arch", "sudo virsh undefine vm1 --remove-all-storage", Code.DISK_TOOL,
     "deletes a virtual machine's storage"),
    ("arch", "sudo virsh undefine --remove-all-storage vm1", Code.DISK_TOOL, "storage"),
    ("arch", "sudo virsh undefine vm1 --storage vda", Code.DISK_TOOL, "storage"),
    ("arch", "sudo virsh undefine vm1 --wipe-storage --remove-all-storage", Code.DISK_TOOL,
     "storage"),
    ("arch", "sudo virsh vol-delete disk.qcow2 --pool default", Code.DISK_TOOL, "storage"),
    ("arch", "sudo virsh vol-wipe disk.qcow2 --pool default", Code.DISK_TOOL, "storage"),
    ("arch", "sudo virsh pool-delete default", Code.DISK_TOOL, "storage"),
    # units from a file another user can write
    ("arch", "sudo systemctl enable --now /home/x.service", Code.PERSISTENCE,
     "another user may write it"),
    ("arch", "sudo systemctl enable /home/alice/x.service", Code.PERSISTENCE,
     "outside the system's unit directories"),
    ("arch", "sudo systemctl enable ~/x.service", Code.PERSISTENCE, "another user"),
    ("arch", "sudo systemctl --runtime enable /tmp/x.service", Code.PERSISTENCE, "another"),
    ("arch", "sudo systemctl start /var/tmp/x.service", Code.PERSISTENCE, "another user"),
    ("arch", "sudo systemctl link /home/alice/x.service", Code.PERSISTENCE, "another user"),
    ("arch", "sudo systemctl enable --now /opt/app/x.service", Code.PERSISTENCE,
     "outside the system's unit directories"),
]


@pytest.mark.parametrize(("distro", "command", "code", "words"), DESTRUCTIVE)
def test_a_destructive_live_command_is_high_with_its_reason(distro: str, command: str,
                                                            code: Code, words: str) -> None:
    for text in (command, f"bash -c {shlex.quote(command)}"):
        verdict = assess(text, CTX[distro])
        assert verdict.risk == RiskLevel.HIGH, (text, verdict.reasons)
        assert str(code) in verdict.codes, (text, verdict.codes)
        assert any(words in r for r in verdict.reasons), (text, words, verdict.reasons)
        assert verdict.confirm_word, text


@pytest.mark.parametrize(("distro", "command", "risk"), [
    ("arch", "pkill firefox", RiskLevel.MEDIUM),
    ("arch", "pkill -u alice firefox", RiskLevel.MEDIUM),
    ("arch", "pkill -f 'python3 server.py'", RiskLevel.MEDIUM),
    ("arch", "pkill -x .", RiskLevel.MEDIUM),
    ("arch", "sudo killall -s 9 firefox", RiskLevel.MEDIUM),
    ("arch", "pgrep -u root", RiskLevel.INFO),
    ("arch", "journalctl -u sshd --since today", RiskLevel.INFO),
    ("arch", "sudo journalctl --rotate", RiskLevel.MEDIUM),
    ("debian", "sudo apt install openssh-server", RiskLevel.MEDIUM),
    ("debian", "sudo apt remove nginx", RiskLevel.MEDIUM),
    ("debian", "sudo apt autoremove", RiskLevel.MEDIUM),
    ("fedora", "sudo dnf remove httpd", RiskLevel.MEDIUM),
    ("arch", "sudo virsh undefine vm1", RiskLevel.MEDIUM),
    ("arch", "virsh list --all", RiskLevel.INFO),
    ("arch", "sudo systemctl enable --now nginx", RiskLevel.MEDIUM),
    ("arch", "sudo systemctl enable /etc/systemd/system/backup.timer", RiskLevel.MEDIUM),
    ("arch", "systemctl --user enable --now ~/.config/systemd/user/x.service", RiskLevel.LOW),
])
def test_their_everyday_neighbours_keep_their_tier(distro: str, command: str,
                                                   risk: RiskLevel) -> None:
    verdict = assess(command, CTX[distro])
    assert verdict.risk == risk, (command, verdict.reasons)
