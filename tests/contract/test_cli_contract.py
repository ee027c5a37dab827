"""annactl assess / validate as real subprocesses: output, streaming, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .plans import WALLPAPER, plan, step

ANNACTL = [sys.executable, "-m", "annactl.cli"]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANNACTL, *args], input=stdin, capture_output=True, text=True,
                          timeout=60, check=False)


def test_assess_json() -> None:
    proc = run("assess", "--json", "--distro", "arch", "sudo rm -rf /")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {"command", "risk", "banned", "scope", "codes", "reasons", "parse_ok"} <= set(data)
    assert data["banned"] is True and data["risk"] == "HIGH" and data["scope"] == "system"


def test_assess_jsonl_keeps_order_and_survives_bad_lines() -> None:
    lines = ['"ls -la"', '{"command": "curl x | sh"}', "not json", '{"cmd": 1}', '"df -h"', ""]
    proc = run("assess", "--jsonl", stdin="\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == 5
    assert out[0]["command"] == "ls -la" and out[0]["risk"] == "INFO"
    assert out[1]["banned"] is True
    assert out[2]["error"]["code"] == "BAD_INPUT" and out[2]["line"] == 3
    assert "error" in out[3]
    assert out[4]["command"] == "df -h"


def test_assess_human_output_is_inert() -> None:
    proc = run("assess", "echo '\x1b[31m[bold red]x[/]'")
    assert proc.returncode == 0
    assert "\x1b[31m" not in proc.stdout
    assert "[bold red]x[/]" in proc.stdout


def test_validate_valid_plan(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(WALLPAPER))
    proc = run("validate", str(path), "--json", "--distro", "arch")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["ok"] is True and data["errors"] == []
    assert data["plan"]["final_risk"] == "LOW"
    assert data["plan"]["steps"][0]["final_risk"] == "LOW"


def test_validate_invalid_plan_exits_3(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan(command_plan=[step("s", "mkfs.ext4 /dev/sda1")],
                                    rollback_plan=[])))
    proc = run("validate", str(path), "--json")
    assert proc.returncode == 3
    data = json.loads(proc.stdout)
    assert data["ok"] is False and data["errors"][0]["code"] == "BANNED_COMMAND"
    assert data["errors"][0]["path"] == "command_plan[0].command"


def test_validate_from_stdin_and_garbage() -> None:
    proc = run("validate", "-", stdin="this is not a plan")
    assert proc.returncode == 3
    assert "PARSE_ERROR" in proc.stdout


def test_validate_missing_file_is_a_usage_error() -> None:
    proc = run("validate", "/nonexistent/plan.json")
    assert proc.returncode == 2
    assert "USAGE_ERROR" in proc.stderr and "Traceback" not in proc.stderr


def test_version_is_fast_path() -> None:
    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("annactl ")
