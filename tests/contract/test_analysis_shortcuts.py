"""Issue 38 item 4: the shortcuts that make judging many wildcards cheap give the answers
the plain matching gives.

A glob is ruled out of a file pattern by their literal starts before it is matched, and the
kind tables are one regex each. Each function here is checked against the plain version it
replaced (every pattern matched with ``fnmatch``, in table order) over generated paths:
literal and wildcard names under the directories the tables hold, a home, and relative.
"""

from __future__ import annotations

import fnmatch
import posixpath

from hypothesis import given, settings
from hypothesis import strategies as st

from anna_common.risk.content import kinds
from anna_common.risk.content import settings as security
from anna_common.risk.paths import Resolved
from anna_common.risk.rules.locations import (
    _IDENTITY_SAMPLES,
    _PROCESS_IDENTITY,
    _could_be,
    process_identity,
)
from anna_common.risk.rules.meaningwrites import _ANNA_SAMPLES, touches_anna_config
from anna_common.risk.writes import WriteTarget
from anna_common.shell.words import Word

_NAMES = ["etc", "boot", "efi", "usr", "lib", "proc", "sys", "self", "1", "attr", "current",
          "loginuid", "sudoers", "sudoers.d", "ssh", "sshd_config", "pam.d", "sysctl.d",
          "default", "grub", "loader", "entries", "anna", "systemd", "system", "x3", "a5",
          "pacman.conf", "selinux", "config", "kernel", "cmdline", "profile.d", "cron.d"]
_WILD = ["*", "?", "e*", "*c", "s?", "[ep]*", "[!x]*", "su*", "*.d", "a*", "*/*", "p*c"]


@st.composite
def paths(draw: st.DrawFn) -> str:
    """An absolute, home or relative path of literal and wildcard names."""
    parts = draw(st.lists(st.sampled_from(_NAMES + _WILD), min_size=1, max_size=5))
    root = draw(st.sampled_from(["/", "~/", ""]))
    return root + "/".join(parts)


def _plain_file_kind(place: Resolved) -> str | None:
    path = place.path
    if not place.glob:
        return next((kind for kind, ps in security._FILES.items() for p in ps
                     if fnmatch.fnmatchcase(path, p)), None)
    for kind, patterns in security._FILES.items():
        for pattern in patterns:
            if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(
                    pattern.replace("*", "anna.conf"), path) or (
                    pattern.endswith("/*") and fnmatch.fnmatchcase(
                        pattern[:-2], posixpath.dirname(path))):
                return kind
    return None


def _plain_kind_of(path: str) -> str | None:
    kind = security.kind_of_path(path)
    if kind is not None:
        return kind
    system = path.startswith(kinds._ROOTS)
    for name, patterns in kinds._TABLE:
        if (system or name in kinds._ANYWHERE) and any(
                fnmatch.fnmatchcase(path, p) for p in patterns):
            return name
    return None


def _plain_identity(place: Resolved, spans: bool) -> bool:
    path = place.path
    if any(fnmatch.fnmatchcase(path, p) for p in _PROCESS_IDENTITY):
        return True
    if place.glob or any(c in path for c in "*?["):
        return any(_could_be(sample, path, spans) for sample in _IDENTITY_SAMPLES)
    return False


def test_every_security_file_pattern_is_absolute_with_a_literal_top() -> None:
    """What :func:`settings.file_kind`'s shortcut assumes of the table."""
    for patterns in security._FILES.values():
        for pattern in patterns:
            assert pattern.startswith("/") and not any(
                c in pattern.split("/")[1] for c in "*?["), pattern


@settings(max_examples=400, deadline=None)
@given(paths(), st.booleans())
def test_security_files_are_found_as_by_matching_every_pattern(path: str, glob: bool) -> None:
    glob = glob or any(c in path for c in "*?[")
    place = Resolved(path, glob)
    assert security.file_kind(place) == _plain_file_kind(place)


@settings(max_examples=400, deadline=None)
@given(paths())
def test_content_kinds_are_found_as_by_matching_every_pattern(path: str) -> None:
    assert kinds.kind_of(path) == _plain_kind_of(path)


@settings(max_examples=400, deadline=None)
@given(paths(), st.booleans())
def test_process_identity_is_found_as_by_matching_every_sample(path: str, spans: bool) -> None:
    place = Resolved(path, any(c in path for c in "*?["))
    assert process_identity(place, spans=spans) == _plain_identity(place, spans)


@settings(max_examples=400, deadline=None)
@given(paths())
def test_anna_config_is_found_as_by_matching_every_sample(path: str) -> None:
    place = Resolved(path, any(c in path for c in "*?["))
    target = WriteTarget(Word(path, True), "write")
    plain = kinds.kind_of(path) == "anna" or (place.glob and any(
        fnmatch.fnmatchcase(s, path) for s in _ANNA_SAMPLES))
    assert touches_anna_config(place, target) == plain


def test_the_examples_that_motivated_the_shortcuts() -> None:
    assert security.file_kind(Resolved("/etc/sudoers.d/*", True)) == "sudoers"
    assert security.file_kind(Resolved("/e*/sudo*", True)) is not None
    assert security.file_kind(Resolved("/x3/a5/*", True)) is None
    assert process_identity(Resolved("/p*/1/loginuid", True))
    assert not process_identity(Resolved("/etc/*/loginuid", True))
    assert kinds.kind_of("/etc/sudoers.d/x") is not None
