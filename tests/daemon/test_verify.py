"""Verification after execution through the real daemon: postconditions and verify commands.

A step that exits 0 but did not leave the state it should have (``pacman -S x || true``
when x cannot be installed) is marked ``verify_failed`` and the plan is rolled back; the
person can keep it instead (``keep_on_verify_fail``). A plan's own verify commands must be
read-only and run confined after the last step.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from anna_common.shell.flow import certain_commands
from annactl.core.daemon_client import DaemonClient
from tests.daemonfix import IS_ROOT, RunningDaemon, make_plan, running_daemon
from tests.pacmanfix import HAVE_PACMAN, PacmanRoot


def execute(client: DaemonClient, plan: dict, *, keep: bool = False) -> tuple[str, list]:  # type: ignore[type-arg]
    submitted = client.submit(ActionPlan.model_validate(plan))
    needed = tiers.confirmations_needed(submitted.annotated)
    events = list(client.execute(
        submitted.plan_id, submitted.digest, confirmed=True, high_confirmed=needed == 2,
        confirm_word=tiers.plan_word(submitted.annotated) if needed == 2 else None,
        keep_on_verify_fail=keep))
    return submitted.plan_id, events


@pytest.mark.parametrize(("command", "ran"), [
    ("pacman -S foo || true", ["pacman"]),
    ("pacman -S foo; echo done", ["pacman", "echo"]),
    ("sudo pacman -S foo", ["pacman"]),
    ("a && pacman -S foo", ["a", "pacman"]),
    ("(a && pacman -S foo) || true", ["a"]),
    ("a || pacman -S foo", ["a"]),
    ("if true; then pacman -S foo; fi", []),
    ("pacman -S foo &\nb", ["b"]),
    ("yes | pacman -S foo >/dev/null 2>&1", ["yes", "pacman"]),
    ("f() { pacman -S foo; }; f", ["f"]),
])
def test_only_calls_that_certainly_ran_get_postconditions(command: str, ran: list[str]) -> None:
    assert [c.program for c in certain_commands(command)] == ran


@pytest.mark.skipif(not (HAVE_PACMAN and IS_ROOT), reason="pacman and root needed")
@pytest.mark.parametrize("keep", [False, True])
def test_step_exits_0_but_postcondition_fails_and_the_plan_is_rolled_back(keep: bool) -> None:
    with running_daemon(user_mode=False) as daemon:
        root = PacmanRoot.create(daemon.base / "pacman")
        marker = daemon.base / "marker.conf"
        install = shlex.join(root.command("-S", "--noconfirm", "annatest-absent")) + " || true"
        plan = make_plan([("write", f"echo changed > {marker}", "MEDIUM"),
                          ("install", install, "MEDIUM")])
        client = daemon.client()
        plan_id, events = execute(client, plan, keep=keep)
        finished = [e for e in events if e.type == "step_finished" and e.step_id == "install"]
        assert finished[0].exit_code == 0 and finished[0].status == "verify_failed"
        record = client.get_plan(plan_id)
        failed = [v for v in record.verify if v.status == "failed"]
        assert [(v.kind, v.target, v.found) for v in failed] == [
            ("package_installed", "annatest-absent", "not installed")]
        assert [s.status for s in record.steps][1] in ("verify_failed", "undone")
        if keep:
            assert record.status == "succeeded"
            assert marker.read_text() == "changed\n"
        else:
            assert record.status == "failed", record.error
            assert record.error is not None and record.error.code == "VERIFY_FAILED"
            assert [s.status for s in record.steps] == ["undone", "undone"]
            assert not marker.exists()  # the first step was undone too


@pytest.mark.skipif(not (HAVE_PACMAN and IS_ROOT), reason="pacman and root needed")
def test_a_removal_that_did_not_happen_fails_and_a_passing_one_is_recorded(
        package_builder: object) -> None:
    from tests.pacmanfix import PkgSpec

    pkg = package_builder(PkgSpec(name="annatest-kept", version="2.0"))  # type: ignore[operator]
    with running_daemon(user_mode=False) as daemon:
        root = PacmanRoot.create(daemon.base / "pacman")
        root.install(pkg)
        remove = shlex.join(root.command("-R", "--noconfirm", "annatest-kept"))
        plan_id, events = execute(daemon.client(), make_plan([("remove", remove, "MEDIUM")]))
        assert events[-1].status == "succeeded", [e.output for e in events]
        record = daemon.client().get_plan(plan_id)
        assert [(v.kind, v.target, v.status) for v in record.verify] == [
            ("package_removed", "annatest-kept", "passed")]


@pytest.mark.shared_daemon
def test_plan_verify_command_fails_and_the_plan_is_rolled_back(
        user_daemon: RunningDaemon) -> None:
    target = user_daemon.home / "verified.txt"
    plan = make_plan([("write", "echo one > ~/verified.txt", "LOW")])
    plan["verify_commands"] = [{"id": "has_two", "description": "the file says two",
                                "command": "grep -q two ~/verified.txt"}]
    client = user_daemon.client()
    plan_id, events = execute(client, plan)
    assert events[-1].status == "failed"
    assert [(e.step_id, e.status) for e in events if e.type == "verified"] == [
        ("has_two", "failed")]
    record = client.get_plan(plan_id)
    assert record.error is not None and record.error.code == "VERIFY_FAILED"
    assert not Path(target).exists()


@pytest.mark.shared_daemon
def test_plan_verify_command_passes(user_daemon: RunningDaemon) -> None:
    plan = make_plan([("write", "echo two > ~/verified2.txt", "LOW")])
    plan["verify_commands"] = [{"id": "has_two", "description": "the file says two",
                                "command": "grep -q two ~/verified2.txt"}]
    client = user_daemon.client()
    plan_id, events = execute(client, plan)
    assert events[-1].status == "succeeded"
    assert [(v.step_id, v.status) for v in client.get_plan(plan_id).verify] == [
        ("has_two", "passed")]


@pytest.mark.shared_daemon
@pytest.mark.parametrize("command", [
    "rm ~/verified.txt", "grep x ~/f > ~/out", "bash -c 'touch ~/x'", "sudo tee /etc/x <<< y",
    "eval 'rm -f ~/a'", "sed -i s/a/b/ ~/f", "find ~ -delete"])
def test_verify_commands_must_be_read_only(user_daemon: RunningDaemon, command: str) -> None:
    plan = make_plan([("write", "echo one > ~/v.txt", "LOW")])
    plan["verify_commands"] = [{"id": "v", "description": "v", "command": command}]
    with pytest.raises(AnnaError) as caught:
        user_daemon.client().submit(ActionPlan.model_validate(plan))
    assert caught.value.code in (ErrorCode.PLAN_INVALID, ErrorCode.PLAN_BANNED)
    paths = [f.get("path") for f in caught.value.detail.get("findings", [])]  # type: ignore[union-attr]
    assert "verify_commands[0].command" in paths
