"""``annactl mcp`` under bad input, the administrator's policy and the limits: malformed,
huge and hostile tool input is a coded error (JSON-RPC ``-32602`` with ``data.code``, or an
``isError`` result with Anna's code), injected text stays data, the daemon stays healthy;
``[agents]`` denies tools, proposals and names; the limits refuse a flood; every call is in
the journal with the agent's name; a client that goes away leaves nothing half done."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from tests.daemonfix import make_plan
from tests.waiting import wait_until

from .conftest import AGENT, AgentSite

pytestmark = pytest.mark.anyio
PWN = "PWNED-by-mcp"
INJECT = [f"$(touch {PWN})", f"`touch {PWN}`", f"; touch {PWN}", f"\x1b]0;{PWN}\x07[bold]x[/]",
          f"{{{{{PWN}}}}}", "' OR 1=1 --", "../../../../etc/shadow", "\u202e\x00\ud800"[:2]]


async def refused(session: ClientSession, tool: str, args: Any) -> dict[str, Any]:
    """A call the server must refuse as malformed: the coded JSON-RPC error's data."""
    with pytest.raises(MCPError) as caught:
        await session.call_tool(tool, args)
    error = caught.value.error
    assert error.code == -32602, error
    assert isinstance(error.data, dict) and error.data["code"] == "BAD_REQUEST", error
    assert "Traceback" not in error.message
    return error.data


async def anna_error(session: ClientSession, tool: str, args: Any) -> dict[str, Any]:
    """A call Anna refuses: an isError result carrying her code."""
    result = await session.call_tool(tool, args)
    assert result.is_error, result
    body: dict[str, Any] = json.loads(getattr(result.content[0], "text", ""))
    assert body["code"] and body["message"] and "Traceback" not in body["message"]
    return body


def no_pwn(site: AgentSite) -> None:
    assert not list(site.daemon.base.rglob(f"*{PWN}*"))
    assert not list(Path.cwd().glob(f"*{PWN}*"))


async def test_hostile_tool_input_is_coded_and_the_daemon_stays_healthy(
        agent_site: AgentSite) -> None:
    hostile_name = f"evil\x1b[31m<b>agent</b>$(touch {PWN})\n" + "x" * 500
    async with agent_site.session(name=hostile_name) as session:
        huge = "y" * 5000
        data = await refused(session, "anna_explain", {"command": huge})
        assert data["errors"][0]["loc"] == ["command"]
        assert huge not in json.dumps(data)  # never echoed
        await refused(session, "anna_explain", {})
        await refused(session, "anna_explain", {"command": "ls", "extra": 1})
        await refused(session, "anna_explain", {"command": ["ls"]})
        await refused(session, "anna_check", {"commands": ["true"] * 9})
        await refused(session, "anna_check", {"commands": []})
        await refused(session, "anna_check", {"commands": ["ok", 5]})
        await refused(session, "anna_history", {"limit": "5"})
        await refused(session, "anna_history", {"limit": 10**9})
        await refused(session, "anna_propose", {"plan": "not an object"})
        await refused(session, "anna_propose", {"plan": {}, "request": "r" * 2001})
        await refused(session, "no_such_tool", {})
        for bad_id in ["../../etc/passwd", "20261123-030012-a1b2c3/../x", f"$(touch {PWN})",
                       "x" * 300, ""]:
            await refused(session, "anna_result", {"plan_id": bad_id})
            await refused(session, "anna_rollback", {"plan_id": bad_id})
        # a well-formed id of no plan: Anna's own code
        missing = await anna_error(session, "anna_result", {"plan_id": "20990101-000000-abcdef"})
        assert missing["code"] == "PLAN_NOT_FOUND"
        # injection in every string field: data, never run
        for text in INJECT:
            out = await session.call_tool("anna_explain", {"command": f"echo {text}"})
            assert not out.is_error or json.loads(out.content[0].text)["code"]  # type: ignore[union-attr]
            checked = await session.call_tool("anna_check", {"commands": [text, f"echo {text}"]})
            assert not checked.is_error or json.loads(
                checked.content[0].text)["code"]  # type: ignore[union-attr]
            plan = make_plan([("s", f"echo {text}", "LOW")], goal=text,
                             checks=[("c", f"echo {text}")])
            plan["analysis"] = plan["notes_for_user"] = text
            plan["command_plan"][0]["description"] = text
            proposed = await session.call_tool("anna_propose", {"plan": plan, "request": text})
            if proposed.is_error:
                body = json.loads(proposed.content[0].text)  # type: ignore[union-attr]
                assert body["code"] in ("PLAN_INVALID", "PLAN_BANNED", "RATE_LIMITED"), body
            else:
                assert proposed.structured_content["outcome"] == "queued"  # type: ignore[index]
        bad_plan = await anna_error(session, "anna_propose", {"plan": {"goals": 5}})
        assert bad_plan["code"] == "PLAN_INVALID"
        banned = make_plan([("b", "rm -rf --no-preserve-root /", "LOW")])
        assert (await anna_error(session, "anna_propose", {"plan": banned}))["code"] == \
            "PLAN_BANNED"
    no_pwn(agent_site)
    health = agent_site.daemon.client().health()
    assert health.running_plan is None
    # the agent's name is printable wherever it is shown; nothing ran from the queue
    rc, queue = agent_site.json("queue")
    assert rc == 0, queue
    names = {e["agent"] for e in queue["entries"]}
    assert names and all(n.isprintable() and "<" not in n and len(n) <= 64 for n in names)
    assert all(e["kind"] == "plan" for e in queue["entries"])
    history = agent_site.json("history", "--all")[1]
    assert all(p["status"] == "submitted" for p in history["plans"]), history


