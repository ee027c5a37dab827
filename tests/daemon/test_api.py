"""The API through the real socket: health, telemetry, submit refusals, coded errors."""

from __future__ import annotations

import json

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from anna_common.protocol.models import API_VERSION, SESSION_HEADER, SessionEnv
from tests.daemonfix import RunningDaemon, http, make_plan


@pytest.mark.shared_daemon
def test_health_reports_version_mode_and_caller(user_daemon: RunningDaemon) -> None:
    health = user_daemon.client().health()
    assert health.api_version == API_VERSION
    assert health.mode == "user"
    assert health.caller_uid == 0 or health.caller_uid > 0
    assert health.caller_authorised is True
    assert health.pid == user_daemon.proc.pid  # type: ignore[union-attr]
    assert health.running_plan is None


@pytest.mark.shared_daemon
def test_telemetry_fields(user_daemon: RunningDaemon) -> None:
    client = user_daemon.client()
    response = client.telemetry()
    t = response.telemetry
    assert t.cpu.cores_logical >= 1
    assert t.memory.total_bytes > 0
    assert t.system.hostname and t.system.kernel
    assert t.processes.count > 0
    assert t.packages.dbpath == str(user_daemon.base / "pacman-db")
    assert response.age_s >= 0
    fresh = client.telemetry(fresh=True, session=SessionEnv(XDG_CURRENT_DESKTOP="Hyprland",
                                                              WAYLAND_DISPLAY="wayland-1"))
    assert fresh.telemetry.collected_at >= t.collected_at
    assert fresh.telemetry.desktop.display_protocol == "wayland"


@pytest.mark.shared_daemon
def test_bad_session_header_is_a_coded_error(user_daemon: RunningDaemon) -> None:
    status, body = http(user_daemon.socket, "GET", "/v1/telemetry",
                        headers={SESSION_HEADER: "{not json"})
    assert status == 400 and body["code"] == "BAD_REQUEST"
    status, body = http(user_daemon.socket, "GET", "/v1/telemetry",
                        headers={SESSION_HEADER: json.dumps({"HOME": "/root"})})
    assert status == 400 and body["code"] == "BAD_REQUEST"


@pytest.mark.shared_daemon
def test_unknown_route_and_bad_bodies_never_crash(user_daemon: RunningDaemon) -> None:
    sock = user_daemon.socket
    status, body = http(sock, "GET", "/v1/nope")
    assert status == 404 and body["code"] == "BAD_REQUEST"
    status, body = http(sock, "POST", "/v1/plans", raw=b"{garbage")
    assert status == 400 and body == {"code": "BAD_REQUEST", "message": body["message"],
                                      "detail": {}}
    status, body = http(sock, "POST", "/v1/plans", body=[1, 2])
    assert status == 400 and body["code"] == "BAD_REQUEST"
    status, body = http(sock, "POST", "/v1/plans/x/execute", body={"digest": 5})
    assert status == 400 and body["code"] == "BAD_REQUEST"
    status, body = http(sock, "POST", "/v1/plans", raw=b"x" * (2 * 1024 * 1024))
    assert status == 413 and body["code"] == "BAD_REQUEST"
    status, body = http(sock, "DELETE", "/v1/health")
    assert status == 405 and body["code"] == "BAD_REQUEST"
    for status_body in (body,):
        assert "Traceback" not in json.dumps(status_body)
    assert user_daemon.client().health().api_version == API_VERSION  # still serving


@pytest.mark.shared_daemon
def test_invalid_plan_is_refused_with_findings(user_daemon: RunningDaemon) -> None:
    plan = make_plan([("a", "true", "INFO"), ("a", "true", "INFO")])
    status, body = http(user_daemon.socket, "POST", "/v1/plans", body={"plan": plan})
    assert status == 422 and body["code"] == "PLAN_INVALID"
    assert [f["code"] for f in body["detail"]["findings"]] == ["DUPLICATE_ID"]
    status, body = http(user_daemon.socket, "POST", "/v1/plans", body={"plan": {"goals": 1}})
    assert body["code"] == "PLAN_INVALID"
    assert {f["code"] for f in body["detail"]["findings"]} == {"SCHEMA_ERROR"}


def test_banned_plan_is_refused_at_submit(user_daemon: RunningDaemon) -> None:
    plan = ActionPlan.model_validate(make_plan([("wipe", "rm -rf --no-preserve-root /", "LOW")]))
    try:
        user_daemon.client().submit(plan)
    except AnnaError as exc:
        assert exc.code is ErrorCode.PLAN_BANNED
        assert any(f["code"] == "BANNED_COMMAND" for f in exc.detail["findings"])
    else:
        raise AssertionError("a banned plan was accepted")
    assert user_daemon.client().list_plans().plans == []


def test_daemon_raises_the_models_risk(user_daemon: RunningDaemon) -> None:
    """The daemon classifies itself: a model that calls a home write INFO gets LOW back."""
    plan = ActionPlan.model_validate(make_plan([("w", "echo hi > ~/.config/x.conf", "INFO")]))
    submitted = user_daemon.client().submit(plan, request="write x")
    step = submitted.annotated.steps[0]
    assert step.final_risk == "LOW" and step.requires_confirmation
    assert submitted.annotated.confirmations == 1
    assert any(w.code == "RISK_RAISED" for w in submitted.warnings)
    record = user_daemon.client().get_plan(submitted.plan_id)
    assert record.status == "submitted" and record.digest == submitted.digest
    assert record.request == "write x"
    listed = user_daemon.client().list_plans().plans
    assert [p.plan_id for p in listed] == [submitted.plan_id]
    assert listed[0].final_risk == "LOW" and listed[0].title == "test plan"


@pytest.mark.shared_daemon
def test_unknown_plan(user_daemon: RunningDaemon) -> None:
    try:
        user_daemon.client().get_plan("nope")
    except AnnaError as exc:
        assert exc.code is ErrorCode.PLAN_NOT_FOUND
    else:
        raise AssertionError("found a plan that does not exist")


@pytest.mark.shared_daemon
def test_checks_run_only_when_the_daemon_rates_them_info(user_daemon: RunningDaemon) -> None:
    (user_daemon.home / "note.txt").write_text("hello from the check\n")
    plan = ActionPlan.model_validate(make_plan([("s", "true", "INFO")],
                                               checks=[("c1", "cat ~/note.txt")]))
    client = user_daemon.client()
    submitted = client.submit(plan)
    result = client.run_checks(submitted.plan_id).results
    assert [(r.id, r.ran, r.exit_code) for r in result] == [("c1", True, 0)]
    assert result[0].output == "hello from the check\n"


@pytest.mark.shared_daemon
def test_missing_socket_is_daemon_unavailable(user_daemon: RunningDaemon) -> None:
    from annactl.core.daemon_client import DaemonClient

    try:
        DaemonClient(user_daemon.base / "absent.sock").health()
    except AnnaError as exc:
        assert exc.code is ErrorCode.DAEMON_UNAVAILABLE
    else:
        raise AssertionError("no error from a missing socket")
