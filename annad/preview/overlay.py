"""Run a plan's file steps in order over a throw-away overlay and collect what they changed.

Nothing here predicts where a step writes: the overlay covers every real, writable file
system (the mount plan of an approved step's capture,
:func:`annad.capture.layers.mount_plan`), so whatever program writes wherever, the
preview shows it at its real path, as the capture will observe it at execution. The run
itself is :func:`annad.confine.runner.run_overlay`, the tree :mod:`annad.capture.tree`.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import ErrorCode
from annad.capture.layers import mount_plan
from annad.confine.runner import run_overlay
from annad.confine.stepenv import step_environment, sudo_shims

if TYPE_CHECKING:
    from annad.stepspec import Who

SCRATCH = "/dev/shm"
"""The helper's tmpfs (under /dev, which is never overlaid: no mount below it is copied)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps of one preview run."""

    file_bytes: int = 256 * 1024
    """Content read back per file (beyond it: sizes only, no diff)."""
    total_bytes: int = 4 * 1024 * 1024
    """Content read back per plan."""
    entries: int = 2000
    """Entries reported per step."""
    tmpfs_bytes: int = 256 * 1024 * 1024
    """Size of the tmpfs holding the upper layers."""
    output_bytes: int = 8 * 1024
    """Output kept per step (the tail)."""
    timeout_s: float = 20.0
    """Wall time of the whole run."""
    memory_bytes: int = 512 * 1024 ** 2
    """Memory of the whole run, all its processes together (setting ``preview_memory``)."""


@dataclass(frozen=True, slots=True)
class FileStep:
    """One step to run over the overlay."""

    index: int
    """Its position in ``command_plan``."""
    command: str
    """The command."""
    system: bool
    """Runs as root in the real run (system scope)."""


