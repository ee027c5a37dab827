"""docs/contract.md names every stable code, so the documentation cannot drift from the code."""

from __future__ import annotations

from pathlib import Path

from anna_common.findings import FindingCode
from anna_common.risk.rules.base import Code

DOC = (Path(__file__).resolve().parents[2] / "docs" / "contract.md").read_text(encoding="utf-8")


def test_every_assessment_code_is_documented() -> None:
    missing = [c.value for c in Code if f"`{c.value}`" not in DOC]
    assert not missing


def test_every_finding_code_is_documented() -> None:
    missing = [c.value for c in FindingCode if f"`{c.value}`" not in DOC]
    assert not missing
