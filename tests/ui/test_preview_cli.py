"""The preview as the person sees it: one-shot ``--dry-run``, ``--json``, the REPL renderer,
the TUI's diff pane (a snapshot, also docs/tui-preview.svg), and untrusted diff text kept inert.

The CLI tests run the real annactl against a real daemon and the fake model; every file they
edit lives in the daemon's temporary work directory, and each test proves it unchanged.
"""

from __future__ import annotations

import io
import json
import os
from typing import TYPE_CHECKING, Any

import pytest
from rich.console import Console

from anna_common.protocol.preview import (
    FileChange,
    PackageChange,
    PlanPreview,
    StepPreview,
    UnitChange,
    ValidatorResult,
)
from annactl.commands.prepared import Prepared
from annactl.interactive.tui.app import AnnaTui, Source
from annactl.interactive.tui.screens.approval import ApprovalScreen
from annactl.interactive.tui.screens.details import DetailsScreen
from annactl.ui.render_preview import preview_json, preview_view
from tests.daemonfix import make_plan

from .plans import annotate_dict, plan_dict
from .tuiwait import ready

if TYPE_CHECKING:
    from .conftest import Anna

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="overlay previews need root here")
SSHD = "Port 22\n#PermitRootLogin yes\nUsePAM yes\n"


def plain(renderable: Any) -> str:
    """What a renderable prints without colour."""
    buffer = io.StringIO()
    Console(file=buffer, width=160, color_system=None).print(renderable)
    return buffer.getvalue()


@ROOT_ONLY
def test_dry_run_prints_the_diff_and_the_validator_verdict(anna: Anna) -> None:
    cfg = anna.work / "sshd_config"
    cfg.write_text(SSHD)
    plan = make_plan([("edit", f"sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' {cfg}",
                       "MEDIUM")], goal="Forbid root logins over ssh")
    anna.llm.push(json.dumps(plan))
    proc = anna.run("ask", "--dry-run", "--no-templates", "forbid root login")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Before you approve" in out
    assert "-#PermitRootLogin yes" in out and "+PermitRootLogin no" in out
    assert "sshd -t" in out  # its verdict, or plainly "not checked" where sshd is missing
    assert "dry run: nothing was changed" in proc.stderr
    assert cfg.read_text() == SSHD


@ROOT_ONLY
def test_json_has_a_preview_object_per_step(anna: Anna) -> None:
    target = anna.work / "note.txt"
    target.write_text("old\n")
    plan = make_plan([("write", f"echo new > {target}", "LOW"),
                      ("fetch", "curl -fsS https://example.org -o /dev/null", "LOW")])
    anna.llm.push(json.dumps(plan))
    code, out = anna.json("ask", "--dry-run", "--no-templates", "write it")
    assert code == 0, out
    write, fetch = out["preview"]
    assert write["id"] == "write" and write["preview"]["kind"] == "files"
    [change] = write["preview"]["files"]
    assert change["change"] == "modified" and "+new" in change["diff"]
    assert fetch["preview"]["kind"] == "none" and "network" in fetch["preview"]["reason"]
    assert target.read_text() == "old\n"


@ROOT_ONLY
def test_hostile_file_content_in_a_diff_stays_inert(anna: Anna) -> None:
    target = anna.work / "f.txt"
    target.write_text("\x1b[2Jold [bold]x[/bold]\n")
    plan = make_plan([("w", f"echo new >> {target}", "LOW")])
    anna.llm.push(json.dumps(plan))
    proc = anna.run("ask", "--dry-run", "--no-templates", "append")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout
    assert "[bold]x[/bold]" in proc.stdout


# ---------------------------------------------------------------------- renderer, TUI


def sample_preview() -> PlanPreview:
    """A preview of every kind (as the daemon would send it)."""
    diff = ("--- /etc/ssh/sshd_config\n+++ /etc/ssh/sshd_config\n@@ -1,3 +1,3 @@\n Port 22\n"
            "-#PermitRootLogin yes\n+PermitRootLogin no\n UsePAM yes")
    return PlanPreview(steps=[
        StepPreview(step_id="edit", kind="files", files=[FileChange(
            path="/etc/ssh/sshd_config", change="modified", diff=diff, size_before=40,
            size_after=39, mode_before="0644", mode_after="0644", owner_before="root:root",
            owner_after="root:root", more_lines=0)],
            validators=[ValidatorResult(name="sshd -t", target="/etc/ssh/sshd_config",
                                        verdict="ok")]),
        StepPreview(step_id="install", kind="packages", packages=[
            PackageChange(name="htop", version="3.3.0-1", size=190_000, action="install"),
            PackageChange(name="libnl", version="3.9.0-1", size=400_000, action="install",
                          dependency=True)]),
        StepPreview(step_id="enable", kind="units", units=[
            UnitChange(unit="sshd.service", before="disabled, inactive",
                       after="enabled, active")]),
        StepPreview(step_id="reload", kind="none", reason="signals processes"),
    ])


