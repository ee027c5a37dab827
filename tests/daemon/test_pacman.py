"""Real pacman through the real system daemon, on a scratch root inside a temporary dir.

Every pacman command names the scratch root's own --root, --dbpath, --cachedir, --config,
--logfile, --gpgdir and --hookdir (tests/pacmanfix.py), and the daemon's pre-state
queries and undo reuse exactly those options: the machine's /var/lib/pacman is never read.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from tests.daemonfix import IS_ROOT, running_daemon
from tests.pacmanfix import HAVE_PACMAN, LocalRepo, PacmanRoot, PkgSpec

pytestmark = [
    pytest.mark.pacman,
    pytest.mark.skipif(not HAVE_PACMAN, reason="pacman tools missing"),
    pytest.mark.skipif(not IS_ROOT, reason="pacman -U/-R and the system daemon need root"),
]


def test_install_then_rollback_removes_exactly_the_new_package(
        package_builder: Callable[[PkgSpec], Path]) -> None:
    kept = package_builder(PkgSpec(name="annatest-kept", version="2.0"))
    new = package_builder(PkgSpec(name="annatest-new", version="1.5"))
    with running_daemon(user_mode=False) as daemon:
        root = PacmanRoot.create(daemon.base / "pacman")
        assert str(root.root).startswith("/tmp/anna-d-")  # never the machine's root
        root.install(kept)
        assert root.query() == {"annatest-kept": "2.0-1"}

        command = shlex.join(root.command("-U", "--noconfirm", str(new)))
        plan = ActionPlan.model_validate({
            "analysis": "install a package", "goals": ["install annatest-new"],
            "necessary_checks": [],
            "command_plan": [{"id": "install", "description": "install", "command": command,
                              "risk_level": "MEDIUM", "rollback_id": None,
                              "requires_confirmation": True}],
            "rollback_plan": [], "notes_for_user": "", "meta": {}})
        client = daemon.client()
        submitted = client.submit(plan)
        assert submitted.annotated.steps[0].scope == "system"
        assert submitted.annotated.final_risk == "HIGH"  # a package file, not a signed repo
        events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                     high_confirmed=True,
                                     confirm_word=tiers.plan_word(submitted.annotated)))
        assert events[-1].status == "succeeded", [e.output for e in events]
        assert root.query() == {"annatest-kept": "2.0-1", "annatest-new": "1.5-1"}
        installed_file = root.root / "usr/share/annatest-new/annatest-new.txt"
        assert installed_file.exists()

        result = client.rollback(submitted.plan_id)
        assert result.status == "rolled_back", result.undo
        assert [(u.action, u.target, u.ok) for u in result.undo] == [
            ("remove_packages", "annatest-new", True)]
        assert root.query() == {"annatest-kept": "2.0-1"}
        assert not installed_file.exists()
        assert (root.root / "usr/share/annatest-kept/annatest-kept.txt").exists()


def test_telemetry_reads_the_scratch_database(
        package_builder: Callable[[PkgSpec], Path], tmp_path: Path) -> None:
    pkg = package_builder(PkgSpec(name="annatest-seen", version="3.1"))
    root = PacmanRoot.create(tmp_path / "pacman")
    root.install(pkg)
    with running_daemon(user_mode=True, args=["--pacman-dbpath", str(root.dbpath)]) as daemon:
        packages = daemon.client().telemetry(fresh=True).telemetry.packages
        assert packages.available and packages.manager == "pacman"
        assert packages.dbpath == str(root.dbpath)
        assert [(p.name, p.version) for p in packages.packages] == [("annatest-seen", "3.1-1")]


def _plan(command: str) -> ActionPlan:
    return ActionPlan.model_validate({
        "analysis": "packages", "goals": ["packages"], "necessary_checks": [],
        "command_plan": [{"id": "pkg", "description": "packages", "command": command,
                          "risk_level": "MEDIUM", "rollback_id": None,
                          "requires_confirmation": True}],
        "rollback_plan": [], "notes_for_user": "", "meta": {}})


def _run(daemon, plan: ActionPlan) -> str:  # type: ignore[no-untyped-def]
    client = daemon.client()
    submitted = client.submit(plan)
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=True,
                                 confirm_word=tiers.plan_word(submitted.annotated)))
    assert events[-1].status == "succeeded", [e.output for e in events]
    return submitted.plan_id


def test_sync_install_with_a_dependency_is_undone_entirely(
        package_builder: Callable[[PkgSpec], Path]) -> None:
    kept = package_builder(PkgSpec(name="annatest-kept", version="2.0"))
    dep = package_builder(PkgSpec(name="annatest-dep", version="1.0"))
    app = package_builder(PkgSpec(name="annatest-app", version="1.0",
                                  depends=("annatest-dep",)))
    with running_daemon(user_mode=False) as daemon:
        root = PacmanRoot.create(daemon.base / "pacman")
        root.install(kept)
        root.add_repo(LocalRepo.create(daemon.base / "repo", [dep, app]))
        root.sync()
        plan_id = _run(daemon, _plan(shlex.join(root.command("-S", "--noconfirm",
                                                             "annatest-app"))))
        assert set(root.query()) == {"annatest-kept", "annatest-app", "annatest-dep"}
        result = daemon.client().rollback(plan_id)
        assert result.status == "rolled_back", result.undo
        assert [(u.action, u.target) for u in result.undo] == [
            ("remove_packages", "annatest-app annatest-dep")]
        assert root.query() == {"annatest-kept": "2.0-1"}


def test_upgrade_is_undone_from_the_package_cache(
        package_builder: Callable[[PkgSpec], Path]) -> None:
    old = package_builder(PkgSpec(name="annatest-up", version="1.0"))
    new = package_builder(PkgSpec(name="annatest-up", version="2.0"))
    with running_daemon(user_mode=False) as daemon:
        root = PacmanRoot.create(daemon.base / "pacman")
        repo = LocalRepo.create(daemon.base / "repo", [old])
        root.add_repo(repo)
        root.sync()
        root.run("-S", "--noconfirm", "annatest-up")  # 1.0, now in the scratch cache
        repo.add([new])
        plan_id = _run(daemon, _plan(shlex.join(root.command("-Syy", "--noconfirm",
                                                             "annatest-up"))))
        assert root.query() == {"annatest-up": "2.0-1"}
        result = daemon.client().rollback(plan_id)
        assert result.status == "rolled_back", result.undo
        assert [(u.action, u.target, u.ok) for u in result.undo] == [
            ("reinstall_packages", "annatest-up", True)]
        assert root.query() == {"annatest-up": "1.0-1"}
