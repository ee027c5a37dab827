"""The offline answer (``annactl "how is my system?"``) imports only what answering needs
(issue 23.7): nothing of confirming, previewing or running steps, and nothing of asking a
model that is not asked. (Speed itself is measured in ``bench/startup.py``, never here.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.daemonfix import running_daemon
from tests.fakellm import plan_json

from .conftest import REPO, Anna

PAST_THE_ANSWER = ("annactl.ui.confirm", "annactl.ui.render_preview", "annactl.ui.render_events",
                   "annactl.commands.needs_root",
                   "anna_common.risk.tiers", "annactl.planning.templates.wallpaper_backends",
                   "annactl.planning.llm.ollama", "annactl.planning.llm.openai_compat",
                   "annactl.planning.llm.base", "annactl.planning.replies",
                   "annactl.planning.citations", "annactl.planning.grounding", "tomllib")
"""Modules a plan with steps, a model request, a wallpaper request or a config file needs; an
answer not (bench/startup.py: each was a share of the offline answer's start-up)."""
PROBE = ("import sys; sys.argv = ['annactl', *sys.argv[1:]]; from annactl.cli import main; "
         f"code = main(); names = {PAST_THE_ANSWER!r}; "
         "print('LOADED', *sorted(n for n in names if n in sys.modules), file=sys.stderr); "
         "import gc; print('GC', gc.isenabled(), file=sys.stderr); "
         "raise SystemExit(code)")


def _loaded(anna: Anna, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], env=anna.env,
                          capture_output=True, text=True, check=False, timeout=90)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED"))
    return proc, line.split()[1:]


def test_the_offline_answer_imports_nothing_past_the_answer(anna: Anna) -> None:
    proc, loaded = _loaded(anna, "how is my system?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("CPU:") and "Memory:" in proc.stdout
    assert loaded == [], loaded
    # the cycle collector, paused while the fast path started and planned, runs again
    assert "GC True" in proc.stderr.splitlines(), proc.stderr
    assert anna.llm.chat_bodies() == []  # the template answered: no model was asked
    # the probe can see them: a plan with a step does load them
    anna.llm.push(plan_json(goals=["Print the kernel release"], command_plan=[
        {"id": "kernel", "description": "kernel release", "command": "uname -r",
         "risk_level": "INFO", "rollback_id": None, "requires_confirmation": False}]))
    proc, loaded = _loaded(anna, "ask", "--dry-run", "print the running kernel release please")
    assert "annactl.ui.confirm" in loaded and "annactl.ui.render_preview" in loaded, \
        (loaded, proc.stderr)


VOLATILE = ("plan_id", "trace_id", "elapsed_s")
"""What differs between two runs of one request (ids, a duration), never the answer."""


def test_the_fast_path_answers_as_the_full_one() -> None:
    """``annactl "how is my system?"`` (no Typer, the cycle collector paused while it plans,
    the schema digest from its cache, modules of the model's path never imported) prints the
    same bytes, and the same ``--json`` document, as ``annactl ask`` parsed by Typer, for
    the same telemetry (the daemon refreshes it hourly here, so both read one snapshot)."""
    with running_daemon(user_mode=True, env={"ANNAD_TELEMETRY_REFRESH_S": "3600"}) as daemon:
        env = {**os.environ, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "false",
               "ANNA_LLM_URL": "http://127.0.0.1:9", "PYTHONPATH": str(REPO)}

        def run(*args: str) -> str:
            proc = subprocess.run([sys.executable, "-m", "annactl.cli", *args], env=env,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                  check=False, timeout=90)
            assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
            return proc.stdout

        # --keep-on-verify-fail is no flag of the fast path: that request goes through Typer
        full = ("ask", "--keep-on-verify-fail", "how is my system?")
        fast_text, full_text = run("how is my system?"), run(*full)
        assert fast_text.startswith("CPU:") and fast_text == full_text
        docs = [json.loads(run("how is my system?", "--json")), json.loads(run(*full, "--json"))]
        for doc in docs:
            assert doc["status"] == "answered" and doc["template"] == "system_status_v1"
            for key in VOLATILE:
                doc.pop(key)
        assert docs[0] == docs[1]
        assert docs[0]["plan"]["notes_for_user"] == fast_text.strip()
