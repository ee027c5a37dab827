"""A step that runs a live program beside other commands runs live, so it is HIGH with
"runs live; Anna cannot undo it" on every daemon (annad.execution.runs_live); a step that is
nothing but live programs and inert builtins stays a live kind with its typed undo.

Nothing here runs a step: the commands are submitted and judged, never approved.
"""

from __future__ import annotations

import pytest

from anna_common.annotate import annotate
from anna_common.levels import RiskLevel
from anna_common.plan import ActionPlan
from anna_common.risk.rules.base import UNVERIFIED_UNDO_WORDS, AssessContext
from annad.execution.runs_live import RUNS_LIVE, mark_live
from tests.daemonfix import RunningDaemon, make_plan

MIXED = [
    "systemctl --version; cd /etc && xz -k passwd",
    "sudo systemctl daemon-reload && sudo python3 -c \"f=open; f('/etc/sudoers.d/x','w')\"",
    "pacman -Q >/dev/null; split /tmp/a /etc/sudoers.d/a",
    "env systemctl status sshd; declare -n r=F; F=/etc/passwd; xz -k \"$r\"",
    "systemctl restart x <<< y; gzip /etc/hosts",
    "sudo -u root systemctl restart sshd; patch /etc/ssh/sshd_config /tmp/x.diff",
    "systemctl status sshd > /etc/motd",
    "hyprctl reload && tee ~/.bashrc < /tmp/x",
    "kill -HUP 1; rm -rf ~+/*",
    "bash -c \"systemctl restart x; xz /etc/passwd\"",
    "command systemctl restart x; xz /etc/passwd",
    "sudo env FOO=1 systemctl restart x && xz /etc/passwd",
    "/usr/bin/systemctl restart x; xz /etc/passwd",
    "systemctl restart x | tee /etc/motd",
]
"""Live programs beside a file change, spelled as bash allows (sudo, env, nameref,
here-string, a redirect of the live command itself, tilde forms)."""

LIVE_ONLY = [
    "sudo systemctl restart sshd",
    "systemctl enable --now docker && systemctl is-active docker",
    "pacman -S --needed htop",
    "cd / && systemctl --user restart foo.service 2>/dev/null",
]
"""Nothing but live programs and inert builtins: live kinds with their typed undo."""


def _annotated(commands: list[str]) -> object:
    steps = [(f"s{i}", command, "MEDIUM") for i, command in enumerate(commands)]
    annotated, _, _ = annotate(ActionPlan.model_validate(make_plan(steps)),
                               AssessContext(home="/home/u"))
    return annotated


@pytest.mark.parametrize("command", MIXED)
def test_a_live_program_beside_other_commands_is_high_and_says_it_runs_live(
        command: str) -> None:
    marked = mark_live(_annotated([command]), None)  # type: ignore[arg-type]
    step = marked.steps[0]
    assert step.final_risk == RiskLevel.HIGH and step.confirm_word
    assert any(r.startswith(RUNS_LIVE) and "step of its own" in r for r in step.reasons), \
        step.reasons
    assert "uncaptured_write" in step.codes


@pytest.mark.parametrize("command", LIVE_ONLY)
def test_a_step_of_live_programs_only_is_left_to_its_typed_undo(command: str) -> None:
    plan = _annotated([command])
    marked = mark_live(plan, None)  # type: ignore[arg-type]
    step = marked.steps[0]
    assert not any(r.startswith(RUNS_LIVE) for r in step.reasons)
    assert step.final_risk == plan.steps[0].final_risk  # type: ignore[attr-defined]
    if "restart" in command or "--now" in command:
        # issue 34: a start runs the unit's own programs, which Anna does not see; the
        # typed undo puts the state back, and the step says its undo is not verified
        assert "unverified_undo" in step.codes, step.codes
        assert any(UNVERIFIED_UNDO_WORDS in r and "runs the unit's own programs" in r
                   for r in step.reasons), step.reasons
        assert marked.rollback_status != "available", marked.rollback_status
    else:
        assert marked == plan


def test_a_live_program_no_rule_can_name_runs_captured() -> None:
    """``s=systemctl; $s …`` names no live program: not a live kind, so the step runs
    captured, where the service manager is out of reach (capture_filter: no Unix socket)."""
    from annad.execution.livekinds import live_kind

    assert live_kind("s=systemctl; $s restart x; xz /etc/passwd") is None


def test_the_daemon_judges_a_mixed_step_so_at_submit(user_daemon: RunningDaemon) -> None:
    """Through the real socket: the mixed step comes back HIGH with the words, the live-only
    step does not."""
    plan = ActionPlan.model_validate(make_plan([("m", MIXED[0], "LOW"),
                                                ("l", LIVE_ONLY[0], "MEDIUM")]))
    submitted = user_daemon.client().submit(plan, request="mixed")
    mixed, live = submitted.annotated.steps
    assert mixed.final_risk == "HIGH"
    assert any(r.startswith(RUNS_LIVE) for r in mixed.reasons)
    assert not any(r.startswith(RUNS_LIVE) for r in live.reasons)
    assert submitted.annotated.final_risk == "HIGH"