def sample_plan() -> Any:
    return annotate_dict(plan_dict([
        ("edit", "sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config",
         "MEDIUM"),
        ("install", "pacman -S --noconfirm htop", "MEDIUM"),
        ("enable", "systemctl enable --now sshd.service", "MEDIUM"),
        ("reload", "pkill -HUP sshd", "MEDIUM")], goal="Harden ssh"))


def test_renderer_shows_every_kind() -> None:
    plan = sample_plan()
    text = plain(preview_view(sample_preview(), plan.steps))
    assert "+PermitRootLogin no" in text and "✓ sshd -t ok" in text
    rows = {line.split()[1]: line.split() for line in text.splitlines()
            if line.strip().startswith("install")}
    assert rows["htop"][:3] == ["install", "htop", "3.3.0-1"] and "dependency" not in rows["htop"]
    assert rows["libnl"][-1] == "dependency"
    assert "sshd.service: disabled, inactive → enabled, active" in text
    assert "no preview possible: signals processes" in text


def test_renderer_keeps_hostile_text_inert() -> None:
    plan = sample_plan()
    hostile = PlanPreview(steps=[StepPreview(step_id="edit", kind="files", files=[FileChange(
        path="/tmp/\x1b]0;t\x07x", change="created", diff="+\x1b[31mRED [red]x[/red]")])])
    text = plain(preview_view(hostile, plan.steps[:1]))
    assert "\x1b" not in text and "\x07" not in text and "[red]x[/red]" in text


def test_renderer_says_when_content_varies() -> None:
    """A file whose content differed between the daemon's two preview runs is said so:
    its bytes are not what the approval holds the run to."""
    plan = sample_plan()
    varying = PlanPreview(steps=[StepPreview(step_id="edit", kind="files", files=[FileChange(
        path="/tmp/stamp", change="created", size_after=21, varying=True)])])
    steady = PlanPreview(steps=[StepPreview(step_id="edit", kind="files", files=[FileChange(
        path="/tmp/stamp", change="created", size_after=21)])])
    assert "content differs from run to run" in plain(preview_view(varying, plan.steps[:1]))
    assert "content differs" not in plain(preview_view(steady, plan.steps[:1]))


def test_json_shape_without_a_preview() -> None:
    plan = sample_plan()
    out = preview_json(None, plan.steps)
    assert [o["preview"]["kind"] for o in out] == ["none"] * 4  # type: ignore[index]


def _tui() -> AnnaTui:
    plan = sample_plan()
    prepared = Prepared(plan_id="p-test", digest=plan.digest, annotated=plan, source="file",
                        preview=sample_preview())
    return AnnaTui(Source(prepared=prepared))


@pytest.mark.anyio
async def test_tui_details_has_the_diff_pane() -> None:
    app = _tui()
    async with app.run_test(size=(110, 60)) as pilot:
        await ready(pilot, ApprovalScreen, focus="cancel")
        await pilot.press("d")
        details = await ready(pilot, DetailsScreen, focus="details-pane",
                              selector="#preview-view")
        text = plain(details.query_one("#preview-view").content)  # type: ignore[attr-defined]
        assert "+PermitRootLogin no" in text and "dependency" in text


def test_snapshot_details_preview(snap_compare: Any) -> None:
    """The diff pane in Show Details; this snapshot is also docs/tui-preview.svg."""
    async def run_before(pilot: Any) -> None:
        await ready(pilot, ApprovalScreen, focus="cancel")
        await pilot.press("d")
        details = await ready(pilot, DetailsScreen, focus="details-pane",
                              selector="#preview-view")
        details.query_one("#preview-view").scroll_visible(animate=False)
        await pilot.pause()

    assert snap_compare(_tui(), run_before=run_before, terminal_size=(110, 60))


@ROOT_ONLY
def test_repl_shows_the_preview_before_ok(anna: Anna) -> None:
    from .ptyrun import PtyProcess

    target = anna.work / "app.conf"
    target.write_text("volume=3\n")
    plan = make_plan([("edit", f"sed -i s/volume=3/volume=9/ {target}", "LOW")])
    anna.llm.push(json.dumps(plan))
    term = PtyProcess([*anna.argv, "repl", "--no-templates"],
                      {**anna.env, "PROMPT_TOOLKIT_NO_CPR": "1"})
    term.expect(r"anna>")
    term.send("plan: set the volume\r")
    term.expect(r"Type ok to run it\.?\s+anna>")  # the prompt is back: it reads keys again
    assert "Before you approve" in term.text
    assert "-volume=3" in term.text and "+volume=9" in term.text
    term.send("\x04")
    assert term.wait(timeout=20) == 0
    assert target.read_text() == "volume=3\n"


def test_docs_show_the_diff_pane_snapshot() -> None:
    """docs/tui-preview.svg is the snapshot above (regenerate both together)."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    snapshot = repo / "tests/ui/__snapshots__/test_preview_cli/test_snapshot_details_preview.svg"
    assert (repo / "docs/tui-preview.svg").read_bytes() == snapshot.read_bytes()
    assert "](tui-preview.svg)" in (repo / "docs/usage.md").read_text(encoding="utf-8")
