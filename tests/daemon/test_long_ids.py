"""A plan id from a request is bounded before any lookup (issue 22: coded errors everywhere).

The journal finds a plan by the end of its id with SQLite's LIKE, which fails ("LIKE or GLOB
pattern too complex", a 500) on patterns over 50,000 bytes once the journal holds plans.
Every way a caller names a plan is tried here against a real daemon whose journal holds
one: a 60,000-character id is a coded 400, an id of the longest accepted length is looked up
(a coded 404), and the one function every id passes through on its way to the journal
(:meth:`annad.access.Access.owned`) refuses a long id itself, on a real journal.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.models import MAX_PLAN_REF, PlanStatus
from annad.access import Access
from annad.journal.rows import PlanRow
from annad.journal.store import Journal
from annad.peer import Peer
from tests.daemonfix import RunningDaemon, http, make_plan

LONG = "x" * 60000
EDGE = "y" * MAX_PLAN_REF


def _stored(daemon: RunningDaemon) -> str:
    status, body = http(daemon.socket, "POST", "/v1/plans", {
        "plan": make_plan([("s", "ls", "INFO")]), "request": "ids", "source": "file"})
    assert status == 200, body
    return str(body["plan_id"])


def _requests(name: str) -> list[tuple[str, str, Any]]:
    """Every request that names a plan by ``name`` (a path, a query, a body)."""
    return [
        ("POST", "/v1/gc", {"plan_ids": [name]}),
        ("POST", "/v1/gc", {"plan_ids": ["20261127", name], "dry_run": True}),
        ("GET", f"/v1/plans?before={name}", None),
        ("GET", f"/v1/plans/{name}", None),
        ("GET", f"/v1/plans/{name}/preview", None),
        ("POST", f"/v1/plans/{name}/dry-run", None),
        ("POST", f"/v1/plans/{name}/cancel", None),
        ("POST", f"/v1/plans/{name}/rollback", {}),
        ("POST", f"/v1/queue/{name}/dismiss", None),
        ("POST", "/v1/plans", {"plan": make_plan([("s", "ls", "INFO")]), "request": "r",
                               "source": "file", "revises": name}),
    ]


@pytest.mark.shared_daemon
def test_a_60000_character_plan_id_is_a_coded_400_wherever_it_is_sent(
        user_daemon: RunningDaemon) -> None:
    _stored(user_daemon)  # LIKE fails only when there are rows to match
    for method, path, body in _requests(LONG):
        status, answer = http(user_daemon.socket, method, path, body)
        assert status == 400, (method, path[:40], status, str(answer)[:300])
        assert answer["code"] == "BAD_REQUEST", (method, path[:40], answer)


@pytest.mark.shared_daemon
def test_an_id_of_the_longest_accepted_length_is_looked_up(user_daemon: RunningDaemon) -> None:
    _stored(user_daemon)
    for method, path, body in _requests(EDGE):
        status, answer = http(user_daemon.socket, method, path, body)
        # queue dismiss checks the id's form (a 404 too); nothing is a 400 or a 500
        assert status == 404, (method, path[:40], status, str(answer)[:300])
        assert answer["code"] == "PLAN_NOT_FOUND", (method, path[:40], answer)


def test_access_refuses_a_long_id_before_the_journal_sees_it(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        now = time.time()
        journal.add_plan(PlanRow(
            plan_id="20261127-090000-abcdef", digest="0" * 64, status=PlanStatus.SUBMITTED,
            created_at=now, updated_at=now, caller_uid=0, source="model", request="",
            home="/tmp", plan_json="{}", annotated_json="{}", error=None), [])
        # what the bound is for: the journal's own suffix lookup fails on such a pattern
        with pytest.raises(sqlite3.OperationalError, match="too complex"):
            journal.resolve_id(LONG)
        access = Access(journal=journal, user_mode=False, owner_uid=0, group="anna")
        root = Peer(pid=1, uid=0, gid=0)
        with pytest.raises(AnnaError) as refused:
            access.owned(root, "x" * (MAX_PLAN_REF + 1))
        assert refused.value.code is ErrorCode.BAD_REQUEST
        assert access.owned(root, "abcdef").plan_id == "20261127-090000-abcdef"
        with pytest.raises(AnnaError) as missing:
            access.owned(root, EDGE)
        assert missing.value.code is ErrorCode.PLAN_NOT_FOUND
    finally:
        journal.close()
