"""One error vocabulary for the daemon and the client.

Every failure Anna reports carries an :class:`ErrorCode`. The code travels as
a JSON field (``{"code": ..., "message": ..., "detail": ...}``) and is never
parsed back out of a message. The daemon turns an :class:`AnnaError` into an
HTTP body in exactly one module (``annad/api/errors.py``); the client turns it
into an exit status in exactly one function (``annactl/exit_codes.py``).

Wire values are append-only: a code, once released, keeps its spelling.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Stable error codes shared by ``annad`` and ``annactl``."""

    # --- generic -------------------------------------------------------------
    INTERNAL_ERROR = "INTERNAL_ERROR"
    """A bug in Anna; the message says where. Never caused by user input."""
    BAD_REQUEST = "BAD_REQUEST"
    """The request body or parameters did not match the protocol models."""
    USAGE_ERROR = "USAGE_ERROR"
    """The command line was wrong (unknown option, missing argument, bad file)."""
    UNKNOWN_COMMAND = "UNKNOWN_COMMAND"
    """One bare word that is no annactl command (``annactl version``): no model was asked."""
    CONFIG_INVALID = "CONFIG_INVALID"
    """A configuration file or ANNA_*/ANNAD_* variable could not be read."""
    API_VERSION_MISMATCH = "API_VERSION_MISMATCH"
    """Client and daemon speak different protocol versions."""

    # --- plans ---------------------------------------------------------------
    PLAN_INVALID = "PLAN_INVALID"
    """The plan failed validation; ``detail.findings`` lists why."""
    PLAN_BANNED = "PLAN_BANNED"
    """The plan contains a hard-banned command; it can never be approved."""
    PLAN_NOT_FOUND = "PLAN_NOT_FOUND"
    """No plan with that id is stored."""
    PLAN_RUNNING = "PLAN_RUNNING"
    """Another plan is executing; one plan runs at a time."""
    PLAN_STATE = "PLAN_STATE"
    """The plan is not in a state that allows this (e.g. executing twice)."""
    DIGEST_MISMATCH = "DIGEST_MISMATCH"
    """The digest sent with execute is not the one returned at submit."""
    CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"
    """The confirmations given do not cover the plan's risk tier."""
    CHECK_NOT_READ_ONLY = "CHECK_NOT_READ_ONLY"
    """A necessary check is not read-only by the daemon's own assessment."""

    # --- identity and scope -------------------------------------------------
    PERMISSION_DENIED = "PERMISSION_DENIED"
    """The caller (by SO_PEERCRED) may not use this endpoint."""
    SCOPE_REQUIRES_ROOT = "SCOPE_REQUIRES_ROOT"
    """A system-scope step was sent to a per-user daemon."""

    # --- execution -----------------------------------------------------------
    EXECUTION_FAILED = "EXECUTION_FAILED"
    """A step failed; the plan was rolled back (see ``detail``)."""
    CONFINEMENT_REFUSED = "CONFINEMENT_REFUSED"
    """An unasked command (INFO step, check) did not run: its confinement could not be built
    here (``message`` says which wall: Landlock, seccomp, the run's cgroup…); never unconfined."""
    BACKUP_REFUSED = "BACKUP_REFUSED"
    """A step's write targets could not be backed up (unknown path, too big); it did not run."""
    STEP_TIMEOUT = "STEP_TIMEOUT"
    """A step exceeded its timeout and its process group was killed."""
    ROLLBACK_FAILED = "ROLLBACK_FAILED"
    """At least one undo action failed; ``detail`` lists which."""
    AUDIT_CHAIN_BROKEN = "AUDIT_CHAIN_BROKEN"
    """The journal's hash chain does not verify: a row was altered."""
    VERIFY_FAILED = "VERIFY_FAILED"
    """A step exited 0 but its postcondition (or a plan's verify command) failed; the
    plan was rolled back unless ``--keep-on-verify-fail`` was given."""

    # --- client <-> daemon ---------------------------------------------------
    DAEMON_UNAVAILABLE = "DAEMON_UNAVAILABLE"
    """No daemon answered and none could be started."""

    # --- model ---------------------------------------------------------------
    LLM_UNAVAILABLE = "LLM_UNAVAILABLE"
    """The model server could not be reached."""
    LLM_TIMEOUT = "LLM_TIMEOUT"
    """The model server did not answer in time."""
    LLM_HTTP_ERROR = "LLM_HTTP_ERROR"
    """The model server answered with an HTTP error."""
    LLM_MODEL_NOT_FOUND = "LLM_MODEL_NOT_FOUND"
    """The configured model is not on the server."""
    LLM_BAD_REPLY = "LLM_BAD_REPLY"
    """The reply was not a valid plan, even after one repair."""
    LLM_BUDGET_EXCEEDED = "LLM_BUDGET_EXCEEDED"
    """A per-request budget (calls, prompt bytes, allowed models) was hit."""
    LLM_REPLAY_MISS = "LLM_REPLAY_MISS"
    """Replay mode found no recorded response for this request."""
    LLM_ECHOED_EXAMPLE = "LLM_ECHOED_EXAMPLE"
    """The reply copied a prompt example instead of planning the request, even after repair."""
    LLM_OFF_REQUEST = "LLM_OFF_REQUEST"
    """The plan does not do what was asked (no step could), even after one repair."""
    LLM_BAD_EVALUATION = "LLM_BAD_EVALUATION"
    """The model's evaluation of a finished plan was not valid (Anna's own summary is shown)."""

    # --- prompt files and model proposals (seed 003's codes) -----------------
    PROMPT_JSON_INVALID = "PROMPT_JSON_INVALID"
    """The prompt registry is not valid JSON (found at start, before any request)."""
    PROMPT_SCHEMA_INVALID = "PROMPT_SCHEMA_INVALID"
    """The prompt registry lacks a field, or names a prompt file that is not there."""
    PROMPT_SEGMENT_EMPTY = "PROMPT_SEGMENT_EMPTY"
    """A prompt file is empty."""
    PROMPT_HASH_MISMATCH = "PROMPT_HASH_MISMATCH"
    """A prompt file does not match its registered sha256 (found at start)."""
    SCOPE_VIOLATION = "SCOPE_VIOLATION"
    """The model proposed a change outside its scope (a memory key not on the whitelist)."""
    VERSION_CONFLICT = "VERSION_CONFLICT"
    """The memory changed between a proposal and its acceptance; nothing was applied."""

    # --- the person ----------------------------------------------------------
    DECLINED = "DECLINED"
    """The person declined the plan at a confirmation prompt."""
    CANCELLED = "CANCELLED"
    """The person pressed Ctrl-C."""

    # --- policy --------------------------------------------------------------
    POLICY_INVALID = "POLICY_INVALID"
    """A policy file is malformed; ``detail`` names the file and line. Never "allow all"."""
    POLICY_DENIED = "POLICY_DENIED"
    """A policy rule denies a command of the plan; ``detail.rule`` names the rule."""

    # --- observed change sets (appended) -------------------------------------
    OBSERVED_CHANGE_REFUSED = "OBSERVED_CHANGE_REFUSED"
    """What a step really changed (its captured change set) was refused before any of it
    landed: above the approved tier, a secret or protected path, denied by the policy, or not
    in the preview; ``message`` lists the observed changes and why."""
    ROLLBACK_INCOMPLETE = "ROLLBACK_INCOMPLETE"
    """After an undo, a touched path is not as it was before the plan (compared with its
    recorded pre-state); ``detail`` lists the paths."""
    ROLLBACK_UNVERIFIED = "ROLLBACK_UNVERIFIED"
    """The undo ran without a failure, but what a live program changed (network, desktop,
    containers…) was undone by a rollback command whose effect Anna cannot check;
    ``detail.unverified`` lists those steps. Not a success claim."""
    CAPTURE_UNAVAILABLE = "CAPTURE_UNAVAILABLE"
    """A step's writes cannot be captured on this machine (Anna's state directory is on a
    file system that cannot hold the upper layers, such as overlayfs in a container booted
    from an image); the step did not run, and never runs live instead."""
    OBSERVED_CHANGE_TOO_LARGE = "OBSERVED_CHANGE_TOO_LARGE"
    """A captured step changed more than Anna checks (``capture_max_files``,
    ``capture_max_bytes``, ``capture_max_depth``, or half the state disk's free room while it
    ran): it was stopped or its change set refused, nothing of it landed; ``message`` names
    the counts and the limits."""

    # --- the daemon's own state (appended) --------------------------------------
    JOURNAL_DAMAGED = "JOURNAL_DAMAGED"
    """annad's journal file cannot be read (a damaged page, not SQLite, truncated): nothing
    was run; ``hint`` says how to move it aside (the backups stay) and check the copy."""
    DAEMON_UNTRUSTED = "DAEMON_UNTRUSTED"
    """What listens at the daemon's socket is neither root's nor the caller's (the socket
    file's owner or the peer's ``SO_PEERCRED``): annactl sent it nothing."""
    # --- agents (MCP, appended) ----------------------------------------------
    RATE_LIMITED = "RATE_LIMITED"
    """An agent (``annactl mcp``) made more calls, proposals or waiting plans than the
    policy's ``[agents]`` limits allow for it; nothing was done. ``detail`` names the
    limit and when to try again (``retry_after_s``)."""
    # --- bounds (appended) ---------------------------------------------------
    PREVIEW_MEMORY_EXCEEDED = "PREVIEW_MEMORY_EXCEEDED"
    """A plan's preview held more memory than its cap (``preview_memory``; its cgroup's, or
    where none can be made the sum its helper watches) and was stopped: the steps it had not
    shown have no preview (``StepPreview.code``); the plan itself stands."""


