"""Verification after execution: did a step that exited 0 leave the state it should have?

A step's exit status says little (``pacman -S foo || true`` exits 0 when pacman failed).
For recognised actions that *certainly* ran (:func:`anna_common.shell.flow.certain_commands`)
the daemon derives a postcondition and checks it with the system's own tools:

- ``pacman -S/--sync TARGET`` → TARGET installed (``pacman -T``, or a group with
  ``pacman -Qg``), at the expected version when one is known (``pacman -Q``);
- ``pacman -R TARGET`` → TARGET no longer installed;
- ``systemctl enable|disable|mask|unmask|start|restart|stop UNIT`` → ``is-enabled`` /
  ``is-active`` of UNIT;
- a file whose expected content hash is known (a preview's result) → its sha256.

Every query runs against exactly the database and scope the step used (its ``--root``,
``--dbpath``..., its ``--user``). A query that cannot run says ``not_checked``; only a
query that ran and disagreed is a failure. Expected package versions and file hashes
come from :data:`Expectations` (the hook a preview fills in; empty otherwise).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.protocol.models import VerifyResult
from anna_common.shell.flow import certain_commands
from annad.backups.backup import BackupRefused
from annad.execution.prestate import pacman_call, unit_calls

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from anna_common.shell.grammar import SimpleCommand
    from annad.confine.credentials import Identity
    from annad.execution.prestate import HelperRunner

PASSED, FAILED, NOT_CHECKED = "passed", "failed", "not_checked"
"""The three outcomes of one check."""


@dataclass(frozen=True)
class Expectations:
    """What a step should leave, when something (a preview) computed it in advance."""

    packages: Mapping[str, str] = field(default_factory=dict)
    """Package name → version it should be installed at."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Absolute path → sha256 hex its content should have."""


ExpectationSource = Callable[[str, int], Expectations]
"""The hook: ``(plan_id, step index) -> Expectations``. The executor's ``expectations``
attribute; the default knows nothing (:func:`no_expectations`). A preview wires in here."""


def no_expectations(_plan_id: str, _index: int) -> Expectations:
    """The default hook: nothing is known in advance."""
    return Expectations()


_PACMAN_VALUE_OPTS = frozenset({
    "--root", "-r", "--dbpath", "-b", "--config", "--sysroot", "--cachedir", "--logfile",
    "--gpgdir", "--hookdir", "--ignore", "--ignoregroup", "--assume-installed", "--overwrite",
    "--arch", "--print-format", "--color"})
_NOT_INSTALLING = frozenset("wpsilgc")
"""-S letters that download, print, search or clean instead of installing."""
_NOT_INSTALLING_LONG = frozenset({"--downloadonly", "--print", "--search", "--info", "--list",
                                  "--groups", "--clean"})
_ENABLED = frozenset({"enabled", "enabled-runtime", "linked", "linked-runtime", "alias",
                      "static", "indirect", "generated", "transient"})
_DISABLED = frozenset({"disabled"})
_MASKED = frozenset({"masked", "masked-runtime"})
_ENABLE_WORDS = _ENABLED | _DISABLED | _MASKED | {"bad", "not-found"}
_ACTIVE_WORDS = frozenset({"active", "reloading", "inactive", "failed", "activating",
                           "deactivating", "maintenance", "refreshing"})


@dataclass(frozen=True)
class Checker:
    """Runs postcondition queries (the runner, and who a ``--user`` query runs as)."""

    runner: HelperRunner
    identity: Identity | None
    """The owner, for ``systemctl --user`` queries."""
    env: Mapping[str, str]
    """The owner's session environment (``--user`` queries reach its manager)."""


def postconditions(step_id: str, command: str, checker: Checker,
                   expected: Expectations) -> list[VerifyResult]:
    """Check every postcondition of ``command`` that can be derived; in source order."""
    results: list[VerifyResult] = []
    for cmd in certain_commands(command):
        try:
            if pacman_call(cmd) is not None:
                results += _packages(step_id, cmd, checker, expected)
            elif unit_calls(cmd) is not None:
                results += _units(step_id, cmd, checker)
        except BackupRefused:  # a word only known at run time: nothing derivable
            continue
    for path, digest in expected.files.items():
        results.append(_file_hash(step_id, path, digest))
    return results


# --------------------------------------------------------------------------- packages


def _pacman_targets(cmd: SimpleCommand) -> tuple[str, list[str]] | None:
    """(operation, targets) of an install or removal with literal targets, else None."""
    call = pacman_call(cmd)
    if call is None or call[0] not in ("S", "R"):
        return None
    op, targets, skip = call[0], [], False
    for word in cmd.args:
        text = word.text
        if skip:
            skip = False
            continue
        if text in _PACMAN_VALUE_OPTS:
            skip = True
        elif text.startswith("--"):
            if text.partition("=")[0] in _NOT_INSTALLING_LONG:
                return None
        elif text.startswith("-") and len(text) > 1:
            letters = set(text[1:])
            if (op == "S" and letters & _NOT_INSTALLING) or (op == "R" and "p" in letters):
                return None
        else:
            if not word.literal:
                return None  # a target only known when the command runs
            targets.append(text)
    return op, targets


def _packages(step_id: str, cmd: SimpleCommand, checker: Checker,
              expected: Expectations) -> list[VerifyResult]:
    parsed = _pacman_targets(cmd)
    call = pacman_call(cmd)
    if parsed is None or call is None:
        return []
    op, targets = parsed
    options = call[1]
    results = []
    for target in targets:
        if op == "S":
            results.append(_installed(step_id, target, options, checker, expected))
        else:
            results.append(_removed(step_id, target, options, checker))
    return results


