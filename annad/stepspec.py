"""What the executor is given: the steps as the daemon assessed them, whose they are, and the
limits from the settings.

Plain values, in a module of their own so the executor, its undo records
(:mod:`annad.execution.stepbackup`), the capture, the journal's records and the previews can
all name them without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annad.confine.credentials import Identity


@dataclass(frozen=True, slots=True)
class Bounds:
    """The limits of one captured step's change set (settings ``capture_max_*``), enforced by
    :mod:`annad.capture.bounds`."""

    max_files: int = 20_000
    """Entries in the upper layers: files, directories, links, deletions."""
    max_bytes: int = 1 << 30
    """Total apparent size of the regular files in them."""
    max_depth: int = 64
    """Directory levels below the overlaid mount point."""

    def words(self) -> str:
        """The limits, as the refusal names them."""
        return (f"{self.max_files} files, {size_words(self.max_bytes)}, "
                f"{self.max_depth} levels deep")


def size_words(n: int) -> str:
    """``n`` bytes as a refusal names a size (``1.5 GiB``)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


@dataclass(frozen=True, slots=True)
class StepSpec:
    """One step as the daemon assessed it."""

    index: int
    step_id: str
    command: str
    scope: str
    """``user`` or ``system`` by the daemon's own assessment."""
    rollback_command: str | None = None
    rollback_scope: str = "user"
    rollback_tier: str = "HIGH"
    """The tier the rollback command was shown and approved at; what it really changes is
    judged against it (:mod:`annad.execution.rollback_capture`)."""
    confined: bool = False
    """Runs without its own confirmation (INFO): in the runner's confinement, like a check."""
    uncaptured: bool = False
    """The assessment says the step writes what Anna cannot see (``uncaptured_write``)."""
    tier: str = "HIGH"
    """The tier the person approved (the step's final risk); what it really changes is
    judged against it (:mod:`annad.capture.judge`)."""


@dataclass(frozen=True, slots=True)
class Who:
    """Whose user-scope commands these are."""

    uid: int
    gid: int
    groups: tuple[int, ...]
    user: str
    home: str
    session: dict[str, str] = field(default_factory=dict)

    def identity(self) -> Identity:
        """The runner identity of these user-scope commands."""
        return Identity(uid=self.uid, gid=self.gid, groups=self.groups, home=self.home,
                        user=self.user)


@dataclass
class Limits:
    """Timeouts and caps from the settings."""

    step_timeout_s: float
    max_output: int
    backup_max_bytes: int
    backup_max_files: int
    confine_python: str | None = None
    """Interpreter of the confinement helper (settings ``confine_python``)."""
    capture: Bounds = field(default_factory=Bounds)
    """How much a captured step may change (settings ``capture_max_*``)."""
