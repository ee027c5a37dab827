"""Issues 22.7 / 23.8 with the offline answer first (issue 24.1), on a real daemon: the
offline answer is stored once, and a question's template checks run on that stored plan (no
second copy of it is stored for them). The model's later answer is a plan of its own: the
person was shown the first, so it is never revised under them — two plans, both shown. When
the model fails and the same template answers after all, the request leaves one plan."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from annactl.commands.flow import Flow
from annactl.commands.prepared import Prepared
from tests.fakellm import Reply
from tests.planner.conftest import make_telemetry
from tests.waiting import WAIT_S

QUESTION = "why is my disk so full lately"
"""A weak match of the disk usage template, in the answer form: its checks run first."""


def _ask(flow: Flow, home: str) -> tuple[Prepared, list[Prepared]]:
    snapshot = make_telemetry()
    snapshot.disks[0].mountpoint = home
    shown: list[Prepared] = []
    final = flow.plan_text(QUESTION, telemetry=snapshot, on_offline=shown.append)
    return final, shown


def _checks_run(daemon: Any) -> dict[str, int]:
    with sqlite3.connect(daemon.state / "journal.sqlite3", timeout=WAIT_S) as db:
        rows = db.execute("SELECT plan_id, COUNT(*) FROM events WHERE kind='checks_run' "
                          "GROUP BY plan_id").fetchall()
    return dict(rows)


def test_the_model_answer_after_the_offline_one_is_a_second_plan(fake_llm, make_settings,
                                                                   user_daemon) -> None:
    fake_llm.push(json.dumps({"answer": "The biggest directories are listed.",
                              "citations": []}))
    client = user_daemon.client()
    final, shown = _ask(Flow(make_settings(llm_url=fake_llm.ollama_url), client),
                        str(user_daemon.home))
    assert len(shown) == 1 and shown[0].plan_id != final.plan_id
    assert final.outcome is not None and final.outcome.template is None
    assert "biggest_dirs" in fake_llm.chat_bodies()[0]["messages"][1]["content"]
    assert sorted(p.plan_id for p in client.list_plans(limit=0).plans) == \
        sorted([shown[0].plan_id, final.plan_id])
    # the checks ran once, on the plan shown first (not on a hidden copy of it)
    assert _checks_run(user_daemon) == {shown[0].plan_id: 1}
    # the offline answer is unchanged: its digest still approves exactly what was shown
    assert client.get_plan(shown[0].plan_id).digest == shown[0].digest


def test_a_failed_model_leaves_the_offline_answer_alone(fake_llm, make_settings,
                                                       user_daemon) -> None:
    fake_llm.push(*[Reply(status=500) for _ in range(6)])
    client = user_daemon.client()
    final, shown = _ask(Flow(make_settings(llm_url=fake_llm.ollama_url), client),
                        str(user_daemon.home))
    assert final is shown[0]
    assert final.outcome is not None and final.outcome.offline_reason
    assert [p.plan_id for p in client.list_plans(limit=0).plans] == [final.plan_id]
    assert _checks_run(user_daemon) == {final.plan_id: 1}
