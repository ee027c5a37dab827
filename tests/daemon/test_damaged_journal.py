"""Issue 22 item 4: a damaged journal stops annad with one clear line, what to do, and its
own exit status (which the unit does not restart); ``annad --check-journal`` checks a copy."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from anna_common.plan import ActionPlan
from annad.main import EXIT_DAMAGED
from tests.daemonfix import REPO, make_plan, new_daemon, running_daemon, stop_and_remove
from tests.waiting import WAIT_S

UNIT = REPO / "systemd" / "annad.service"


def _check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "annad.main", "--check-journal", str(path)],
                          capture_output=True, text=True, timeout=WAIT_S, cwd=REPO, check=False)


def test_a_journal_that_is_not_sqlite_stops_annad_with_one_line_and_its_own_status() -> None:
    daemon = new_daemon(user_mode=True)
    try:
        daemon.state.mkdir(parents=True, mode=0o700)
        (daemon.state / "journal.sqlite3").write_bytes(b"this is not a database\n" * 500)
        proc = subprocess.run(daemon.argv, env=daemon.env, capture_output=True, text=True,
                              timeout=WAIT_S, cwd=daemon.base, check=False)
        assert proc.returncode == EXIT_DAMAGED, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, proc.stderr
        assert "damaged" in lines[0] and "mv " in lines[0] and "--check-journal" in lines[0]
        assert "Traceback" not in proc.stderr
        assert not daemon.socket.exists()  # no socket left that nobody serves
    finally:
        stop_and_remove(daemon)


def test_the_unit_does_not_restart_on_a_damaged_journal() -> None:
    directives = dict(line.split("=", 1) for line in UNIT.read_text().splitlines()
                      if "=" in line and not line.startswith("#"))
    assert str(EXIT_DAMAGED) in directives["RestartPreventExitStatus"].split()


def test_check_journal_tells_a_good_copy_from_an_altered_or_broken_one(tmp_path: Path) -> None:
    with running_daemon(user_mode=True) as daemon:
        daemon.client().submit(ActionPlan.model_validate(make_plan([("s1", "ls", "INFO")])))
        journal = daemon.state / "journal.sqlite3"
        copy = tmp_path / "copy.sqlite3"
        with sqlite3.connect(journal) as live, sqlite3.connect(copy) as out:
            live.backup(out)
    good = _check(copy)
    assert good.returncode == 0 and "verifies" in good.stdout, good
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE events SET body='{}' WHERE id=1")
    altered = _check(copy)
    assert altered.returncode == EXIT_DAMAGED and "row 1" in altered.stderr, altered
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"\0" * 4096)
    broken = _check(garbage)
    assert broken.returncode == EXIT_DAMAGED and "not a readable journal" in broken.stderr, broken
