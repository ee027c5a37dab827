"""``annactl status`` and ``--version`` stay light: the stdlib client agrees with the full one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from anna_common.protocol.models import API_VERSION, SessionEnv
from annactl.commands import status
from annactl.core.config import config_file, load_settings, runtime_dir
from annactl.core.daemon_client import SOCKET_NAME

from .conftest import Anna

HEAVY = ("fastapi", "textual", "httpx", "pydantic", "uvicorn", "prompt_toolkit", "typer")
PROBE = ("import sys; sys.argv = ['annactl', *sys.argv[1:]]; from annactl.cli import main; "
         f"code = main(); heavy = sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}); "
         "print('HEAVY', *heavy, file=sys.stderr); raise SystemExit(code)")


def test_constants_match_the_protocol() -> None:
    assert status.API_VERSION == API_VERSION
    assert set(status.SESSION_KEYS) == set(SessionEnv.model_fields)


def test_socket_discovery_matches_the_settings(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    settings = load_settings()
    assert status.candidate_sockets() == [settings.system_socket, runtime_dir() / SOCKET_NAME]
    config = tmp_path / "c.toml"
    config.write_text(f'socket = "{tmp_path}/x.sock"\n')
    monkeypatch.setenv("ANNA_CONFIG", str(config))
    assert config_file() == config
    assert status.candidate_sockets() == [load_settings().socket] == [tmp_path / "x.sock"]
    monkeypatch.setenv("ANNA_SOCKET", str(tmp_path / "y.sock"))
    assert status.candidate_sockets() == [load_settings().socket]
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.delenv("ANNA_SOCKET")
    monkeypatch.delenv("ANNA_CONFIG")
    assert status.user_socket() == runtime_dir() / SOCKET_NAME


def _heavy(anna: Anna, *args: str) -> tuple[int, list[str], str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], env=anna.env,
                          capture_output=True, text=True, check=False, timeout=60)
    line = next(x for x in proc.stderr.splitlines() if x.startswith("HEAVY"))
    return proc.returncode, line.split()[1:], proc.stdout


def test_version_and_status_import_nothing_heavy(anna: Anna) -> None:
    code, heavy, out = _heavy(anna, "--version")
    assert code == 0 and heavy == [] and out.startswith("annactl ")
    code, heavy, out = _heavy(anna, "status")
    assert code == 0 and heavy == [], heavy
    assert "Memory" in out
    code, heavy, out = _heavy(anna, "status", "--json")
    assert code == 0 and heavy == [] and '"telemetry"' in out
    # history and show read plans without Typer, the settings models or the telemetry models
    code, heavy, out = _heavy(anna, "history")
    assert code == 0 and heavy == [], heavy
    code, heavy, _ = _heavy(anna, "history", "--limit", "5", "--json")
    assert code == 0 and heavy == [], heavy
    # anything else goes through Typer (and may import what it needs)
    code, heavy, _ = _heavy(anna, "history", "--help")
    assert code == 0 and "typer" in heavy


def test_unix_get_reports_daemon_errors_with_their_code(anna: Anna) -> None:
    from anna_common.errors import AnnaError, DaemonError

    with pytest.raises(AnnaError) as info:
        status.unix_get(anna.daemon.socket, "/v1/plans/nope")
    assert str(info.value.code) == "PLAN_NOT_FOUND"
    with pytest.raises(DaemonError):
        status.unix_get(anna.work / "missing.sock", "/v1/health")
    health = status.unix_get(anna.daemon.socket, "/v1/health")
    assert health["api_version"] == API_VERSION


def test_telemetry_file_from_status_json_replays_a_plan(anna: Anna) -> None:
    from tests.fakellm import plan_json

    snapshot = anna.work / "telemetry.json"
    snapshot.write_text(anna.run("status", "--json").stdout)
    anna.llm.push(plan_json())
    code, out = anna.json("plan", "--no-templates", "--telemetry-file", str(snapshot), "hi")
    assert code == 0 and out["plan_id"]
    bad = anna.work / "bad.json"
    bad.write_text("[1, 2]")
    proc = anna.run("plan", "--telemetry-file", str(bad), "hi")
    assert proc.returncode == 2 and "not a telemetry snapshot" in proc.stderr
