"""Issue 22 item 3: every input error is a coded JSON error with a 4xx, never a 5xx.

schemathesis generates requests from the daemon's own OpenAPI document (annad.api.openapi,
built from the routes' declarations) and sends them to
the real ASGI application (the service :func:`annad.main.assemble` builds: real journal,
real SQLite, real policy store, in a temporary state directory), with the caller the
kernel would report for this process. Routes that run commands (execute, checks, rollback,
cancel, confirm, recipes) are left out: a generated request must never run anything on
this machine. Hand-made requests cover what the schema cannot express: a huge ``limit``,
a 60,000-character plan id, a body that is not a plan.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from starlette.testclient import TestClient

from annad.peer import PEER_KEY, Peer
from tests.daemonfix import make_plan

SAFE = r"^/v1/(health|telemetry|plans|plans/\{plan_id\}|plans/\{plan_id\}/(preview|dry-run)|" \
       r"audit/verify|gc|policy|policy/check|queue)$"
"""Routes that never run a command (see the module docstring)."""
SEEN: dict[str, int] = {"requests": 0, "5xx": 0}


class _AsPeer:
    """ASGI wrapper: the connection state the daemon's h11 protocol would set (this
    process's credentials, as ``SO_PEERCRED`` reports them on the real socket)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":  # the test clients' start and stop: the module's app
            while True:                  # outlives them (its journal stays open)
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        if scope["type"] == "http":
            scope = {**scope, "state": {**scope.get("state", {}), PEER_KEY: Peer(
                pid=os.getpid(), uid=os.geteuid(), gid=os.getegid())}}
        await self.app(scope, receive, send)


def _app(base: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from annad.api.app import create_app
    from annad.config import load_settings
    from annad.main import assemble
    from annad.policy_load import PolicyStore

    for key in [k for k in os.environ if k.startswith(("ANNA_", "ANNAD_"))]:
        monkeypatch.delenv(key)
    (base / "home").mkdir()
    (base / "pacman" / "local").mkdir(parents=True)
    for key, value in {"ANNAD_CONFIG": base / "none.toml", "ANNAD_POLICY_FILE": base / "p.toml",
                       "ANNAD_HOME_OVERRIDE": base / "home", "ANNAD_DISTRO": "arch",
                       "ANNAD_RECIPES_DIR": base / "recipes", "ANNAD_SNAPSHOTS": "false",
                       "ANNAD_ETC_ROOT": base / "etc",
                       "ANNAD_NOTIFY_COMMAND": base / "no-notify"}.items():
        monkeypatch.setenv(key, str(value))
    config = load_settings(socket=base / "run" / "s.sock", state_dir=base / "state",
                           pacman_dbpath=base / "pacman", user_mode=True, idle_exit_s=0)
    config.state_path.mkdir(parents=True, mode=0o700)
    service = assemble(config, PolicyStore(config.policy_file, user_files=config.user_policy))
    return _AsPeer(create_app(service))


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The daemon's ASGI app in a temporary state directory."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield _app(tmp_path_factory.mktemp("api"), monkeypatch)
    print(f"\nschemathesis: {SEEN['requests']} requests, {SEEN['5xx']} answered 5xx")


@pytest.fixture(scope="module")
def api_schema(app: Any) -> Any:
    """The app's OpenAPI document, loaded by schemathesis, calling the app in-process."""
    from annad.api.app import ENDPOINTS
    from annad.api.openapi import document

    schema = schemathesis.openapi.from_dict(document(ENDPOINTS))
    schema.app = app
    return schema


# the filter goes on the lazy schema: it replaces whatever filter the fixture's schema had
schema = schemathesis.pytest.from_fixture("api_schema").include(path_regex=SAFE)


@schema.parametrize()
@settings(max_examples=25, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_generated_requests_get_coded_answers_never_5xx(case: Any) -> None:
    response = case.call()
    SEEN["requests"] += 1
    SEEN["5xx"] += response.status_code >= 500
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:500])
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body, dict) and isinstance(body.get("code"), str), body


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/v1/plans?limit=99999999999999999999", None),
    ("GET", "/v1/plans?limit=-1", None),
    ("GET", "/v1/plans?before=" + "x" * 60000, None),
    ("GET", "/v1/plans/" + "x" * 60000, None),
    ("GET", "/v1/plans/" + "x" * 60000 + "/preview", None),
    ("POST", "/v1/plans/" + "x" * 60000 + "/dry-run", None),
    ("POST", "/v1/plans", {"plan": make_plan([("s", "ls", "INFO")]), "source": "cli"}),
    ("POST", "/v1/plans", {"plan": make_plan([("s", "ls", "INFO")]), "request": 5}),
    ("POST", "/v1/plans", {"plan": "x" * 100}),
    ("POST", "/v1/plans", [1, 2]),
    ("POST", "/v1/gc", {"plan_ids": ["x" * 60000]}),
    ("POST", "/v1/policy/check", {"command": "echo " + "$(" * 1000 + "x" + ")" * 1000}),
    ("POST", "/v1/policy/check", {"command": "echo \ud800"}),
    ("POST", "/v1/plans", {"plan": make_plan([("s", "echo \ud800", "INFO")]), "source": "model"}),
    ("POST", "/v1/plans", {"plan": make_plan([("s", "ls", "INFO")]), "request": "\udfff"}),
])
def test_input_errors_are_coded_4xx(app: Any, method: str, path: str, body: Any) -> None:
    client = TestClient(app, raise_server_exceptions=False)  # no lifespan: the journal stays open
    # sent as the client would: JSON text (lone surrogates as \\uXXXX escapes)
    response = client.request(method, path, content=json.dumps(body).encode(),
                              headers={"content-type": "application/json"})
    assert response.status_code < 500, response.text[:500]
    if response.status_code >= 400:
        assert isinstance(response.json().get("code"), str), response.text[:500]


def test_a_deep_plan_is_judged_high_not_an_internal_error(app: Any) -> None:
    command = "echo " + "$(" * 1000 + "x" + ")" * 1000
    client = TestClient(app, raise_server_exceptions=False)
    if True:
        response = client.post("/v1/plans", json={
            "plan": make_plan([("s1", command, "HIGH")]), "request": "deep", "source": "model"})
    assert response.status_code == 200, response.text[:500]
    step = response.json()["annotated"]["steps"][0]
    assert step["final_risk"] == "HIGH"
    assert any("too complex" in r or "too large" in r for r in step["reasons"]), step


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/plans/" + "x" * 257), ("POST", "/v1/plans/" + "x" * 257 + "/dry-run"),
    ("POST", "/v1/queue/" + "x" * 257 + "/dismiss"),
])
def test_a_path_parameter_over_256_characters_is_a_coded_400(app: Any, method: str,
                                                              path: str) -> None:
    response = TestClient(app, raise_server_exceptions=False).request(method, path)
    assert response.status_code == 400, response.text[:500]
    body = response.json()
    assert body["code"] == "BAD_REQUEST" and body["detail"]["errors"][0]["loc"] == ["path"]


@pytest.mark.parametrize(("method", "path"), [("HEAD", "/v1/health"), ("DELETE", "/v1/plans"),
                                              ("GET", "/v1/gc")])
def test_a_method_a_route_does_not_serve_is_a_coded_405(app: Any, method: str,
                                                        path: str) -> None:
    response = TestClient(app, raise_server_exceptions=False).request(method, path)
    assert response.status_code == 405
    if method != "HEAD":  # a HEAD answer has no body
        assert response.json()["code"] == "BAD_REQUEST"
