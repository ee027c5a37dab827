"""Attach Anna's assessment to every command of a schema-valid plan (used by validate).

The assessment (:mod:`anna_common.risk.assess`, the shell grammar and every rule) is imported
when the first command is judged: a plan without commands (an answer) needs none of it, and
importing it was a fifth of answering "how is my system?" offline (bench/startup.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.findings import (
    AnnotatedPlan,
    AnnotatedStep,
    Finding,
    FindingCode,
    RollbackStatus,
    StepKind,
)
from anna_common.plan import LLM_VERSION, ActionPlan, RiskLevel, Scope
from anna_common.risk.rules.base import AssessContext, Code

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.risk.assess import Assessment

_INVERSE = frozenset({str(Code.PACKAGE_CHANGE), str(Code.SERVICE_CHANGE)})
"""Codes whose change the daemon can invert from recorded pre-state (package versions,
unit enablement and activity) without a model rollback or a file snapshot."""
_NOTHING_TO_UNDO = frozenset({str(Code.READ_ONLY), str(Code.NETWORK_READ),
                              str(Code.SECRET_READ)})
"""Codes of commands that change nothing on the machine (they are MEDIUM for what they
reveal or fetch, not for what they change): nothing to undo, so no rollback needed."""
_UNCAPTURED = "UNCAPTURED_WRITE"
"""Interpreter code whose writes Anna cannot see: listed writes are not the whole effect,
so they are no snapshot that undoes the step."""
NO_UNDO_REASON = "no way to undo it: no rollback command, nothing Anna can snapshot"
"""Why a MEDIUM step without any undo was raised to HIGH (seed 000: MEDIUM must have clear
rollback)."""


def assess(command: str, ctx: AssessContext) -> Assessment:
    """:func:`anna_common.risk.assess.assess` (imported on the first command judged)."""
    from anna_common.risk.assess import assess as judge

    return judge(command, ctx)


def _step(kind: StepKind, index: int, ident: str, description: str, command: str,
          label: RiskLevel, verdict: Assessment, *, rollback_id: str | None = None,
          model_confirm: bool = False) -> AnnotatedStep:
    final = RiskLevel.max_of(label, verdict.risk)
    return AnnotatedStep(
        kind=kind,
        index=index,
        id=ident,
        description=description,
        command=command,
        model_risk=label,
        floor=verdict.risk,
        final_risk=final,
        banned=verdict.banned,
        scope=verdict.scope,
        codes=verdict.codes,
        reasons=verdict.reasons,
        parse_ok=verdict.parse_ok,
        requires_confirmation=final >= RiskLevel.LOW or model_confirm,
        rollback_id=rollback_id,
        confirm_word=verdict.confirm_word if final == RiskLevel.HIGH else None,
        writes=verdict.writes,
    )


def _duplicates(plan: ActionPlan) -> list[Finding]:
    seen: dict[str, str] = {}
    found = []
    entries = [("necessary_checks", c.id) for c in plan.necessary_checks]
    entries += [("command_plan", s.id) for s in plan.command_plan]
    entries += [("rollback_plan", r.id) for r in plan.rollback_plan]
    entries += [("verify_commands", v.id) for v in plan.verify_commands]
    counters: dict[str, int] = {}
    for key, ident in entries:
        index = counters.get(key, 0)
        counters[key] = index + 1
        path = f"{key}[{index}].id"
        if ident in seen:
            found.append(Finding(code=FindingCode.DUPLICATE_ID, path=path,
                                 message=f"id {ident!r} is already used at {seen[ident]}"))
        else:
            seen[ident] = path
    return found


def annotate(plan: ActionPlan, ctx: AssessContext
             ) -> tuple[AnnotatedPlan, list[Finding], list[Finding]]:
    """Assess every command; return the annotated plan, errors and warnings."""
    errors = _duplicates(plan)
    warnings: list[Finding] = []
    if plan.meta.llm_version != LLM_VERSION:
        warnings.append(Finding(code=FindingCode.VERSION_MISMATCH, path="meta.llm_version",
                                message=f"expected {LLM_VERSION!r}"))
    rollback_ids = {r.id for r in plan.rollback_plan}
    # a rollback that changes nothing (``true``, ``echo restored``) is no clear rollback
    no_ops = {r.id: r.command for r in plan.rollback_plan if assess(r.command, ctx).read_only}

    def judge(path: str, command: str, label: RiskLevel) -> Assessment:
        if not command.strip():
            errors.append(Finding(code=FindingCode.EMPTY_COMMAND, path=path,
                                  message="the command is empty"))
        verdict = assess(command, ctx)
        if verdict.banned:
            errors.append(Finding(code=FindingCode.BANNED_COMMAND, path=path,
                                  message="hard-banned: " + "; ".join(verdict.reasons[:2])))
        if str(Code.NOT_NATIVE) in verdict.codes:
            errors.append(Finding(code=FindingCode.NOT_NATIVE, path=path,
                                  message=next((r for r in verdict.reasons if "not this "
                                                "distribution" in r), "not native here")))
        if not verdict.parse_ok:
            warnings.append(Finding(code=FindingCode.OPAQUE_COMMAND, path=path,
                                    message="the command does not parse as bash; it is HIGH"))
        if verdict.risk > label:
            warnings.append(Finding(code=FindingCode.RISK_RAISED, path=path,
                                    message=f"Anna raised the risk from {label} to "
                                    f"{verdict.risk}: {verdict.reasons[0]}"))
        return verdict

    checks = []
    for i, check in enumerate(plan.necessary_checks):
        path = f"necessary_checks[{i}].command"
        verdict = judge(path, check.command, check.risk_level)
        step = _step("check", i, check.id, check.description, check.command, check.risk_level,
                     verdict)
        if step.final_risk != RiskLevel.INFO and not verdict.banned:
            errors.append(Finding(code=FindingCode.CHECK_NOT_READ_ONLY, path=path,
                                  message=f"a necessary check must be read-only (INFO); Anna "
                                  f"rates it {step.final_risk}: {verdict.reasons[0]}"))
        checks.append(step)
    steps = []
    for i, cmd in enumerate(plan.command_plan):
        path = f"command_plan[{i}]"
        verdict = judge(path + ".command", cmd.command, cmd.risk_level)
        if cmd.rollback_id is not None and cmd.rollback_id not in rollback_ids:
            errors.append(Finding(code=FindingCode.UNKNOWN_ROLLBACK_REF,
                                  path=path + ".rollback_id",
                                  message=f"no rollback step has id {cmd.rollback_id!r}"))
        step = _step("step", i, cmd.id, cmd.description, cmd.command, cmd.risk_level, verdict,
                     rollback_id=cmd.rollback_id, model_confirm=cmd.requires_confirmation)
        step = _medium_needs_undo(step, verdict, warnings, path + ".command", no_ops)
        if step.requires_confirmation and not cmd.requires_confirmation:
            warnings.append(Finding(code=FindingCode.CONFIRMATION_ADDED,
                                    path=path + ".requires_confirmation",
                                    message=f"Anna requires a confirmation for this "
                                    f"{step.final_risk} step"))
        steps.append(step)
    rollback = []
    for i, back in enumerate(plan.rollback_plan):
        verdict = judge(f"rollback_plan[{i}].command", back.command, RiskLevel.INFO)
        rollback.append(_step("rollback", i, back.id, back.description, back.command,
                              RiskLevel.INFO, verdict))
    _verify_read_only(plan, judge, errors)
    marked = _ban_fetch_then_run([*checks, *steps, *rollback], ctx, errors)  # across steps
    checks, steps, rollback = ([s for s in marked if s.kind == k] for k in ("check", "step",
                                                                         "rollback"))
    annotated = _summary(plan, checks, steps, rollback)
    return annotated, errors, warnings


def _ban_fetch_then_run(steps: list[AnnotatedStep], ctx: AssessContext,
                        errors: list[Finding]) -> list[AnnotatedStep]:
    """:func:`anna_common.risk.planfetch.ban_fetch_then_run` (nothing to follow: no import)."""
    if not steps:
        return steps
    from anna_common.risk.planfetch import ban_fetch_then_run

    return ban_fetch_then_run(steps, ctx, errors)


def _verify_read_only(plan: ActionPlan, judge: Callable[[str, str, RiskLevel], Assessment],
                      errors: list[Finding]) -> None:
    """A plan's verify commands run without asking after the plan, confined like checks:
    each must be read-only (INFO) by Anna's own assessment, else the plan is not valid."""
    for i, check in enumerate(plan.verify_commands):
        path = f"verify_commands[{i}].command"
        verdict = judge(path, check.command, RiskLevel.INFO)
        if (verdict.risk != RiskLevel.INFO or not verdict.read_only) and not verdict.banned:
            why = verdict.reasons[0] if verdict.reasons else "not proven read-only"
            errors.append(Finding(code=FindingCode.CHECK_NOT_READ_ONLY, path=path,
                                  message=f"a verify command must be read-only (INFO); Anna "
                                  f"rates it {verdict.risk}: {why}"))


