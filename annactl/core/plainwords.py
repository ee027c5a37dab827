"""The daemon's plan states in words for people.

The journal's state names (``succeeded``, ``dry_run``…) are wire values for scripts
(``--json`` keeps them); a person reads what they mean. A ``PLAN_STATE`` refusal is
reworded here, once, where the client receives it: the code, the detail and the exit
status stay as they were.
"""

from __future__ import annotations

from anna_common.errors import AnnaError, ErrorCode

STATE_WORDS = {
    "submitted": "has not run yet",
    "dry_run": "was shown and not run",
    "answered": "was an answer with nothing to run",
    "running": "is running now",
    "rolling_back": "is being rolled back now",
    "succeeded": "already ran and succeeded",
    "failed": "already ran and failed (what it changed was undone)",
    "rolled_back": "was already rolled back",
    "rollback_failed": "was rolled back only in part",
    "rollback_incomplete": "was rolled back, but some paths are not as they were before it",
    "rollback_unverified": "was rolled back, but Anna could not check the undo of a step that "
                           "acted on the running system",
    "interrupted": "was interrupted before it finished",
    "refused": "was never run because another plan was running",
}
"""What each plan state means, as the end of "plan ID …"."""

ACTIONS = {"execute": ("run", "to do it again, ask again: Anna makes a new plan"),
           "rollback": ("rolled back", "see what it did: annactl show {plan_id}"),
           "dry-run": ("recorded as not run", "see it: annactl show {plan_id}"),
           "confirm": ("confirmed", "see it: annactl show {plan_id}"),
           "cancel": ("stopped", "see it: annactl show {plan_id}")}
"""The last part of a plan route → (what could not be done, what to do instead)."""


def state_words(status: str) -> str:
    """A plan state as words (an unknown state is shown as it is)."""
    return STATE_WORDS.get(status, f"is {status}")


def plain_error(error: AnnaError, path: str) -> AnnaError:
    """``error`` as the daemon sent it for ``path``, its message in plain words when it is a
    plan-state refusal about one plan (anything else is returned unchanged)."""
    status = error.detail.get("status")
    parts = path.split("?", 1)[0].strip("/").split("/")
    if error.code != ErrorCode.PLAN_STATE or not isinstance(status, str) or len(parts) < 3 \
            or parts[1] != "plans":
        return error
    plan_id = parts[2]
    verb, hint = ACTIONS.get(parts[3] if len(parts) > 3 else "", ("used", error.hint or ""))
    if error.detail.get("backups_removed"):
        return error  # the daemon's own sentence already says why, in words
    message = f"plan {plan_id} {state_words(status)}, so it cannot be {verb}"
    return AnnaError(message, code=error.code, detail=error.detail,
                     hint=hint.format(plan_id=plan_id) if hint else error.hint)
