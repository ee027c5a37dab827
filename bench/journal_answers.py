"""What an answer costs in the journal (issue 38: answers that changed nothing kept compactly).

A real per-user daemon (tests/daemonfix.py; ``--tree PATH`` runs another checkout's, e.g.
a ``git worktree`` of main) is sent ``--answers`` answers as the client stores an offline
answer: a plan with no steps, one look (``cat`` of a file) and a few sentences for the
person, submitted as a template, its look run. Then the journal is copied (SQLite's backup:
no WAL) and SQLite's ``dbstat`` says how many bytes of pages each table and index uses;
printed per answer: the plans table, the events table and the whole file.

Run: .venv/bin/python bench/journal_answers.py [--answers 300] [--tree PATH]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from anna_common.plan import ActionPlan
from tests.daemonfix import make_plan, new_daemon, stop_and_remove

NOTES = ("sshd is not running: the unit is inactive (dead) since boot and nothing listens "
         "on port 22. Start it with `systemctl start sshd` if you want to log in remotely.")


def used(path: Path) -> dict[str, int]:
    """Bytes of pages in use per table (its indexes counted with it), and ``all``."""
    db = sqlite3.connect(path)
    try:
        owner = dict(db.execute("SELECT name, tbl_name FROM sqlite_schema"))
        sizes: dict[str, int] = {}
        for name, size in db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)
            sizes[table] = sizes.get(table, 0) + int(size)
        sizes["all"] = sum(sizes.values())
        return sizes
    finally:
        db.close()


def measure(answers: int, tree: str | None) -> dict[str, int]:
    """Fill a fresh daemon's journal with answers; the bytes in use before and after."""
    daemon = new_daemon(user_mode=True)
    if tree:
        root = Path(tree).resolve()
        daemon.env["PYTHONPATH"] = str(root)
    try:
        daemon.start()
        client = daemon.client()
        (daemon.home / ".config" / "sshd.state").write_text("inactive\n")
        with tempfile.TemporaryDirectory(prefix="anna-answers-") as tmp:
            copy = Path(tmp) / "copy.sqlite3"

            def snapshot() -> dict[str, int]:
                src = sqlite3.connect(daemon.state / "journal.sqlite3")
                dst = sqlite3.connect(copy)
                try:
                    src.backup(dst)
                finally:
                    src.close()
                    dst.close()
                return used(copy)

            before = snapshot()
            for n in range(answers):
                plan = make_plan([], checks=[("look", "cat ~/.config/sshd.state")],
                                 goal=f"is ssh running? ({n})")
                plan["notes_for_user"] = NOTES
                response = client.submit(ActionPlan.model_validate(plan),
                                         request=f"is ssh running? ({n})", source="template")
                assert response.status == "answered", response.status
                client.run_checks(response.plan_id)
            after = snapshot()
        return {name: after.get(name, 0) - before.get(name, 0) for name in after}
    finally:
        stop_and_remove(daemon)


def main() -> None:
    """Measure and print bytes per answer."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=300)
    parser.add_argument("--tree", metavar="PATH", help="the daemon of this checkout instead")
    args = parser.parse_args()
    grown = measure(args.answers, args.tree)
    print(f"{args.tree or 'this tree'}: {args.answers} answers; bytes per answer: "
          + ", ".join(f"{name} {size / args.answers:,.0f}"
                      for name, size in sorted(grown.items(), key=lambda kv: -kv[1])
                      if size > 0))


if __name__ == "__main__":
    main()
