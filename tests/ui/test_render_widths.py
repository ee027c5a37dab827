"""Plans and history read at 80 and 60 columns: headers never fold, long cells do; check
output leads with its first lines and says how many more; a note names its command."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from anna_common.protocol.models import CheckResult
from anna_common.risk.assess import AssessContext
from anna_common.validate import validate
from annactl.ui import render
from annactl.ui.history_view import history_view

from .plans import annotate_dict, plan_dict, wallpaper_plan


def _text(renderable: object, width: int) -> str:
    console = Console(width=width, no_color=True, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


HEADERS = {"#", "step", "command", "risk", "rollback", "id", "result"}


@pytest.mark.parametrize("width", [72, 80, 100])
def test_table_headers_are_whole_words(width: int) -> None:
    plan = annotate_dict(wallpaper_plan())
    text = _text(render.plan_view(plan), width)
    header = next(line for line in text.splitlines() if "┃ # ┃" in line)
    words = {w for w in re.split(r"[┃\s]+", header) if w}
    assert words == {"#", "step", "command", "risk", "rollback"}, header
    assert max(len(line) for line in text.splitlines()) <= width


def test_sixty_columns_is_a_list_not_a_squeezed_table() -> None:
    plan = annotate_dict(plan_dict([("list_failed", "systemctl list-units --failed "
                                     "--no-pager", "INFO")], goal="Show failed services",
                                   checks=[("look", "ls -la /tmp")]))
    text = _text(render.plan_view(plan), 60)
    assert "┃" not in text and "1. list_failed" in text and "• look" in text
    assert "systemctl list-units --failed --no-pager" in text
    assert max(len(line) for line in text.splitlines()) <= 60


def test_check_output_shows_its_first_lines_and_how_many_more() -> None:
    plan = annotate_dict(plan_dict([("df", "df -h", "INFO")], checks=[("big", "du -xh -d1 /")]))
    output = "\n".join(f"{100 - n}G\t/dir{n}" for n in range(12))
    results = [CheckResult(id="big", command="du -xh -d1 /", ran=True, exit_code=0,
                           output=output)]
    for width in (60, 80):
        text = _text(render.plan_view(plan, checks=results), width)
        assert "100G" in text and "95G" in text and "/dir6" not in text
        assert "… 6 more lines" in text


def test_a_raised_risk_note_names_the_rollback_command() -> None:
    data = plan_dict([("apply", "gsettings set org.gnome.desktop.background picture-uri "
                       "'file:///x.png'", "LOW")],
                     rollback=[("undo_apply", "gsettings reset org.gnome.desktop.background "
                                "picture-uri")], rollback_ids={"apply": "undo_apply"})
    result = validate(data, AssessContext(distro="arch", home="/home/test"))
    assert result.plan is not None
    text = " ".join(_text(render.plan_view(result.plan, warnings=result.warnings), 200)
                    .split())
    assert "note on rollback command undo_apply: Anna raised the risk" in text


@pytest.mark.parametrize("width", [60, 80])
def test_history_never_wraps_an_id_nor_a_header(width: int) -> None:
    plans = [{"plan_id": f"20261127-0251{n:02d}-abc{n:03d}", "status": "dry_run",
              "final_risk": "LOW", "steps": 2, "created_at": 1795745386.6,
              "title": "Set the wallpaper to /home/someone/Pictures/a long name.png"}
             for n in range(3)]
    lines = _text(history_view(plans), width).splitlines()
    assert lines[0].split()[:3] == ["id", "status", "risk"] or \
        lines[0].split()[:3] == ["id", "when", "status"]
    for n in range(3):
        assert any(line.startswith(f"abc{n:03d}") for line in lines)
    assert "/home/someone/Pictures/a" in " ".join(lines)
    assert max(len(line) for line in lines) <= width
