"""Undo puts back a file's extended attributes — a user xattr, a POSIX ACL, a file capability
— or does not say byte-exact.

A real per-user daemon (run as root by the tests) in a temporary HOME; the attributes are
set with ``os.setxattr`` (the ACL in its kernel form) and ``setcap`` when it is there. The
step rewrites the file through a temporary copy (``sed -i``: a new inode, none of the
attributes), so only the restore can bring them back.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import pytest

from tests.daemonfix import IS_ROOT, RunningDaemon, run_and_roll_back

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="file capabilities and ACLs need root")

USER_OBJ, USER, GROUP_OBJ, MASK, OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
NO_ID = 0xFFFFFFFF


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """``system.posix_acl_access`` in the kernel's form (version 2, then tag/perm/id)."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


ACL = _acl((USER_OBJ, 6, NO_ID), (USER, 4, 1234), (GROUP_OBJ, 4, NO_ID), (MASK, 4, NO_ID),
           (OTHER, 4, NO_ID))


def _attributes(path: str) -> dict[str, bytes]:
    return {n: os.getxattr(path, n) for n in sorted(os.listxattr(path))}


@pytest.mark.shared_daemon
def test_an_undo_restores_user_xattrs_acls_and_capabilities(user_daemon: RunningDaemon
                                                            ) -> None:
    target = user_daemon.home / "tool.conf"
    target.write_text("setting=1\n")
    os.setxattr(target, "user.origin", b"the person's note")
    os.setxattr(target, "system.posix_acl_access", ACL)
    if shutil.which("setcap"):
        subprocess.run(["setcap", "cap_net_raw+ep", str(target)], check=True)
    else:
        os.setxattr(target, "security.capability",
                    struct.pack("<IIIII", 0x02000001, 1 << 13, 0, 0, 0))
    before = _attributes(str(target))
    assert {"user.origin", "system.posix_acl_access", "security.capability"} <= set(before)
    result = run_and_roll_back(user_daemon.client(), f"sed -i s/1/2/ {target}", None)
    assert result.status == "rolled_back", result.undo
    assert target.read_text() == "setting=1\n"
    assert _attributes(str(target)) == before
    restore = [u for u in result.undo if u.action == "restore"]
    assert restore and "byte-exact" in restore[0].message


@pytest.mark.shared_daemon
def test_an_attribute_added_by_the_step_is_removed_by_the_undo(user_daemon: RunningDaemon
                                                                ) -> None:
    target = user_daemon.home / "plain.conf"
    target.write_text("x\n")
    result = run_and_roll_back(user_daemon.client(),
                               f"echo y > {target} && setfattr -n user.added -v 1 {target} "
                               f"2>/dev/null || python3 -c \"import os; os.setxattr('{target}',"
                               f" 'user.added', b'1')\"", None)
    assert result.status == "rolled_back", result.undo
    assert target.read_text() == "x\n"
    assert "user.added" not in os.listxattr(target)
