"""The client's connection to annad: HTTP over the daemon's Unix socket.

A small stdlib HTTP client (``http.client`` on an ``AF_UNIX`` socket): it starts
quickly, where httpx would add its import time to every ``annactl`` command
(``bench/executor.py`` measures both). Each call opens
its own connection, so a stream being read never blocks another call.
Non-2xx answers become :class:`~anna_common.errors.AnnaError` through
``AnnaError.from_dict``; a daemon that cannot be reached raises
``DaemonError(DAEMON_UNAVAILABLE)``. Protocol models are imported when first
needed; a client made with ``wire=True`` answers the calls of applying a stored plan
(health, plan, preview, events, cancel, confirm) with :class:`~annactl.core.wire.Wire` views
instead, which read like the models and need no pydantic (``annactl apply ID``).

:func:`connect` finds the daemon: ``ANNA_SOCKET``, else the system socket if it
answers and lets this user change things, else the per-user socket — starting a
per-user ``annad --user-mode`` there when none answers.
"""

from __future__ import annotations

import http.client
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from anna_common.errors import AnnaError, DaemonError, ErrorCode
from anna_common.protocol.routes import SESSION_KEYS, SESSION_VALUE_CHARS, Route
from annactl.core.daemon_admin import LONG_TIMEOUT, AdminCalls
from annactl.core.daemon_http import (
    UnixConnection,
    events,
    http_error,
    plan_path,
    session_body,
    unavailable,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from anna_common.plan import ActionPlan
    from anna_common.protocol.models import (
        ChecksResponse,
        ExecEvent,
        Health,
        JudgeResponse,
        PlanList,
        PlanRecord,
        RollbackResponse,
        SessionEnv,
        SubmitResponse,
        TelemetryResponse,
    )
    from anna_common.protocol.preview import PlanPreview
    from annactl.core.config import ClientSettings
    from annactl.core.quicksettings import QuickSettings

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for an ordinary answer."""
SUBMIT_TIMEOUT = 120.0
"""Seconds a submit (or judge) may take: the daemon previews the plan before it answers."""
_CLIENT_DEFAULT = -1.0
"""``timeout`` meaning "this client's own timeout"; ``None`` means no timeout at all."""
SOCKET_NAME = "annad.sock"
"""File name of a per-user daemon's socket under ``runtime_dir()``."""


class DaemonClient(AdminCalls):
    """Calls to one daemon socket; every method maps to one API route."""

    def __init__(self, socket_path: Path, *, timeout: float | None = None,
                 wire: bool = False) -> None:
        self.socket_path = Path(socket_path)
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.submit_timeout = SUBMIT_TIMEOUT if timeout is None else timeout
        """A submit's (and judge's) bound: a timeout the caller chose wins over the default."""
        self.wire = wire
        """Answer with :class:`~annactl.core.wire.Wire` views where the apply path reads."""
        self.mode: str | None = None
        """``system`` or ``user`` once :func:`connect` has seen the daemon's health."""

    def _view(self, data: Any, model: str) -> Any:
        """``data`` as the protocol model named ``model`` (a view of it with ``wire``)."""
        if self.wire:
            from annactl.core.wire import ShapeError, Wire

            if not isinstance(data, dict):
                raise ShapeError(f"{model}: not a JSON object")
            return Wire(data)
        import anna_common.protocol.models
        import anna_common.protocol.preview

        protocol = anna_common.protocol
        module = protocol.preview if model == "PlanPreview" else protocol.models
        return getattr(module, model).model_validate(data)

    def session(self) -> SessionEnv | dict[str, str]:
        """The caller's whitelisted session environment to send (a plain dict with
        ``wire``: the same keys and values :meth:`SessionEnv.from_environ` keeps)."""
        if self.wire:
            return {k: os.environ[k][:SESSION_VALUE_CHARS] for k in SESSION_KEYS
                    if os.environ.get(k)}
        from anna_common.protocol.models import SessionEnv

        return SessionEnv.from_environ(dict(os.environ))

    # ------------------------------------------------------------------ transport

    def _send(self, method: str, path: str, body: Any = None,
              *, headers: dict[str, str] | None = None,
              timeout: float | None = _CLIENT_DEFAULT
              ) -> tuple[UnixConnection, http.client.HTTPResponse]:
        # None must reach the socket as None: the event stream of a running plan has no
        # read timeout (a step may be silent for minutes; a timeout there would report the
        # daemon as gone while the plan goes on)
        conn = UnixConnection(self.socket_path,
                               self.timeout if timeout == _CLIENT_DEFAULT else timeout)
        payload = None if body is None else json.dumps(body).encode("utf-8")
        sent = {"Accept": "application/json", **(headers or {})}
        if payload is not None:
            sent["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=payload, headers=sent)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise unavailable(self.socket_path, exc) from None
        if not 200 <= response.status < 300:
            raw = response.read()
            conn.close()
            from annactl.core.plainwords import plain_error

            raise plain_error(http_error(response.status, raw), path)
        return conn, response

    def _call(self, method: str, path: str, body: Any = None,
              *, headers: dict[str, str] | None = None,
              timeout: float | None = _CLIENT_DEFAULT) -> Any:
        conn, response = self._send(method, path, body, headers=headers, timeout=timeout)
        try:
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise unavailable(self.socket_path, exc) from None
        finally:
            conn.close()
        try:
            return json.loads(raw)
        except ValueError:
            raise DaemonError("annad answered with something that is not JSON",
                              code=ErrorCode.DAEMON_UNAVAILABLE) from None

    # ------------------------------------------------------------------ API

    def health(self, timeout: float | None = _CLIENT_DEFAULT) -> Health:
        """``GET /v1/health``."""
        health: Health = self._view(self._call("GET", Route.HEALTH, timeout=timeout), "Health")
        return health

    def check_version(self, timeout: float | None = _CLIENT_DEFAULT) -> Health:
        """Health, refusing a daemon that speaks another protocol version."""
        from anna_common.protocol.routes import API_VERSION

        health = self.health(timeout)
        if health.api_version != API_VERSION:
            raise AnnaError(f"annad speaks protocol v{health.api_version}; this annactl speaks "
                            f"v{API_VERSION}", code=ErrorCode.API_VERSION_MISMATCH,
                            hint="restart annad after upgrading Anna")
        return health

    def telemetry(self, *, fresh: bool = False, session: SessionEnv | None = None
                  ) -> TelemetryResponse:
        """``GET /v1/telemetry`` (the session goes in the ``X-Anna-Session`` header)."""
        from anna_common.protocol.models import TelemetryResponse
        from anna_common.protocol.routes import SESSION_HEADER

        headers = {SESSION_HEADER: session.model_dump_json(exclude_none=True)} if session else {}
        path = Route.TELEMETRY + ("?fresh=1" if fresh else "")
        return TelemetryResponse.model_validate(self._call("GET", path, headers=headers))

    def submit(self, plan: ActionPlan, *, request: str = "", source: str = "model",
               approved_digest: str | None = None, revises: str | None = None,
               preview: bool = True) -> SubmitResponse:
        """``POST /v1/plans``: the daemon validates, classifies and stores the plan
        (``approved_digest``: refused unless the plan's digest is that; ``revises``: the
        stored plan of this request, not run yet, this one replaces; not ``preview``: stored
        only to run its checks, not previewed and not executable until revised)."""
        from anna_common.protocol.models import SubmitResponse

        # a memory proposal is the client's business (asked about here, never run): the daemon
        # and its journal never see it
        data = plan.model_dump(mode="json")
        data.pop("memory_patch", None)
        body: dict[str, Any] = {"plan": data, "request": request, "source": source}
        optional = {"approved_digest": approved_digest, "revises": revises}
        body.update({k: v for k, v in optional.items() if v is not None})
        path = Route.PLANS if preview else f"{Route.PLANS}?preview=false"
        return SubmitResponse.model_validate(self._call("POST", path, body,
                                                        timeout=self.submit_timeout))

    def judge(self, plan: ActionPlan, approved_digest: str | None) -> JudgeResponse:
        """``POST /v1/judge``: what the daemon would decide; nothing is stored or run
        (``approved_digest`` None: no digest to verify)."""
        from anna_common.protocol.models import JudgeResponse

        data = plan.model_dump(mode="json")
        data.pop("memory_patch", None)
        body = {"plan": data, "approved_digest": approved_digest}
        return JudgeResponse.model_validate(self._call("POST", Route.JUDGE, body,
                                                       timeout=self.submit_timeout))

    def run_checks(self, plan_id: str, *, session: SessionEnv | dict[str, str] | None = None
                   ) -> ChecksResponse:
        """``POST /v1/plans/{id}/checks``."""
        from anna_common.protocol.models import ChecksResponse

        body = {"session": session_body(session)}
        return ChecksResponse.model_validate(
            self._call("POST", plan_path(Route.CHECKS, plan_id), body, timeout=LONG_TIMEOUT))

    def execute(self, plan_id: str, digest: str, *, confirmed: bool, high_confirmed: bool,
                session: SessionEnv | dict[str, str] | None = None, confirm_word: str | None = None,
                keep_on_verify_fail: bool = False) -> Iterator[ExecEvent]:
        """``POST /v1/plans/{id}/execute``: yields events until the plan finishes.

        ``confirm_word``: for a HIGH plan, the word the person typed (the daemon compares it
        with its own). Refusals (digest, confirmations, PLAN_RUNNING, ...) raise before the
        first event.
        """
        body: dict[str, Any] = {"digest": digest, "confirmed": confirmed,
                                "high_confirmed": high_confirmed, "session": session_body(session)}
        if confirm_word is not None:
            body["confirm_word"] = confirm_word
        if keep_on_verify_fail:
            body["keep_on_verify_fail"] = True
        # no read timeout: a step may run for minutes without printing anything
        conn, response = self._send("POST", plan_path(Route.EXECUTE, plan_id), body,
                                    timeout=None)
        return events(conn, response, self.socket_path, wire=self.wire)

    def cancel(self, plan_id: str) -> PlanRecord:
        """``POST /v1/plans/{id}/cancel``: stop the running plan and undo it."""
        record: PlanRecord = self._view(
            self._call("POST", plan_path(Route.CANCEL, plan_id), timeout=LONG_TIMEOUT),
            "PlanRecord")
        return record

    def confirm(self, plan_id: str) -> PlanRecord:
        """``POST /v1/plans/{id}/confirm``: keep a plan the lock-out guard armed. Every call
        is a connection of its own, made now: what the daemon asks for."""
        record: PlanRecord = self._view(self._call("POST", plan_path(Route.CONFIRM, plan_id)),
                                        "PlanRecord")
        return record

    def get_plan(self, plan_id: str) -> PlanRecord:
        """``GET /v1/plans/{id}``."""
        record: PlanRecord = self._view(self._call("GET", plan_path(Route.PLAN, plan_id)),
                                        "PlanRecord")
        return record

    def preview(self, plan_id: str) -> PlanPreview:
        """``GET /v1/plans/{id}/preview``: what each step will do."""
        preview: PlanPreview = self._view(
            self._call("GET", plan_path(Route.PREVIEW, plan_id), timeout=LONG_TIMEOUT),
            "PlanPreview")
        return preview

    def list_plans(self, *, limit: int = 200, before: str | None = None) -> PlanList:
        """``GET /v1/plans``: ``limit`` plans (0: all) older than plan ``before``."""
        from anna_common.protocol.models import PlanList

        query = f"?limit={int(limit)}"
        if before is not None:
            query += "&before=" + quote(before, safe="")
        return PlanList.model_validate(self._call("GET", Route.PLANS + query))

    def mark_dry_run(self, plan_id: str) -> PlanRecord:
        """``POST /v1/plans/{id}/dry-run``: the plan was shown and not run."""
        record: PlanRecord = self._view(self._call("POST", plan_path(Route.DRY_RUN, plan_id)),
                                        "PlanRecord")
        return record

    def rollback(self, plan_id: str, *, session: SessionEnv | dict[str, str] | None = None,
                 confirmed: bool = True, confirm_word: str | None = None) -> RollbackResponse:
        """``POST /v1/plans/{id}/rollback`` (call it once the person has confirmed).

        ``confirm_word``: when a rollback command is HIGH, the word the person typed.
        """
        from anna_common.protocol.models import RollbackResponse

        body: dict[str, Any] = {"confirmed": confirmed, "session": session_body(session)}
        if confirm_word is not None:
            body.update(high_confirmed=True, confirm_word=confirm_word)
        return RollbackResponse.model_validate(
            self._call("POST", plan_path(Route.ROLLBACK, plan_id), body, timeout=LONG_TIMEOUT))

    def close(self) -> None:
        """Nothing is held between calls; kept for symmetry with other clients."""


def connect(settings: ClientSettings | QuickSettings, *, autostart: bool | None = None,
            wire: bool = False) -> DaemonClient:
    """The daemon to use, starting a per-user one if needed (see the module docstring);
    ``wire``: a client answering with views (:class:`DaemonClient`).

    The system daemon's socket says why it does not serve (:mod:`annactl.core.sysdaemon`):
    not set up, or not this user's (outside group anna) → the per-user daemon, as designed;
    installed but stopped, crashed or hung → an error saying so, never a silent fallback to
    another daemon's view."""
    from annactl.core.quicksettings import runtime_dir

    if settings.socket is not None:
        client = DaemonClient(settings.socket, wire=wire)
        client.mode = str(client.check_version().mode)
        return client
    system = DaemonClient(settings.system_socket, wire=wire)
    if _system_serves(system):
        return system
    user = DaemonClient(runtime_dir() / SOCKET_NAME, wire=wire)
    if _answers(user):
        return user
    if not (settings.autostart if autostart is None else autostart):
        raise DaemonError("no annad is running", code=ErrorCode.DAEMON_UNAVAILABLE,
                          hint="set up the system daemon (annactl setup) or allow autostart "
                          "(autostart = true)")
    from annactl.core.autostart import start_user_daemon

    start_user_daemon(user.socket_path, log_dir=settings.state_dir,
                      probe=lambda: _answers(user))
    return user


def _system_serves(system: DaemonClient) -> bool:
    """The system daemon answers (within :data:`~annactl.core.sysdaemon.PROBE_TIMEOUT_S`) and
    lets this user change things; False when it is not set up or not this user's to use;
    :func:`~annactl.core.sysdaemon.not_answering`'s error when it is installed but cannot
    serve. No ``Path.exists()`` first: on the system socket it raises ``PermissionError`` for
    everyone outside group anna (``/run/anna`` is ``0750 root:anna``); connecting answers the
    same question."""
    from annactl.core.sysdaemon import PROBE_TIMEOUT_S, not_answering

    try:
        health = system.check_version(timeout=PROBE_TIMEOUT_S)
    except DaemonError as exc:
        if exc.code is ErrorCode.DAEMON_UNTRUSTED:  # said, never skipped
            raise
        stuck = not_answering(system.socket_path, exc.detail.get("reason"))
        if stuck is not None:
            raise stuck from None
        return False
    system.mode = str(health.mode)
    return health.caller_authorised


def _answers(client: DaemonClient) -> bool:
    """The per-user daemon answers with our protocol version."""
    try:
        health = client.check_version()
    except DaemonError as exc:
        if exc.code is ErrorCode.DAEMON_UNTRUSTED:
            raise
        return False
    client.mode = str(health.mode)
    return True
