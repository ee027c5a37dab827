"""Previews through the real daemon: computed at submit, journalled, served by the route,
and a failing validator raises the stored tier (so execute demands the HIGH word)."""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

import pytest

from anna_common.errors import ErrorCode
from anna_common.plan import ActionPlan, RiskLevel
from tests.daemonfix import make_plan

if TYPE_CHECKING:
    from tests.daemonfix import RunningDaemon

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the system daemon runs as root")


def test_submit_returns_the_preview_and_the_route_serves_it(system_daemon: RunningDaemon) -> None:
    cfg = system_daemon.base / "sshd_config"
    cfg.write_text("Port 22\n#PermitRootLogin yes\n")
    plan = ActionPlan.model_validate(make_plan([
        ("s1", f"sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' {cfg}", "MEDIUM"),
        ("s2", "curl -fsS https://example.org -o /dev/null", "LOW")]))
    with contextlib.closing(system_daemon.client()) as client:
        submitted = client.submit(plan)
        assert submitted.preview is not None
        first, second = submitted.preview.steps
        assert first.kind == "files" and "+PermitRootLogin no" in (first.files[0].diff or "")
        assert second.kind == "none" and "network" in (second.reason or "")
        assert client.preview(submitted.plan_id) == submitted.preview
        audit = client.audit_verify()
        assert audit.ok
    assert cfg.read_text() == "Port 22\n#PermitRootLogin yes\n"


def test_failing_validator_raises_the_stored_tier(system_daemon: RunningDaemon) -> None:
    rc = system_daemon.base / ".bashrc"
    rc.write_text("export A=1\n")
    plan = ActionPlan.model_validate(make_plan([("s1", f"echo 'fi fi' >> {rc}", "LOW")]))
    with contextlib.closing(system_daemon.client()) as client:
        submitted = client.submit(plan)
        assert submitted.annotated.steps[0].final_risk == RiskLevel.HIGH
        assert any("bash -n fails" in w.message for w in submitted.warnings)
        assert submitted.preview is not None
        assert submitted.preview.steps[0].validators[0].verdict == "failed"
        stored = client.get_plan(submitted.plan_id)
        assert stored.annotated.final_risk == RiskLevel.HIGH
        with pytest.raises(Exception) as caught:
            list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                high_confirmed=False))
        assert getattr(caught.value, "code", None) == ErrorCode.CONFIRMATION_REQUIRED
    assert rc.read_text() == "export A=1\n"