class AnnaError(Exception):
    """Base of every error Anna raises on purpose.

    ``code`` is the stable machine-readable reason, ``message`` one human line,
    ``detail`` a JSON-serialisable mapping with specifics (findings, step ids).
    """

    code: ErrorCode = ErrorCode.INTERNAL_ERROR

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        detail: dict[str, Any] | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.detail: dict[str, Any] = dict(detail or {})
        self.hint = hint

    def to_dict(self) -> dict[str, Any]:
        """The wire form: ``{"code", "message", "detail"}`` (plus ``hint`` if set)."""
        body: dict[str, Any] = {
            "code": str(self.code),
            "message": self.message,
            "detail": self.detail,
        }
        if self.hint:
            body["hint"] = self.hint
        return body

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> AnnaError:
        """Rebuild an error received over the wire; unknown codes become INTERNAL_ERROR."""
        raw = str(body.get("code", ""))
        try:
            code = ErrorCode(raw)
        except ValueError:
            code = ErrorCode.INTERNAL_ERROR
        detail = body.get("detail")
        return cls(
            str(body.get("message", raw or "unknown error")),
            code=code,
            detail=detail if isinstance(detail, dict) else {},
            hint=body.get("hint") if isinstance(body.get("hint"), str) else None,
        )


class PlanError(AnnaError):
    """A plan could not be accepted (invalid, banned, unknown, wrong state)."""

    code = ErrorCode.PLAN_INVALID


class ExecutionError(AnnaError):
    """Executing a plan failed; ``detail`` carries the rollback outcome."""

    code = ErrorCode.EXECUTION_FAILED


class DaemonError(AnnaError):
    """The daemon could not be reached or answered outside the protocol."""

    code = ErrorCode.DAEMON_UNAVAILABLE


class LLMError(AnnaError):
    """The model server failed or its reply could not be used."""

    code = ErrorCode.LLM_UNAVAILABLE


class UsageError(AnnaError):
    """The person asked for something malformed (bad option, unreadable file)."""

    code = ErrorCode.USAGE_ERROR