def _query(checker: Checker, options: Sequence[str], *args: str) -> tuple[int | None, str]:
    result = checker.runner.run_argv(["pacman", *options, *args], timeout=60,
                                     max_output=64 * 1024)
    return result.exit_code, (result.error or result.output).strip()


def _installed(step_id: str, target: str, options: Sequence[str], checker: Checker,
               expected: Expectations) -> VerifyResult:
    name = target.rsplit("/", 1)[-1]  # extra/foo installs foo
    want = expected.packages.get(name, "")
    base = VerifyResult(step_id=step_id, kind="package_installed", target=name, status=PASSED,
                        expected=f"installed{' at ' + want if want else ''}")
    code, out = _query(checker, options, "-T", name)
    if code == 0:
        if not want:
            return base.model_copy(update={"found": "installed"})
        code, out = _query(checker, options, "-Q", name)
        version = out.split()[-1] if code == 0 and out else ""
        status = PASSED if version == want else FAILED if version else NOT_CHECKED
        return base.model_copy(update={"status": status, "found": version or out[-200:]})
    if code == 127:  # not satisfied: maybe a group, whose members are what pacman installed
        group, _ = _query(checker, options, "-Qg", name)
        if group == 0:
            return base.model_copy(update={"found": "group installed"})
        return base.model_copy(update={"status": FAILED, "found": "not installed"})
    return base.model_copy(update={"status": NOT_CHECKED, "found": out[-200:]})


def _removed(step_id: str, target: str, options: Sequence[str],
             checker: Checker) -> VerifyResult:
    base = VerifyResult(step_id=step_id, kind="package_removed", target=target, status=PASSED,
                        expected="not installed")
    code, out = _query(checker, options, "-Q", target)
    if code == 0:
        return base.model_copy(update={"status": FAILED, "found": out[-200:]})
    if code == 1:
        return base.model_copy(update={"found": "not installed"})
    return base.model_copy(update={"status": NOT_CHECKED, "found": out[-200:]})


# --------------------------------------------------------------------------- units


def _unit_expectation(verb: str, now: bool) -> list[tuple[str, str, frozenset[str]]]:
    """(kind, query, states that fail) for a systemctl verb."""
    checks: list[tuple[str, str, frozenset[str]]] = []
    if verb in ("enable", "reenable"):
        checks.append(("unit_enabled", "is-enabled", _DISABLED | _MASKED | {"bad", "not-found"}))
    elif verb == "disable":
        checks.append(("unit_disabled", "is-enabled", frozenset({"enabled", "enabled-runtime"})))
    elif verb == "mask":
        checks.append(("unit_masked", "is-enabled", _ENABLE_WORDS - _MASKED))
    elif verb == "unmask":
        checks.append(("unit_unmasked", "is-enabled", _MASKED))
    if verb in ("start", "restart", "reload-or-restart") or (now and verb in ("enable",
                                                                            "reenable")):
        # a oneshot unit that ran is "inactive": only "failed" proves the start did not work
        checks.append(("unit_active", "is-active", frozenset({"failed"})))
    if verb == "stop" or (now and verb in ("disable", "mask")):
        checks.append(("unit_inactive", "is-active", frozenset({"active", "reloading"})))
    return checks


def _units(step_id: str, cmd: SimpleCommand, checker: Checker) -> list[VerifyResult]:
    call = unit_calls(cmd)
    if call is None:
        return []
    user, units = call
    words = [w.text for w in cmd.args]
    verb = next(w for w in words if not w.startswith("-") and w not in ("--user",))
    now = "--now" in words
    scope = ["--user"] if user else []
    results = []
    for unit in units:
        for kind, query, failing in _unit_expectation(verb, now):
            run = checker.runner.run_argv(["systemctl", *scope, query, "--", unit], timeout=30,
                                          identity=checker.identity if user else None,
                                          env=checker.env)
            state = (run.output.strip().splitlines() or [""])[-1].strip()
            known = _ENABLE_WORDS if query == "is-enabled" else _ACTIVE_WORDS
            status = NOT_CHECKED if state not in known else FAILED if state in failing \
                else PASSED
            results.append(VerifyResult(step_id=step_id, kind=kind, target=unit, status=status,
                                        expected=f"{query} not in {sorted(failing)}",
                                        found=state[:200] or (run.error or "")[:200]))
    return results


# --------------------------------------------------------------------------- files


def _file_hash(step_id: str, path: str, digest: str) -> VerifyResult:
    base = VerifyResult(step_id=step_id, kind="file_hash", target=path, status=PASSED,
                        expected=f"sha256 {digest}")
    hasher = hashlib.sha256()
    try:
        with open(path, "rb") as handle:  # noqa: PTH123 - a plain read, streamed
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                hasher.update(chunk)
    except OSError as exc:
        return base.model_copy(update={"status": FAILED, "found": f"unreadable: {exc.strerror}"})
    found = hasher.hexdigest()
    return base.model_copy(update={"status": PASSED if found == digest else FAILED,
                                   "found": f"sha256 {found}"})


def failed(results: list[VerifyResult]) -> list[VerifyResult]:
    """The results that failed (``not_checked`` is not a failure)."""
    return [r for r in results if r.status == FAILED]


def describe(result: VerifyResult) -> str:
    """One line for the person and the journal."""
    return f"{result.kind} {result.target}: expected {result.expected}, found {result.found}"


__all__ = ["FAILED", "NOT_CHECKED", "PASSED", "Checker", "ExpectationSource", "Expectations",
           "describe", "failed", "no_expectations", "postconditions"]

