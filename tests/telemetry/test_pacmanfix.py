"""The shared real-pacman helpers do what other engineers' tests rely on."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.pacmanfix import LocalRepo, PacmanRoot, PkgSpec, requires_pacman, requires_root

pytestmark = [pytest.mark.pacman, requires_pacman]


def test_built_package_is_a_real_arch_any_package(hello_package: Path) -> None:
    assert hello_package.name == "annatest-hello-1.0-1-any.pkg.tar.gz"
    listing = subprocess.run(["bsdtar", "-tf", str(hello_package)], capture_output=True,
                             text=True, check=True).stdout.split()
    assert "usr/share/annatest-hello/annatest-hello.txt" in listing
    assert ".PKGINFO" in listing
    info = subprocess.run(["bsdtar", "-xOf", str(hello_package), ".PKGINFO"],
                          capture_output=True, text=True, check=True).stdout
    assert "pkgname = annatest-hello" in info and "arch = any" in info


@requires_root
def test_install_and_remove_stay_inside_the_scratch_root(pacman_root: PacmanRoot,
                                                         hello_package: Path) -> None:
    pacman_root.install(hello_package)
    installed = pacman_root.root / "usr/share/annatest-hello/annatest-hello.txt"
    assert installed.read_text() == "annatest-hello 1.0-1\n"
    assert pacman_root.query() == {"annatest-hello": "1.0-1"}
    assert (pacman_root.local / "annatest-hello-1.0-1" / "desc").is_file()
    pacman_root.run("-R", "--noconfirm", "annatest-hello")
    assert pacman_root.query() == {}
    assert not installed.exists()


@requires_root
def test_sync_operations_against_the_local_repository(synced_root: PacmanRoot,
                                                      package_builder: Callable[[PkgSpec], Path]
                                                      ) -> None:
    printed = synced_root.run("-S", "--print", "annatest-hello").stdout
    assert printed.strip().endswith("annatest-hello-1.0-1-any.pkg.tar.gz")
    assert synced_root.query() == {}  # --print is a dry run
    synced_root.run("-S", "--noconfirm", "annatest-hello")
    assert synced_root.query() == {"annatest-hello": "1.0-1"}
    # a newer version added to the repository is an upgrade after -Sy
    repo = synced_root.repos[0]
    repo.add([package_builder(PkgSpec(version="1.1"))])
    synced_root.run("-Syu", "--noconfirm")
    assert synced_root.query() == {"annatest-hello": "1.1-1"}


def test_dependencies_are_recorded(package_builder: Callable[[PkgSpec], Path]) -> None:
    pkg = package_builder(PkgSpec(name="annatest-app", depends=("annatest-hello",)))
    info = subprocess.run(["bsdtar", "-xOf", str(pkg), ".PKGINFO"], capture_output=True,
                          text=True, check=True).stdout
    assert "depend = annatest-hello" in info


@requires_root
def test_dependency_is_pulled_from_the_repository(tmp_path: Path, pacman_root: PacmanRoot,
                                                  hello_package: Path,
                                                  package_builder: Callable[[PkgSpec], Path]
                                                  ) -> None:
    app = package_builder(PkgSpec(name="annatest-app", depends=("annatest-hello",)))
    pacman_root.add_repo(LocalRepo.create(tmp_path / "repo2", [hello_package, app]))
    pacman_root.sync()
    pacman_root.run("-S", "--noconfirm", "annatest-app")
    assert pacman_root.run("-Qdq").stdout.split() == ["annatest-hello"]
    assert pacman_root.run("-Qeq").stdout.split() == ["annatest-app"]


@pytest.mark.parametrize("bad", [
    {"name": "Bad Name"}, {"name": "x;rm"}, {"version": "1-2"}, {"depends": ("a b",)},
    {"files": (("../etc/passwd", "x"),)},
])
def test_spec_refuses_what_would_not_be_a_valid_package(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        PkgSpec(**bad)  # type: ignore[arg-type]
