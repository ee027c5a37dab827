"""Issue 21 item 5, the daemon's side: the approved digest is verified before anything of
a fleet host's plan is previewed, stored or run, and ``POST /v1/judge`` decides a plan
(validation, digest, policy) storing and running nothing. Real daemon, raw HTTP."""

from __future__ import annotations

from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, http, make_plan


def _plan(daemon: RunningDaemon, command: str) -> dict[str, object]:
    return make_plan([("w", command, "LOW")])


def test_submit_with_another_approved_digest_is_refused_and_nothing_is_stored(
        user_daemon: RunningDaemon) -> None:
    target = user_daemon.home / "never.txt"
    plan = _plan(user_daemon, f"echo x > {target}")
    right = ActionPlan.model_validate(plan).digest()
    # (the last character changed, whatever it is: a digest ending in "0" made "…0" right)
    last = "1" if right.endswith("0") else "0"
    for wrong in ("0" * 64, right[:-1] + last, "", right.upper(), right + " "):
        status, body = http(user_daemon.socket, "POST", "/v1/plans",
                            {"plan": plan, "source": "file", "approved_digest": wrong})
        assert status == 409 or status == 400, (status, body)
        assert body["code"] == "DIGEST_MISMATCH", body
        assert body["detail"]["digest"] == right
    status, body = http(user_daemon.socket, "GET", "/v1/plans")
    assert body["plans"] == []
    assert not target.exists()
    status, body = http(user_daemon.socket, "POST", "/v1/plans",
                        {"plan": plan, "source": "file", "approved_digest": right})
    assert status == 200 and body["digest"] == right


def test_judge_decides_without_storing_or_running(user_daemon: RunningDaemon) -> None:
    target = user_daemon.home / "never.txt"
    plan = _plan(user_daemon, f"echo x > {target}")
    digest = ActionPlan.model_validate(plan).digest()
    status, body = http(user_daemon.socket, "POST", "/v1/judge",
                        {"plan": plan, "approved_digest": digest})
    assert status == 200 and body["digest"] == digest, body
    assert body["annotated"]["steps"][0]["policy"] is None
    (user_daemon.base / "policy.toml").write_text(
        '[[rule]]\nid = "no-echo-home"\naction = "deny"\npath = "~/**"\n')
    status, body = http(user_daemon.socket, "POST", "/v1/judge",
                        {"plan": plan, "approved_digest": digest})
    assert body["code"] == "POLICY_DENIED" and body["detail"]["rule"] == "no-echo-home", body
    status, body = http(user_daemon.socket, "POST", "/v1/judge",
                        {"plan": plan, "approved_digest": "0" * 64})
    assert body["code"] == "DIGEST_MISMATCH"
    status, body = http(user_daemon.socket, "POST", "/v1/judge", {"plan": plan})
    assert body["code"] == "BAD_REQUEST"
    status, body = http(user_daemon.socket, "GET", "/v1/plans")
    assert body["plans"] == [] and not target.exists()
