"""Issue 34 item 2: a package manager's hook program that another uid can write is refused
before the step runs, by what the machine says (owner and mode of the path and every
directory above it), not only by where the path is.

The classifier bans ``/tmp/x`` or ``~/hook`` by their place; ``-o Dir::Bin::dpkg=/opt/t/dpkg``
with ``/opt/t`` owned by a user is only known to be dangerous on the machine. Real files with
real owners, in a temporary tree standing for ``/`` (nothing outside it is looked at).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annad.backups.backup import BackupRefused
from annad.execution.prestate import package_states
from annad.execution.prestate_hooks import refuse_foreign_hooks
from tests.daemonfix import IS_ROOT

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="owners other than the test's need root")

OTHER = 65534
"""A uid that is not root (nobody)."""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A tree standing for ``/``: root-owned, 0755, with a root-owned program in it."""
    top = tmp_path / "root"
    for directory in ("usr/lib/apt", "opt/user-tools", "opt/shared", "srv/ok", "srv/link"):
        (top / directory).mkdir(parents=True, mode=0o755)
    for made in [top, *top.rglob("*")]:
        made.chmod(0o755)
    (top / "usr/lib/apt/hook").write_text("#!/bin/sh\n")
    (top / "opt/user-tools/dpkg").write_text("#!/bin/sh\n")
    os.chown(top / "opt/user-tools", OTHER, OTHER)
    (top / "opt/shared").chmod(0o777)
    (top / "srv/ok/prog").write_text("#!/bin/sh\n")
    (top / "srv/link/prog").symlink_to("/opt/user-tools/dpkg")
    return top


@pytest.mark.parametrize(("command", "words"), [
    ("apt-get -o Dir::Bin::dpkg=/opt/user-tools/dpkg install vim",
     "/opt/user-tools belongs to uid 65534"),
    ("apt-get -o 'DPkg::Pre-Invoke::=/opt/shared/h' install vim",
     "/opt/shared is writable by others"),
    ("dpkg --pre-invoke='/usr/bin/env sh /opt/user-tools/x.sh' --configure -a",
     "/opt/user-tools belongs to uid 65534"),
    ("rpm -E '%(/opt/shared/not-there-yet)'", "/opt/shared is writable by others"),
    ("dnf --setopt=pluginpath=/srv/ok,/opt/user-tools install vim",
     "/opt/user-tools belongs to uid 65534"),
    ("apt-get -o Dir::Bin::dpkg=/srv/link/prog install vim",
     "/opt/user-tools belongs to uid 65534"),
])
def test_a_hook_program_another_uid_can_write_refuses_the_step(root: Path, command: str,
                                                               words: str) -> None:
    with pytest.raises(BackupRefused) as caught:
        refuse_foreign_hooks(command, root=str(root))
    assert words in str(caught.value) and "the step did not run" in str(caught.value)


@pytest.mark.parametrize("command", [
    "apt-get -o 'DPkg::Post-Invoke::=/usr/lib/apt/hook' install vim",
    "apt-get -o DPkg::Post-Invoke::=touch install vim",
    "dpkg --post-invoke=/srv/ok/prog --configure -a",
    "apt-get -o Dir::Bin::dpkg=/usr/lib/apt/not-made-yet install vim",
    "apt-get install vim",
    "pacman -S vim",
])
def test_a_hook_program_only_root_can_write_is_left_to_its_high_verdict(root: Path,
                                                                        command: str) -> None:
    refuse_foreign_hooks(command, root=str(root))


def test_the_machines_own_tree_is_checked_before_any_package_pre_state() -> None:
    """``package_states`` (every live step's pre-state) refuses first: /tmp is writable by
    others on every machine, so this never reaches the runner."""

    class NoRunner:
        def run_argv(self, argv: list[str], **_: object) -> object:
            raise AssertionError(f"nothing may run: {argv}")

    with pytest.raises(BackupRefused, match="/tmp is writable by others"):
        package_states("dpkg --pre-invoke=/tmp/anna-hook-test --configure -a",
                       NoRunner())  # type: ignore[arg-type]
