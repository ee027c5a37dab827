"""Issue 22 item 3, the client's half: ``annactl assess --jsonl`` and ``annactl validate``
never abort on bad input and never write anything but valid UTF-8 JSON.

The assess stream gets lines that are not UTF-8, not JSON, nested deeper than the JSON
parser goes, lone surrogates, random bytes and commands nested deeper than the analysis
goes, mixed with good ones: every line gets its record, in order, and the exit status is 0.
``validate`` gets the same kinds of plan: exit 0 or 3 (never 1), JSON out.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemonfix import make_plan

ANNACTL = [sys.executable, "-m", "annactl.cli"]


def _bad_lines(count: int) -> list[bytes]:
    rng = random.Random(22)
    shapes = [
        lambda: b"\xff\xfe not utf8 " + bytes([rng.randrange(128, 256)]),
        lambda: b'"\\ud800"',
        lambda: b"[" * 100000 + b"]" * 100000,
        lambda: json.dumps({"command": "echo " + "$(" * 300 + "x" + ")" * 300}).encode(),
        lambda: b'{"command": 5}',
        lambda: b"not json {",
        lambda: json.dumps("ls -l /tmp").encode(),
        lambda: b'"rm -rf / \\u0000 \\ud83d"',
        lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(
            b"\n", b"").replace(b"\r", b""),
        lambda: json.dumps({"command": "{a," * 500 + "}" * 500}).encode(),
    ]
    return [shapes[i % len(shapes)]() for i in range(count)]


def test_assess_jsonl_answers_every_line_with_utf8_json() -> None:
    lines = [line for line in _bad_lines(200) if line.strip()]
    proc = subprocess.run([*ANNACTL, "assess", "--jsonl"], input=b"\n".join(lines) + b"\n",
                          capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout.split(b"\n")[:-1]
    assert len(out) == len(lines), (len(out), len(lines))
    records = [json.loads(line.decode("utf-8")) for line in out]  # strict UTF-8, valid JSON
    assert sum("error" in r for r in records) >= len(lines) // 2
    assert any(r.get("command") == "ls -l /tmp" for r in records)


@pytest.mark.parametrize("content", [
    b"{\"a\":" * 50000 + b"1" + b"}" * 50000,
    b"[" * 100000 + b"]" * 100000,
    json.dumps(make_plan([("s", "echo \ud800", "INFO")])).encode(),
    json.dumps(make_plan([("s", "echo x", "INFO")])).encode().replace(b"echo x",
                                                                     b"echo \xed\xa0\x80 \xff"),
    json.dumps(make_plan([("s", "echo " + "$(" * 1300 + "x" + ")" * 1300, "HIGH")])).encode(),
    json.dumps(make_plan([("s", "(" * 2000 + "ls" + ")" * 2000, "HIGH")])).encode(),
    b"\x00" * 1000,
], ids=["deep object", "deep list", "lone surrogate", "invalid utf-8", "deep substitutions",
        "deep subshells", "nul bytes"])
@pytest.mark.parametrize("via", ["file", "stdin"])
def test_validate_exits_0_or_3_with_json(tmp_path: Path, content: bytes, via: str) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(content)
    proc = subprocess.run([*ANNACTL, "validate", "--json", str(path) if via == "file" else "-"],
                          input=content if via == "stdin" else None, capture_output=True,
                          timeout=120, check=False)
    assert proc.returncode in (0, 3), proc.stderr[-2000:]
    result = json.loads(proc.stdout.decode("utf-8"))
    assert result["ok"] is (proc.returncode == 0)
