"""Which postconditions are derived from a command, and how their answers are read.

The runner is a fake that answers like pacman and systemctl do (exit codes and words), so
every spelling can be checked without a package database; the real tools are exercised
end to end in test_verify.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from annad.confine.runner import RunResult
from annad.execution.verify import Checker, Expectations, postconditions


@dataclass
class FakeTools:
    """Answers ``pacman -T/-Q/-Qg`` and ``systemctl is-enabled/is-active`` from tables."""

    installed: dict[str, str] = field(default_factory=dict)
    groups: set[str] = field(default_factory=set)
    enabled: dict[str, str] = field(default_factory=dict)
    active: dict[str, str] = field(default_factory=dict)
    calls: list[list[str]] = field(default_factory=list)

    def run_argv(self, argv: list[str], **_: object) -> RunResult:
        self.calls.append(argv)
        name = argv[-1]
        if argv[0] == "pacman":
            if "-T" in argv:
                return RunResult(0 if name in self.installed else 127, "" if name in
                                 self.installed else name)
            if "-Qg" in argv:
                return RunResult(0 if name in self.groups else 1, "")
            if name in self.installed:
                return RunResult(0, f"{name} {self.installed[name]}\n")
            return RunResult(1, f"error: package '{name}' was not found\n")
        table = self.enabled if "is-enabled" in argv else self.active
        if name not in table:
            return RunResult(1, "System has not been booted with systemd as init system\n")
        return RunResult(0, table[name] + "\n")


def check(command: str, tools: FakeTools, expected: Expectations | None = None
          ) -> list[tuple[str, str, str]]:
    results = postconditions("s", command, Checker(runner=tools, identity=None, env={}),
                             expected or Expectations())
    return [(r.kind, r.target, r.status) for r in results]


@pytest.mark.parametrize("command", [
    "pacman -S --noconfirm foo", "sudo pacman -S foo", "env LANG=C pacman --sync foo",
    "pacman -Syu --needed foo", "pacman -S extra/foo", "yay -S foo",
    "pacman -S --overwrite '*' foo", "pacman -S foo || true", "pacman -S foo; echo done",
    "sudo -E pacman -S --config /x/pacman.conf foo", "true && pacman -S foo"])
def test_an_install_that_did_not_happen_fails(command: str) -> None:
    assert check(command, FakeTools()) == [("package_installed", "foo", "failed")]
    assert check(command, FakeTools(installed={"foo": "1.0-1"})) == [
        ("package_installed", "foo", "passed")]


@pytest.mark.parametrize("command", [
    "pacman -Sw foo", "pacman -Ss foo", "pacman -Si foo", "pacman -Sp foo", "pacman -Sc",
    "pacman -Syu", "pacman -S \"$PKG\"", "pacman -U ./foo.pkg.tar.zst", "pacman -Qi foo",
    "false || pacman -S foo", "if true; then pacman -S foo; fi", "pacman -S foo &",
    "pacman -S --downloadonly foo", "pacman -Rp foo", "bash -c 'pacman -S foo'"])
def test_no_postcondition_where_nothing_certain_was_installed(command: str) -> None:
    assert check(command, FakeTools()) == []


def test_groups_versions_and_removals() -> None:
    tools = FakeTools(installed={"foo": "1.0-1", "bar": "2.0-1"}, groups={"base-devel"})
    assert check("pacman -S base-devel", tools) == [("package_installed", "base-devel",
                                                     "passed")]
    assert check("pacman -S foo", tools, Expectations(packages={"foo": "1.1-1"})) == [
        ("package_installed", "foo", "failed")]
    assert check("pacman -S foo", tools, Expectations(packages={"foo": "1.0-1"})) == [
        ("package_installed", "foo", "passed")]
    assert check("pacman -Rns foo gone", tools) == [("package_removed", "foo", "failed"),
                                                    ("package_removed", "gone", "passed")]
    # the step's own database options reach every query
    check("pacman --root /r --dbpath /r/db -S foo", tools)
    assert all(c[1:5] == ["--root", "/r", "--dbpath", "/r/db"] for c in tools.calls[-1:])


def test_units_enabled_active_and_not_checked() -> None:
    tools = FakeTools(enabled={"a.service": "disabled", "b.service": "enabled",
                               "m.service": "masked"},
                      active={"a.service": "failed", "b.service": "inactive"})
    assert check("systemctl enable --now a.service || true", tools) == [
        ("unit_enabled", "a.service", "failed"), ("unit_active", "a.service", "failed")]
    # a oneshot that ran is inactive: only "failed" fails a start
    assert check("sudo systemctl start b.service", tools) == [
        ("unit_active", "b.service", "passed")]
    assert check("systemctl mask m.service", tools) == [("unit_masked", "m.service", "passed")]
    assert check("systemctl disable b.service", tools) == [
        ("unit_disabled", "b.service", "failed")]
    # systemd cannot answer (no systemd here): not checked, never a failure
    assert check("systemctl enable ghost.service", tools) == [
        ("unit_enabled", "ghost.service", "not_checked")]
    assert check("systemctl status b.service", tools) == []


def test_expected_file_hash(tmp_path: Path) -> None:
    path = tmp_path / "f.conf"
    path.write_text("new\n")
    good = hashlib.sha256(b"new\n").hexdigest()
    tools = FakeTools()
    assert check("true", tools, Expectations(files={str(path): good})) == [
        ("file_hash", str(path), "passed")]
    assert check("true", tools, Expectations(files={str(path): "0" * 64})) == [
        ("file_hash", str(path), "failed")]
    assert check("true", tools, Expectations(files={str(tmp_path / "gone"): good})) == [
        ("file_hash", str(tmp_path / "gone"), "failed")]
