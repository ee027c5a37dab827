"""A rollback command is run like a step: captured, its observed change set judged against
what was approved for it, committed — or refused, with nothing of it landed.

One root daemon, in a private mount namespace with a copy of /etc bound over /etc
(tests/decoyns.py): every rollback command it runs reaches only the decoy. The plan's step
is a live kind that changes nothing (``kill -0 $$``: it runs live, with no capture of its
own), so the rollback command alone decides what the undo does. The opaque spellings below rate LOW as rollback commands (the prediction misses
where bash and python resolve them); only the capture sees that they write /etc.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from anna_common.plan import ActionPlan
from anna_common.protocol.models import ExecEvent, RollbackResponse
from anna_common.risk import tiers
from annactl.core.daemon_client import DaemonClient
from tests.daemonfix import (
    IS_ROOT,
    RunningDaemon,
    decoy_etc_daemon,
    layers_left,
    make_plan,
    stop_and_remove,
)
from tests.treeprint import fingerprint

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="captured rollbacks need a root daemon")


def _decoy_daemon(env: dict[str, str] | None = None) -> RunningDaemon:
    return decoy_etc_daemon(env)


@pytest.fixture(scope="module")
def decoy() -> Iterator[RunningDaemon]:
    """A system daemon whose /etc is a copy (the real one is out of its reach)."""
    daemon = _decoy_daemon()
    try:
        yield daemon.start()
    finally:
        stop_and_remove(daemon)


def workdir(daemon: RunningDaemon, name: str) -> Path:
    """A fresh directory for one case, in the daemon's temporary tree."""
    top = daemon.base / "w" / name
    top.mkdir(parents=True)
    (top / "f").write_text("changed by the step\n")
    (top / "src").write_text("u ALL=(ALL) NOPASSWD: ALL\n")
    return top


def run_and_roll_back(client: DaemonClient, rollback: str
                      ) -> tuple[list[ExecEvent], RollbackResponse, str]:
    """Run a plan of one live step (a signal to its own shell) whose rollback command is ``rollback``, then roll
    it back, confirming whatever the daemon asks; returns the rollback command's tier."""
    response = client.submit(ActionPlan.model_validate(make_plan(
        [("s", "kill -0 $$", "LOW")], rollback={"s": rollback})))
    annotated = response.annotated
    high = annotated.final_risk == "HIGH"
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=high,
                                 confirm_word=tiers.plan_word(annotated) if high else None))
    assert events[-1].status == "succeeded", [(e.type, e.message) for e in events]
    result = client.rollback(response.plan_id, confirm_word=tiers.rollback_word(annotated))
    return events, result, str(annotated.rollback[0].final_risk)


def _command_result(result: RollbackResponse) -> tuple[bool, str]:
    found = [u for u in result.undo if u.action == "rollback_command"]
    assert len(found) == 1, result.undo
    return found[0].ok, found[0].message


WITHIN = [
    ("redirect", "echo restored > {T}/f"),
    # an aliased open: the prediction cannot say where it writes, the capture can
    ("python_aliased_open", "python3 -c \"f=open; f('{T}/f','w').write('restored' + chr(10))\""),
    ("cd_relative", "cd {T} && printf 'restored\\n' > f"),
]


@pytest.mark.parametrize(("name", "command"), WITHIN, ids=[c[0] for c in WITHIN])
def test_a_rollback_within_its_approval_is_observed_and_lands(
        decoy: RunningDaemon, name: str, command: str) -> None:
    top = workdir(decoy, name)
    etc_before = fingerprint(decoy.extra["etc"])
    _, result, _ = run_and_roll_back(decoy.client(), command.replace("{T}", str(top)))
    assert result.status == "rolled_back", result.undo
    ok, message = _command_result(result)
    assert ok and "captured: 1 change(s) observed" in message, message
    assert str(top / "f") in message, message
    assert (top / "f").read_text() == "restored\n"
    assert fingerprint(decoy.extra["etc"]) == etc_before
    assert not layers_left(decoy.state), "upper layers were left on the state disk"


