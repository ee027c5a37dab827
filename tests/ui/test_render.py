"""Rendering plans and events: what the person sees, and untrusted text kept inert."""

from __future__ import annotations

import io

from rich.console import Console

from anna_common.findings import AnnotatedPlan
from anna_common.protocol.models import ExecEvent, ExecEventType
from annactl.ui import render

from .plans import annotate_dict, plan_dict


def _render(renderable: object, *, colour: bool) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=160, force_terminal=colour, color_system="truecolor"
                      if colour else None, legacy_windows=False)
    console.print(renderable)
    return buffer.getvalue()


def test_plan_view_shows_goal_steps_badges_and_notes(high_plan: AnnotatedPlan) -> None:
    text = _render(render.plan_view(high_plan, plan_id="p-1"), colour=False)
    assert "Replace fstab" in text
    assert "Analysis text." in text and "Notes for you." in text
    assert "cp /tmp/fstab.new /etc/fstab" in text
    assert " HIGH " in text and " LOW " in text
    assert "restore" in text  # the step's rollback id
    assert "Risk:" in text and "Steps: 2" in text and "Rollback: available" in text
    assert "plan p-1" in text


def test_badges_are_coloured_by_tier() -> None:
    colours = {"INFO": "blue", "LOW": "green", "MEDIUM": "yellow", "HIGH": "red"}
    for level, colour in colours.items():
        assert colour in render.RISK_STYLE[level]
        assert render.risk_badge(level).plain == f" {level} "
    assert "BANNED" in render.risk_badge("HIGH", banned=True).plain


def test_hostile_text_stays_inert_without_colour(hostile_plan: AnnotatedPlan) -> None:
    text = _render(render.plan_view(hostile_plan), colour=False)
    assert "\x1b" not in text and "\x07" not in text
    assert "[bold red]LOUD[/]" in text  # markup shown literally
    assert "[link=http://evil]click[/link]" in text
    assert "[red]x[/]" in text


def test_hostile_text_stays_inert_on_a_colour_terminal(hostile_plan: AnnotatedPlan) -> None:
    text = _render(render.plan_view(hostile_plan), colour=True)
    assert "\x1b]" not in text  # no OSC: no title change, no hyperlink
    assert "\x07" not in text
    assert "\x1b[2J" not in text and "\x1b[5m" not in text and "\x1b[31m" not in text
    assert "[bold red]LOUD[/]" in text


def test_notes_only_for_a_plan_without_steps() -> None:
    plan = annotate_dict(plan_dict([], notes="Your system is healthy.\x1b[31m"))
    text = _render(render.notes_only(plan), colour=False)
    assert text.strip() == "Your system is healthy."


def test_event_views() -> None:
    started = ExecEvent(type=ExecEventType.STEP_STARTED, plan_id="p", step_id="s1", index=1,
                        total=2, message="running")
    finished = ExecEvent(type=ExecEventType.STEP_FINISHED, plan_id="p", step_id="s1", index=1,
                         total=2, status="succeeded", exit_code=0,
                         output="\n".join(f"line {i}" for i in range(20)) + "\x1b]0;x\x07")
    failed = ExecEvent(type=ExecEventType.STEP_FINISHED, plan_id="p", step_id="s2", index=2,
                       total=2, status="failed", exit_code=3)
    assert "[1/2] ▶ s1" in _render(render.event_view(started), colour=False)
    done = _render(render.event_view(finished), colour=False)
    assert "[1/2] ✔ s1  exit 0" in done
    assert "line 19" in done and "line 10" not in done and "\x1b" not in done
    assert "✘ s2  exit 3" in _render(render.event_view(failed), colour=False)
    assert render.event_view(ExecEvent(type=ExecEventType.PLAN_STARTED, plan_id="p")) is None


def test_a_refused_confinement_says_the_step_never_ran() -> None:
    refused = ExecEvent(type=ExecEventType.STEP_FINISHED, plan_id="p", step_id="s1", index=1,
                        total=1, status="failed", code="CONFINEMENT_REFUSED",
                        message="confinement refused, so the command did not run: a uid-0 run "
                        "needs a cgroup of its own\x1b[2J")
    text = _render(render.event_view(refused), colour=False)
    assert "✘ s1  not run: this machine could not confine it" in text
    assert "needs a cgroup of its own" in text and "\x1b" not in text


def test_plan_view_says_when_anna_cannot_back_a_step_up() -> None:
    plan = annotate_dict(plan_dict([
        ("tidy", "python3 -c 'open(\"/home/test/x\", \"w\").write(\"1\")'", "LOW"),
        ("list", "ls ~", "INFO"),
    ]))
    assert "uncaptured_write" in plan.steps[0].codes
    assert any("Anna cannot back this up" in r for r in plan.steps[0].reasons)
    text = _render(render.plan_view(plan), colour=False)
    assert "step 1:" in text and "Anna cannot back this up" in text
    assert "step 2:" not in text
    # the journal stores the annotated plan as JSON: the reason travels with it
    assert "Anna cannot back this up" in plan.model_dump_json()


def test_plan_view_says_which_step_runs_live_and_why() -> None:
    """The daemon's "runs live; Anna cannot undo it: why" is the red line of a step it
    marked, not the first location reason the step happens to have."""
    from annad.execution.runs_live import mark_live

    plan = mark_live(annotate_dict(plan_dict([
        ("w", "touch ~/made-by-anna", "LOW"),
        ("m", "systemctl --version; cd /etc && xz -k passwd", "LOW"),
    ])), "user namespaces are disabled")
    text = _render(render.plan_view(plan), colour=False)
    lines = [line for line in text.splitlines() if line.startswith(("step 1:", "step 2:"))]
    assert len(lines) == 2, text
    assert "runs live; Anna cannot undo it: user namespaces are disabled" in lines[0]
    assert "runs live; Anna cannot undo it: it runs systemctl beside" in lines[1]
