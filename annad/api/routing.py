"""Routes on plain Starlette: what each endpoint takes, and the one adapter that serves them.

An :class:`Endpoint` declares its method, path, body and query models; :func:`route` turns it
into a Starlette route that reads and validates the request, calls the handler (a plain
function in the worker threads, a coroutine on the event loop) with a :class:`Call`, and
answers the pydantic model it returns as JSON (a Starlette response is sent as it is).
Input that does not match is a coded 400 (``BAD_REQUEST``, where and why in ``detail``).

Why not FastAPI (issue 22, idle memory at most 60 MB): FastAPI brought opentelemetry,
pydantic.v1, email and its own OpenAPI models into the daemon, ~8 MB of its idle RSS
(``bench/daemon_memory.py``), for a dependency system and a schema the daemon never serves.
The OpenAPI document the tests fuzz is built from the same declarations
(:mod:`annad.api.openapi`, imported by tests only).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route as StarletteRoute

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.routes import AGENT_HEADER
from annad.peer import CONNECTION_KEY, PEER_KEY, Peer

if TYPE_CHECKING:
    from annad.service import PlanService

M = TypeVar("M", bound=BaseModel)
Reply = BaseModel | Response
"""What a handler returns: a model (sent as JSON) or a response (a stream)."""
Handler = Callable[["Call"], Reply] | Callable[["Call"], Awaitable[Reply]]
"""A route's function: plain (run in a worker thread) or a coroutine (run on the loop)."""
MAX_ERRORS = 20
"""Validation problems reported per request (the rest are left out)."""
MAX_PATH_PARAM = 256
"""Longest path parameter accepted (plan ids are 22 characters, recipe names short): a longer
one is a coded 400 before any lookup (SQLite refuses LIKE patterns over 50,000 bytes)."""


@dataclass(frozen=True)
class Endpoint:
    """One route: its method, path, handler and what its request carries."""

    method: str
    path: str
    handler: Handler
    body: type[BaseModel] | Literal["json"] | None = None
    """The body's model; ``"json"`` for any JSON (the service validates it); None: none."""
    body_required: bool = False
    """Whether a request without a body is refused (else the handler gets None)."""
    query: type[BaseModel] | None = None
    """The query string's model (unknown parameters are ignored)."""
    headers: tuple[str, ...] = ()
    """Optional request headers the handler reads (documented in the OpenAPI only)."""
    documented: type[BaseModel] | None = None
    """For a ``"json"`` body the service validates itself: the model describing it in the
    OpenAPI document (annad.api.openapi), never used to validate."""
    agent: bool = False
    """An agent route (``/v1/agent/...``, served to ``annactl mcp``). Every other route
    refuses a request that names an agent (``X-Anna-Agent``): an agent's connection may
    look and propose, never execute, roll back, dismiss or collect."""


@dataclass(frozen=True)
class Call:
    """One request as a handler sees it: the caller, path parameters, body and query."""

    request: Request
    body: Any
    """The validated body model (None when absent), or the parsed JSON for ``"json"``."""
    query: BaseModel | None

    @property
    def service(self) -> PlanService:
        """The daemon's one PlanService."""
        service: PlanService = self.request.app.state.service
        return service

    @property
    def peer(self) -> Peer | None:
        """The caller as ``SO_PEERCRED`` reported it when the connection was made."""
        peer = self.request.scope.get("state", {}).get(PEER_KEY)
        return peer if isinstance(peer, Peer) else None

    @property
    def connection(self) -> int | None:
        """The number of the connection this request came on (None when unknown)."""
        number = self.request.scope.get("state", {}).get(CONNECTION_KEY)
        return number if isinstance(number, int) else None

    def param(self, name: str) -> str:
        """A path parameter (``plan_id``, ``name``)."""
        value: str = self.request.path_params[name]
        return value

    def body_as(self, model: type[M]) -> M | None:
        """The body, typed as the model the endpoint declared (None when none was sent)."""
        if self.body is None:
            return None
        if not isinstance(self.body, model):
            raise TypeError(f"the endpoint's body is not a {model.__name__}")
        return self.body

    def required_body(self, model: type[M]) -> M:
        """The body of an endpoint that requires one, typed as the model it declared."""
        body = self.body_as(model)
        if body is None:
            raise TypeError("the endpoint requires a body but got none")
        return body

    def query_as(self, model: type[M]) -> M:
        """The query, typed as the model the endpoint declared."""
        if not isinstance(self.query, model):
            raise TypeError(f"the endpoint's query is not a {model.__name__}")
        return self.query


