"""Render a plan's preview: what approving it will do, step by step.

File changes with their unified diff (added lines green, removed red), size, mode and owner
changes; the packages pacman would install or remove, dependencies marked; units with their
current and new state; each validator's verdict in its own words; and, plainly, the steps
no preview was possible for. Every path, diff line and validator word is untrusted text
(it came from files and programs the plan touches): it goes through the inert helpers, so
an escape sequence or Rich markup in a diff is shown as text, never obeyed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annactl.ui.console import inert, inert_text

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from anna_common.findings import AnnotatedStep
    from anna_common.protocol.preview import FileChange, PlanPreview, StepPreview

_MARK = {"created": ("+", "green"), "modified": ("~", "yellow"), "deleted": ("-", "red")}
_VERDICT = {"ok": ("✓", "green"), "failed": ("✗", "bold red"), "not checked": ("?", "yellow")}
LINE_CHARS = 400
"""Characters of one diff line shown."""


def _size(value: int | None) -> str:
    if value is None:
        return "—"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value = value / 1024  # type: ignore[assignment]
    return str(value)


def _diff_lines(text: Text, diff: str) -> None:
    for line in diff.splitlines():
        style = "dim"
        if line.startswith("+") and not line.startswith("+++"):
            style = "green"
        elif line.startswith("-") and not line.startswith("---"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        text.append("      " + inert(line, max_chars=LINE_CHARS) + "\n", style=style)


def _file(text: Text, change: FileChange) -> None:
    mark, style = _MARK[change.change]
    text.append(f"    {mark} ", style=style)
    text.append(inert(change.path, max_chars=300), style="bold")
    text.append(f"  {change.change}", style=style)
    facts = []
    if change.size_before != change.size_after:
        facts.append(f"{_size(change.size_before)} → {_size(change.size_after)}")
    if change.mode_before and change.mode_after and change.mode_before != change.mode_after:
        facts.append(f"mode {change.mode_before} → {change.mode_after}")
    elif change.change == "created" and change.mode_after:
        facts.append(f"mode {change.mode_after}")
    if change.owner_before and change.owner_after and change.owner_before != change.owner_after:
        facts.append(f"owner {inert(change.owner_before)} → {inert(change.owner_after)}")
    if change.varying:  # the daemon then pins the path, not the bytes (versus_preview)
        facts.append("content differs from run to run: only the path is held to this")
    if facts:
        text.append("  (" + ", ".join(facts) + ")", style="dim")
    text.append("\n")
    if change.diff:
        _diff_lines(text, change.diff)
    if change.more_lines:
        text.append(f"      …{change.more_lines} more lines\n", style="dim italic")


def _package_table(step: StepPreview) -> RenderableType:
    """The packages a step installs or removes, one row each (dependencies marked)."""
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold dim")
    for column in ("action", "package", "version", "size", ""):
        table.add_column(column, justify="right" if column == "size" else "left")
    for package in step.packages:
        style = "red" if package.action == "remove" else "green"
        table.add_row(Text(package.action, style=style), inert_text(package.name, max_chars=100),
                      inert_text(package.version, max_chars=60), _size(package.size),
                      Text("dependency" if package.dependency else "", style="dim"))
    return Padding(table, (0, 0, 0, 4), expand=False)


def _step(text: Text, step: StepPreview, label: str, parts: list[RenderableType]) -> None:
    text.append(f"  {label}", style="bold")
    if step.kind == "none":
        text.append("  no preview possible", style="yellow")
        text.append(f": {inert(step.reason or 'unknown', max_chars=300)}\n", style="yellow")
        return
    text.append(f"  {step.kind}\n", style="dim")
    if step.reason:
        text.append("    ! " + inert(step.reason, max_chars=700) + "\n", style="yellow")
    for change in step.files:
        _file(text, change)
    if step.packages:
        flushed = text.copy()
        flushed.rstrip()  # the table starts on the next line
        parts.append(flushed)
        text.truncate(0)
        parts.append(_package_table(step))
    for unit in step.units:
        text.append(f"    {inert(unit.unit, max_chars=100)}: ")
        text.append(inert(unit.before, max_chars=60), style="dim")
        text.append(" → ")
        text.append(inert(unit.after, max_chars=60) + "\n", style="bold")
    for verdict in step.validators:
        mark, style = _VERDICT[verdict.verdict]
        text.append(f"    {mark} {verdict.name} ", style=style)
        text.append(f"{verdict.verdict}: {inert(verdict.target, max_chars=200)}\n", style=style)
        if verdict.output and verdict.verdict != "ok":
            for line in inert(verdict.output, max_chars=1500).splitlines()[:12]:
                text.append(f"      {line}\n", style="dim")
    if not (step.files or step.packages or step.units or step.reason):
        text.append("    no change\n", style="dim")


def preview_view(preview: PlanPreview | None, steps: list[AnnotatedStep]) -> RenderableType:
    """The preview section of the plan view (a note when the daemon made none)."""
    from rich.console import Group
    from rich.text import Text

    text = Text()
    text.append("Before you approve — what each step will do\n", style="bold underline")
    if preview is None:
        text.append("  the daemon made no preview (previews are off)\n", style="yellow")
        return text
    parts: list[RenderableType] = []
    names = {i: s.id for i, s in enumerate(steps)}
    for index, step in enumerate(preview.steps):
        label = f"{index + 1}. {inert(names.get(index, step.step_id), max_chars=60)}"
        _step(text, step, label, parts)
    if preview.more_lines:
        text.append(f"  …{preview.more_lines} more diff lines in this plan\n", style="dim")
    text.rstrip()
    return Group(*parts, text)


def preview_json(preview: PlanPreview | None, steps: list[AnnotatedStep]
                 ) -> list[dict[str, object]]:
    """``--json``: one ``preview`` object per step (``kind: none`` when there is none)."""
    by_index = dict(enumerate(preview.steps)) if preview is not None else {}
    out: list[dict[str, object]] = []
    for index, step in enumerate(steps):
        found = by_index.get(index)
        if found is None:
            body: dict[str, object] = {"kind": "none", "reason": "no preview was made",
                                       "files": [], "packages": [], "units": [],
                                       "validators": []}
        else:
            body = found.model_dump(mode="json", exclude={"step_id"})
        out.append({"id": step.id, "preview": body})
    return out