REFUSED = [
    ("python_aliased_sudoers", "python3 -c \"f=open; f('/etc/sudoers.d/x','w').write("
                               "'u ALL=(ALL) NOPASSWD: ALL')\"", "/etc/sudoers.d/x"),
    ("xz_passwd_after_cd", "cd /etc && xz -k passwd", "/etc/passwd.xz"),
    ("split_into_sudoers", "cd /etc/sudoers.d && split -b 100 {T}/src a", "/etc/sudoers.d/aa"),
    ("nameref_xz", "cd /etc && declare -n r=F; F=passwd; xz -k \"$r\"", "/etc/passwd.xz"),
    # a live program beside a file tool: not a live kind as a whole, so captured too
    ("live_beside_xz", "systemctl --version; cd /etc && xz -k passwd", "/etc/passwd.xz"),
    ("here_string_python", "python3 <<< \"f=open; f('/etc/sudoers.d/y','w').write('x')\"",
     "/etc/sudoers.d/y"),
]


@pytest.mark.parametrize(("name", "command", "shown"), REFUSED, ids=[c[0] for c in REFUSED])
def test_a_rollback_writing_a_protected_path_is_refused_and_lands_nothing(
        decoy: RunningDaemon, name: str, command: str, shown: str) -> None:
    top = workdir(decoy, name)
    etc_before, top_before = fingerprint(decoy.extra["etc"]), fingerprint(top)
    _, result, tier = run_and_roll_back(decoy.client(), command.replace("{T}", str(top)))
    assert tier != "HIGH", \
        f"{name}: the prediction already rates it {tier}; pick a spelling it misses"
    assert result.status in ("rollback_failed", "rollback_incomplete"), result
    ok, message = _command_result(result)
    assert not ok, message
    assert "nothing of it landed" in message and shown in message, message
    assert "OBSERVED_CHANGE_REFUSED" in message, message
    assert fingerprint(decoy.extra["etc"]) == etc_before
    assert fingerprint(top) == top_before
    assert not layers_left(decoy.state), "upper layers were left on the state disk"


def test_a_failing_rollback_lands_nothing_it_wrote(decoy: RunningDaemon) -> None:
    """A rollback command that writes and then fails: its writes are discarded, like a
    failed step's, and the rollback is not reported done."""
    top = workdir(decoy, "failing")
    before = fingerprint(top)
    _, result, _ = run_and_roll_back(decoy.client(), f"echo half > {top}/f && false")
    assert result.status != "rolled_back", result
    ok, message = _command_result(result)
    assert not ok and "nothing it wrote landed" in message, message
    assert fingerprint(top) == before


def test_a_live_kind_rollback_runs_live(decoy: RunningDaemon) -> None:
    """A live kind (here ``kill``, a signal to the rollback's own shell) is its own typed
    path: it runs live, as a step of that kind does, with no capture to discard."""
    _, result, _ = run_and_roll_back(decoy.client(), "kill -0 $$")
    assert result.status == "rolled_back", result.undo
    ok, message = _command_result(result)
    assert ok and "captured" not in message, message


def test_without_a_capture_the_rollback_command_does_not_run_live() -> None:
    """A daemon whose capture cannot start (its helper's interpreter is missing, as when the
    capture cannot be built): the rollback command is not run live in its place; the rollback
    fails and says the command did not run, and nothing it would have written is there."""
    daemon = _decoy_daemon(env={"ANNAD_CONFINE_PYTHON": "/nonexistent/python3"})
    try:
        daemon.start()
        top = workdir(daemon, "nocapture")
        _, result, _ = run_and_roll_back(daemon.client(), f"echo ran > {top}/marker")
        assert result.status != "rolled_back", result
        ok, message = _command_result(result)
        assert not ok and "did not run" in message, message
        assert not (top / "marker").exists()
    finally:
        stop_and_remove(daemon)
