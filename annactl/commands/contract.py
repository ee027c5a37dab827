"""``annactl assess`` and ``annactl validate``: the contract package from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import UsageError
from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from anna_common.findings import ValidationResult
    from anna_common.risk.assess import Assessment
    from annactl.ui.console import Consoles

ASSESS_FIELDS = ("command", "risk", "banned", "scope", "codes", "reasons", "parse_ok")
"""The keys of one ``assess --jsonl`` output object."""


def assessment_json(verdict: Assessment) -> dict[str, Any]:
    """The JSON form of an assessment (the documented keys plus writes and confirm_word)."""
    data = verdict.model_dump(mode="json")
    keep = (*ASSESS_FIELDS, "read_only", "writes", "confirm_word")
    return {k: data[k] for k in keep}


def assess_one(command: str, *, distro: str | None, as_json: bool, consoles: Consoles) -> int:
    """Assess one command and print the verdict."""
    from anna_common.risk.assess import assess
    from annactl.core.environment import local_context
    from annactl.ui.console import emit_json

    verdict = assess(command, local_context(distro))
    if as_json:
        emit_json(consoles, assessment_json(verdict))  # escaped: a lone surrogate is no crash
        return ExitStatus.SUCCESS
    _print_assessment(verdict, consoles)
    return ExitStatus.SUCCESS


def _print_assessment(verdict: Assessment, consoles: Consoles) -> None:
    from rich.text import Text

    from annactl.ui.console import inert_text
    from annactl.ui.render import risk_badge

    line = risk_badge(verdict.risk, banned=verdict.banned)
    line.append(f"  scope: {verdict.scope}")
    if not verdict.parse_ok:
        line.append("  (does not parse)", style="red")
    consoles.out.print(line)
    consoles.out.print(inert_text(verdict.command, "dim"))
    for reason in verdict.reasons:
        consoles.out.print(Text("  • ") + inert_text(reason))


def assess_stream(lines: Any, out: Any, *, distro: str | None) -> int:
    """``assess --jsonl``: one JSON object per input line, in order; bad lines never abort.

    ``lines`` yields bytes (standard input's buffer) or text; ``out`` takes bytes or text.
    A line that is not UTF-8, not JSON (or nested too deeply to parse), or not a command
    gets a ``BAD_INPUT`` record and the stream goes on. Output is always valid UTF-8 JSON:
    text the input smuggled in (a lone ``\\ud800``) is escaped, never written raw.
    """
    from anna_common.risk.assess import assess
    from annactl.core.environment import local_context

    ctx = local_context(distro)
    for number, raw in enumerate(lines, start=1):
        command, error = _command_of(raw)
        if command is None and error is None:
            continue  # a blank line
        record: dict[str, Any] = (
            assessment_json(assess(command, ctx)) if command is not None else
            {"line": number, "error": {"code": "BAD_INPUT", "message": error}})
        _write_record(out, record)
    return ExitStatus.SUCCESS


def _command_of(raw: bytes | str) -> tuple[str | None, str | None]:
    """(the command on one input line, or why there is none); (None, None) when blank."""
    if isinstance(raw, bytes):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, f"not UTF-8 (byte {exc.start})"
    else:
        line = raw
    line = line.rstrip("\r\n")
    if not line.strip():
        return None, None
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc.msg}"
    except RecursionError:  # [[[[…]]]]: deeper than the parser goes
        return None, "not JSON: nested too deeply"
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict) and isinstance(value.get("command"), str):
        return value["command"], None
    return None, 'expected a JSON string or {"command": "..."}'


def _write_record(out: Any, record: dict[str, Any]) -> None:
    """One JSON line, UTF-8 always: a lone surrogate is written as a JSON escape."""
    try:
        data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        data = (json.dumps(record) + "\n").encode("ascii")
    target = getattr(out, "buffer", out)  # the bytes under a text stream, when it has them
    try:
        target.write(data)
    except TypeError:  # a text stream without a buffer (a StringIO)
        target.write(data.decode("utf-8"))
    target.flush()


def read_plan_text(source: str) -> str:
    """Read FILE or ``-`` (stdin); unreadable input is a usage error."""
    if source == "-":
        # bytes, decoded as files are: invalid UTF-8 becomes U+FFFD, never a crash or a lone
        # surrogate (what the locale's surrogateescape would make of it) in the output
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror or exc}",
                         hint="give a plan JSON file, or - for standard input") from None


def validation_json(result: ValidationResult) -> dict[str, Any]:
    """``{"ok", "code", "errors", "warnings", "plan"}`` as documented (``code``: ``OK``, or
    ``PLAN_BANNED`` / ``PLAN_INVALID`` as the plan would be refused)."""
    data = result.model_dump(mode="json")
    code = "OK" if result.ok else "PLAN_BANNED" if result.plan is not None and \
        result.plan.banned else "PLAN_INVALID"
    return {"ok": data["ok"], "code": code, "errors": data["errors"],
            "warnings": data["warnings"], "plan": data["plan"]}


def validate_file(source: str, *, distro: str | None, as_json: bool, consoles: Consoles) -> int:
    """Validate a plan file and print findings and the annotated plan."""
    from anna_common.validate import validate_text
    from annactl.core.environment import local_context
    from annactl.ui.console import emit_json

    text = read_plan_text(source)
    result = validate_text(text, local_context(distro))
    if as_json:
        emit_json(consoles, validation_json(result))
    else:
        _print_validation(result, consoles)
    return ExitStatus.SUCCESS if result.ok else ExitStatus.PLAN_INVALID


def _print_validation(result: ValidationResult, consoles: Consoles) -> None:
    from rich.table import Table
    from rich.text import Text

    from annactl.ui.console import inert_text
    from annactl.ui.render import risk_badge

    if result.plan is not None:
        plan = result.plan
        table = Table(title=None, show_lines=False, expand=False)
        for col in ("kind", "id", "risk", "scope", "command"):
            table.add_column(col)
        for step in [*plan.checks, *plan.steps, *plan.rollback]:
            badge = risk_badge(step.final_risk, banned=step.banned)
            table.add_row(step.kind, inert_text(step.id, max_chars=40), badge, str(step.scope),
                          inert_text(step.command, max_chars=200))
        consoles.out.print(table)
        summary = Text("plan risk: ")
        summary.append(risk_badge(plan.final_risk))
        summary.append(f"  confirmations: {plan.confirmations}  rollback: {plan.rollback_status}")
        consoles.out.print(summary)
    for finding in result.errors:
        consoles.out.print(Text("error ", style="bold red") + Text(f"{finding.code} ") +
                           inert_text(f"{finding.path}: {finding.message}" if finding.path
                                      else finding.message))
    for finding in result.warnings:
        consoles.out.print(Text("warning ", style="yellow") + Text(f"{finding.code} ") +
                           inert_text(f"{finding.path}: {finding.message}" if finding.path
                                      else finding.message))
    consoles.out.print(Text("valid" if result.ok else "invalid",
                            style="bold green" if result.ok else "bold red"))
