"""Exit statuses of annactl, and the one place errors become them.

| status | value | meaning |
|---|---|---|
| SUCCESS | 0 | done (or nothing to do) |
| ERROR | 1 | an unexpected internal error (a bug; the message says where) |
| USAGE | 2 | bad command line, unreadable file, invalid configuration |
| PLAN_INVALID | 3 | the plan is invalid or contains a hard-banned step |
| DECLINED | 4 | the person said no at a confirmation |
| EXECUTION_FAILED | 5 | a step failed; the plan was rolled back |
| ROLLBACK_FAILED | 6 | a rollback (or part of one) failed |
| DAEMON_UNAVAILABLE | 7 | no daemon answered and none could be started |
| MODEL_UNAVAILABLE | 8 | the model server is unreachable, timed out or failed |
| PERMISSION_DENIED | 9 | the daemon refused the caller (not root or group anna) |
| PLAN_RUNNING | 10 | another plan is running; nothing was run (the refused plan is ``refused``) |
| OFF_REQUEST | 11 | the model did not address the request (``LLM_OFF_REQUEST``); nothing ran |
| UNKNOWN_COMMAND | 12 | one bare word that is no command (``annactl version``); no model asked |
| AUDIT_BROKEN | 13 | the journal was altered (``audit verify``; execute or rollback refused) |
| ROLLBACK_UNVERIFIED | 14 | undone without a failure, but a live step's undo is unchecked |
| INTERRUPTED | 130 | Ctrl-C |
"""

from __future__ import annotations

from enum import IntEnum

from anna_common.errors import AnnaError, ErrorCode


class ExitStatus(IntEnum):
    """Documented process exit statuses (see the module docstring)."""

    SUCCESS = 0
    ERROR = 1
    USAGE = 2
    PLAN_INVALID = 3
    DECLINED = 4
    EXECUTION_FAILED = 5
    ROLLBACK_FAILED = 6
    DAEMON_UNAVAILABLE = 7
    MODEL_UNAVAILABLE = 8
    PERMISSION_DENIED = 9
    PLAN_RUNNING = 10
    OFF_REQUEST = 11
    UNKNOWN_COMMAND = 12
    AUDIT_BROKEN = 13
    ROLLBACK_UNVERIFIED = 14
    INTERRUPTED = 130


