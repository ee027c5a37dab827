"""Relative paths where the working directory is not the home: ``cd`` that Anna cannot follow,
``cd`` in subshells, nested code or the directory stack, and steps that run as root from ``/``.

A relative path is judged in every place the command may be in: the step's own directory
(the home for a user step; ``/`` as well for a step that needs root, which annad runs in
``/``), every directory a ``cd`` reached, and the unknown root ``$?`` after a ``cd`` Anna
cannot follow. Found in review: ``sudo bash -c "cd /etc && rm shadow"`` was LOW "changes
shadow in your files".
"""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess

CTX = AssessContext(distro="arch", home="/home/alice", bootloader="grub")

BANNED = [
    "sudo rm etc/shadow",
    "sudo tee etc/sudoers </dev/null",
    "sudo sh -c 'echo x > etc/sudoers'",
    "sudo bash -c 'cd /etc && rm shadow'",
    "bash -c 'cd /etc && rm shadow'",
    "eval 'cd /etc'; rm shadow",
    "cd /etc; (cd ~); rm shadow",
    "cd /etc; cd ~; rm shadow",
    "cd /etc; bash -c 'cd ~'; rm shadow",
    "pushd /etc; pushd ~; popd; rm shadow",
    "pacman -S htop && rm etc/shadow",
    "cd /etc/ssh; cd ..; rm shadow",
    "cd -- /etc && rm -f shadow",
    "sudo env LC_ALL=C rm etc/shadow",
    "cd /etc | true; rm shadow",
]
"""Each removes or overwrites an identity file once its working directory is followed."""

UNKNOWN_PLACE = [
    'cd "$D" && rm sshd_config',
    "cd $D; rm -f passwd",
    "cd -P /etc; rm shadow",
    "cd - && rm shadow",
    "CDPATH=/etc cd ssh; rm sshd_config",
    "cd /e?c; rm shadow",
    "cd /etc/* && rm x",
    "popd; rm shadow",
    "pushd +1; rm shadow",
    "cd ../..; rm shadow",
    "cd $(cat /tmp/where) && rm shadow",
]
"""A ``cd`` Anna cannot follow: what follows writes to a place only known at run time."""


@pytest.mark.parametrize("command", BANNED)
def test_identity_files_reached_through_the_working_directory_are_banned(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.banned, (command, verdict.codes)


@pytest.mark.parametrize("command", UNKNOWN_PLACE)
def test_a_write_after_a_cd_anna_cannot_follow_is_high(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == RiskLevel.HIGH, (command, verdict.codes)


@pytest.mark.parametrize("command", ["sudo cat etc/shadow", "sudo head -1 etc/gshadow",
                                     "sudo sh -c 'cd /etc; cat shadow'",
                                     "journalctl -n1; cd /etc; cat shadow"])
def test_secret_reads_through_the_working_directory_are_high(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == RiskLevel.HIGH and "SECRET_READ" in verdict.codes, verdict.codes


@pytest.mark.parametrize(("command", "tier"), [
    ("touch notes.txt", RiskLevel.LOW),
    ("cd myproject && rm -f out.txt", RiskLevel.LOW),
    ("cd ~/src/app && git status", RiskLevel.INFO),
    ("cd /var/log && ls -la", RiskLevel.INFO),
    ("sudo pacman -S --needed htop", RiskLevel.MEDIUM),
    ("sudo systemctl restart nginx", RiskLevel.MEDIUM),
    ("cd /tmp && rm -f anna-test.txt", RiskLevel.LOW),
    ("journalctl -b -p err --no-pager", RiskLevel.INFO),
])
def test_ordinary_commands_keep_their_tier(command: str, tier: RiskLevel) -> None:
    assert assess(command, CTX).risk == tier, assess(command, CTX).codes


@pytest.mark.parametrize("command", [
    "pacman $OPT linux", 'pacman "$OPT" htop', "sudo pacman ${OP} linux",
    "bash -c 'pacman $O linux'", "journalctl $O", "date $O", "dmesg $O", "sysctl $O",
    "find / $O", "sort $O notes.txt", "sudo sh -c 'find /etc $X'",
    "find / -name x $(printf -- -delete)", "find / $(echo -e '\\x2ddelete')",
    "find / $(echo '\\055delete')"])
def test_an_option_only_known_at_run_time_is_not_read_only(command: str) -> None:
    # the word can be the operation or the option that writes (-Rdd, --vacuum-size, -s,
    # -C, -w, -delete, -o): Anna cannot call it read-only
    assert assess(command, CTX).risk == RiskLevel.HIGH, assess(command, CTX).codes


@pytest.mark.parametrize(("printed", "literal"), [
    ("find /tmp `printf -- -delete`", "find /tmp -delete"),
    ("find ~/x $(printf -- '-delete')", "find ~/x -delete"),
    ("journalctl $(echo -n --vacuum-size=1M)", "journalctl --vacuum-size=1M"),
    ("$(printf -- rm) -rf ~/x", "rm -rf ~/x")])
def test_a_printed_option_is_judged_as_the_option_itself(printed: str, literal: str) -> None:
    # what echo/printf print is read as the words it prints (``--`` and option words too)
    assert assess(printed, CTX).risk == assess(literal, CTX).risk > RiskLevel.INFO


@pytest.mark.parametrize("command", ["pacman -Q $PKG", "pacman -Qi htop", "pacman -Qdtq",
                                     "journalctl -b -p err --no-pager", "date +%s",
                                     "find /var/log -name '*.log'", "sort -u notes.txt"])
def test_the_same_programs_with_options_anna_reads_stay_info(command: str) -> None:
    assert assess(command, CTX).risk == RiskLevel.INFO, assess(command, CTX).codes


def _too_large(command: str) -> bool:
    verdict = assess(command, CTX)
    return verdict.risk is RiskLevel.HIGH and "TOO_LARGE" in verdict.codes


@pytest.mark.parametrize("command", [
    "".join(f"cd a{i}; " for i in range(40)) + "ls",
    "".join(f"cd /x{i}; " for i in range(50)) + "rm -f " + " ".join(f"a{i}" for i in range(95)),
])
def test_following_cd_is_bounded_and_high_past_the_bound(command: str) -> None:
    """Each relative ``cd`` is followed from every place the command may be in: the places
    doubled with each (40 of them never finished; 12 took 1.3 s) and every relative word was
    judged in each (4,750 places, half a second). Past the bound the command is HIGH."""
    assert _too_large(command)


@pytest.mark.parametrize("command", [
    "cd /etc; cd /tmp; cd a; cd b; cd c; cd d; rm -f shadow",
    "cd /etc; " + "".join(f"cd /x{i}; " for i in range(20)) + "rm -f shadow",
])
def test_places_within_the_bound_are_all_judged(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.banned and "TOO_LARGE" not in verdict.codes, verdict


@pytest.mark.parametrize("command", [
    "cd /tmp/build && make && cd .. && cd docs && make html && cd ../.. && rm -f out.txt",
    "cd ~/src && git pull && cd app && npm ci && cd ../lib && cd .. && ls",
])
def test_an_everyday_sequence_of_cds_is_followed_whole(command: str) -> None:
    assert "TOO_LARGE" not in assess(command, CTX).codes
