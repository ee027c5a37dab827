"""ruff and mypy --strict (as configured in pyproject.toml) stay clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = BIN / name
    if found.exists():
        return str(found)
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def test_ruff_is_clean() -> None:
    proc = subprocess.run([_tool("ruff"), "check", "--output-format", "concise", "."],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]


@pytest.mark.slow
def test_mypy_strict_is_clean() -> None:
    proc = subprocess.run([_tool("mypy")], cwd=REPO, capture_output=True, text=True, timeout=900,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]
