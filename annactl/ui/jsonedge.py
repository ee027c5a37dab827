"""``--json`` as a contract: exactly one JSON document on stdout, success or failure.

Every command's JSON document carries ``code`` (``OK`` on success, the
:class:`~anna_common.errors.ErrorCode` of a failure) and, where a plan exists, ``plan_id``.
Commands print their own documents; this module is the safety net at the one error edge
(:func:`annactl.cli.main`): when a command ends in an error before it printed anything on
stdout, the edge prints the error's document there, so a script reading stdout never gets
an empty string (``show zzzz --json``, ``rollback ID --json`` without ``--yes``).
"""

from __future__ import annotations

import sys
from typing import IO, Any

OK = "OK"
"""``code`` of a document that reports no failure."""

PLAN_CODES = {"failed": "EXECUTION_FAILED", "rolled_back": "EXECUTION_FAILED",
              "interrupted": "EXECUTION_FAILED", "rollback_failed": "ROLLBACK_FAILED",
              "rollback_incomplete": "ROLLBACK_INCOMPLETE", "refused": "PLAN_RUNNING",
              "rollback_unverified": "ROLLBACK_UNVERIFIED"}
"""``code`` of a document about a plan that ended in one of these states."""


def code_for_status(status: str | None, *, after_rollback: bool = False) -> str:
    """The ``code`` of a plan document whose plan is now in ``status``."""
    if after_rollback and status == "rolled_back":
        return OK
    if after_rollback and status == "interrupted":
        return "ROLLBACK_FAILED"
    return PLAN_CODES.get(status or "", OK)


def with_code(data: Any) -> Any:
    """``data`` with ``code`` set (``OK``, or from its plan ``status``) when it has none."""
    if isinstance(data, dict) and "code" not in data:
        status = data.get("status")
        return {"code": code_for_status(status if isinstance(status, str) else None), **data}
    return data


class WatchedStdout:
    """stdout that remembers whether anything was written to it."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.written = False

    def write(self, text: str) -> int:
        """Write through, remembering that something was written."""
        if text:
            self.written = True
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        # flush, isatty, fileno, encoding…: the real stream's
        return getattr(self.stream, name)


def watch_stdout() -> WatchedStdout:
    """Replace ``sys.stdout`` by a watched one (for the rest of the process)."""
    watched = WatchedStdout(sys.stdout)
    sys.stdout = watched
    return watched


def error_document(error: BaseException) -> dict[str, Any]:
    """The JSON document of any error that ended a command (``plan_id`` when it names one)."""
    from anna_common.errors import AnnaError, ErrorCode

    if isinstance(error, KeyboardInterrupt):
        error = AnnaError("interrupted", code=ErrorCode.CANCELLED)
    elif not isinstance(error, AnnaError):
        error = AnnaError(f"{type(error).__name__}: {error}", code=ErrorCode.INTERNAL_ERROR)
    detail = dict(error.detail)
    findings = detail.pop("findings", [])
    plan_id = detail.pop("plan_id", None)
    return {"status": "error", "code": str(error.code), "message": error.message,
            "hint": error.hint, "plan_id": plan_id if isinstance(plan_id, str) else None,
            "findings": findings if isinstance(findings, list) else [],
            "trace_id": detail.pop("trace_id", None), "detail": detail}


def emit_error(watched: WatchedStdout, error: BaseException) -> None:
    """Print ``error``'s document on stdout unless the command already printed one."""
    import json

    if watched.written:
        return
    watched.write(json.dumps(error_document(error), ensure_ascii=True, default=str) + "\n")
    watched.flush()
