"""Shared fixtures for the user-interface tests (annotated plans for every tier)."""

from __future__ import annotations

import pytest

from anna_common.findings import AnnotatedPlan

from .plans import HOSTILE_NOTES, annotate_dict, plan_dict


@pytest.fixture
def info_plan() -> AnnotatedPlan:
    """Read-only: runs without asking."""
    return annotate_dict(plan_dict([("look", "ls -la /tmp", "INFO")]))


@pytest.fixture
def low_plan() -> AnnotatedPlan:
    """One LOW step writing in /tmp."""
    return annotate_dict(plan_dict([("write", "echo hi > /tmp/anna-ui/note.txt", "LOW")]))


@pytest.fixture
def medium_plan() -> AnnotatedPlan:
    """Installs a package (MEDIUM, system scope)."""
    return annotate_dict(plan_dict([("install", "pacman -S --noconfirm htop", "MEDIUM")],
                                   goal="Install htop"))


@pytest.fixture
def high_plan() -> AnnotatedPlan:
    """Edits /etc/fstab: HIGH, the confirmation word is the file."""
    return annotate_dict(plan_dict(
        [("backup", "cp /etc/fstab /tmp/fstab.bak", "LOW"),
         ("edit", "cp /tmp/fstab.new /etc/fstab", "HIGH")],
        rollback=[("restore", "cp /tmp/fstab.bak /etc/fstab")],
        rollback_ids={"edit": "restore"}, goal="Replace fstab"))


@pytest.fixture
def banned_plan() -> AnnotatedPlan:
    """Contains rm -rf /: never approvable."""
    return annotate_dict(plan_dict([("wipe", "rm -rf /", "LOW")], goal="Clean up"))


@pytest.fixture
def hostile_plan() -> AnnotatedPlan:
    """Untrusted text everywhere a model can put it."""
    return annotate_dict(plan_dict(
        [("s1\x1b[2J", "echo '[red]x[/]' > /tmp/anna-ui/f", "LOW")],
        goal="Goal \x1b]0;title\x07[bold]G[/bold]", notes=HOSTILE_NOTES,
        analysis="[link=http://evil]click[/link] \x1b[5mblink"))


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (Textual's Pilot) run on asyncio."""
    return "asyncio"
