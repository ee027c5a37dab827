"""Download in one step, run in another: the plan-level half of "never pipe untrusted input
to sh".

Each command is judged on its own by :func:`anna_common.risk.assess.assess`, so
``curl -o /tmp/i.sh URL`` (step 1) and ``bash /tmp/i.sh`` (step 2) each look like what they
are alone. Here every command of the plan (checks, steps and rollback steps, in that order)
is followed with :mod:`anna_common.risk.rules.fetchrun`; a command that runs a file another command
of the plan fetched is hard-banned, with a finding at its path.
"""

from __future__ import annotations

from anna_common.findings import AnnotatedStep, Finding, FindingCode
from anna_common.plan import RiskLevel
from anna_common.risk.rules.base import AssessContext, Code, Out
from anna_common.risk.rules.fetchrun import Fetched, fetches, same_file, track
from anna_common.shell.grammar import analyse

_LIST = {"check": "necessary_checks", "step": "command_plan", "rollback": "rollback_plan"}


def _follow(command: str, ctx: AssessContext, seen: Fetched) -> None:
    analysis = analyse(command)
    if analysis.too_large:
        return  # HIGH on its own; following it would cost what the budget saves
    if not seen.files and not fetches(analysis.commands):
        return  # nothing fetched so far, nothing fetched here: no file to follow
    out = Out(ctx)
    for cmd in analysis.commands:
        track(cmd, out, seen)


def ban_fetch_then_run(steps: list[AnnotatedStep], ctx: AssessContext,
                       errors: list[Finding]) -> list[AnnotatedStep]:
    """``steps`` (checks, steps, rollback, in plan order) with every command that runs a file
    an earlier command fetched marked banned; a ``BANNED_COMMAND`` finding is added for each."""
    earlier: dict[str, str] = {}  # fetched path -> "curl in command_plan[0]"
    result: list[AnnotatedStep] = []
    for step in steps:
        where = f"{_LIST[step.kind]}[{step.index}]"
        seen = Fetched(files=dict(earlier), where=f" in {where}")
        _follow(step.command, ctx, seen)
        hit = next(((ran, earlier[got], runner) for ran, runner in seen.runs.items()
                    for got in earlier if same_file(got, ran)), None)
        earlier.update(seen.files)
        if hit is None:
            result.append(step)
            continue
        ran, fetcher, runner = hit
        why = f"{runner} runs {ran}, which {fetcher} downloaded (download, then run)"
        errors.append(Finding(code=FindingCode.BANNED_COMMAND, path=f"{where}.command",
                              message="hard-banned: " + why))
        result.append(step.model_copy(update={
            "banned": True, "floor": RiskLevel.HIGH, "final_risk": RiskLevel.HIGH,
            "requires_confirmation": True, "confirm_word": step.confirm_word or runner,
            "codes": [str(Code.BAN_UNTRUSTED_CODE), *step.codes],
            "reasons": [why, *step.reasons],
        }))
    return result
