"""The one place daemon errors become HTTP responses: ``{code, message, detail}``.

Every failure a client sees is an :class:`~anna_common.protocol.models.ErrorBody` with a
stable :class:`~anna_common.errors.ErrorCode`; the HTTP status is derived from the
code here and nowhere else. Unexpected exceptions are logged with their
traceback on the daemon's stderr and reach the client only as INTERNAL_ERROR.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import TYPE_CHECKING

from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.models import ErrorBody

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from starlette.requests import Request
    from starlette.responses import Response

log = logging.getLogger(__name__)

STATUS: dict[ErrorCode, int] = {
    ErrorCode.BAD_REQUEST: 400,
    ErrorCode.API_VERSION_MISMATCH: 400,
    ErrorCode.CONFIG_INVALID: 500,
    ErrorCode.PLAN_INVALID: 422,
    ErrorCode.PLAN_BANNED: 422,
    ErrorCode.POLICY_DENIED: 422,
    ErrorCode.POLICY_INVALID: 500,
    ErrorCode.CHECK_NOT_READ_ONLY: 422,
    ErrorCode.PLAN_NOT_FOUND: 404,
    ErrorCode.PLAN_RUNNING: 409,
    ErrorCode.PLAN_STATE: 409,
    ErrorCode.DIGEST_MISMATCH: 409,
    ErrorCode.CONFIRMATION_REQUIRED: 412,
    ErrorCode.PERMISSION_DENIED: 403,
    ErrorCode.SCOPE_REQUIRES_ROOT: 403,
    ErrorCode.DAEMON_UNAVAILABLE: 503,
    # the request is well formed; the stored journal refuses it (nothing was run): a
    # conflict with the daemon's state, not a crash (docs/protocol.md, "Errors")
    ErrorCode.AUDIT_CHAIN_BROKEN: 409,
    ErrorCode.BACKUP_REFUSED: 507,  # the state disk cannot hold the journal or the backups
    ErrorCode.JOURNAL_DAMAGED: 503,  # the daemon's own state cannot be read: nothing ran
    ErrorCode.RATE_LIMITED: 429,  # an agent over its policy's limits (annactl mcp)
}
"""HTTP status per error code; anything else is 500."""


def error_response(error: AnnaError) -> JSONResponse:
    """The HTTP response for a coded error."""
    body = ErrorBody(code=str(error.code), message=error.message, detail=error.detail,
                     hint=error.hint)
    return JSONResponse(body.model_dump(mode="json", exclude_none=True),
                        status_code=STATUS.get(error.code, 500))


async def _anna(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AnnaError)
    if exc.code is ErrorCode.JOURNAL_DAMAGED:  # the operator must see it, not only the caller
        log.critical("%s; %s", exc.message, exc.hint)
    return error_response(exc)


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404:
        error = AnnaError(f"no such endpoint: {request.url.path[:200]}",
                          code=ErrorCode.BAD_REQUEST, detail={"status": 404})
        response = error_response(error)
        response.status_code = 404
        return response
    try:
        phrase = HTTPStatus(exc.status_code).phrase
    except ValueError:
        phrase = "error"
    response = error_response(AnnaError(f"{phrase}: {request.method} {request.url.path[:200]}",
                                        code=ErrorCode.BAD_REQUEST,
                                        detail={"status": exc.status_code}))
    response.status_code = exc.status_code
    return response


async def _internal(request: Request, exc: Exception) -> JSONResponse:
    log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(AnnaError(f"internal error ({type(exc).__name__}); see the daemon's "
                                    "log", code=ErrorCode.INTERNAL_ERROR))


HANDLERS: dict[type[Exception], Callable[[Request, Exception], Awaitable[Response]]] = {
    AnnaError: _anna,
    StarletteHTTPException: _http,
    Exception: _internal,
}
"""The translations, as Starlette's ``exception_handlers`` (request validation raises
coded AnnaErrors itself: annad.api.routing)."""
