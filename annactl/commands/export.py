"""``annactl export ID --ansible [-o play.yml] [--mode annad|shell]``: a stored plan as an
Ansible playbook, with the person's approval recorded in it.

Only a plan Anna accepts can be exported: the stored plan is validated again here (with
this machine's default context) and a banned or invalid one is refused. The approval is
asked exactly as ``annactl apply`` asks it (``--yes``; ``--yes --allow-high`` or the typed
word for HIGH) and written into the playbook with the plan digest; each host's Anna
asks nothing more (``--yes``), and gets ``--allow-high`` only when that approval covered
HIGH.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.errors import ErrorCode, PlanError, UsageError
from annactl.commands.playbook import ApprovalRecord, Mode, build
from annactl.core.exit_codes import ExitStatus
from annactl.ui import confirm

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan
    from annactl.commands.flow import Flow
    from annactl.ui.console import Consoles

MODES: tuple[Mode, ...] = ("annad", "shell")
"""The playbook kinds ``--mode`` accepts."""


def checked_plan(annotated: AnnotatedPlan) -> AnnotatedPlan:
    """The plan validated again on this side; PLAN_BANNED/PLAN_INVALID otherwise."""
    from anna_common.validate import validate

    result = validate(annotated.plan)
    findings = [f.model_dump(mode="json") for f in result.errors]
    if annotated.banned or (result.plan is not None and result.plan.banned):
        raise PlanError("the plan contains a hard-banned command; it cannot be exported",
                        code=ErrorCode.PLAN_BANNED, detail={"findings": findings})
    if result.plan is None or not result.ok:
        raise PlanError("the plan is not valid; it cannot be exported",
                        code=ErrorCode.PLAN_INVALID, detail={"findings": findings})
    if not annotated.steps:
        raise UsageError("the plan has no steps: there is nothing to run on other hosts")
    return annotated


def approve(consoles: Consoles, annotated: AnnotatedPlan, *, yes: bool,
            allow_high: bool, ask: bool = True) -> ApprovalRecord:
    """Ask (or take from the flags) the approval the plan's tier needs, as apply does
    (``ask`` False, as with ``--json``: only the flags)."""
    req = confirm.requirement(annotated)
    prompter = (confirm.TerminalPrompter(consoles.err) if consoles.interactive and ask
                else None)
    granted = confirm.ask(req, prompter, yes=yes, allow_high=allow_high)
    confirmations = 2 if granted.high_confirmed else int(granted.confirmed)
    return ApprovalRecord(risk=str(req.risk), confirmations=confirmations,
                          word=granted.word if granted.high_confirmed else None,
                          by=_user(), at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                          digest=annotated.digest)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def render_playbook(consoles: Consoles, plan_id: str, *, mode: str, yes: bool,
                    allow_high: bool, ask: bool = True) -> tuple[str, ApprovalRecord]:
    """Fetch, check, approve and build: the playbook text and the approval in it."""
    from annactl.commands.yamlout import YamlError
    from annactl.ui.console import inert

    if mode not in MODES:
        raise UsageError(f"unknown --mode {inert(mode, max_chars=40)!r}",
                         hint="use --mode annad or --mode shell")
    flow = _flow()
    record = flow.record(plan_id)
    annotated = checked_plan(record.annotated)
    approval = approve(consoles, annotated, yes=yes, allow_high=allow_high, ask=ask)
    try:
        text = build(annotated, plan_id=record.plan_id, approval=approval,
                     mode="annad" if mode == "annad" else "shell")
    except YamlError as exc:
        raise PlanError(f"the plan cannot be written as a playbook: {exc}",
                        code=ErrorCode.PLAN_INVALID) from None
    return text, approval


def _flow() -> Flow:
    from annactl.commands.flow import connect_flow
    from annactl.core.config import load_settings

    return connect_flow(load_settings())


def export(consoles: Consoles, plan_id: str, *, ansible: bool, output: Path | None,
           mode: str, yes: bool, allow_high: bool, as_json: bool = False) -> int:
    """Write the playbook to ``output`` (or stdout); say what was approved on stderr.
    With ``as_json``: one document on stdout with the approval, and the playbook's text
    in it unless it went to ``output`` (never a prompt: approve with ``--yes``)."""
    if not ansible:
        raise UsageError("say what to export to", hint="annactl export ID --ansible")
    text, approval = render_playbook(consoles, plan_id, mode=mode, yes=yes,
                                     allow_high=allow_high, ask=not as_json)
    if output is not None:
        write_private(output, text)
    if as_json:
        from dataclasses import asdict

        from annactl.ui.console import emit_json

        emit_json(consoles, {"code": "OK", "status": "exported", "plan_id": plan_id,
                             "mode": mode, "approval": asdict(approval),
                             "output": None if output is None else str(output),
                             "playbook": text if output is None else None})
    elif output is None:
        consoles.out.file.write(text)
        consoles.out.file.flush()
    else:
        consoles.err.print(f"wrote {output} ({approval.risk}, approved by {approval.by})",
                           markup=False, highlight=False)
    return ExitStatus.SUCCESS


def write_private(path: Path, text: str) -> None:
    """Write atomically (a temporary file beside it, then rename); 0644."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.chmod(0o644)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
