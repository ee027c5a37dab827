"""The layout rules of ARCHITECTURE.md, enforced by walking every module's AST."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("anna_common", "annad", "annactl")


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _top(name: str) -> str:
    return name.split(".", 1)[0]


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_import_rules(path: Path) -> None:
    rel = _rel(path)
    tops = {_top(n) for n in _imports(path)}
    package = rel.split("/", 1)[0]
    if package == "anna_common":
        assert not tops & {"annad", "annactl"}, "anna_common imports no other Anna package"
        allowed_third_party = {"pydantic", "tree_sitter", "tree_sitter_bash", "typing_extensions"}
        stdlib_io = {"subprocess", "sqlite3", "socket", "httpx", "fastapi", "psutil", "uvicorn"}
        assert not tops & stdlib_io, "anna_common is pure: no I/O modules"
        third = {t for t in tops if t not in _STDLIB and t != "anna_common"}
        assert third <= allowed_third_party, f"unexpected third-party imports {third}"
    if package == "annad":
        assert "annactl" not in tops, "annad never imports annactl"
    if package == "annactl":
        assert "annad" not in tops, "annactl never imports annad"
    if "subprocess" in tops:
        assert rel in {"annad/runner.py", "annactl/daemon_client.py", "annactl/autostart.py"}, (
            "subprocess only in annad/runner.py and the client's daemon autostart")
    if "sqlite3" in tops:
        assert rel in {"annad/journal.py", "annactl/history.py"}
    if "fastapi" in tops:
        assert rel == "annad/app.py" or rel.startswith("annad/api/")
    if "textual" in tops:
        assert rel.startswith("annactl/tui/")


_SPAWNS = {"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "execv",
           "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv",
           "spawnve", "spawnl", "spawnle", "spawnvp", "spawnvpe", "spawnlp", "spawnlpe"}


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_processes_are_spawned_only_by_the_runner(path: Path) -> None:
    """``os.fork``/``os.exec*``/``os.system``…: only the runner and its confinement helpers
    (which the runner starts) create processes; everything else goes through the runner."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    calls = {node.attr for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
             and node.value.id == "os" and node.attr in _SPAWNS}
    if calls:
        assert _rel(path) in {"annad/runner.py", "annad/confine_helper.py",
                              "annad/preview/overlay_helper.py"}, calls


import sys  # noqa: E402

_STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def test_rules_see_every_package() -> None:
    assert len(_modules()) > 10
