"""Who a root owner's checks and INFO steps run as: never plain uid 0.

uid 0 without capabilities is still trusted by root's servers, so the confinement takes its
Unix sockets away; a root owner's ordinary checks (``systemctl status``) therefore run as
``nobody`` with the sockets every user has, and only what ``nobody`` cannot read is read as
capless root.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from annad.confine.credentials import Identity
from annad.confine.runner import run_confined
from annad.confine.spec import NOBODY_UID, unasked_identity

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act for root and nobody")


@pytest.fixture
def root_home(tmp_path: Path) -> Path:
    home = tmp_path / "roothome"
    home.mkdir(mode=0o700)
    (home / "notes.txt").write_text("root's own notes\n")
    (home / "notes.txt").chmod(0o600)
    return home


def _root(home: Path) -> Identity:
    return Identity(uid=0, gid=0, groups=(), home=str(home), user="root")


@pytest.mark.parametrize("command", ["systemctl status sshd", "sudo systemctl is-active x",
                                     "id -u", "cat /etc/hostname", "ls /tmp"])
def test_root_owner_runs_plain_checks_as_nobody(root_home: Path, command: str) -> None:
    identity, root_read = unasked_identity(_root(root_home), command, root_allowed=True)
    assert identity.uid == NOBODY_UID
    assert not root_read
    assert identity.home == str(root_home)  # ~ still means the judged home


@pytest.mark.parametrize("command", ["cat ~/notes.txt", "cat $HOME/notes.txt", "wc -l notes.txt",
                                     "head -1 {home}/notes.txt", "journalctl -b -p err"])
def test_root_owner_reads_what_nobody_cannot_as_capless_root(root_home: Path,
                                                             command: str) -> None:
    identity, root_read = unasked_identity(_root(root_home), command.format(home=root_home),
                                           root_allowed=False)
    assert identity.uid == 0
    assert root_read


def test_non_root_owner_never_reads_as_root_without_permission(root_home: Path) -> None:
    owner = Identity(uid=NOBODY_UID, gid=NOBODY_UID, home="/tmp", user="nobody")
    command = f"cat {root_home}/notes.txt"
    assert unasked_identity(owner, command, root_allowed=False) == (owner, False)
    assert unasked_identity(owner, command, root_allowed=True) == (owner, True)


def test_a_root_owners_check_really_runs_as_nobody_and_reads_as_root(root_home: Path) -> None:
    identity, root_read = unasked_identity(_root(root_home), "sudo id -u", root_allowed=True)
    run = run_confined("sudo id -u", identity, root_read=root_read, timeout=30)
    assert run.error is None, run.error
    assert run.output.strip() == str(NOBODY_UID)
    identity, root_read = unasked_identity(_root(root_home), "cat ~/notes.txt",
                                           root_allowed=True)
    run = run_confined("cat ~/notes.txt", identity, root_read=root_read, timeout=30)
    assert run.error is None, run.error
    assert run.output == "root's own notes\n"


def test_paths_inside_code_strings_count_for_the_root_read(root_home: Path) -> None:
    """``sh -c '… /root-only/path …'`` reads what nobody cannot: it reads as capless root,
    even when the file does not exist yet (its directory cannot be entered by nobody)."""
    waiting = root_home / "release"
    for command in (f"sh -c 'until [ -e {waiting} ]; do sleep 0.05; done'",
                    f"timeout 5 bash -c \"test -e {root_home}/notes.txt && echo yes\"",
                    f"env X=1 sh -c 'sh -c \"cat {root_home}/notes.txt\"'"):
        identity, root_read = unasked_identity(_root(root_home), command, root_allowed=True)
        assert (identity.uid, root_read) == (0, True), command
    identity, root_read = unasked_identity(_root(root_home), "sh -c 'systemctl status x'",
                                           root_allowed=True)
    assert (identity.uid, root_read) == (NOBODY_UID, False)
