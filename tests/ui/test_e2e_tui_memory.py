"""The TUI: memory goes to the model; a memory proposal needs Remember before it is saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annactl.commands.flow import Flow
from annactl.core.config import load_settings
from annactl.core.daemon_client import DaemonClient
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.memory import MemoryScreen
from annactl.planning.memory import Memory
from tests.daemonfix import make_plan

from .conftest import Anna
from .tuiwait import notified, ready, until

pytestmark = pytest.mark.anyio

SIZE = (100, 34)


def _app(anna: Anna, state: Path) -> AnnaTui:
    settings = load_settings(socket=anna.daemon.socket, llm_url=anna.llm.ollama_url,
                              llm_model="test-model", autostart=False, state_dir=state)
    return AnnaTui(Source(text="remember helix as my editor and change g", use_templates=False),
                   connect=lambda: Flow(settings, DaemonClient(anna.daemon.socket)))


def _reply(anna: Anna) -> str:
    plan = make_plan([("write", f"echo changed > {anna.work / 'g.txt'}", "LOW")],
                     goal="Change g")
    plan["memory_patch"] = {"editor": "helix", "root_password": "x"}
    return json.dumps(plan)


@pytest.mark.parametrize("button", ["remember", "cancel"])
async def test_memory_proposal_then_the_plan(anna: Anna, tmp_path: Path, button: str) -> None:
    state = tmp_path / "tui-state"
    Memory(state).set("editor", "vim")
    anna.llm.push(_reply(anna))
    app = _app(anna, state)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, MemoryScreen, focus="cancel")
        changes = str(screen.query_one("#memory-changes").content)
        assert "editor = helix" in changes and "root_password" in changes
        assert Memory(state).get("editor") == "vim"  # nothing before the answer
        await pilot.click(f"#{button}")
        await ready(pilot, ApprovalScreen, focus="cancel")
        if button == "remember":
            await until(pilot, lambda: notified(app, "Remembered"), "the notification")
        await pilot.press("c")
    assert Memory(state).get("editor") == ("helix" if button == "remember" else "vim")
    assert Memory(state).get("root_password") is None
    user = anna.llm.chat_bodies()[0]["messages"][1]["content"]
    assert '"editor":"vim"' in user and "MODE: tui" in user