def _snapshot_or_inverse(step: AnnotatedStep) -> bool:
    """The daemon itself can undo the step: known write targets it snapshots (unless the
    step also writes where Anna cannot see), or pre-state it records and inverts."""
    codes = {c.upper() for c in step.codes}
    if step.writes and _UNCAPTURED not in codes:
        return True
    return bool(codes & _INVERSE)


def _medium_needs_undo(step: AnnotatedStep, verdict: Assessment, warnings: list[Finding],
                       path: str, no_ops: dict[str, str] | None = None) -> AnnotatedStep:
    """Seed 000: a MEDIUM step must have a clear rollback, or it is HIGH.

    A clear rollback is the model's rollback command (one that changes something: a
    read-only "rollback" such as ``true`` or ``echo restored`` undoes nothing), a daemon
    snapshot or a recognised inverse; a MEDIUM step with none of them (an unknown program,
    a signal, a write to an unknown target) cannot be taken back, so it is asked for as HIGH.
    """
    no_ops = no_ops or {}
    if step.final_risk != RiskLevel.MEDIUM or verdict.read_only:
        return step
    if step.rollback_id and step.rollback_id not in no_ops:
        return step
    if _snapshot_or_inverse(step) or (step.codes and set(step.codes) <= _NOTHING_TO_UNDO):
        return step
    reason = NO_UNDO_REASON if not step.rollback_id else (
        f"no way to undo it: its rollback {step.rollback_id!r} "
        f"({no_ops[step.rollback_id][:60]}) changes nothing, and Anna can snapshot nothing")
    warnings.append(Finding(code=FindingCode.RISK_RAISED, path=path,
                            message=f"Anna raised the risk from MEDIUM to HIGH: {reason}"))
    return step.model_copy(update={"final_risk": RiskLevel.HIGH, "requires_confirmation": True,
                                   "reasons": [reason, *step.reasons],
                                   "confirm_word": _touched(step.command)})


