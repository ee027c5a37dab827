"""Recognised actions: parsing pacman/systemctl calls, and undoing unit state.

Real services are never touched: the unit test injects a runner that plays systemctl
(the executor and undo take their runner as a parameter for exactly this).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from anna_common.shell.grammar import analyse
from annad.backups.backup import BackupRefused, BlobStore
from annad.backups.manifest import StepManifest, UnitState
from annad.confine.credentials import Identity
from annad.confine.runner import RunResult
from annad.execution.prestate import pacman_call, unit_calls, unit_states
from annad.execution.undo import UndoEnv, undo_step


def _first(command: str):  # type: ignore[no-untyped-def]
    return analyse(command).commands[0]


def test_pacman_calls() -> None:
    assert pacman_call(_first("pacman -Syu --noconfirm")) == ("S", [])
    assert pacman_call(_first("sudo pacman --root /r -b /r/db -U x.pkg")) == (
        "U", ["--root", "/r", "--dbpath", "/r/db"])
    assert pacman_call(_first("pacman --remove --config=/c foo")) == ("R", ["--config", "/c"])
    assert pacman_call(_first("pacman -Qi foo")) is None
    assert pacman_call(_first("yay -S foo")) == ("S", [])
    with pytest.raises(BackupRefused):
        pacman_call(_first('pacman -R --dbpath "$DB" foo'))


def test_unit_calls() -> None:
    assert unit_calls(_first("systemctl enable --now sshd.service")) == (False, ["sshd.service"])
    assert unit_calls(_first("systemctl --user start pipewire")) == (True, ["pipewire"])
    assert unit_calls(_first("systemctl status sshd")) is None
    assert unit_calls(_first("systemctl -t service stop a b")) == (False, ["a", "b"])


class FakeSystemctl:
    """Plays ``systemctl`` for is-enabled/is-active and the state-changing verbs."""

    def __init__(self, enabled: str, active: str, stop_programs: str = "") -> None:
        self.enabled = enabled
        self.active = active
        self.stop_programs = stop_programs
        """What ``systemctl show --value -p ExecStop -p ExecStopPost`` prints."""
        self.calls: list[list[str]] = []

    def run_argv(self, argv: list[str], *, timeout: float = 10.0, max_output: int = 65536,
                 identity: Identity | None = None, env: Mapping[str, str] | None = None
                 ) -> RunResult:
        self.calls.append(argv)
        verb = next(a for a in argv[1:] if not a.startswith("-"))
        if verb == "is-enabled":
            return RunResult(exit_code=0, output=self.enabled + "\n")
        if verb == "is-active":
            return RunResult(exit_code=0, output=self.active + "\n")
        if verb == "show":
            return RunResult(exit_code=0, output=self.stop_programs)
        effect = {"enable": ("enabled", None), "disable": ("disabled", None),
                  "mask": ("masked", None), "unmask": ("disabled", None),
                  "start": (None, "active"), "stop": (None, "inactive")}[verb]
        self.enabled = effect[0] or self.enabled
        self.active = effect[1] or self.active
        return RunResult(exit_code=0, output="")

    def run_shell(self, command: str, **_: object) -> RunResult:
        raise AssertionError("no shell command expected")


def _manifest(units: list[UnitState]) -> StepManifest:
    return StepManifest(plan_id="p", index=0, step_id="svc", scope="system", uid=0, gid=0,
                        home="/nonexistent", units=units)


def test_unit_state_is_recorded_and_put_back(tmp_path: Path) -> None:
    fake = FakeSystemctl(enabled="disabled", active="inactive")
    states = unit_states("systemctl enable foo.service", fake, identity=None, env={})
    assert states == [UnitState(unit="foo.service", user=False, enabled="disabled",
                                active="inactive")]
    fake.enabled, fake.active = "enabled", "active"  # what the step did
    env = UndoEnv(runner=fake, blobs=BlobStore(tmp_path), timeout=5, max_output=1024,
                  restrict_user_scope=True)
    results = undo_step(_manifest(states), env)
    assert [(r.action, r.target, r.ok) for r in results] == [("unit_state", "foo.service", True)]
    assert (fake.enabled, fake.active) == ("disabled", "inactive")
    assert ["systemctl", "disable", "--", "foo.service"] in fake.calls
    assert ["systemctl", "stop", "--", "foo.service"] in fake.calls


def test_masked_unit_is_unmasked_then_restored(tmp_path: Path) -> None:
    fake = FakeSystemctl(enabled="masked", active="inactive")
    env = UndoEnv(runner=fake, blobs=BlobStore(tmp_path), timeout=5, max_output=1024,
                  restrict_user_scope=True)
    results = undo_step(_manifest([UnitState(unit="u", user=False, enabled="enabled",
                                             active="active")]), env)
    assert results[0].ok and (fake.enabled, fake.active) == ("enabled", "active")
    verbs = [c[1] for c in fake.calls if c[1] not in ("is-enabled", "is-active")]
    assert verbs == ["unmask", "enable", "start"]


class LyingPacman:
    """Plays a ``pacman`` whose -R exits 0 and removes nothing (a hook that put it back, a
    database another tool rewrote): undo must read the database again, not trust the exit."""

    def __init__(self, installed: dict[str, str]) -> None:
        self.installed = installed

    def run_argv(self, argv: list[str], *, timeout: float = 10.0, max_output: int = 65536,
                 identity: Identity | None = None, env: Mapping[str, str] | None = None
                 ) -> RunResult:
        if "-Q" in argv:
            return RunResult(exit_code=0, output="".join(
                f"{n} {v}\n" for n, v in sorted(self.installed.items())))
        return RunResult(exit_code=0, output="")  # -R "succeeds"

    def run_shell(self, command: str, **_: object) -> RunResult:
        raise AssertionError("no shell command expected")


def test_packages_are_read_again_after_the_undo(tmp_path: Path) -> None:
    from annad.backups.manifest import PackageState

    fake = LyingPacman({"base": "1-1", "htop": "3.3-1"})
    state = PackageState(program="pacman", options=[], before={"base": "1-1"},
                         after={"base": "1-1", "htop": "3.3-1"})
    manifest = _manifest([]).model_copy(update={"packages": [state]})
    env = UndoEnv(runner=fake, blobs=BlobStore(tmp_path), timeout=5, max_output=1024,
                  restrict_user_scope=True)
    results = undo_step(manifest, env)
    assert ("remove_packages", True) in [(r.action, r.ok) for r in results]
    (checked,) = [r for r in results if r.action == "packages_checked"]
    assert not checked.ok and "htop 3.3-1 (was absent)" in checked.message, checked
    fake.installed.pop("htop")  # an honest pacman: nothing to report
    assert not [r for r in undo_step(manifest, env) if r.action == "packages_checked"]


class StubbornSystemctl(FakeSystemctl):
    """A unit whose ``start`` exits 0 and leaves it inactive (it exited at once)."""

    def run_argv(self, argv: list[str], **kwargs: object) -> RunResult:  # type: ignore[override]
        if "start" in argv:
            self.calls.append(argv)
            return RunResult(exit_code=0, output="")
        return super().run_argv(argv, **kwargs)  # type: ignore[arg-type]


def test_a_unit_is_read_again_after_its_undo(tmp_path: Path) -> None:
    fake = StubbornSystemctl(enabled="enabled", active="active")
    states = unit_states("systemctl stop foo.service", fake, identity=None, env={})
    fake.active = "inactive"  # what the step did
    env = UndoEnv(runner=fake, blobs=BlobStore(tmp_path), timeout=5, max_output=1024,
                  restrict_user_scope=True)
    (result,) = undo_step(_manifest(states), env)
    assert result.action == "unit_state" and not result.ok, result
    assert "enabled/inactive now, not enabled/active" in result.message


@pytest.mark.parametrize("command", ["systemctl start foo.service",
                                     "systemctl enable --now foo.service",
                                     "systemctl -q restart foo.service",
                                     "systemctl reload-or-restart foo.service"])
def test_a_unit_the_step_started_is_put_back_but_never_verified(tmp_path: Path,
                                                                command: str) -> None:
    """Issue 34 item 2: a start runs the unit's own programs (ExecStart=), whose effects Anna
    does not see. Before, the undo stopped it, read the state again and said ``unit_state``
    ok, and the rollback ended ``rolled_back``."""
    fake = FakeSystemctl(enabled="disabled", active="inactive")
    states = unit_states(command, fake, identity=None, env={})
    assert states[0].ran and "runs its own programs (ExecStart=)" in states[0].ran[0]
    fake.enabled, fake.active = "enabled", "active"  # what the step did
    env = UndoEnv(runner=fake, blobs=BlobStore(tmp_path), timeout=5, max_output=1024,
                  restrict_user_scope=True)
    (result,) = undo_step(_manifest(states), env)
    assert (result.action, result.target, result.ok) == ("unverified", "foo.service", True)
    assert "read again: disabled/inactive" in result.message or "already" in result.message
    assert "Anna did not see" in result.message
    assert (fake.enabled, fake.active) == ("disabled", "inactive")  # the state is back
    from annad.execution.undostatus import rollback_status

    assert str(rollback_status([result])[0]) == "rollback_unverified"


@pytest.mark.parametrize(("programs", "action"), [
    ("", "unit_state"),
    ("{ path=/usr/bin/touch ; argv[]=/usr/bin/touch /var/tmp/x ; }\n", "unverified"),
])
def test_a_stopped_unit_is_unverified_only_when_it_has_stop_programs(
        tmp_path: Path, programs: str, action: str) -> None:
    fake = FakeSystemctl(enabled="enabled", active="active", stop_programs=programs)
    states = unit_states("systemctl stop foo.service", fake, identity=None, env={})
    assert bool(states[0].ran) is bool(programs)
    fake.active = "inactive"
    env = UndoEnv(runner=fake, blobs=BlobStore(tmp_path), timeout=5, max_output=1024,
                  restrict_user_scope=True)
    (result,) = undo_step(_manifest(states), env)
    assert (result.action, result.ok) == (action, True), result
    assert fake.active == "active"
