"""What a plan will do, computed by the daemon before anyone approves it (the wire models).

The daemon previews every step at submit: file steps run in a throw-away overlay and the
result is shown as created, modified and deleted paths with unified diffs; ``pacman`` steps
through ``--print`` (targets, versions, sizes, dependencies); ``systemctl`` steps as the
unit's current and new state; validators (``sshd -t``, ``visudo -c``…) judge the previewed
files. Everything in here that came from a file or a program (paths, diffs, validator
output) is untrusted text: clients render it inert.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FileChange", "PackageChange", "PlanPreview", "PreviewKind", "StepPreview",
           "UnitChange", "ValidatorResult"]

# Field docstrings stay documentation only: no use_attribute_docstrings, whose source
# parsing at import cost every annactl command ~1/5 of its start-up (bench/startup.py).
# Only the model-facing ActionPlan schema carries them (anna_common/plan.py).
_MODEL = ConfigDict(extra="forbid", defer_build=True)

PreviewKind = Literal["files", "packages", "units", "none"]
"""How a step was previewed (``none``: it could not be, and ``reason`` says why)."""


class FileChange(BaseModel):
    """One path a step creates, modifies or deletes (as the overlay showed it)."""

    model_config = _MODEL

    path: str
    """Absolute path on the real tree."""
    change: Literal["created", "modified", "deleted"]
    """What happens to it."""
    diff: str | None = None
    """Unified diff for text (capped; None for binary files, directories, links)."""
    size_before: int | None = None
    """Bytes before (None: did not exist)."""
    size_after: int | None = None
    """Bytes after (None: deleted)."""
    mode_before: str | None = None
    """Permission bits before, octal (``0644``)."""
    mode_after: str | None = None
    """Permission bits after."""
    owner_before: str | None = None
    """``user:group`` before."""
    owner_after: str | None = None
    """``user:group`` after."""
    more_lines: int = 0
    """Diff lines left out by the caps (shown as "…N more lines")."""
    kind_after: Literal["file", "dir", "symlink", "other"] | None = None
    """What is there after (None: deleted)."""
    sha256: str | None = None
    """SHA-256 of the whole content after (files): what the approval pins."""
    varying: bool = False
    """The content was not the same in two runs of the preview (it depends on the time or
    on chance): path, kind, mode and owner are pinned, the content is not."""
    link_after: str | None = None
    """A symlink's target after (escaped losslessly, as ``key``)."""
    key: str | None = None
    """The path escaped losslessly (``\\`` for a backslash) when ``path`` is not exact."""


class PackageChange(BaseModel):
    """One package a pacman step installs, upgrades or removes (``pacman --print``)."""

    model_config = _MODEL

    name: str
    """Package name."""
    version: str
    """Version it will have (removals: the installed one)."""
    size: int | None = None
    """Size in bytes as pacman prints it (``%s``)."""
    action: Literal["install", "upgrade", "reinstall", "remove"]
    """What happens to it."""
    dependency: bool = False
    """Pulled in (or removed along) without being named in the command."""


class UnitChange(BaseModel):
    """A systemd unit's state now and after the step."""

    model_config = _MODEL

    unit: str
    """Unit name as given."""
    before: str
    """``enabled``/``disabled``/``masked``… and ``active``/``inactive``, now."""
    after: str
    """The same after the step."""


class ValidatorResult(BaseModel):
    """A validator's verdict on a previewed file (never run on the real file)."""

    model_config = _MODEL

    name: str
    """The validator (``sshd -t``, ``visudo -c``, ``bash -n``…)."""
    target: str
    """The real path whose previewed content was checked."""
    verdict: Literal["ok", "failed", "not checked"]
    """``failed`` raises the step to HIGH; ``not checked`` when the validator is missing."""
    output: str = ""
    """The validator's own words (capped)."""


class StepPreview(BaseModel):
    """The preview of one step of ``command_plan``."""

    model_config = _MODEL

    step_id: str
    """The step's id."""
    kind: PreviewKind
    """How it was previewed."""
    reason: str | None = None
    """Why there is no (complete) preview, or why the preview run failed."""
    code: str | None = None
    """The ``ErrorCode`` of that failure where it has one (``PREVIEW_MEMORY_EXCEEDED``)."""
    files: list[FileChange] = Field(default_factory=list)
    """File changes, in path order."""
    packages: list[PackageChange] = Field(default_factory=list)
    """Package changes, as pacman lists them."""
    units: list[UnitChange] = Field(default_factory=list)
    """Unit state changes."""
    validators: list[ValidatorResult] = Field(default_factory=list)
    """Validators run on the previewed files."""


class PlanPreview(BaseModel):
    """``GET /v1/plans/{id}/preview`` (and ``preview`` in the submit response)."""

    model_config = _MODEL

    steps: list[StepPreview] = Field(default_factory=list)
    """One entry per step, in plan order."""
    duration_ms: float = 0.0
    """How long the preview took."""
    more_lines: int = 0
    """Diff lines left out by the per-plan cap."""
