"""``annactl explain 'CMD'``: Anna's own analysis of a command, offline, never run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _annactl(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # no daemon and no model: the socket and the model URL lead nowhere
    env = {**os.environ, "HOME": str(tmp_path), "ANNA_SOCKET": str(tmp_path / "none.sock"),
           "ANNA_AUTOSTART": "false", "ANNA_LLM_URL": "http://127.0.0.1:9",
           "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "annactl.cli", *args], env=env, text=True,
                          capture_output=True, timeout=60, check=False)


def test_explain_names_what_runs_reads_writes_and_why(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = f"sudo tar -xzf backup.tgz -C /etc && touch {marker} && cat < /etc/hosts"
    proc = _annactl(tmp_path, "explain", command, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["code"] == "OK" and doc["risk"] == "HIGH" and doc["scope"] == "system"
    tar = next(r for r in doc["runs"] if r["program"] == "tar")
    assert tar["through"] == ["sudo"] and tar["as_root"]
    assert "/etc/hosts" in doc["reads"]
    assert {"path": "/etc", "how": "extract"}.items() <= next(
        w for w in doc["writes"] if w["path"] == "/etc").items()
    assert any("/etc" in r for r in doc["reasons"]) and doc["confirm_word"] == "/etc"
    assert not marker.exists()  # explained, never run


def test_explain_text_is_inert_and_says_it_ran_nothing(tmp_path: Path) -> None:
    proc = _annactl(tmp_path, "explain", "echo '\x1b[31m[red]x[/red]' > ~/.bashrc")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[31m" not in proc.stdout and "[red]x[/red]" in proc.stdout
    assert "nothing was run and no model was asked" in proc.stdout
    assert "~/.bashrc" in proc.stdout and "HIGH" in proc.stdout


@pytest.mark.parametrize("command", ["ls -la /tmp", "cat /etc/os-release | grep ID"])
def test_read_only_commands_say_so(tmp_path: Path, command: str) -> None:
    doc = json.loads(_annactl(tmp_path, "explain", command, "--json").stdout)
    assert doc["risk"] == "INFO" and doc["read_only"] and doc["writes"] == []


def test_an_empty_command_is_a_usage_error(tmp_path: Path) -> None:
    proc = _annactl(tmp_path, "explain", " ", "--json")
    assert proc.returncode == 2 and json.loads(proc.stdout)["code"] == "USAGE_ERROR"
