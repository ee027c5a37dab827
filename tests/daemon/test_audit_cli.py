"""Issue 22 item 4: ``annactl audit verify`` runs the journal's chain verification: exit 0
when it holds, 13 (and the first bad row) once a row was altered behind the daemon's back."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

from anna_common.plan import ActionPlan
from annactl.core.exit_codes import ExitStatus
from tests.daemonfix import RunningDaemon, make_plan
from tests.waiting import WAIT_S


def _audit(daemon: RunningDaemon, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**daemon.env, "ANNA_SOCKET": str(daemon.socket),
           "ANNA_LLM_URL": "http://127.0.0.1:9", "ANNA_CONFIG": str(daemon.base / "none")}
    return subprocess.run([sys.executable, "-m", "annactl.cli", "audit", "verify", *extra],
                          capture_output=True, text=True, check=False, env=env, timeout=WAIT_S)


def test_audit_verify_says_whether_the_chain_holds(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    client.submit(ActionPlan.model_validate(make_plan([("s1", "ls", "INFO")])))
    good = _audit(user_daemon)
    assert good.returncode == ExitStatus.SUCCESS and "verifies" in good.stdout, good
    report = json.loads(_audit(user_daemon, "--json").stdout)
    assert report["ok"] is True and report["rows"] >= 1, report
    with sqlite3.connect(user_daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        db.execute("UPDATE events SET body='{\"x\":1}' WHERE id=1")
    broken = _audit(user_daemon)
    assert broken.returncode == ExitStatus.AUDIT_BROKEN, broken
    assert "does not verify" in broken.stderr and "row: 1" in broken.stderr, broken.stderr
    assert "Traceback" not in broken.stderr
