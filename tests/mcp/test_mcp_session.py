"""``annactl mcp`` with the SDK's real stdio client against a real per-user daemon: the
tools and their schemas, a banned command explained as banned, a read-only check's output,
and a LOW plan proposed → nothing changed until a person's ``annactl apply ID --yes`` →
changed → ``anna_rollback`` approved by the person → byte-exact."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import ClientSession

from anna_common.plan import ActionPlan
from tests.daemonfix import make_plan

from .conftest import AGENT, AgentSite

pytestmark = pytest.mark.anyio

TOOLS = ["anna_status", "anna_explain", "anna_check", "anna_propose", "anna_result",
         "anna_history", "anna_rollback"]


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A tool call that must succeed: its structured content (the SDK has already checked
    it against the tool's output schema, where one is declared)."""
    result = await session.call_tool(tool, args)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    # the text block is the same document, for clients that read only text
    text = result.content[0]
    assert json.loads(getattr(text, "text", "")) == result.structured_content
    return result.structured_content


async def test_tools_schemas_prompt_and_resources(agent_site: AgentSite) -> None:
    async with agent_site.session() as session:
        listed = (await session.list_tools()).tools
        assert [t.name for t in listed] == TOOLS
        by_name = {t.name: t for t in listed}
        for tool in listed:
            schema = tool.input_schema
            assert schema["type"] == "object" and schema["additionalProperties"] is False
            assert tool.description and tool.annotations is not None
            assert tool.annotations.destructive_hint is False
        # what may change the machine is not marked read-only; nothing else is
        assert {t.name for t in listed if not t.annotations.read_only_hint} == \
            {"anna_propose", "anna_rollback"}
        assert by_name["anna_explain"].input_schema["required"] == ["command"]
        assert by_name["anna_explain"].input_schema["properties"]["command"]["maxLength"] == 4096
        check = by_name["anna_check"].input_schema["properties"]["commands"]
        assert check["maxItems"] == 8 and check["items"]["maxLength"] == 4096
        plan = by_name["anna_propose"].input_schema["properties"]["plan"]
        assert {"goals", "command_plan", "rollback_plan"} <= set(plan["properties"])
        assert by_name["anna_result"].input_schema["properties"]["plan_id"]["pattern"]
        assert by_name["anna_propose"].output_schema is not None
        prompts = (await session.list_prompts()).prompts
        assert [p.name for p in prompts] == ["anna_safe_changes"]
        text = (await session.get_prompt("anna_safe_changes")).messages[0].content
        assert "person approves" in getattr(text, "text", "")
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["anna://plans/{plan_id}"]


async def test_banned_command_is_explained_as_banned(agent_site: AgentSite) -> None:
    async with agent_site.session() as session:
        out = await call(session, "anna_explain", {"command": "rm -rf --no-preserve-root /"})
        assert out["banned"] is True and out["risk"] == "HIGH"
        assert "banned" in out["can_agent_run_it"]
        assert out["analysis"]["runs"][0]["program"] == "rm"
        plain = await call(session, "anna_explain", {"command": "df -h"})
        assert plain["banned"] is False and plain["risk"] == "INFO"
    calls = agent_site.events("agent_call")
    assert [(c["agent"], c["tool"], c["outcome"]) for c in calls] == \
        [(AGENT, "anna_explain", "ok")] * 2


async def test_read_only_check_output_and_refusals(agent_site: AgentSite) -> None:
    settings = agent_site.work / "settings.conf"
    settings.write_text("user=anna\npassword=hunter2-secret\n")
    secret = agent_site.work / "app.env"  # secret material: never read for an agent
    secret.write_text("TOKEN=abc\n")
    made = agent_site.work / "made-by-check"
    async with agent_site.session() as session:
        out = await call(session, "anna_check", {"commands": [
            "echo hello from a check", f"cat {settings}", f"touch {made}", f"cat {secret}"]})
    first, second, third, fourth = out["results"]
    assert first["ran"] and first["exit_code"] == 0 and first["output"] == "hello from a check\n"
    assert second["ran"] and "user=anna" in second["output"]
    assert "hunter2-secret" not in second["output"]  # withheld, as from a model
    assert not third["ran"] and "not read-only" in third["reason"]
    assert not made.exists()
    assert not fourth["ran"] and "secret" in fourth["reason"] and fourth["output"] == ""
    assert agent_site.events("agent_checks")[-1]["ran"] == 2


