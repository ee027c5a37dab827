"""``annactl --version`` in every order the docs allow (issue 23): ``--json`` before or after
it prints exactly one JSON document, and the text form is one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from annactl import __version__

ORDERS = [["--version", "--json"], ["--json", "--version"], ["--json", "--version", "--json"],
          ["--version", "--json", "--version"]]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "annactl.cli", *args], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, check=False, timeout=60)


@pytest.mark.parametrize("args", ORDERS, ids=" ".join)
def test_json_version_in_any_order_is_one_document(args: list[str]) -> None:
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and proc.stderr == "", (proc.stdout, proc.stderr)
    assert json.loads(lines[0]) == {"code": "OK", "version": __version__}


def test_text_version() -> None:
    proc = _run("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"annactl {__version__}\n", "")


def test_json_alone_is_one_help_document() -> None:
    """``--json`` with nothing to do: annactl's help as one document on stdout, exit 0
    (issue 36.5: annactl alone prints help)."""
    proc = _run("--json")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert proc.returncode == 0 and len(lines) == 1
    assert json.loads(lines[0])["status"] == "help"
