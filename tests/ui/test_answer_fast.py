"""The offline answer (``annactl "how is my system?"``) imports only what answering needs
(issue 23.7): nothing of confirming, previewing or running steps, and nothing of asking a
model that is not asked. (Speed itself is measured in ``bench/startup.py``, never here.)
"""

from __future__ import annotations

import subprocess
import sys

from tests.fakellm import plan_json

from .conftest import Anna

PAST_THE_ANSWER = ("annactl.ui.confirm", "annactl.ui.render_preview", "annactl.ui.render_events",
                   "annactl.commands.needs_root",
                   "anna_common.risk.tiers", "annactl.planning.templates.wallpaper_backends",
                   "annactl.planning.llm.ollama", "annactl.planning.llm.openai_compat")
"""Modules a plan with steps, a model request or a wallpaper request needs; an answer not."""
PROBE = ("import sys; sys.argv = ['annactl', *sys.argv[1:]]; from annactl.cli import main; "
         f"code = main(); names = {PAST_THE_ANSWER!r}; "
         "print('LOADED', *sorted(n for n in names if n in sys.modules), file=sys.stderr); "
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
    assert anna.llm.chat_bodies() == []  # the template answered: no model was asked
    # the probe can see them: a plan with a step does load them
    anna.llm.push(plan_json(goals=["Print the kernel release"], command_plan=[
        {"id": "kernel", "description": "kernel release", "command": "uname -r",
         "risk_level": "INFO", "rollback_id": None, "requires_confirmation": False}]))
    proc, loaded = _loaded(anna, "ask", "--dry-run", "print the running kernel release please")
    assert "annactl.ui.confirm" in loaded and "annactl.ui.render_preview" in loaded, \
        (loaded, proc.stderr)
