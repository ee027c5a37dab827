"""A file capability or an ACL a step set is judged as the setcap/setfacl it amounts to,
whatever program wrote the xattr; one the file already had is not judged again."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from anna_common.levels import RiskLevel
from anna_common.risk.rules.base import AssessContext
from annad.capture.judge import Approval, judge
from annad.capture.layers import Change

CAP = b"\x01\x00\x00\x02" + b"\x00\x20\x00\x00" * 2 + b"\x00" * 8  # cap_net_raw+ep, v2
ACL = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in (
    (1, 7, 0xFFFFFFFF), (2, 7, 65534), (4, 5, 0xFFFFFFFF), (16, 7, 0xFFFFFFFF),
    (32, 5, 0xFFFFFFFF)))


def _approval(tmp_path: Path, tier: RiskLevel) -> Approval:
    return Approval(tier=tier, system=True, ctx=AssessContext(home=str(tmp_path)),
                    state_dir=str(tmp_path / "state"))


def _change(path: Path, xattrs: dict[str, bytes], kind: str = "file") -> Change:
    return Change(path=str(path), kind=kind, source=str(path), mode=0o755, uid=0, gid=0,  # type: ignore[arg-type]
                  xattrs=xattrs)


@pytest.mark.parametrize(("name", "value", "kind"), [
    ("security.capability", CAP, "file"),
    ("system.posix_acl_access", ACL, "file"),
    ("system.posix_acl_default", ACL, "dir"),
])
def test_a_power_granting_xattr_the_step_set_is_judged(tmp_path: Path, name: str,
                                                       value: bytes, kind: str) -> None:
    target = tmp_path / "t"
    verdict = judge([_change(target, {name: value}, kind)], _approval(tmp_path, RiskLevel.LOW),
                    0)
    assert verdict.refused, verdict
    assert verdict.tier > RiskLevel.LOW


def test_the_same_file_without_it_lands_at_low(tmp_path: Path) -> None:
    verdict = judge([_change(tmp_path / "t", {})], _approval(tmp_path, RiskLevel.LOW), 0)
    assert not verdict.refused, verdict


@pytest.mark.skipif(os.geteuid() != 0, reason="security.capability needs root to set")
def test_one_the_file_already_had_is_not_judged_again(tmp_path: Path) -> None:
    target = tmp_path / "t"
    target.write_text("x")
    os.setxattr(target, "security.capability", CAP)
    verdict = judge([_change(target, {"security.capability": CAP})],
                    _approval(tmp_path, RiskLevel.LOW), 0)
    assert not verdict.refused, verdict
