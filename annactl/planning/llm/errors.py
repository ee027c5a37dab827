"""The coded errors of model calls, and cancellation (split from
:mod:`annactl.planning.llm.base`, which re-exports them: a template's offline answer checks
for cancellation and builds no provider, so it need not import the interface's dataclasses,
bench/startup.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode, LLMError

if TYPE_CHECKING:
    import threading


def llm_error(code: ErrorCode, message: str, hint: str | None = None,
              **detail: Any) -> LLMError:
    """A coded model error with a one-line hint."""
    return LLMError(message, code=code, hint=hint, detail=detail)


def cancelled() -> AnnaError:
    """The error raised when the person cancels planning."""
    return AnnaError("planning was cancelled", code=ErrorCode.CANCELLED)


def check_cancel(cancel: threading.Event | None) -> None:
    """Raise :func:`cancelled` when ``cancel`` is set."""
    if cancel is not None and cancel.is_set():
        raise cancelled()
