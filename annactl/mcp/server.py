"""The MCP server of ``annactl mcp``: the SDK's low-level server on stdio, Anna's tools.

The low-level :class:`mcp.server.lowlevel.Server` (not the decorator layer) so that Anna
decides, in one place, what an agent's input is and how a failure reads:

* arguments are validated by each tool's strict model; anything else (an unknown tool,
  a missing, extra, mistyped or oversized argument) is the JSON-RPC error ``-32602`` with
  ``data.code = "BAD_REQUEST"`` and where the problem is — never the input echoed, never a
  traceback;
* what the daemon refuses (``PLAN_BANNED``, ``POLICY_DENIED``, ``RATE_LIMITED``,
  ``DAEMON_UNAVAILABLE``…) is a tool result with ``isError`` and ``{code, message, hint}``,
  so the agent's model reads why;
* an unexpected failure is logged on stderr and reported as ``INTERNAL_ERROR``.

The agent is named by its MCP client info (``clientInfo``), made printable. Daemon calls
run in worker threads, at most :data:`CONCURRENT_CALLS` at once; a request line longer
than :data:`MAX_LINE` is dropped unread (as the SDK drops a line that is not JSON-RPC).
When the client goes away, calls in flight still finish in the daemon (each is one step
it completes on its own) and the server exits.
"""

from __future__ import annotations

import json
import logging
from typing import IO, TYPE_CHECKING, Any, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.agent import AgentInfo
from annactl import __version__
from annactl.mcp import guide, resources
from annactl.mcp.daemon import AgentClient
from annactl.mcp.tools import BY_NAME, TOOLS, ToolSpec

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from mcp.server.context import ServerRequestContext

log = logging.getLogger(__name__)
CONCURRENT_CALLS = 2
"""Daemon calls one server makes at once (more wait their turn)."""
MAX_LINE = 4 * 1024 * 1024
"""Longest JSON-RPC message read (bytes); a longer one is dropped."""


def agent_of(ctx: ServerRequestContext[Any, Any]) -> AgentInfo:
    """The agent as its MCP client named itself (untrusted; made printable)."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return AgentInfo.of(getattr(info, "name", None), getattr(info, "version", ""))


def bad_request(message: str, problems: list[dict[str, Any]] | None = None) -> MCPError:
    """The coded JSON-RPC error for input that does not match a tool's schema."""
    return MCPError(code=types.INVALID_PARAMS, message=message,
                    data={"code": str(ErrorCode.BAD_REQUEST), "errors": problems or []})


def validated(tool: ToolSpec, arguments: Any) -> Any:
    """The tool's arguments as its model, or :func:`bad_request` saying where (only field
    names and reasons: the values are the agent's)."""
    try:
        return tool.args.model_validate(arguments if arguments is not None else {})
    except ValidationError as exc:
        problems = [{"loc": [str(p) for p in e.get("loc", ())][:8],
                     "msg": str(e.get("msg", ""))[:200]} for e in exc.errors()[:20]]
        raise bad_request(f"the arguments of {tool.name} do not match its schema",
                          problems) from None


def tool_error(error: AnnaError) -> types.CallToolResult:
    """A refusal or failure the agent's model should read: ``isError`` with the code."""
    body: dict[str, Any] = {"code": str(error.code), "message": error.message}
    if error.hint:
        body["hint"] = error.hint
    detail = {k: v for k, v in error.detail.items() if k in ("findings", "rule", "tool",
                                                               "limit", "retry_after_s",
                                                               "status", "items")}
    if detail:
        body["detail"] = detail
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(body))],
                                is_error=True)