def _touched(command: str) -> str | None:
    """What a step raised to HIGH touches, for its typed word: the program it runs (the
    MEDIUM verdict named no target, and a word that names nothing teaches nothing)."""
    from anna_common.shell.grammar import analyse

    analysis = analyse(command)
    return next((c.program for c in analysis.commands if c.program), None)


def _undoable(step: AnnotatedStep) -> bool:
    """Whether a real undo exists for ``step``: nothing to undo (INFO), the plan's rollback
    command, or what the daemon itself takes back (:func:`_snapshot_or_inverse`: snapshots of
    the files it names, recorded package and unit state). A code alone is no undo: a desktop
    setting (``USER_CONFIG``: gsettings, hyprctl, loginctl), a firewall or a persistence
    change runs live with no pre-state the daemon records, and a write whose target is unknown
    has no snapshot."""
    if step.final_risk == RiskLevel.INFO or step.rollback_id:
        return True
    return _snapshot_or_inverse(step)


def _summary(plan: ActionPlan, checks: list[AnnotatedStep], steps: list[AnnotatedStep],
             rollback: list[AnnotatedStep]) -> AnnotatedPlan:
    # Rollback commands count toward the tier: they run without a further question when a
    # step fails, so approving the plan approves them (an INFO step whose rollback writes
    # /etc needs that write's confirmation; a HIGH rollback command needs the HIGH word).
    final = RiskLevel.max_of(*(s.final_risk for s in [*steps, *rollback]))
    confirmations = 2 if final == RiskLevel.HIGH else (
        1 if final >= RiskLevel.LOW or any(s.requires_confirmation for s in [*steps, *rollback])
        else 0)
    changing = [s for s in steps if s.final_risk > RiskLevel.INFO]
    undo = [_undoable(s) for s in changing]
    status: RollbackStatus = "none" if changing and not any(undo) else (
        "available" if all(undo) and (changing or rollback) else ("partial" if any(undo)
                                                                   else "none"))
    return AnnotatedPlan(
        plan=plan,
        digest=plan.digest(),
        checks=checks,
        steps=steps,
        rollback=rollback,
        final_risk=final,
        banned=any(s.banned for s in [*checks, *steps, *rollback]),
        scope=Scope.SYSTEM if any(s.scope == Scope.SYSTEM for s in steps) else Scope.USER,
        confirmations=confirmations,
        confirm_word=next((s.confirm_word for s in [*steps, *rollback]
                           if s.final_risk == RiskLevel.HIGH and s.confirm_word), None),
        rollback_status=status,
    )


def raise_to_high(annotated: AnnotatedPlan, index: int, reason: str, *, word: str | None
                  ) -> AnnotatedPlan:
    """``annotated`` with step ``index`` raised to HIGH for ``reason`` (a daemon finding the
    text alone cannot show, such as a validator failing on the previewed file). Only ever
    raises: the step's reasons keep Anna's own, the plan's tier and confirmations follow."""
    step = annotated.steps[index]
    raised = step.model_copy(update={
        "final_risk": RiskLevel.HIGH, "requires_confirmation": True,
        "reasons": [reason, *step.reasons],
        "confirm_word": step.confirm_word if step.final_risk == RiskLevel.HIGH and
        step.confirm_word else word})
    steps = [*annotated.steps[:index], raised, *annotated.steps[index + 1:]]
    summary = _summary(annotated.plan, annotated.checks, steps, annotated.rollback)
    return summary.model_copy(update={"rollback_status": annotated.rollback_status})