async def test_proposed_plan_waits_for_the_person_then_undo_is_byte_exact(
        agent_site: AgentSite) -> None:
    target = agent_site.work / "motd"
    original = b"Welcome\r\n\x00binary\xff tail without newline"
    target.write_bytes(original)
    # no rollback command: the undo is Anna's own (the captured write's backup), and only
    # that gives back these exact bytes
    plan = make_plan([("write", f"printf 'changed by the plan\\n' > {target}", "LOW")],
                     goal="Replace the message of the day")
    async with agent_site.session() as session:
        proposal = await call(session, "anna_propose", {"plan": plan,
                                                        "request": "new motd please"})
        plan_id = proposal["plan_id"]
        assert proposal["outcome"] == "queued" and proposal["status"] == "submitted"
        assert proposal["risk"] in ("LOW", "MEDIUM") and proposal["confirmations"] == 1
        assert f"annactl apply {plan_id}" in proposal["approve"]
        assert target.read_bytes() == original  # nothing ran on the agent's call
        # the person sees it in the queue with the agent's name, and was told
        rc, queue = agent_site.json("queue")
        assert rc == 0 and [(e["plan_id"], e["agent"]) for e in queue["entries"]] == \
            [(plan_id, AGENT)]
        assert f"arg=Agent {AGENT} asks for a" in agent_site.notified
        shown = agent_site.annactl("queue")
        assert f"agent {AGENT}" in shown.stdout
        waiting = await call(session, "anna_result", {"plan_id": plan_id})
        assert waiting["state"] == "waiting" and waiting["agent"] == AGENT
        assert target.read_bytes() == original

        rc, applied = agent_site.json("apply", plan_id, "--yes")
        assert rc == 0 and applied["status"] == "succeeded", applied
        assert target.read_bytes() == b"changed by the plan\n"
        done = await call(session, "anna_result", {"plan_id": plan_id})
        assert done["state"] == "done" and done["record"]["status"] == "succeeded"

        asked = await call(session, "anna_rollback", {"plan_id": plan_id})
        assert asked["state"] == "rollback_waiting"
        assert target.read_bytes() == b"changed by the plan\n"  # the undo waits too
        rc, queue = agent_site.json("queue")
        assert rc == 0, queue
        assert [(e["plan_id"], e["kind"]) for e in queue["entries"]] == [(plan_id, "rollback")]
        rc, undone = agent_site.json("queue", "approve", plan_id, "--yes")
        assert rc == 0 and undone["status"] == "rolled_back", undone
        assert target.read_bytes() == original
        final = await call(session, "anna_result", {"plan_id": plan_id})
        assert final["state"] == "done" and final["record"]["status"] == "rolled_back"
        history = await call(session, "anna_history", {})
        assert [(p["summary"]["plan_id"], p["agent"]) for p in history["plans"]] == \
            [(plan_id, AGENT)]
        resources = (await session.list_resources()).resources
        assert [str(r.uri) for r in resources] == [f"anna://plans/{plan_id}"]
        read = await session.read_resource(f"anna://plans/{plan_id}")
        assert json.loads(getattr(read.contents[0], "text", ""))["state"] == "done"
    rc, queue = agent_site.json("queue")
    assert rc == 0, queue
    assert queue["entries"] == []
    tools = [c["tool"] for c in agent_site.events("agent_call")]
    assert tools.count("anna_propose") == 1 and tools.count("anna_rollback") == 1
    assert agent_site.events("agent_proposed")[0]["plan_id"] == plan_id


async def test_info_plan_runs_at_once(agent_site: AgentSite) -> None:
    plan = make_plan([("look", "uname -s", "INFO")], goal="Which kernel?")
    async with agent_site.session() as session:
        out = await call(session, "anna_propose", {"plan": plan})
    assert out["outcome"] == "ran" and out["status"] == "succeeded"
    assert out["record"]["steps"][0]["output"] == "Linux\n"
    assert out["approve"] == []
    rc, queue = agent_site.json("queue")
    assert rc == 0, queue
    assert queue["entries"] == []


async def test_a_request_alone_is_planned_by_anna(agent_site: AgentSite) -> None:
    # no model answers in tests (ANNA_LLM_URL is a closed port): an offline template plans
    async with agent_site.session() as session:
        out = await call(session, "anna_propose", {"request": "how much disk space is free?"})
        assert out["risk"] == "INFO" and out["outcome"] == "ran"
        assert out["record"]["source"] == "mcp" and out["record"]["steps"]
        nothing = await session.call_tool("anna_propose", {"request": "  "})
        assert nothing.is_error and '"BAD_REQUEST"' in nothing.content[0].text  # type: ignore[union-attr]
    rc, history = agent_site.json("history", "--all")
    assert rc == 0
    # the planner's own stored copy was shown to no one: a dry run, never run
    assert sorted(p["status"] for p in history["plans"]) == ["dry_run", "succeeded"]


async def test_dismissal_reaches_the_agent_and_others_plans_stay_hidden(
        agent_site: AgentSite) -> None:
    target = agent_site.work / "kept"
    plan = make_plan([("w", f"echo changed > {target}", "LOW")], goal="change it")
    # a plan the person made: no agent may see or undo it
    persons = agent_site.daemon.client().submit(ActionPlan.model_validate(plan))
    async with agent_site.session() as session:
        proposal = await call(session, "anna_propose", {"plan": plan})
        rc, dismissed = agent_site.json("queue", "dismiss", proposal["plan_id"])
        assert rc == 0 and dismissed["state"] == "dismissed"
        state = await call(session, "anna_result", {"plan_id": proposal["plan_id"]})
        assert state["state"] == "dismissed" and "dismissed" in state["next"]
        for tool in ("anna_result", "anna_rollback"):
            hidden = await session.call_tool(tool, {"plan_id": persons.plan_id})
            assert hidden.is_error and '"PLAN_NOT_FOUND"' in hidden.content[0].text  # type: ignore[union-attr]
        history = await call(session, "anna_history", {})
        assert [p["summary"]["plan_id"] for p in history["plans"]] == [proposal["plan_id"]]
    assert not target.exists()
