"""Issue 34 item 2: package managers' hook, configuration and trust options are HIGH, and a
program another user can write is banned (apt, dpkg, pacman, dnf/yum, rpm, zypper).

Found on main at 8a1b4b5: ``sudo apt-get -o APT::Update::Pre-Invoke::=CMD update`` (and
``-c FILE``, ``APT_CONFIG=``, ``DPkg::Post-Invoke``, ``Dir::Bin::dpkg``…) was MEDIUM, and
CMD ran as root, live: a sudoers grant landed and ``rollback`` could not remove it. The rpm
family had the same class (``rpm --eval '%(…)'``, ``--setopt=pluginpath=``, ``gpgcheck=0``,
``zypper -c``). Each spelling here is a row of the matrix: the verdict and the reason that
gives it (code and words), as given and behind the wrappers Anna sees through.
"""

from __future__ import annotations

import shlex

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess
from anna_common.risk.rules.base import Code

CTX = {"debian": AssessContext(distro="debian", home="/home/alice"),
       "fedora": AssessContext(distro="fedora", home="/home/alice"),
       "suse": AssessContext(distro="suse", home="/home/alice"),
       "arch": AssessContext(distro="arch", home="/home/alice")}

BAN = Code.BAN_UNTRUSTED_CODE
HOOK = Code.EMBEDDED_SHELL
OTHER = Code.UNTRUSTED_BUILD