_BY_CODE: dict[ErrorCode, ExitStatus] = {
    ErrorCode.USAGE_ERROR: ExitStatus.USAGE,
    ErrorCode.UNKNOWN_COMMAND: ExitStatus.UNKNOWN_COMMAND,
    ErrorCode.CONFIG_INVALID: ExitStatus.USAGE,
    ErrorCode.BAD_REQUEST: ExitStatus.USAGE,
    ErrorCode.PLAN_INVALID: ExitStatus.PLAN_INVALID,
    ErrorCode.PLAN_BANNED: ExitStatus.PLAN_INVALID,
    ErrorCode.POLICY_DENIED: ExitStatus.PLAN_INVALID,
    ErrorCode.POLICY_INVALID: ExitStatus.USAGE,
    ErrorCode.CHECK_NOT_READ_ONLY: ExitStatus.PLAN_INVALID,
    ErrorCode.DIGEST_MISMATCH: ExitStatus.PLAN_INVALID,
    ErrorCode.PLAN_NOT_FOUND: ExitStatus.USAGE,
    ErrorCode.PLAN_STATE: ExitStatus.USAGE,
    ErrorCode.PLAN_RUNNING: ExitStatus.PLAN_RUNNING,
    ErrorCode.CONFIRMATION_REQUIRED: ExitStatus.DECLINED,
    ErrorCode.DECLINED: ExitStatus.DECLINED,
    ErrorCode.EXECUTION_FAILED: ExitStatus.EXECUTION_FAILED,
    ErrorCode.STEP_TIMEOUT: ExitStatus.EXECUTION_FAILED,
    ErrorCode.BACKUP_REFUSED: ExitStatus.EXECUTION_FAILED,
    ErrorCode.CONFINEMENT_REFUSED: ExitStatus.EXECUTION_FAILED,
    ErrorCode.VERIFY_FAILED: ExitStatus.EXECUTION_FAILED,
    ErrorCode.SCOPE_REQUIRES_ROOT: ExitStatus.PERMISSION_DENIED,
    ErrorCode.ROLLBACK_FAILED: ExitStatus.ROLLBACK_FAILED,
    ErrorCode.ROLLBACK_INCOMPLETE: ExitStatus.ROLLBACK_FAILED,
    ErrorCode.ROLLBACK_UNVERIFIED: ExitStatus.ROLLBACK_UNVERIFIED,
    ErrorCode.DAEMON_UNAVAILABLE: ExitStatus.DAEMON_UNAVAILABLE,
    ErrorCode.DAEMON_UNTRUSTED: ExitStatus.DAEMON_UNAVAILABLE,
    ErrorCode.JOURNAL_DAMAGED: ExitStatus.DAEMON_UNAVAILABLE,
    ErrorCode.API_VERSION_MISMATCH: ExitStatus.DAEMON_UNAVAILABLE,
    ErrorCode.PERMISSION_DENIED: ExitStatus.PERMISSION_DENIED,
    ErrorCode.RATE_LIMITED: ExitStatus.PERMISSION_DENIED,
    ErrorCode.LLM_UNAVAILABLE: ExitStatus.MODEL_UNAVAILABLE,
    ErrorCode.LLM_TIMEOUT: ExitStatus.MODEL_UNAVAILABLE,
    ErrorCode.LLM_HTTP_ERROR: ExitStatus.MODEL_UNAVAILABLE,
    ErrorCode.LLM_MODEL_NOT_FOUND: ExitStatus.MODEL_UNAVAILABLE,
    ErrorCode.LLM_BAD_REPLY: ExitStatus.PLAN_INVALID,
    ErrorCode.LLM_ECHOED_EXAMPLE: ExitStatus.PLAN_INVALID,
    ErrorCode.LLM_OFF_REQUEST: ExitStatus.OFF_REQUEST,
    ErrorCode.LLM_BAD_EVALUATION: ExitStatus.PLAN_INVALID,
    ErrorCode.LLM_BUDGET_EXCEEDED: ExitStatus.MODEL_UNAVAILABLE,
    ErrorCode.LLM_REPLAY_MISS: ExitStatus.MODEL_UNAVAILABLE,
    ErrorCode.CANCELLED: ExitStatus.INTERRUPTED,
    ErrorCode.PROMPT_JSON_INVALID: ExitStatus.ERROR,
    ErrorCode.PROMPT_SCHEMA_INVALID: ExitStatus.ERROR,
    ErrorCode.PROMPT_SEGMENT_EMPTY: ExitStatus.ERROR,
    ErrorCode.PROMPT_HASH_MISMATCH: ExitStatus.ERROR,
    ErrorCode.SCOPE_VIOLATION: ExitStatus.USAGE,
    ErrorCode.VERSION_CONFLICT: ExitStatus.USAGE,
    ErrorCode.AUDIT_CHAIN_BROKEN: ExitStatus.AUDIT_BROKEN,
    ErrorCode.INTERNAL_ERROR: ExitStatus.ERROR,
}


_BY_PLAN_STATUS: dict[str, ExitStatus] = {
    "succeeded": ExitStatus.SUCCESS,
    "submitted": ExitStatus.SUCCESS,
    "answered": ExitStatus.SUCCESS,
    "dry_run": ExitStatus.SUCCESS,
    "failed": ExitStatus.EXECUTION_FAILED,
    "rolled_back": ExitStatus.EXECUTION_FAILED,
    "interrupted": ExitStatus.EXECUTION_FAILED,
    "rollback_failed": ExitStatus.ROLLBACK_FAILED,
    "rollback_incomplete": ExitStatus.ROLLBACK_FAILED,
    "rollback_unverified": ExitStatus.ROLLBACK_UNVERIFIED,
    "refused": ExitStatus.PLAN_RUNNING,
}


def exit_status_for_plan(status: str, *, after_rollback: bool = False) -> ExitStatus:
    """The exit status for a plan's final state (a ``PlanStatus`` value).

    After an execution, ``rolled_back`` means a step failed and the plan was undone (5).
    After a rollback the person asked for, ``rolled_back`` is success (0), and
    ``interrupted`` (the daemon stopped it between two steps; the rest is still to undo)
    is a rollback not done in full (6).
    """
    if after_rollback and status == "rolled_back":
        return ExitStatus.SUCCESS
    if after_rollback and status == "interrupted":
        return ExitStatus.ROLLBACK_FAILED
    return _BY_PLAN_STATUS.get(status, ExitStatus.ERROR)


def exit_status_for(error: BaseException) -> ExitStatus:
    """The exit status for any exception (the single mapping)."""
    if isinstance(error, KeyboardInterrupt):
        return ExitStatus.INTERRUPTED
    if isinstance(error, AnnaError):
        return _BY_CODE.get(error.code, ExitStatus.ERROR)
    return ExitStatus.ERROR
