"""HTTP over annad's Unix socket: the connection, the error mapping and the event stream
(:class:`~annactl.core.daemon_client.DaemonClient` makes the calls)."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from anna_common.errors import AnnaError, DaemonError, ErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from anna_common.protocol.models import ExecEvent, SessionEnv


class UnixConnection(http.client.HTTPConnection):
    """``HTTPConnection`` that connects to a Unix socket path."""

    def __init__(self, path: Path, timeout: float | None) -> None:
        super().__init__("annad", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        """Open the Unix socket (instead of TCP)."""
        from annactl.core.peercheck import check_daemon

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(self._path))
            check_daemon(sock, self._path)  # nothing is sent to a daemon not ours or root's
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def unavailable(path: Path, exc: BaseException) -> DaemonError:
    """The error for a daemon that cannot be reached (DAEMON_UNAVAILABLE); ``detail.reason``
    says how (:func:`annactl.core.sysdaemon.reason_of`)."""
    from annactl.core.sysdaemon import reason_of

    words = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return DaemonError(f"annad at {path} is not answering: {words}",
                       code=ErrorCode.DAEMON_UNAVAILABLE, detail={"reason": reason_of(exc)})


def plan_path(route: str, plan_id: str) -> str:
    """A plan route with the (quoted) id filled in."""
    return route.replace("{plan_id}", quote(plan_id, safe=""))


def session_body(session: SessionEnv | dict[str, str] | None) -> dict[str, Any]:
    """The session environment as a request body field."""
    if isinstance(session, dict):
        return dict(session)
    return session.model_dump(exclude_none=True) if session is not None else {}


def http_error(status: int, raw: bytes) -> AnnaError:
    """A non-2xx answer as the coded error it carries."""
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if isinstance(body, dict) and "code" in body:
        return AnnaError.from_dict(body)
    return DaemonError(f"annad answered HTTP {status} outside the protocol",
                       code=ErrorCode.DAEMON_UNAVAILABLE)


def events(conn: UnixConnection, response: http.client.HTTPResponse, path: Path, *,
           wire: bool = False) -> Iterator[ExecEvent]:
    """An execution's NDJSON event stream, one event per line, until it ends."""
    try:
        while line := response.readline():
            if line.strip():
                yield event_line(line, wire=wire)
    except (OSError, http.client.HTTPException) as exc:
        raise unavailable(path, exc) from None
    finally:
        conn.close()


def event_line(line: bytes, *, wire: bool) -> ExecEvent:
    """One NDJSON line of an execution's events (a view of it with ``wire``)."""
    if not wire:
        from anna_common.protocol.models import ExecEvent

        return ExecEvent.model_validate_json(line)
    from annactl.core.wire import ShapeError, Wire

    try:
        data = json.loads(line)
    except ValueError:
        raise DaemonError("annad sent an event that is not JSON",
                          code=ErrorCode.DAEMON_UNAVAILABLE) from None
    if not isinstance(data, dict):
        raise ShapeError("ExecEvent: not a JSON object")
    event: ExecEvent = Wire(data)  # type: ignore[assignment]  # reads like the model
    return event


def audit_lines(conn: UnixConnection, response: http.client.HTTPResponse, path: Path,
                progress: Callable[[int], None] | None) -> Any:
    """The report (a JSON object) at the end of ``GET /v1/audit/verify?progress=1``'s NDJSON
    lines; ``progress`` is told each ``{"checked": N}`` line before it."""
    try:
        while line := response.readline():
            item = json.loads(line) if line.strip() else None
            if isinstance(item, dict) and isinstance(item.get("checked"), int):
                if progress is not None:
                    progress(item["checked"])
            elif isinstance(item, dict) and "report" in item:
                return item["report"]
    except (OSError, http.client.HTTPException) as exc:
        raise unavailable(path, exc) from None
    except ValueError:
        raise DaemonError("annad sent an audit line that is not JSON",
                          code=ErrorCode.DAEMON_UNAVAILABLE) from None
    finally:
        conn.close()
    raise DaemonError("annad ended the audit without its report (it stopped, or was restarted)",
                      code=ErrorCode.DAEMON_UNAVAILABLE)
