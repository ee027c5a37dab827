"""What needs no container: ``annactl setup`` refuses plainly where systemd is not running
and plans from this checkout's units; a runtime directory that cannot be made is a coded
error, not a crash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from anna_common.errors import AnnaError
from annactl.commands import setup, setup_plan
from tests.daemonfix import RunningDaemon, make_plan
from tests.systemd.machine import REPO


def test_refuses_without_systemd(tmp_path: Path) -> None:
    with pytest.raises(AnnaError) as caught:
        setup.refuse_without_systemd(tmp_path / "no-run-systemd-system")
    assert "does not run systemd" in caught.value.message
    assert "nothing was changed" in caught.value.message


@pytest.mark.skipif(Path("/run/systemd/system").is_dir(), reason="systemd runs here")
def test_the_command_refuses_here_without_systemd_and_changes_nothing() -> None:
    annactl = Path(sys.executable).with_name("annactl")
    proc = subprocess.run([str(annactl), "setup", "--dry-run"], capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "does not run systemd" in proc.stderr


def test_the_plan_installs_this_checkouts_units(tmp_path: Path) -> None:
    planned = setup_plan.plan(tmp_path / "drop-in.conf")
    assert planned.units == REPO / "systemd"
    sources = [s.argv[2] for s in planned.steps if s.argv[:2] == ["install", "-Dm644"]]
    assert str(REPO / "systemd" / "annad.service") in sources
    assert planned.steps[-1].argv == ["systemctl", "enable", "--now", "annad.service"]
    # this checkout's annad is not /usr/bin/annad: a drop-in names it
    assert planned.annad != setup_plan.PACKAGED_ANNAD
    drop_in = (tmp_path / "drop-in.conf").read_text()
    assert f"ExecStart=\nExecStart={planned.annad}\n" in drop_in


def test_an_unusable_runtime_dir_is_a_coded_error_not_a_crash(tmp_path: Path) -> None:
    """As on a machine where XDG_RUNTIME_DIR names a /run/user/UID nobody made."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    annactl = Path(sys.executable).with_name("annactl")
    env = {**os.environ, "XDG_RUNTIME_DIR": str(blocker / "run")}
    proc = subprocess.run([str(annactl), "history"], capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    assert proc.returncode == 7, proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr
    assert f"cannot create {blocker / 'run' / 'anna'}" in proc.stderr


def test_a_per_user_daemon_refuses_a_root_plan_before_asking(user_daemon: RunningDaemon,
                                                             tmp_path: Path) -> None:
    """The real per-user daemon, the real annactl: "Run this plan? [y/N]" never comes, the
    refusal names the steps and the command that fixes it, and nothing runs."""
    target = tmp_path / "root-owned-place"
    plan = make_plan([("s1", "systemctl restart anna-nothing.service", "MEDIUM"),
                      ("s2", f"touch {target}", "LOW")])
    annactl = Path(sys.executable).with_name("annactl")
    env = {**os.environ, "ANNA_SOCKET": str(user_daemon.socket)}
    for flags in ([], ["--yes"]):
        proc = subprocess.run([str(annactl), "apply", "-", *flags], input=json.dumps(plan),
                              capture_output=True, text=True, timeout=120, check=False,
                              env=env)
        assert proc.returncode == 9, proc.stdout + proc.stderr
        assert "SCOPE_REQUIRES_ROOT: s1 need(s) root" in proc.stderr
        assert "hint: run: annactl setup" in proc.stderr or "log in again" in proc.stderr
        assert "[y/N]" not in proc.stderr and "pass --yes" not in proc.stderr
    assert not target.exists()



@pytest.mark.parametrize("name", ["a b", "100%", "x\nExecStartPre=evil"])
def test_a_path_the_unit_cannot_name_as_is_is_refused(name: str, tmp_path: Path) -> None:
    bindir = tmp_path / name / "bin"
    bindir.mkdir(parents=True)
    (bindir / "annad").write_text("#!/bin/sh\n")
    (bindir / "annad").chmod(0o755)
    with pytest.raises(AnnaError) as caught:
        setup_plan.this_annad(str(bindir / "python3"))
    assert "cannot be written into a unit" in caught.value.message
    plain = tmp_path / "plain" / "bin"
    plain.mkdir(parents=True)
    (plain / "annad").write_text("#!/bin/sh\n")
    (plain / "annad").chmod(0o755)
    assert setup_plan.this_annad(str(plain / "python3")) == str(plain / "annad")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux missing (.ci/run installs it)")
def test_on_a_terminal_the_refusal_comes_instead_of_the_question(user_daemon: RunningDaemon,
                                                                 tmp_path: Path) -> None:
    """Before: "Run this MEDIUM plan? [y/N]", then after "y" the refusal. Now the plan is
    shown, then one refusal with the fix, and no question."""
    from tests.ui.tmuxrun import Tmux

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(make_plan([("s1", "systemctl restart anna-nothing.service",
                                           "MEDIUM")])))
    annactl = Path(sys.executable).with_name("annactl")
    env = {k: v for k, v in os.environ.items() if k.startswith(("HOME", "XDG_", "ANNA_"))}
    env.update(ANNA_SOCKET=str(user_daemon.socket), PATH="/usr/bin:/bin")
    term = Tmux([str(annactl), "apply", str(plan)], env, tmp_path, size=(100, 40))
    try:
        screen = term.wait_for(r"hint: run: annactl setup|log in again")
        assert "SCOPE_REQUIRES_ROOT" in screen and "[y/N]" not in screen, screen
        assert screen.count("SCOPE_REQUIRES_ROOT") == 1
        assert "s1" in screen and "systemctl restart" in screen  # the plan was shown first
        assert term.exit_status() == 9
    finally:
        term.close()