# (distro, command, banned, code, words in the reason)
MATRIX = [
    # apt: hooks that run a program another user can write: banned
    ("debian", "sudo apt-get -o APT::Update::Pre-Invoke::=/tmp/x update", True, BAN,
     "runs /tmp/x as root, and another user can write it"),
    ("debian", "sudo apt-get -oAPT::Update::Pre-Invoke::=/tmp/x update", True, BAN, "/tmp/x"),
    ("debian", "sudo apt-get --option APT::Update::Post-Invoke-Success::=/tmp/x update", True,
     BAN, "/tmp/x"),
    ("debian", "sudo apt-get --option=DPkg::Post-Invoke::=~/hook install vim", True, BAN,
     "another user can write it"),
    ("debian", "sudo apt -qy -o 'Dpkg::Pre-Invoke::=sh /var/tmp/h.sh' install vim", True, BAN,
     "/var/tmp/h.sh"),
    ("debian", "sudo apt -o Dpkg::Pre-Install-Pkgs::=/home/bob/x install vim", True, BAN,
     "/home/bob/x"),
    ("debian", "sudo apt-get -o Dir::Bin::dpkg=/tmp/dpkg install vim", True, BAN, "/tmp/dpkg"),
    ("debian", "sudo aptitude -o Dir::Bin::Methods=/dev/shm/m update", True, BAN, "/dev/shm/m"),
    # apt: hooks with a system program: HIGH, naming what runs
    ("debian", "sudo apt-get -o DPkg::Post-Invoke::='/usr/bin/id' install vim", False, HOOK,
     "runs /usr/bin/id as root, live"),
    ("debian", "sudo apt -o 'Acquire::http::Proxy-Auto-Detect=/usr/local/bin/p' update", False,
     HOOK, "as root"),
    # apt: another configuration, another place, weaker trust
    ("debian", "sudo apt-get -c /tmp/apt.conf update", False, OTHER,
     "reads another configuration"),
    ("debian", "sudo apt-get --config-file=/etc/apt/other.conf update", False, OTHER,
     "reads another configuration"),
    ("debian", "sudo APT_CONFIG=/tmp/apt.conf apt-get update", False, OTHER,
     "apt reads another configuration"),
    ("debian", "sudo env APT_CONFIG=/tmp/apt.conf apt-get update", False, OTHER,
     "APT_CONFIG"),
    ("debian", "export APT_CONFIG=/tmp/a.conf; sudo -E apt-get upgrade", False, OTHER,
     "APT_CONFIG"),
    ("debian", "sudo apt-get -o Dir::Etc::SourceList=/tmp/s.list update", False, OTHER,
     "another place"),
    ("debian", "sudo apt-get -o APT::Get::AllowUnauthenticated=true install vim", False, OTHER,
     "changes what apt trusts"),
    ("debian", "sudo apt-get -o Acquire::AllowInsecureRepositories=1 update", False, OTHER,
     "trusts"),
    ("debian", "sudo apt-get --allow-unauthenticated install vim", False, OTHER,
     "signatures"),
    ("debian", "sudo apt-get -o Dpkg::Options::=--force-all install vim", False, OTHER,
     "hands dpkg an option"),
    ("debian", "sudo apt-get -o Foo::Bar=1 install vim", False, OTHER,
     "does not know to be harmless"),
    ("debian", "sudo apt-get $OPTS install vim", False, Code.UNKNOWN_TARGET,
     "only known at run time"),
    # dpkg
    ("debian", "sudo dpkg --pre-invoke=/tmp/x -i /var/cache/apt/archives/v.deb", True, BAN,
     "/tmp/x"),
    ("debian", "sudo dpkg --post-invoke 'touch /root/x' --configure -a", False, HOOK,
     "runs touch /root/x as root"),
    ("debian", "sudo dpkg --status-logger=/home/alice/log --configure -a", True, BAN,
     "/home/alice/log"),
    ("debian", "sudo dpkg --admindir=/tmp/a --configure -a", False, OTHER, "another root"),
    ("debian", "sudo dpkg --force-depends --configure -a", False, OTHER,
     "forces past dpkg's own checks"),
    ("debian", "sudo DPKG_FORCE=all dpkg --configure -a", False, OTHER, "dpkg forces"),
    # pacman (its own rule; a value in the cluster is no longer read as letters)
    ("arch", "sudo pacman -r/tmp/r -S vim", False, OTHER, "installs into another root"),
    ("arch", "sudo pacman -Sb/tmp/db vim", False, OTHER, "another package database"),
    ("arch", "sudo pacman --hookd /tmp/h -Syu", False, OTHER, "runs hooks from another"),
    ("arch", "sudo pacman --config /home/alice/p.conf -Syu", False, OTHER,
     "reads another configuration"),
    # rpm
    ("fedora", "sudo rpm --eval '%(id > /tmp/o)'", False, HOOK, "the macro runs code"),
    ("fedora", "rpm -E '%(sh /tmp/x)'", True, BAN, "/tmp/x"),
    ("fedora", "sudo rpm -E '%{lua: os.execute(\"id\")}'", False, HOOK, "runs code"),
    ("fedora", "sudo rpm --define '_dbpath %(id)' -qa", False, HOOK, "runs code"),
    ("fedora", "sudo rpm -D '__os_install_post /usr/bin/true' -i /srv/x.rpm", False, OTHER,
     "changes a macro"),
    ("fedora", "sudo rpm --macros /tmp/m -e vim", False, OTHER, "reads macros"),
    ("fedora", "sudo rpm --pipe /tmp/p -qa", True, BAN, "/tmp/p"),
    ("fedora", "sudo rpm --dbpath /tmp/db -e vim", False, OTHER, "another root, database"),
    ("fedora", "sudo rpm --nosignature -U /srv/x.rpm", False, OTHER, "trusted"),
    ("fedora", "sudo RPM_CONFIGDIR=/tmp/r rpm -e vim", False, OTHER, "a macro can run"),
    # dnf / yum
    ("fedora", "sudo dnf --setopt=pluginpath=/tmp/p install vim", True, BAN, "/tmp/p"),
    ("fedora", "sudo dnf --setopt pluginpath=/usr/lib/x install vim", False, HOOK,
     "runs programs from another place"),
    ("fedora", "sudo dnf --setopt=gpgcheck=0 install vim", False, OTHER, "trusts"),
    ("fedora", "sudo dnf --setopt=*.gpgcheck=0 upgrade", False, OTHER, "signatures"),
    ("fedora", "sudo dnf --nogpgcheck install vim", False, OTHER, "without checking"),
    ("fedora", "sudo dnf --nogpg install vim", False, OTHER, "without checking"),
    ("fedora", "sudo dnf -c /tmp/dnf.conf install vim", False, OTHER,
     "reads another configuration"),
    ("fedora", "sudo yum --config=/tmp/y.conf install vim", False, OTHER, "configuration"),
    ("fedora", "sudo dnf --repofrompath=x,http://example.org/r install vim", False, OTHER,
     "repository"),
    ("fedora", "sudo dnf --installroot=/mnt install vim", False, OTHER, "another root"),
    ("fedora", "sudo dnf --setopt=sslverify=false install vim", False, OTHER, "trusts"),
    # zypper
    ("suse", "sudo zypper -c /tmp/z.conf install vim", False, OTHER,
     "reads another configuration"),
    ("suse", "sudo zypper --conf /tmp/z.conf install vim", False, OTHER, "configuration"),
    ("suse", "sudo zypper --no-gpg-checks install vim", False, OTHER, "signature"),
    ("suse", "sudo zypper --gpg-auto-import-keys refresh", False, OTHER, "signature"),
    ("suse", "sudo zypper -p /srv/repo install vim", False, OTHER, "repository"),
    ("suse", "sudo zypper ar http://example.org/r r", False, OTHER, "repository"),
    ("suse", "sudo zypper -R /mnt install vim", False, OTHER, "another root"),
    ("suse", "sudo ZYPP_CONF=/tmp/z zypper install vim", False, OTHER,
     "another configuration"),
]


