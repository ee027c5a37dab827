"""An undo an agent asked for, approved by the person in the TUI's queue against the real
daemon: ``a`` asks yes/no (focus on No), yes rolls the plan back, byte-exact; no leaves it
waiting."""

from __future__ import annotations

import pytest
from mcp import ClientSession

from annactl.commands.flow import Flow
from annactl.core.config import load_settings
from annactl.core.daemon_client import DaemonClient
from annactl.core.exit_codes import ExitStatus
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.ask import YesNoScreen
from annactl.interactive.tui.screens.queue import QueueScreen
from annactl.interactive.tui.screens.result import ResultScreen
from tests.daemonfix import make_plan
from tests.ui.tuiwait import ready, until

from .conftest import AgentSite

pytestmark = pytest.mark.anyio
SIZE = (110, 30)


async def _undo_waiting(site: AgentSite, session: ClientSession, original: bytes) -> str:
    target = site.work / "conf"
    target.write_bytes(original)
    plan = make_plan([("w", f"printf 'new\\n' > {target}", "LOW")], goal="Rewrite conf")
    proposed = await session.call_tool("anna_propose", {"plan": plan})
    plan_id = str(proposed.structured_content["plan_id"])  # type: ignore[index]
    rc, ran = site.json("apply", plan_id, "--yes")
    assert rc == 0 and ran["status"] == "succeeded", ran
    asked = await session.call_tool("anna_rollback", {"plan_id": plan_id})
    assert asked.structured_content["state"] == "rollback_waiting"  # type: ignore[index]
    return plan_id


def _app(site: AgentSite) -> AnnaTui:
    settings = load_settings(socket=site.daemon.socket, autostart=False)
    return AnnaTui(Source(queue=True),
                   connect=lambda: Flow(settings, DaemonClient(site.daemon.socket)))


async def test_agents_undo_is_approved_in_the_tui(agent_site: AgentSite) -> None:
    original = b"old contents\x00\n"
    async with agent_site.session() as session:
        plan_id = await _undo_waiting(agent_site, session, original)
    target = agent_site.work / "conf"
    app = _app(agent_site)
    async with app.run_test(size=SIZE) as pilot:
        queue = await ready(pilot, QueueScreen, focus="queue-table")
        assert [(e.plan_id, e.kind) for e in queue.queue.entries] == [(plan_id, "rollback")]
        await pilot.press("a")
        await ready(pilot, YesNoScreen, focus="no")
        assert target.read_bytes() == b"new\n"  # nothing undone before the answer
        await pilot.press("y")
        result = await ready(pilot, ResultScreen)
        assert str(result.record.status) == "rolled_back"
        await pilot.press("q")
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert target.read_bytes() == original
    rc, after = agent_site.json("queue")
    assert rc == 0 and after["entries"] == []


async def test_agents_undo_declined_in_the_tui_keeps_waiting(agent_site: AgentSite) -> None:
    async with agent_site.session() as session:
        plan_id = await _undo_waiting(agent_site, session, b"before\n")
    app = _app(agent_site)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, QueueScreen, focus="queue-table")
        await pilot.press("a")
        await ready(pilot, YesNoScreen, focus="no")
        await pilot.press("enter")  # focus is on No
        await until(pilot, lambda: app.return_value is not None, "the app to exit")
    assert app.return_value == ExitStatus.DECLINED
    assert (agent_site.work / "conf").read_bytes() == b"new\n"
    rc, after = agent_site.json("queue")
    assert rc == 0 and [e["plan_id"] for e in after["entries"]] == [plan_id]