class AnnaMcp:
    """Anna's MCP server: the tools, resources and prompt over one daemon socket."""

    def __init__(self, connect: Callable[[], Path]) -> None:
        self._connect = connect
        self._socket: Path | None = None
        self._limiter = anyio.CapacityLimiter(CONCURRENT_CALLS)
        self.server: Server[Any] = Server(
            "anna", version=__version__, title="Anna",
            instructions=guide.INSTRUCTIONS,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)

    def client(self, agent: AgentInfo) -> AgentClient:
        """A client of the daemon's agent routes for ``agent`` (the socket found once)."""
        if self._socket is None:
            self._socket = self._connect()
        return AgentClient(self._socket, agent)

    async def in_thread(self, work: Callable[[], Any]) -> Any:
        """Run blocking daemon work in a worker thread, at most CONCURRENT_CALLS at once."""
        return await anyio.to_thread.run_sync(work, limiter=self._limiter)

    # ------------------------------------------------------------------ tools

    async def _list_tools(self, _ctx: ServerRequestContext[Any, Any],
                          _params: types.PaginatedRequestParams | None
                          ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(
            name=t.name, title=t.title, description=t.description,
            input_schema=resources.input_schema(t),
            output_schema=t.output() if t.output is not None else None,
            annotations=types.ToolAnnotations(
                title=t.title, read_only_hint=t.read_only, destructive_hint=False,
                idempotent_hint=t.read_only, open_world_hint=False)) for t in TOOLS])

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            raise bad_request(f"no tool {params.name[:64]!r}; tools: "
                              + ", ".join(t.name for t in TOOLS))
        args = validated(tool, params.arguments)
        agent = agent_of(ctx)
        try:
            data = await self.in_thread(lambda: tool.run(self.client(agent), args))
        except AnnaError as exc:
            return tool_error(exc)
        except Exception:
            log.exception("%s failed", tool.name)
            return tool_error(AnnaError(f"{tool.name} failed inside annactl mcp (see its "
                                        "stderr)", code=ErrorCode.INTERNAL_ERROR))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(data))],
            structured_content=data)

    # ------------------------------------------------------------------ resources, prompt

    async def _list_resources(self, ctx: ServerRequestContext[Any, Any],
                              _params: types.PaginatedRequestParams | None
                              ) -> types.ListResourcesResult:
        client = self.client(agent_of(ctx))
        try:
            history = await self.in_thread(lambda: client.agent_history(20))
        except AnnaError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=exc.message,
                           data={"code": str(exc.code)}) from None
        return types.ListResourcesResult(resources=resources.listed(history))

    async def _list_templates(self, _ctx: ServerRequestContext[Any, Any],
                              _params: types.PaginatedRequestParams | None
                              ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[resources.TEMPLATE])

    async def _read_resource(self, ctx: ServerRequestContext[Any, Any],
                             params: types.ReadResourceRequestParams
                             ) -> types.ReadResourceResult:
        uri = str(params.uri)
        plan_id = resources.plan_id_of(uri)
        if plan_id is None:
            raise bad_request(f"no resource {uri[:120]!r}; plan records are "
                              f"{resources.TEMPLATE.uri_template}")
        client = self.client(agent_of(ctx))
        try:
            state = await self.in_thread(lambda: client.plan_state(plan_id))
        except AnnaError as exc:
            code = types.INVALID_PARAMS if exc.code == ErrorCode.PLAN_NOT_FOUND else \
                types.INTERNAL_ERROR
            raise MCPError(code=code, message=exc.message,
                           data={"code": str(exc.code)}) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type="application/json",
            text=json.dumps(state.model_dump(mode="json")))])

    async def _list_prompts(self, _ctx: ServerRequestContext[Any, Any],
                            _params: types.PaginatedRequestParams | None
                            ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=guide.PROMPT_NAME, title=guide.PROMPT_DESCRIPTION,
            description=guide.PROMPT_DESCRIPTION, arguments=[])])

    async def _get_prompt(self, _ctx: ServerRequestContext[Any, Any],
                          params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != guide.PROMPT_NAME:
            raise bad_request(f"no prompt {params.name[:64]!r}; prompts: {guide.PROMPT_NAME}")
        return types.GetPromptResult(description=guide.PROMPT_DESCRIPTION, messages=[
            types.PromptMessage(role="user",
                                content=types.TextContent(type="text", text=guide.PROMPT))])

    # ------------------------------------------------------------------ running

    async def serve_stdio(self) -> None:
        """Serve on this process's stdin and stdout until the client closes them."""
        stdin = anyio.wrap_file(cast("IO[str]", _BoundedLines(MAX_LINE)))
        async with stdio_server(stdin=stdin) as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())


class _BoundedLines:
    """stdin as text lines of at most ``limit`` bytes; a longer line is skipped whole
    (read and dropped in pieces, so memory stays bounded) and logged."""

    def __init__(self, limit: int) -> None:
        import sys

        self._raw = sys.stdin.buffer
        self._limit = limit

    def close(self) -> None:
        """Nothing to close: stdin is the process's, not this reader's."""

    def readline(self) -> str:
        """The next line that fits ("" at the end of input): what anyio's file wrapper
        calls, in a worker thread, for each ``async for`` step."""
        while True:
            line = self._raw.readline(self._limit + 1)
            if not line:
                return ""
            if len(line) <= self._limit or line.endswith(b"\n"):
                return line.decode("utf-8", errors="replace")
            while line and not line.endswith(b"\n"):  # skip the rest of the long line
                line = self._raw.readline(self._limit + 1)
            log.warning("dropped a message longer than %d bytes", self._limit)