def _reason(command: str, distro: str, code: Code, words: str) -> tuple[bool, list[str]]:
    verdict = assess(command, CTX[distro])
    assert verdict.risk == RiskLevel.HIGH, (command, verdict.reasons)
    assert str(code) in verdict.codes, (command, verdict.codes, verdict.reasons)
    assert any(words in r for r in verdict.reasons), (command, words, verdict.reasons)
    return verdict.banned, verdict.reasons


@pytest.mark.parametrize(("distro", "command", "banned", "code", "words"), MATRIX)
def test_a_package_managers_hook_config_or_trust_option_is_high_or_banned(
        distro: str, command: str, banned: bool, code: Code, words: str) -> None:
    got, reasons = _reason(command, distro, code, words)
    assert got is banned, (command, reasons)


@pytest.mark.parametrize(("distro", "command", "banned", "code", "words"), MATRIX[::3])
def test_the_same_behind_the_wrappers_anna_sees_through(
        distro: str, command: str, banned: bool, code: Code, words: str) -> None:
    quoted = shlex.quote(command)
    for text in (f"bash -c {quoted}", f"sudo sh -c {quoted}", f"env LC_ALL=C bash -c {quoted}"):
        got, reasons = _reason(text, distro, code, words)
        assert got is banned, (text, reasons)


def test_the_matrix_covers_twenty_spellings_over_six_managers() -> None:
    programs = {"apt", "apt-get", "aptitude", "dpkg", "pacman", "rpm", "dnf", "yum", "zypper"}
    seen = {p for _, c, *_ in MATRIX for p in programs if f" {p} " in f" {c} "}
    assert {"apt-get", "dpkg", "pacman", "rpm", "dnf", "zypper"} <= seen
    assert len(MATRIX) >= 20
    assert sum(banned for _, _, banned, *_ in MATRIX) >= 8


@pytest.mark.parametrize(("distro", "command", "risk"), [
    ("debian", "sudo apt-get -o Dpkg::Options::=--force-confold -o Dpkg::Options::=--force-"
     "confdef upgrade -y", RiskLevel.MEDIUM),
    ("debian", "sudo apt-get -o Dpkg::Options::='--force-confdef,confold' dist-upgrade -y",
     RiskLevel.MEDIUM),
    ("debian", "sudo apt-get -o Acquire::Retries=3 update", RiskLevel.MEDIUM),
    ("debian", "sudo apt -oAPT::Install-Recommends=false install vim", RiskLevel.MEDIUM),
    ("debian", "sudo DEBIAN_FRONTEND=noninteractive apt-get install -yq nginx",
     RiskLevel.MEDIUM),
    ("debian", "sudo apt-get -t bookworm-backports install linux-image-amd64",
     RiskLevel.MEDIUM),
    ("debian", "sudo apt install zsh", RiskLevel.MEDIUM),
    ("debian", "sudo dpkg --force-confold --configure -a", RiskLevel.MEDIUM),
    ("debian", "dpkg -L bash", RiskLevel.INFO),
    ("fedora", "sudo dnf --setopt=install_weak_deps=False install vim", RiskLevel.MEDIUM),
    ("fedora", "sudo dnf -y install zsh", RiskLevel.MEDIUM),
    ("fedora", "rpm -q bash", RiskLevel.INFO),
    ("fedora", "rpm --eval %{_libdir}", RiskLevel.INFO),
    ("fedora", "rpm -E '%{?dist}'", RiskLevel.INFO),
    ("fedora", "rpm -q --qf '%{NAME} %{VERSION}\\n' bash", RiskLevel.INFO),
    ("suse", "sudo zypper --non-interactive install fish", RiskLevel.MEDIUM),
    ("arch", "sudo pacman -Syu", RiskLevel.MEDIUM),
    ("arch", "sudo pacman -S --hookdir /etc/pacman.d/hooks vim", RiskLevel.MEDIUM),
])
def test_the_everyday_spellings_keep_their_tier(distro: str, command: str,
                                                risk: RiskLevel) -> None:
    verdict = assess(command, CTX[distro])
    assert verdict.risk == risk and not verdict.banned, (command, verdict.reasons)


def test_a_hooks_own_command_is_judged_so_its_ban_holds() -> None:
    verdict = assess("sudo apt-get -o 'APT::Update::Pre-Invoke::=rm -rf /' update",
                     CTX["debian"])
    assert verdict.banned and str(Code.BAN_RECURSIVE_DELETE) in verdict.codes, verdict.reasons