@dataclass(frozen=True, slots=True)
class StepRun:
    """One step's run over the overlay."""

    exit_code: int
    """Its exit status (negative: a signal)."""
    entries: list[dict[str, Any]]
    """Upper-layer entries new, changed or gone since the step before."""
    output: str
    """The tail of its output."""
    validators: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Real path → (exit status, output) of its validator, run on the previewed tree."""
    more: int = 0
    """Entries left out by the cap (the step's file preview is incomplete)."""


@dataclass(slots=True)
class OverlayRun:
    """What the run produced."""

    overlays: list[str] = field(default_factory=list)
    """The overlaid mount points, by index."""
    steps: dict[int, StepRun] = field(default_factory=dict)
    """Plan step index → what its run left."""
    error: str | None = None
    """Why nothing ran (confinement refused, no directory to overlay)."""
    code: ErrorCode | None = None
    """The error's code where it has one (``PREVIEW_MEMORY_EXCEEDED``)."""
    output: str = ""
    """The steps' combined output (the tail)."""


def _spec_step(step: FileStep, who: Who) -> dict[str, Any]:
    if step.system:
        env = step_environment(None, who.session, home=who.home)
        env.update(sudo_shims())
        return {"command": step.command, "uid": 0, "gid": 0, "groups": "", "env": env,
                "cwd": "/"}
    env = step_environment(who.identity(), who.session)
    env.update(sudo_shims())
    return {"command": step.command, "uid": who.uid, "gid": who.gid,
            "groups": ",".join(str(g) for g in who.groups), "env": env, "cwd": who.home}


def below_root(plan: list[list[object]], layers: dict[int, str]
                ) -> tuple[list[list[object]], dict[int, str]]:
    """The plan for a user namespace, where overlayfs refuses ``/`` itself as a lower layer:
    ``/`` bound read-only (no user may write there) and each of its directories on the
    same file system overlaid instead, but those holding other mounts (overlayfs refuses
    them too there: they stay read-only, a write in them fails in the preview)."""
    if not plan or plan[0] != ["overlay", "/", 0]:
        return plan, layers
    points = {str(op[1]) for op in plan}
    device = os.stat("/").st_dev  # noqa: PTH116
    tops = sorted(str(entry.path) for entry in os.scandir("/")
                  if entry.is_dir(follow_symlinks=False) and entry.path not in points
                  and entry.stat(follow_symlinks=False).st_dev == device
                  and not any(p.startswith(entry.path + "/") for p in points))
    out: list[list[object]] = [["bind", "/"]]
    new: dict[int, str] = {}
    for point in [*tops, *(str(op[1]) for op in plan[1:] if op[0] == "overlay")]:
        new[len(new)] = point
    index = {point: i for i, point in new.items()}
    out += [["overlay", top, index[top]] for top in tops]
    out += [["overlay", op[1], index[str(op[1])]] if op[0] == "overlay" else op
            for op in plan[1:]]
    return out, new


def tree_plan(*, userns: bool) -> tuple[list[list[object]], dict[int, str]]:
    """The helper's mount plan for this machine and its overlays by index (raises OSError)."""
    plan, layers = mount_plan(Path("/proc/self/mountinfo").read_text(), SCRATCH)
    return below_root(plan, layers) if userns else (plan, layers)


def run(steps: list[FileStep], who: Who, *, limits: Limits,
        validators: list[tuple[str, str]] | None = None, python: str | None = None
        ) -> OverlayRun:
    """Run ``steps`` in order over the overlaid tree; never raises. ``validators``: (real
    path pattern, command with ``{file}``) run on every file a step changes that matches."""
    userns = os.geteuid() != 0
    try:
        plan, layers = tree_plan(userns=userns)
    except OSError as exc:
        return OverlayRun(error=f"the mounts could not be read: {exc.strerror}")
    overlays = [layers[i] for i in sorted(layers)]
    spec = {"steps": [_spec_step(s, who) for s in steps], "plan": plan,
            "userns": userns, "validators": validators or [],
            "limits": {"file": limits.file_bytes, "total": limits.total_bytes,
                       "entries": limits.entries, "tmpfs": limits.tmpfs_bytes,
                       "output": limits.output_bytes}}
    result, report = run_overlay(json.dumps(spec), timeout=limits.timeout_s,
                                 max_output=16 * 1024, python=python, owner=who.uid,
                                 memory=limits.memory_bytes)
    out = OverlayRun(overlays=overlays, output=result.output)
    if result.over_memory:
        _over_memory(out, limits.memory_bytes)
        return out
    if result.error is not None:
        out.error = result.error
        return out
    if result.timed_out:
        out.error = f"the preview ran longer than {limits.timeout_s:g} s and was stopped"
    _parse(report, steps, out)
    if out.error is None and any(step.entries for step in out.steps.values()):
        _mark_varying(spec, steps, out, limits, python, who.uid)
    return out


def _mark_varying(spec: dict[str, Any], steps: list[FileStep], out: OverlayRun,
                  limits: Limits, python: str | None, owner: int) -> None:
    """Run the steps a second time (digests only) and mark every file whose content was
    not the same both times ``varying``: it depends on the time or on chance, and the
    person is told so; a run that cannot be repeated marks nothing (content stays pinned)."""
    spec = {**spec, "validators": [], "limits": {**spec["limits"], "file": 0, "total": 0}}
    result, report = run_overlay(json.dumps(spec), timeout=limits.timeout_s,
                                 max_output=1024, python=python, owner=owner,
                                 memory=limits.memory_bytes)
    again = OverlayRun()
    if result.error is not None or result.timed_out or result.over_memory:
        return
    _parse(report, steps, again)
    for index, first in out.steps.items():
        second = again.steps.get(index)
        if second is None:
            continue
        digests = {(e.get("overlay"), e.get("rel")): e.get("sha256") for e in second.entries}
        for entry in first.entries:
            if entry.get("type") == "f" and \
                    digests.get((entry.get("overlay"), entry.get("rel"))) != entry.get("sha256"):
                entry["varying"] = True


def _over_memory(out: OverlayRun, cap: int) -> None:
    out.code = ErrorCode.PREVIEW_MEMORY_EXCEEDED
    out.error = (f"{out.code}: the preview's processes went past its memory cap "
                 f"({cap >> 20} MiB, setting preview_memory) and were stopped")


def _parse(report: bytes, steps: list[FileStep], out: OverlayRun) -> None:
    """The helper's report lines into ``out.steps`` (a line naming ``memory``: the helper's
    watch stopped the run there)."""
    for line in report.splitlines():
        try:
            item = json.loads(line)
            position = int(item["step"])
            if "memory" in item:
                _over_memory(out, int(item["cap"]))
                return
            checks = {str(v["path"]): (int(v["exit"]), str(v["output"]))
                      for v in item.get("validators", [])}
            out.steps[steps[position].index] = StepRun(
                int(item["exit"]), list(item["entries"]), str(item.get("output", "")), checks,
                int(item.get("more", 0)))
        except (ValueError, KeyError, IndexError, TypeError):
            out.error = "the preview report could not be read"


def content(entry: dict[str, Any]) -> bytes | None:
    """The (capped) content of a file entry, or None."""
    data = entry.get("data")
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
