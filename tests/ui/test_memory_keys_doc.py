"""docs/configuration.md lists every memory key the program takes, and no other."""

from __future__ import annotations

import re
from pathlib import Path

from annactl.planning.memory import WHITELIST

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_every_memory_key_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### Remembered preferences", 1)[1].split("\n## ", 1)[0]
    keys = set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE))
    assert keys == set(WHITELIST)
