"""How a command's failures end: a refused plan shown with its reasons, and with ``--json``
every failure as a JSON document on stdout too (the usual line on stderr and exit status)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from annactl.ui.console import Consoles


@contextmanager
def showing_rejections(consoles: Consoles, *, as_json: bool) -> Iterator[None]:
    """Show a plan that validation refused (a banned one with its BANNED badges and reasons)
    before its error ends the command; nothing of it was stored or run."""
    from annactl.commands.flow import PlanRejected

    try:
        yield
    except PlanRejected as exc:
        if exc.annotated is not None:
            from annactl.ui import render
            from annactl.ui.console import emit_json

            if as_json:
                emit_json(consoles, {"plan_id": None, "status": "rejected",
                                     "code": str(exc.code),
                                     "findings": exc.detail.get("findings", []),
                                     "annotated": exc.annotated.model_dump(mode="json")})
            else:
                consoles.out.print(render.plan_view(exc.annotated))
        raise


@contextmanager
def json_failures(consoles: Consoles, *, as_json: bool) -> Iterator[None]:
    """With ``--json``, every failure is a JSON document on stdout too (then the usual line
    on stderr and exit status): ``{"status": "error", "code", "message", "findings", …}``.

    A refused plan already printed its own document (:func:`showing_rejections`).
    """
    from annactl.commands.flow import PlanRejected

    try:
        yield
    except AnnaError as exc:
        if as_json and not (isinstance(exc, PlanRejected) and exc.annotated is not None):
            from annactl.ui.console import emit_json

            emit_json(consoles, error_json(exc))
        raise


def error_json(exc: AnnaError) -> dict[str, Any]:
    """The JSON document of a failure (untrusted strings stay JSON-escaped)."""
    from annactl.ui.jsonedge import error_document

    return error_document(exc)
