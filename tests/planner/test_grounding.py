"""Issue 14: echoed examples and off-request plans are repaired, then refused with a code.

Unit checks on the detectors (honest plans that share words and commands with an example
are NOT flagged), then the planner against the fake LLM server.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.findings import FindingCode
from anna_common.validate import validate_text
from annactl.planning.grounding import echo_findings, examples
from annactl.planning.offrequest import action_verb, off_request_findings
from annactl.planning.planner import Planner
from annactl.planning.prompt import system_message
from tests.fakellm import plan_json
from tests.planner.conftest import make_telemetry


def prompt_examples() -> list[dict[str, Any]]:
    """The example replies of the system prompt, as the model would copy them."""
    return [json.loads(line.removeprefix("Reply: ")) for line in system_message().splitlines()
            if line.startswith("Reply: {")]


def annotated(text: str) -> Any:
    from anna_common.risk.rules.base import AssessContext

    result = validate_text(text, AssessContext(home="/home/test"))
    assert result.plan is not None, result.errors
    return result.plan


def step_plan(commands: list[tuple[str, str]], **overrides: Any) -> str:
    steps = [{"id": f"s{i}", "description": "step", "command": c, "risk_level": r,
              "rollback_id": None, "requires_confirmation": True}
             for i, (c, r) in enumerate(commands)]
    return plan_json(command_plan=steps, **overrides)


# ---------------------------------------------------------------------- echo detection
def test_registry_literals_are_really_in_the_prompt() -> None:
    ex = examples()
    assert ex.literals and len(ex.tokens) > 200
    for literal in ex.literals:
        assert literal.lower() in system_message().lower()


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("request_text", ["install htop", "restart nginx", "what is my kernel?"])
def test_each_example_copied_verbatim_is_an_echo(index: int, request_text: str) -> None:
    plan = annotated(json.dumps(prompt_examples()[index]))
    found = echo_findings(plan, request=request_text, sent="{\"cpu\": {\"model\": \"AMD EPYC\"}}")
    assert [f.code for f in found] == [FindingCode.LLM_ECHOED_EXAMPLE]


def test_example_prose_reworded_slightly_is_still_an_echo() -> None:
    ex = prompt_examples()[1]
    ex["notes_for_user"] = ex["notes_for_user"].replace("healthy", "fine")
    ex["analysis"] = ex["analysis"].upper()
    assert echo_findings(annotated(json.dumps(ex)), request="install htop", sent="{}")


def test_example_literal_alone_is_an_echo_unless_the_request_or_telemetry_has_it() -> None:
    text = step_plan([("feh --bg-fill /home/user/besseggen.png", "LOW")])
    assert echo_findings(annotated(text), request="set my wallpaper to ~/sea.jpg", sent="{}")
    assert not echo_findings(annotated(text),
                             request="set my wallpaper to /home/user/besseggen.png", sent="{}")
    assert not echo_findings(annotated(text), request="wallpaper ~/besseggen.png", sent="{}")
    notes = plan_json(notes_for_user="CPU: Intel Core i7-9700K, 8 cores.")
    assert echo_findings(annotated(notes), request="how is my cpu", sent='{"model":"AMD"}')
    assert not echo_findings(annotated(notes), request="how is my cpu",
                             sent='{"model":"Intel Core i7-9700K"}')


@pytest.mark.parametrize("commands,notes", [
    ([("pacman -S --noconfirm htop", "MEDIUM")], "I will install htop with pacman."),
    ([("pacman -Qi htop", "INFO")], "The user wants to know if htop is installed."),
    ([("cp ~/.config/hypr/hyprpaper.conf ~/.config/hypr/hyprpaper.conf.anna_backup", "LOW"),
      ("hyprctl hyprpaper preload /home/me/pics/sea.jpg && hyprctl hyprpaper wallpaper "
       ",/home/me/pics/sea.jpg", "LOW")],
     "I will set your wallpaper to /home/me/pics/sea.jpg with hyprpaper. Risk: LOW."),
    ([], "Your system is healthy. CPU: AMD EPYC 7B13, 2 threads, load 0.4. Memory: 3.1 GB of "
         "23.5 GB used (13%). Disk /: 40% full. No failed services."),
])
def test_honest_plans_sharing_words_and_commands_are_not_echoes(commands, notes) -> None:
    text = step_plan(commands, notes_for_user=notes,
                     analysis="The user wants this done; telemetry shows Arch with pacman.")
    assert echo_findings(annotated(text), request="do it", sent="{}") == []


# ---------------------------------------------------------------------- off request
@pytest.mark.parametrize("request_text,verb", [
    ("install htop", "install"), ("please install htop", "install"),
    ("can you install htop?", "install"), ("Could you restart nginx", "restart"),
    ("hey anna, update my system", "update"), ("change my wallpaper to /x.png", "change"),
    ("how do I install htop?", None), ("How is my system?", None), ("why is nginx down", None),
    ("what is using my disk", None), ("show me the load", None)])
def test_action_verbs(request_text: str, verb: str | None) -> None:
    assert action_verb(request_text) == verb


@pytest.mark.parametrize("request_text,commands,off", [
    ("install htop", [], True),
    ("install htop", [("pacman -Qi htop", "INFO")], True),
    ("install htop", [("pacman -Ss htop", "INFO")], True),
    ("install htop", [("sudo pacman -S --noconfirm htop", "MEDIUM")], False),
    ("install htop", [("yay -S htop", "MEDIUM")], False),
    ("install htop", [("paru -Syu htop", "MEDIUM")], False),
    ("restart nginx", [("systemctl status nginx", "INFO")], True),
    ("restart nginx", [("sudo systemctl restart nginx", "MEDIUM")], False),
    ("enable sshd", [("systemctl enable --now sshd", "MEDIUM")], False),
    ("change my wallpaper to /tmp/a.png", [("ls /tmp", "INFO")], True),
    ("change my wallpaper to /tmp/a.png", [("feh --bg-fill /tmp/a.png", "LOW")], False),
    ("how do I install htop?", [], False),
    ("how is my system?", [], False),
])
def test_off_request(request_text: str, commands: list[tuple[str, str]], off: bool) -> None:
    found = off_request_findings(annotated(step_plan(commands)), request_text)
    assert bool(found) is off
    assert all(f.code == FindingCode.LLM_OFF_REQUEST for f in found)


# ---------------------------------------------------------------------- through the planner
def test_echo_is_repaired_with_that_reason(fake_llm, make_settings) -> None:
    echo = json.dumps(prompt_examples()[1])
    fake_llm.push(echo, step_plan([("pacman -S --noconfirm htop", "MEDIUM")]))
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url))
    outcome = planner.plan("install htop", telemetry=make_telemetry(), use_templates=False)
    assert outcome.plan is not None and outcome.repairs == 1
    repair = fake_llm.chat_bodies()[1]["messages"][-1]["content"]
    assert "LLM_ECHOED_EXAMPLE" in repair


def test_echo_twice_is_llm_echoed_example(fake_llm, make_settings) -> None:
    echo = json.dumps(prompt_examples()[0])
    fake_llm.push(echo, echo)
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url))
    with pytest.raises(AnnaError) as caught:
        planner.plan("install htop", telemetry=make_telemetry(), use_templates=False)
    assert caught.value.code == ErrorCode.LLM_ECHOED_EXAMPLE
    assert fake_llm.pending() == 0
    codes = {f["code"] for f in caught.value.detail["findings"]}
    assert "LLM_ECHOED_EXAMPLE" in codes


def test_off_request_is_repaired_once_then_refused(fake_llm, make_settings) -> None:
    off = plan_json(notes_for_user="Your system looks fine.")
    fake_llm.push(off, off)
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url))
    with pytest.raises(AnnaError) as caught:
        planner.plan("install htop", telemetry=make_telemetry(), use_templates=False)
    assert caught.value.code == ErrorCode.LLM_OFF_REQUEST
    assert "did not address your request" in caught.value.message
    bodies = fake_llm.chat_bodies()
    assert len(bodies) == 2 and "LLM_OFF_REQUEST" in bodies[1]["messages"][-1]["content"]
    assert "ANNA_TRACE=1" in (caught.value.hint or "")


def test_trace_hint_names_the_file_when_tracing(fake_llm, make_settings) -> None:
    fake_llm.push("nope", "nope")
    settings = make_settings(llm_url=fake_llm.ollama_url, trace=True)
    with pytest.raises(AnnaError) as caught:
        Planner(settings).plan("why is it slow", telemetry=make_telemetry(), use_templates=False)
    hint = caught.value.hint or ""
    assert "ANNA_TRACE=1" not in hint
    trace = settings.state_dir / "traces" / f"{caught.value.detail['trace_id']}.json"
    assert str(trace) in hint and trace.is_file()


def test_a_checks_first_plan_is_judged_on_its_refined_form(fake_llm, make_settings,
                                                           user_daemon) -> None:
    checks_only = plan_json(goals=["Restart nginx"], necessary_checks=[
        {"id": "status", "description": "is it there", "command": "systemctl --version",
         "risk_level": "INFO", "required": True}])
    fake_llm.push(checks_only, step_plan([("systemctl restart nginx", "MEDIUM")]))
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=user_daemon.client())
    outcome = planner.plan("restart nginx", use_templates=False)
    assert outcome.plan is not None and outcome.rounds == 1 and outcome.repairs == 0


def test_a_checks_first_plan_still_off_request_after_refinement_is_refused(
        fake_llm, make_settings, user_daemon) -> None:
    checks_only = plan_json(goals=["Restart nginx"], necessary_checks=[
        {"id": "status", "description": "is it there", "command": "systemctl --version",
         "risk_level": "INFO", "required": True}])
    fake_llm.push(checks_only, plan_json(), plan_json())
    planner = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=user_daemon.client())
    with pytest.raises(AnnaError) as caught:
        planner.plan("restart nginx", use_templates=False)
    assert caught.value.code == ErrorCode.LLM_OFF_REQUEST


@pytest.mark.parametrize("request_text", ["make a list of my biggest files",
                                          "fix my wifi", "write me a summary of the load"])
def test_requests_that_may_end_in_an_answer_are_not_flagged(request_text: str) -> None:
    assert off_request_findings(annotated(plan_json()), request_text) == []


@pytest.mark.parametrize("where", ["memory_value", "memory_key", "description", "detection"])
def test_the_echo_check_reads_every_string_the_model_wrote(where: str) -> None:
    """Issue 24.4: a model proposed remembering the example's image path in memory_patch."""
    literal = examples().literals[0]
    overrides: dict[str, Any] = {}
    if where == "memory_value":
        overrides["memory_patch"] = {"wallpaper_dir": literal}
    elif where == "memory_key":
        overrides["memory_patch"] = {literal: "x"}
    elif where == "description":
        overrides["command_plan"] = [{"id": "s1", "description": f"use {literal}",
                                      "command": "true", "risk_level": "INFO",
                                      "rollback_id": None, "requires_confirmation": False}]
    else:
        overrides["meta"] = {"detection_results": {"de": None, "wm": literal,
                                                   "wallpaper_backends": [],
                                                   "display_protocol": None},
                             "template_used": None, "llm_version": "anna_runtime_v3"}
    text = plan_json(**overrides)
    found = echo_findings(annotated(text), request="how is my system", sent="{}")
    assert [f.code for f in found] == [FindingCode.LLM_ECHOED_EXAMPLE], where
    # the same literal is no echo when the person asked for it
    assert not echo_findings(annotated(text), request=f"remember {literal}", sent="{}")
