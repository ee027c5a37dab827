"""The layout rules of ARCHITECTURE.md, enforced by walking every module's AST."""

from __future__ import annotations

import ast
import functools
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
        stdlib_io = {"subprocess", "sqlite3", "socket", "httpx", "starlette", "psutil", "uvicorn"}
        assert not tops & stdlib_io, "anna_common is pure: no I/O modules"
        third = {t for t in tops if t not in _STDLIB and t != "anna_common"}
        assert third <= allowed_third_party, f"unexpected third-party imports {third}"
    if package == "annad":
        assert "annactl" not in tops, "annad never imports annactl"
    if package == "annactl":
        assert "annad" not in tops, "annactl never imports annad"
    if "subprocess" in tops:
        assert rel in {"annad/confine/runner.py", "annactl/core/daemon_client.py", "annactl/core/autostart.py",
                       "annactl/commands/ansible_run.py", "annactl/commands/setup.py"}, (
            "subprocess only in annad/confine/runner.py, the client's daemon autostart and the one "
            "ansible-playbook run of annactl fleet, and the root commands of annactl setup")
    if "sqlite3" in tops:
        # the daemon's journal package (the store, its reads, the audit's read-only connection,
        # the damage-aware connection) and the client's history store: nothing else
        assert rel.startswith("annad/journal/") or rel == "annactl/planning/history.py", (
            "sqlite3 only in annad/journal/ and the client's history store")
    # the HTTP layer is the API's alone (FastAPI is no longer a dependency: annad/api is
    # plain Starlette)
    assert "fastapi" not in tops, "FastAPI is not a dependency"
    if "starlette" in tops:
        assert rel.startswith("annad/api/")
    if "textual" in tops:
        assert rel.startswith("annactl/interactive/tui/")


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
        assert _rel(path) in {"annad/confine/runner.py", "annad/confine/helper.py",
                              "annad/preview/overlay_helper.py",
                              "annad/capture/helper.py"}, calls


import sys  # noqa: E402

_STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def test_rules_see_every_package() -> None:
    assert len(_modules()) > 10


# --- the client's layers and the no-circles rule (issue 12: "a client whose folders show its
# design"). Lowest layer first; a module imports only from its own layer or lower ones.
_CLIENT_LAYERS = {"core": 0, "planning": 1, "ui": 2, "commands": 3, "interactive": 4,
                  "mcp": 4}  # annactl mcp: a front end beside the REPL and the TUI
_CLIENT_TOP = 5  # annactl/app.py and annactl/cli.py: the composition root


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _client_layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "annactl" or len(parts) == 1:
        return None  # annactl/__init__.py (the version) may be imported from anywhere
    return _CLIENT_LAYERS.get(parts[1], _CLIENT_TOP)


@functools.cache
def _edges() -> dict[str, set[str]]:
    """Every import between Anna's own modules, lazy and type-checking-only ones included: a
    circle hidden inside a function is still a circle in the design."""
    known = {_module_name(p) for p in _modules()}
    graph: dict[str, set[str]] = {}
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[_module_name(path)] = {t for t in targets if t in known} - {_module_name(path)}
    return graph


@pytest.mark.parametrize("path", [p for p in _modules() if p.parts[-2:][0] != "anna_common"
                                  and _rel(p).startswith("annactl/")], ids=_rel)
def test_client_layers(path: Path) -> None:
    me = _client_layer(_module_name(path))
    if me is None:
        return
    for target in _edges()[_module_name(path)]:
        layer = _client_layer(target)
        if layer is not None:
            assert layer <= me, f"{_module_name(path)} (layer {me}) imports {target} (layer {layer})"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles() -> None:
    assert _cycles(_edges()) == []


