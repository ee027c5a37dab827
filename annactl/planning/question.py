"""Questions that look (issue 39.1): the answer form's read-only checks and "how do I" commands.

A question used to be answered from a fixed telemetry digest alone, under a prompt that
forbade commands: with a scripted model that answers correctly whatever it is shown, "is ssh
running?", "who is logged in?" and "list big files in my home" all printed "the documents I
was given do not show this". Now the answer form may ask to look:

* ``necessary_checks`` — up to :data:`MAX_CHECKS` read-only commands (the seed's necessary
  checks). Anna keeps only those its own rules rate read-only (INFO), turns them into the
  plan's necessary checks (``c1``, ``c2``, … in the order asked), and the planning run's
  checks loop runs them on the daemon, confined, without asking — exactly as it runs a full
  plan's checks. Their output goes back to the model in a second call, which answers from
  it and cites ``check:cN``.
* ``command`` — for a "how do I …" question, the one command that does it. It is never a
  step and never run: the answer carries it with Anna's own reading of it (the analysis
  ``annactl explain`` prints: what it runs, what it writes, its risk), and a command Anna
  bans is not shown at all.

The reply is still a contract ActionPlan without steps (validated like any plan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anna_common.plan import LLM_VERSION

if TYPE_CHECKING:
    from anna_common.risk.rules.base import AssessContext

MAX_CHECKS = 3
"""Read-only checks one answer may ask for."""
CHECK_CHARS = 200
"""Longest check command."""
COMMAND_CHARS = 300
"""Longest suggested command."""


def checks_of(obj: dict[str, Any], context: AssessContext) -> tuple[list[dict[str, Any]],
                                                                     list[str]]:
    """The reply's checks as contract necessary checks (only what Anna rates read-only), and
    the commands it dropped (with why)."""
    from anna_common.risk.assess import assess

    raw = obj.get("necessary_checks")
    kept: list[dict[str, Any]] = []
    dropped: list[str] = []
    for entry in raw if isinstance(raw, list) else []:
        command = entry.get("command") if isinstance(entry, dict) else entry
        if not isinstance(command, str) or not command.strip():
            continue
        command = " ".join(command.split())[:CHECK_CHARS]
        if any(c["command"] == command for c in kept) or len(kept) >= MAX_CHECKS:
            continue
        verdict = assess(command, context)
        if verdict.banned or not verdict.read_only:
            dropped.append(f"{command} ({verdict.risk!s}, not read-only)")
            continue
        kept.append({"id": f"c{len(kept) + 1}", "description": f"Look: {command}"[:200],
                     "command": command, "risk_level": "INFO", "required": False})
    return kept, dropped


def reading(command: str, context: AssessContext) -> str | None:
    """Anna's own reading of a suggested command (as ``annactl explain`` gives it), or None
    when Anna bans it (a banned command is never shown as advice)."""
    from anna_common.risk.assess import assess
    from anna_common.shell.grammar import analyse

    verdict = assess(command, context)
    if verdict.banned:
        return None
    analysis = analyse(command)
    programs = list(dict.fromkeys(c.program or (c.name.text if c.name else "?")
                                  for c in analysis.commands))[:6]
    parts = [f"runs {', '.join(programs)}" if programs else "runs nothing Anna can name"]
    if verdict.writes:
        parts.append(f"writes {', '.join(verdict.writes[:4])}")
    elif verdict.read_only:
        parts.append("changes nothing")
    parts.append(f"risk {verdict.risk}")
    if verdict.reasons:
        parts.append(str(verdict.reasons[0])[:160])
    return "; ".join(parts)


def answer_plan(obj: dict[str, Any], request: str, context: AssessContext
                ) -> dict[str, Any] | str:
    """The contract plan an answer-form reply stands for, or why it says nothing."""
    checks, dropped = checks_of(obj, context)
    answer = obj.get("answer")
    answer = answer.strip() if isinstance(answer, str) else ""
    command = obj.get("command")
    command = " ".join(command.split())[:COMMAND_CHARS] if isinstance(command, str) else ""
    if not any(ch.isalnum() for ch in answer):
        answer = ""
    if not answer and not checks:
        return ("answer must say something in words, not a placeholder such as ... (or "
                "necessary_checks must name a read-only command to look with)")
    notes = answer
    if not answer:
        looks = "; ".join(c["command"] for c in checks)
        notes = f"Anna needs to look first: {looks}."
    if command:
        told = reading(command, context)
        if told is None:
            notes += "\n(The model suggested a command Anna bans; it is not shown.)"
        else:
            notes += (f"\nCommand (not run; run it yourself, or ask Anna to do it): {command}"
                      f"\nAnna's reading: {told}.")
    if dropped:
        notes += "\nNot run (not read-only): " + "; ".join(dropped)[:300]
    title = " ".join(request.split())[:150]
    return {"analysis": (answer or notes)[:800], "goals": [f"Answer: {title}"],
            "necessary_checks": checks, "command_plan": [], "rollback_plan": [],
            "notes_for_user": notes[:2000],
            "meta": {"detection_results": {"de": None, "wm": None, "wallpaper_backends": [],
                                           "display_protocol": None},
                     "template_used": None, "llm_version": LLM_VERSION}}
