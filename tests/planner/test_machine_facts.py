"""Issue 39.3: what the telemetry holds is answered offline, right, with the snapshot's age
(the real planner; no model reachable, or the fake server to prove it is never asked)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from anna_common.telemetry import Address, Listener, LoginSession, NetworkInfo, Telemetry
from annactl.planning.planner import Planner
from tests.planner.conftest import make_telemetry

DEAD = "http://127.0.0.1:9"
"""Nothing listens here: every model call is LLM_UNAVAILABLE."""


def _machine() -> Telemetry:
    telemetry = make_telemetry()
    telemetry.collected_at = time.time() - 42
    telemetry.system.uptime_seconds = 3 * 86400 + 2 * 3600 + 5 * 60
    telemetry.system.distro_name = "Arch Linux"
    telemetry.network = NetworkInfo(available=True, addresses=[
        Address(interface="lo", family="ipv4", address="127.0.0.1", prefix=8),
        Address(interface="wlan0", family="ipv4", address="192.168.1.23", prefix=24),
        Address(interface="wlan0", family="ipv6", address="fe80::1", prefix=64)],
        listeners=[Listener(proto="tcp", address="0.0.0.0", port=22, process="sshd"),
                   Listener(proto="udp", address="127.0.0.1", port=323)])
    telemetry.sessions = [LoginSession(user="alice", terminal="tty1"),
                          LoginSession(user="bob", terminal="pts/0", host="10.0.0.5")]
    return telemetry


@pytest.mark.parametrize(("request_text", "template", "says", "never"), [
    ("what kernel am I running?", "kernel_v1", "6.12.1-arch1-1 on Arch Linux", None),
    ("which kernel do i have", "kernel_v1", "6.12.1-arch1-1", None),
    ("show my ip address", "ip_address_v1", "wlan0 192.168.1.23/24", "127.0.0.1"),
    ("what is my ip address?", "ip_address_v1", "192.168.1.23", "fe80::1"),
    ("how long has my computer been up?", "uptime_v1", "3 days, 2 h 5 min", None),
    ("uptime", "uptime_v1", "3 days", None),
    ("who is logged in?", "logged_in_v1", "alice, bob", None),
    ("what's listening on the network?", "listeners_v1", "tcp 0.0.0.0:22 (sshd)", None),
    ("which ports are open?", "listeners_v1", "udp 127.0.0.1:323", None),
])
def test_answered_offline_from_telemetry_with_its_age(make_settings: Any, request_text: str,
                                                      template: str, says: str,
                                                      never: str | None) -> None:
    outcome = Planner(make_settings(llm_url=DEAD), daemon=None).plan(
        request_text, telemetry=_machine())
    assert outcome.template == template and outcome.template_confident
    assert outcome.plan is not None and outcome.plan.command_plan == []
    notes = outcome.plan.notes_for_user
    assert says in notes
    assert "(telemetry from 4" in notes  # 42 s and a little more
    if never:
        assert never not in notes


def test_the_model_is_never_asked_what_the_telemetry_holds(fake_llm: Any, make_settings: Any) -> None:
    outcome = Planner(make_settings(llm_url=fake_llm.ollama_url), daemon=None).plan(
        "what kernel am I running?", telemetry=_machine())
    assert outcome.template == "kernel_v1" and fake_llm.chat_bodies() == []


def test_a_public_address_is_not_an_interface_address(make_settings: Any) -> None:
    from anna_common.errors import LLMError

    with pytest.raises(LLMError):  # no template claims it; the model is not there
        Planner(make_settings(llm_url=DEAD), daemon=None).plan("what is my public ip?",
                                                               telemetry=_machine())


def test_missing_parts_are_said_never_invented(make_settings: Any) -> None:
    telemetry = make_telemetry()  # no network collector, no sessions, no uptime
    planner = Planner(make_settings(llm_url=DEAD), daemon=None)
    for request_text, says in (("show my ip address", "does not hold the interface addresses"),
                               ("who is logged in?", "does not hold the login sessions"),
                               ("uptime", "does not hold the uptime")):
        outcome = planner.plan(request_text, telemetry=telemetry)
        assert outcome.plan is not None and says in outcome.plan.notes_for_user
        assert "(from the daemon's telemetry)" in outcome.plan.notes_for_user


@pytest.mark.parametrize(("request_text", "template"), [
    ("what uses my memory", "top_processes_v1"), ("which process uses the most cpu?",
                                                  "top_processes_v1"),
    ("show me failed services", "failed_services_v1")])
def test_everyday_wordings_are_whole_matches(make_settings: Any, request_text: str,
                                             template: str) -> None:
    outcome = Planner(make_settings(llm_url=DEAD), daemon=None).plan(
        request_text, telemetry=_machine())
    assert outcome.template == template and outcome.template_confident
