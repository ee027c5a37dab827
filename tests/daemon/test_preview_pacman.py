"""Package previews with the real pacman on a scratch root (tests/pacmanfix.py).

``pacman -S`` lists its targets and the dependencies it pulls in, ``-R -s`` what goes along,
``-Sy`` never refreshes in a preview; the scratch database is byte-for-byte unchanged.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from anna_common.protocol.models import SessionEnv
from anna_common.risk.rules.base import AssessContext
from anna_common.validate import validate
from annad.journal.records import who_of
from annad.preview import engine
from tests.daemonfix import make_plan
from tests.pacmanfix import HAVE_PACMAN, IS_ROOT, LocalRepo, PacmanRoot, PkgSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.protocol.preview import StepPreview

pytestmark = [pytest.mark.pacman,
              pytest.mark.skipif(not HAVE_PACMAN, reason="pacman tools missing"),
              pytest.mark.skipif(not IS_ROOT, reason="pacman -Sy and overlays need root")]
APP = PkgSpec(name="annatest-app", version="2.0", depends=("annatest-hello",))


def _hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def app_root(pacman_root: PacmanRoot, package_builder: Callable[[PkgSpec], Path],
             tmp_path: Path) -> PacmanRoot:
    """A synced scratch root whose repository holds ``annatest-app`` and the
    ``annatest-hello`` it depends on."""
    repo = LocalRepo.create(tmp_path / "repo", [package_builder(PkgSpec()),
                                                package_builder(APP)])
    pacman_root.add_repo(repo)
    pacman_root.sync()
    return pacman_root


def _preview(command: str) -> StepPreview:
    result = validate(make_plan([("s1", command, "MEDIUM")]), AssessContext(distro="arch"))
    assert result.plan is not None, result.errors
    preview = engine.compute(result.plan, who_of(0, "/root", SessionEnv()), engine.Options())
    return preview.steps[0]


def test_sync_install_lists_targets_with_dependencies(app_root: PacmanRoot) -> None:
    before = _hash(app_root.root.parent)
    command = shlex.join(["pacman", *app_root.args(), "-Sy", "--noconfirm", "annatest-app"])
    step = _preview(command)
    assert step.kind == "packages", step.reason
    got = {(p.name, p.version, p.action, p.dependency) for p in step.packages}
    assert got == {("annatest-app", "2.0-1", "install", False),
                   ("annatest-hello", "1.0-1", "install", True)}
    assert all(p.size is not None and p.size > 0 for p in step.packages)
    assert _hash(app_root.root.parent) == before, "the preview changed the scratch root"
    assert app_root.query() == {}


def test_remove_with_dependencies(app_root: PacmanRoot) -> None:
    app_root.run("-S", "--noconfirm", "annatest-app")
    app_root.run("-D", "--asdeps", "annatest-hello")
    before = _hash(app_root.root.parent)
    step = _preview(shlex.join(["pacman", *app_root.args(), "-Rs", "--noconfirm",
                                "annatest-app"]))
    got = {(p.name, p.action, p.dependency) for p in step.packages}
    assert got == {("annatest-app", "remove", False), ("annatest-hello", "remove", True)}
    assert _hash(app_root.root.parent) == before


def test_reinstall_is_named(app_root: PacmanRoot) -> None:
    app_root.run("-S", "--noconfirm", "annatest-hello")
    step = _preview(shlex.join(["pacman", *app_root.args(), "-S", "annatest-hello"]))
    assert [(p.name, p.action) for p in step.packages] == [("annatest-hello", "reinstall")]


def test_unknown_target_shows_pacmans_words(app_root: PacmanRoot) -> None:
    step = _preview(shlex.join(["pacman", *app_root.args(), "-S", "annatest-nope"]))
    assert step.kind == "packages" and not step.packages
    assert "target not found" in (step.reason or "")
