"""The systemd units: ``systemd-analyze verify`` accepts them, and their key settings hold."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemonfix import REPO

UNITS = REPO / "systemd"


def _unit(tmp_path: Path) -> Path:
    """annad.service with ExecStart pointing at this checkout's annad (verify checks it)."""
    annad = Path(sys.executable).with_name("annad")
    if not annad.exists():
        pytest.skip(f"no annad script next to {sys.executable}")
    text = (UNITS / "annad.service").read_text()
    assert "ExecStart=/usr/bin/annad\n" in text
    unit = tmp_path / "annad.service"
    unit.write_text(text.replace("ExecStart=/usr/bin/annad", f"ExecStart={annad}"))
    return unit


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_systemd_analyze_verify(tmp_path: Path) -> None:
    proc = subprocess.run(["systemd-analyze", "verify", "--man=no", str(_unit(tmp_path))],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "annad.service" not in proc.stderr, proc.stderr  # no warnings about our unit


def _settings(text: str) -> dict[str, str]:
    values = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def test_service_settings_keep_steps_working() -> None:
    values = _settings((UNITS / "annad.service").read_text())
    assert values["Type"] == "notify" and values["KillMode"] == "mixed"
    # these would break pacman, mkinitcpio, setuid installs or user-scope steps
    for option in ("ProtectSystem", "ProtectHome", "ProtectKernelModules", "RestrictSUIDSGID",
                   "PrivateDevices", "ProtectKernelTunables", "MemoryDenyWriteExecute",
                   "NoNewPrivileges", "PrivateTmp", "SocketMode"):
        assert option not in values, option
    for option in ("LockPersonality", "RestrictRealtime"):
        assert values[option] == "yes"


def test_sysusers_and_tmpfiles() -> None:
    assert (UNITS / "anna.sysusers").read_text().splitlines()[-1].split() == ["g", "anna", "-",
                                                                                 "-"]
    lines = [line.split() for line in (UNITS / "anna.tmpfiles").read_text().splitlines()
             if line and not line.startswith("#")]
    assert ["d", "/run/anna", "0750", "root", "anna", "-"] in lines
    assert ["d", "/var/lib/anna", "0700", "root", "root", "-"] in lines
    assert not (UNITS / "annad.socket").exists()  # no socket activation: annad binds itself