def test_cycle_finder_finds_a_circle() -> None:
    """The rule above cannot pass vacuously: a planted two-module circle is reported."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


# --- the daemon laid out by responsibility (issue 19.6): no module lives loose in annad/ but
# the entry point, its settings, the service state machine, access and the policy loader.
_DAEMON_TOP = {"__init__", "main", "config", "service", "access", "peer", "policy_load",
               "stepspec", "logs"}
_DAEMON_FOLDERS = {"api", "backups", "capture", "confine", "execution", "journal", "preview",
                   "recipes", "telemetry"}
# (issue 35.7) the daemon's floors, highest first: a module imports only from its own folder or
# one lower in this list. The capture has its own folder; the undo's orchestration lives with
# the execution; backups/ only stores and restores, and imports no other part of the daemon.
_DAEMON_FLOORS = ["main", "api", "recipes", "service", "preview", "execution", "capture",
                  "policy_load", "access", "journal", "backups", "telemetry", "stepspec",
                  "confine", "peer", "config", "logs", "__init__"]


def test_daemon_layout() -> None:
    loose = {p.stem for p in (REPO / "annad").glob("*.py")}
    folders = {p.name for p in (REPO / "annad").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert loose == _DAEMON_TOP, f"modules loose in annad/: {sorted(loose - _DAEMON_TOP)}"
    assert folders == _DAEMON_FOLDERS


def _upward(edges: dict[str, set[str]]) -> list[str]:
    """Imports from a daemon folder (or loose module) to one above it in the floors."""
    rank = {name: i for i, name in enumerate(_DAEMON_FLOORS)}
    found = []
    for source, targets in edges.items():
        parts = source.split(".")
        if parts[0] != "annad" or len(parts) < 2:
            continue
        for target in targets:
            tparts = target.split(".")
            if tparts[0] == "annad" and len(tparts) > 1 and tparts[1] != parts[1] \
                    and rank[tparts[1]] < rank[parts[1]]:
                found.append(f"{source} -> {target}")
    return found


def test_daemon_folders_import_downwards() -> None:
    assert set(_DAEMON_FLOORS) == _DAEMON_TOP | _DAEMON_FOLDERS
    assert _upward(_edges()) == []


def test_the_floor_rule_finds_an_upward_import() -> None:
    """The rule above cannot pass vacuously: backups/ importing execution/ is reported, the
    other way round is not."""
    planted = {"annad.backups.undo": {"annad.execution.prestate"},
               "annad.execution.undo": {"annad.backups.restore"}}
    assert _upward(planted) == ["annad.backups.undo -> annad.execution.prestate"]


def test_only_the_api_and_the_entry_point_know_http() -> None:
    """Routes are thin: nothing below the API imports it back (the service never sees HTTP)."""
    for path in _modules():
        name = _module_name(path)
        if not name.startswith("annad.") or name.startswith("annad.api") or name == "annad.main":
            continue
        reached = {t for t in _edges()[name] if t.startswith("annad.api")}
        assert not reached, f"{name} imports {sorted(reached)}"


# --- the contract laid out by responsibility (issue 21.7): shell/ understands bash, risk/ judges
# (with its rules/), policy/ applies the administrator's rules, protocol/ is the wire. Lower
# folders never import higher ones: shell < risk < policy; protocol is the wire vocabulary.
_CONTRACT_TOP = {"__init__", "annotate", "distro", "errors", "extract", "findings", "levels",
                 "plan", "positional", "redact", "telemetry", "validate"}
_CONTRACT_FOLDERS = {"shell", "risk", "policy", "protocol"}
_CONTRACT_BELOW = {"shell": {"risk", "policy", "protocol"}, "risk": {"policy", "protocol"}}


def test_contract_layout() -> None:
    loose = {p.stem for p in (REPO / "anna_common").glob("*.py")}
    folders = {p.name for p in (REPO / "anna_common").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert loose == _CONTRACT_TOP, f"modules loose in anna_common/: {sorted(loose - _CONTRACT_TOP)}"
    assert folders == _CONTRACT_FOLDERS


def test_contract_folders_import_downwards() -> None:
    for path in _modules():
        parts = _module_name(path).split(".")
        if parts[0] != "anna_common" or len(parts) < 3 or parts[1] not in _CONTRACT_BELOW:
            continue
        for target in _edges()[_module_name(path)]:
            tparts = target.split(".")
            assert not (tparts[0] == "anna_common" and len(tparts) > 2
                        and tparts[1] in _CONTRACT_BELOW[parts[1]]), (
                f"{_module_name(path)} ({parts[1]}/) imports {target}")


def test_the_protocol_package_imports_nothing() -> None:
    """``annactl status`` reads the routes without loading pydantic: the package is empty."""
    tree = ast.parse((REPO / "anna_common/protocol/__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
