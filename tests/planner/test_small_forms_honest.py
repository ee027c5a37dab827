"""Issues 39.6 and 39.7 through the real planner and the fake LLM server: a small form's
value the person never named is a question, not a plan; a value the machine cannot act on
is that reason, not LLM_BAD_REPLY; a small form's repair speaks of its own fields."""

from __future__ import annotations

import json
from typing import Any

from anna_common.telemetry import DesktopInfo
from annactl.planning.planner import Planner
from tests.planner.conftest import make_telemetry


def _planner(fake_llm: Any, make_settings: Any) -> Planner:
    return Planner(make_settings(llm_provider="openai", llm_url=fake_llm.openai_url),
                   daemon=None)


def test_a_package_the_request_never_named_is_questioned(fake_llm: Any,
                                                          make_settings: Any) -> None:
    fake_llm.push(json.dumps({"action": "remove", "package": "htop"}))
    outcome = _planner(fake_llm, make_settings).plan("remove orphaned packages",
                                                     telemetry=make_telemetry())
    assert outcome.form == "package" and len(fake_llm.chat_bodies()) == 1
    assert outcome.plan is not None and outcome.plan.command_plan == []
    assert "Which package do you mean?" in outcome.plan.notes_for_user
    assert "htop" in outcome.plan.notes_for_user  # what the model chose, shown not planned


def test_a_unit_the_request_never_named_is_questioned(fake_llm: Any,
                                                       make_settings: Any) -> None:
    fake_llm.push(json.dumps({"action": "restart", "unit": "sshd.service"}))
    outcome = _planner(fake_llm, make_settings).plan("restart nginx", use_templates=False,
                                                     telemetry=make_telemetry())
    assert outcome.form == "service"
    assert outcome.plan is not None and outcome.plan.command_plan == []
    assert "Which unit do you mean?" in outcome.plan.notes_for_user


def test_a_named_unit_is_planned_as_the_machine_spells_it(fake_llm: Any,
                                                          make_settings: Any) -> None:
    telemetry = make_telemetry()
    telemetry.services.unit_files = ["NetworkManager.service", "sshd.service"]
    fake_llm.push(json.dumps({"action": "restart", "unit": "networkmanager.service"}))
    outcome = _planner(fake_llm, make_settings).plan("restart networkmanager",
                                                     use_templates=False, telemetry=telemetry)
    assert outcome.plan is not None
    assert [s.command for s in outcome.plan.command_plan] == [
        "systemctl restart NetworkManager.service"]


def test_a_wallpaper_with_no_backend_is_that_reason_not_a_bad_reply(fake_llm: Any,
                                                                     make_settings: Any) -> None:
    fake_llm.push(json.dumps({"path": "~/pic.png"}))
    outcome = _planner(fake_llm, make_settings).plan(
        "change my wallpaper to ~/pic.png", telemetry=make_telemetry(desktop=DesktopInfo()))
    assert outcome.form == "wallpaper" and outcome.result.ok
    assert len(fake_llm.chat_bodies()) == 1  # no repair of a right value
    assert outcome.plan is not None and outcome.plan.command_plan == []
    assert "changing the wallpaper needs hyprpaper" in outcome.plan.notes_for_user
    assert "none was found running or installed" in outcome.plan.notes_for_user


def test_a_small_form_repair_names_its_own_fields(fake_llm: Any, make_settings: Any) -> None:
    fake_llm.push(json.dumps({"action": "install", "package": "rip grep"}),
                  json.dumps({"action": "install", "package": "ripgrep"}))
    outcome = _planner(fake_llm, make_settings).plan("install ripgrep", use_templates=False,
                                                     telemetry=make_telemetry())
    repair = fake_llm.chat_bodies()[1]["messages"][-1]["content"]
    assert "exactly the fields action, package" in repair
    assert "ActionPlan" not in repair and "command_plan" not in repair
    assert outcome.plan is not None
    assert [s.command for s in outcome.plan.command_plan] == [
        "pacman -S --needed --noconfirm ripgrep"]


def test_the_echo_check_reads_the_small_forms_replies(fake_llm: Any,
                                                      make_settings: Any) -> None:
    """An answer, or a family value, that repeats a prompt example the request and telemetry
    do not hold is caught like a copied plan, and repaired."""
    fake_llm.push(json.dumps({"answer": "Your CPU is an Intel Core i7-9700K.", "citations": []}),
                  json.dumps({"answer": "The documents do not show this.", "citations": []}),
                  json.dumps({"action": "install", "package": "besseggen"}),
                  json.dumps({"action": "install", "package": "ripgrep"}))
    planner = _planner(fake_llm, make_settings)
    answer = planner.plan("which cpu do i have?", telemetry=make_telemetry())
    package = planner.plan("install ripgrep", use_templates=False, telemetry=make_telemetry())
    repairs = [b["messages"][-1]["content"] for b in fake_llm.chat_bodies()[1::2]]
    assert len(repairs) == 2 and all("LLM_ECHOED_EXAMPLE" in r for r in repairs)
    assert answer.repairs == 1 and package.repairs == 1
    assert package.plan is not None and [s.command for s in package.plan.command_plan] == [
        "pacman -S --needed --noconfirm ripgrep"]