def _raw_server(site: AgentSite) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "annactl.cli", "mcp"], env=site.env,
                            cwd=str(site.work), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _message(method: str, params: dict[str, Any], ident: int | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if ident is not None:
        body["id"] = ident
    return json.dumps(body).encode() + b"\n"


def _exchange(proc: subprocess.Popen[bytes], data: bytes, wanted: set[int]
              ) -> dict[Any, dict[str, Any]]:
    """Write ``data``, then read replies until those with the ``wanted`` ids came (stdin
    stays open: a closed one ends the session). Bounded by a reader thread and a wait."""
    import threading

    assert proc.stdin is not None and proc.stdout is not None
    stdout = proc.stdout
    replies: dict[Any, dict[str, Any]] = {}

    def read() -> None:
        for line in stdout:
            if line.strip():
                reply = json.loads(line)
                replies[reply.get("id")] = reply
            if wanted <= set(replies):
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc.stdin.write(data)
    proc.stdin.flush()
    wait_until(lambda: not reader.is_alive(), "the server's replies",
               saw=lambda: sorted(map(str, replies)))
    proc.stdin.close()
    return replies


INIT = {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw-client", "version": "0"}}


def test_raw_stream_survives_garbage(agent_site: AgentSite) -> None:
    proc = _raw_server(agent_site)
    stream = b"".join([
        b"this is not json\n", b"\xff\xfe\x00garbage\n", b"{\"jsonrpc\": \"2.0\"}\n",
        b"[" * 100_000 + b"\n",                       # deep nesting
        b"{\"x\": \"" + b"A" * (5 * 1024 * 1024) + b"\"}\n",  # over the 4 MiB line bound
        _message("initialize", INIT, 1), _message("notifications/initialized", {}),
        _message("tools/list", {}, 2),
        _message("tools/call", {"name": "anna_explain", "arguments": {"command": "df -h"}}, 3),
    ])
    by_id = _exchange(proc, stream, {1, 2, 3})
    proc.wait(timeout=120)
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert by_id[1]["result"]["serverInfo"]["name"] == "anna"
    assert len(by_id[2]["result"]["tools"]) == 7
    explained = by_id[3]["result"]
    assert not explained.get("isError") and explained["structuredContent"]["risk"] == "INFO"
    assert b"Traceback" not in err and proc.returncode == 0, err.decode()[-2000:]
    assert agent_site.daemon.client().health().running_plan is None


async def test_policy_denies_tools_proposals_and_names(agent_site: AgentSite) -> None:
    agent_site.policy('[agents]\ndeny_tools = ["anna_check"]\ndeny_names = ["bad-*"]\n')
    async with agent_site.session() as session:
        denied = await anna_error(session, "anna_check", {"commands": ["true"]})
        assert denied["code"] == "POLICY_DENIED" and "deny_tools" in denied["message"]
        ok = await session.call_tool("anna_explain", {"command": "true"})
        assert not ok.is_error
        agent_site.policy("[agents]\npropose = false\n")  # read again on every call
        plan = make_plan([("s", f"touch {agent_site.work}/x", "LOW")])
        denied = await anna_error(session, "anna_propose", {"plan": plan})
        assert denied["code"] == "POLICY_DENIED" and "propose = false" in denied["message"]
        assert not (agent_site.work / "x").exists()
        agent_site.policy("[agents]\nenabled = false\n")
        assert (await anna_error(session, "anna_status", {}))["code"] == "POLICY_DENIED"
    agent_site.policy('[agents]\ndeny_names = ["bad-*"]\n')
    async with agent_site.session(name="bad-bot") as session:
        assert (await anna_error(session, "anna_explain", {"command": "true"}))["code"] == \
            "POLICY_DENIED"
    calls = agent_site.events("agent_call")
    assert ("anna_check", AGENT, "POLICY_DENIED") in {(c["tool"], c["agent"], c["outcome"])
                                                     for c in calls}
    assert ("anna_explain", "bad-bot", "POLICY_DENIED") in {(c["tool"], c["agent"],
                                                            c["outcome"]) for c in calls}
    # a malformed policy refuses, never "allow everything"
    agent_site.policy("[agents]\ncalls_per_minute = 'many'\n")
    async with agent_site.session() as session:
        assert (await anna_error(session, "anna_explain", {"command": "true"}))["code"] == \
            "POLICY_INVALID"


async def test_limits_refuse_a_flood_and_the_journal_stays_bounded(agent_site: AgentSite
                                                                   ) -> None:
    agent_site.policy("[agents]\ncalls_per_minute = 5\nmax_waiting = 1\n")
    async with agent_site.session() as session:
        codes = []
        for _ in range(40):
            result = await session.call_tool("anna_explain", {"command": "true"})
            codes.append(json.loads(result.content[0].text)["code"]  # type: ignore[union-attr]
                         if result.is_error else "ok")
        assert codes[:5] == ["ok"] * 5 and set(codes[5:]) == {"RATE_LIMITED"}
        limited = await anna_error(session, "anna_explain", {"command": "true"})
        assert limited["detail"]["retry_after_s"] >= 1
    calls = agent_site.events("agent_call")
    # the refused flood costs at most a few journal rows, not one per call
    assert sum(c["outcome"] == "RATE_LIMITED" for c in calls) <= 10
    agent_site.policy("[agents]\nmax_waiting = 1\n")
    async with agent_site.session(name="second") as session:
        plan = make_plan([("s", f"touch {agent_site.work}/a", "LOW")])
        first = await session.call_tool("anna_propose", {"plan": plan})
        assert not first.is_error
        again = await anna_error(session, "anna_propose", {"plan": plan})
        assert again["code"] == "RATE_LIMITED" and again["detail"]["limit"] == "waiting"


def test_a_client_that_goes_away_leaves_nothing_half_done(agent_site: AgentSite) -> None:
    slow = make_plan([("look", "sleep 2; echo looked", "INFO")], goal="look slowly")
    target = agent_site.work / "kept"
    target.write_text("as it was\n")
    change = make_plan([("w", f"echo changed > {target}", "LOW")], goal="change")
    proc = _raw_server(agent_site)
    assert proc.stdin is not None
    proc.stdin.write(_message("initialize", INIT, 1) + _message("notifications/initialized", {})
                     + _message("tools/call", {"name": "anna_propose",
                                               "arguments": {"plan": slow}}, 2)
                     + _message("tools/call", {"name": "anna_propose",
                                               "arguments": {"plan": change}}, 3))
    proc.stdin.close()  # gone before any answer
    proc.wait(timeout=120)

    def settled() -> bool:
        rc, history = agent_site.json("history", "--all")
        assert rc == 0, history
        states = sorted(p["status"] for p in history["plans"])
        return states == ["submitted", "succeeded"]

    wait_until(settled, "both proposals to be stored, the INFO one run to its end",
               saw=lambda: agent_site.json("history", "--all"))
    assert target.read_text() == "as it was\n"  # queued, never run
    rc, queue = agent_site.json("queue")
    assert rc == 0, queue
    assert [e["goal"] for e in queue["entries"]] == ["change"]
    assert agent_site.daemon.client().health().running_plan is None
