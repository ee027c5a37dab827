"""Issue 13 item 2, the table of rule kinds × (submit, execute, shown, journalled).

One real daemon; for each kind of rule (program, argv, path, scope, tier) an ``ask`` rule
is in force at submit: the daemon marks the step (submit), the client's plan view names
the rule (shown) and the stored record keeps it, the journal holds the verdict
(journalled). The file is then rewritten with the same rule as ``deny``: execute is
refused and nothing runs (execute, the file re-read), journalled again."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from annactl.ui.render import policy_notes
from tests.daemonfix import RunningDaemon, make_plan, new_daemon, stop_and_remove

KINDS = {
    "program": ('program = "mkdir"', "mkdir ~/kind-program"),
    "argv": ('argv = ["-p"]', "mkdir -p ~/kind-argv/sub"),
    "path": ('path = "~/kind-path/**"', "touch ~/kind-path/x"),
    "scope": ('scope = "user"', "touch ~/kind-scope"),
    "tier": ('tier = "LOW"', "touch ~/kind-tier"),
}


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    running = new_daemon(user_mode=True)
    try:
        yield running.start()
    finally:
        stop_and_remove(running)


def events(daemon: RunningDaemon, kind: str, plan_id: str | None) -> list[dict[str, Any]]:
    db = sqlite3.connect(f"file:{daemon.state / 'journal.sqlite3'}?mode=ro", uri=True,
                         timeout=5)
    try:
        rows = db.execute("SELECT body FROM events WHERE kind=? AND plan_id IS ? ORDER BY id",
                          (kind, plan_id)).fetchall()
    finally:
        db.close()
    return [json.loads(r[0]) for r in rows]


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_rule_kind_at_submit_execute_shown_journalled(daemon: RunningDaemon,
                                                           kind: str) -> None:
    match, command = KINDS[kind]
    policy = daemon.base / "policy.toml"
    policy.write_text(f'[[rule]]\nid = "{kind}"\naction = "ask"\n{match}\n')
    client = daemon.client()
    plan = ActionPlan.model_validate(make_plan([("s", command, "LOW")]))
    submitted = client.submit(plan)
    mark = submitted.annotated.steps[0].policy
    assert mark is not None and (mark.action, mark.rule) == ("ask", kind)  # submit
    assert mark.source == f"{policy}:1"
    record = client.get_plan(submitted.plan_id)
    shown = [line.plain for line in policy_notes(record.annotated)]
    assert any(f"by rule {kind} ({policy}:1)" in line for line in shown), shown  # shown
    journalled = events(daemon, "policy", submitted.plan_id)
    assert journalled[0]["phase"] == "submit"  # journalled
    assert journalled[0]["items"] == [{"item": "step:s", "action": "ask", "rule": kind,
                                       "source": f"{policy}:1", "note": ""}]

    policy.write_text(f'[[rule]]\nid = "{kind}"\naction = "deny"\n{match}\n')
    with pytest.raises(AnnaError) as caught:  # execute, with the file as it is now
        list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                            high_confirmed=False))
    assert caught.value.code is ErrorCode.POLICY_DENIED and caught.value.detail["rule"] == kind
    assert client.get_plan(submitted.plan_id).status == "submitted"  # nothing ran
    denied = events(daemon, "policy_denied", submitted.plan_id)
    assert denied[-1]["phase"] == "execute" and denied[-1]["items"][0]["rule"] == kind