def invalid(where: str, exc: ValidationError | None = None, message: str = "") -> AnnaError:
    """The coded 400 for a request part that does not match: where and why, never the input
    itself (echoing it could reflect untrusted text)."""
    problems = [{"loc": [where, *(str(p) for p in e.get("loc", ()))],
                 "msg": str(e.get("msg", ""))[:200]}
                for e in (exc.errors() if exc is not None else ())[:MAX_ERRORS]]
    if message:
        problems.append({"loc": [where], "msg": message})
    return AnnaError("the request does not match the protocol", code=ErrorCode.BAD_REQUEST,
                     detail={"errors": problems})


async def read_json(request: Request) -> Any:
    """The request body parsed as JSON; ``...`` when the body is empty."""
    try:
        raw = await request.body()
    except ClientDisconnect:  # also what a body too large or too slow turns into (app.py)
        raise AnnaError("the request body was cut off, too large or too slow",
                        code=ErrorCode.BAD_REQUEST) from None
    if not raw:
        return ...
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise AnnaError("the request body is not JSON", code=ErrorCode.BAD_REQUEST) from None


async def _body(endpoint: Endpoint, request: Request) -> Any:
    if endpoint.body is None:
        return None
    value = await read_json(request)
    if value is ... or (value is None and endpoint.body != "json"):
        if endpoint.body_required:
            raise invalid("body", message="a body is required")
        return None
    if endpoint.body == "json":
        return value
    try:
        return endpoint.body.model_validate(value)
    except ValidationError as exc:
        raise invalid("body", exc) from None


def _query(endpoint: Endpoint, request: Request) -> BaseModel | None:
    if endpoint.query is None:
        return None
    try:
        return endpoint.query.model_validate(dict(request.query_params))
    except ValidationError as exc:
        raise invalid("query", exc) from None


def route(endpoint: Endpoint) -> StarletteRoute:
    """The Starlette route serving one endpoint."""
    handler = endpoint.handler
    on_loop = inspect.iscoroutinefunction(handler)

    async def serve(request: Request) -> Response:
        for name, value in request.path_params.items():
            if len(value) > MAX_PATH_PARAM:
                raise invalid("path", message=f"{name} is longer than {MAX_PATH_PARAM} "
                                              "characters")
        if not endpoint.agent and AGENT_HEADER in request.headers:
            raise AnnaError("an agent reaches the daemon only through its /v1/agent routes",
                            code=ErrorCode.PERMISSION_DENIED)
        call = Call(request=request, body=await _body(endpoint, request),
                    query=_query(endpoint, request))
        if on_loop:
            reply = await handler(call)  # type: ignore[misc]
        else:
            reply = await run_in_threadpool(handler, call)
        if isinstance(reply, Response):
            return reply
        if not isinstance(reply, BaseModel):
            raise TypeError(f"{handler.__name__} returned {type(reply).__name__}")
        return Response(reply.model_dump_json(by_alias=True), media_type="application/json")

    served = StarletteRoute(endpoint.path, serve, methods=[endpoint.method],
                            name=getattr(handler, "__name__", None))
    assert served.methods is not None  # methods were given
    served.methods.discard("HEAD")  # Starlette adds it to GET routes; the daemon serves none
    return served
