"""The policy's ``[agents]`` table (parsed, combined: a user's file only restricts), the
agents' sliding-window limits, agent names made printable, and ``annactl mcp`` costing the
other commands nothing at start-up (the SDK is imported by that command alone)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.policy.decide import PolicyError, combine, parse
from anna_common.protocol.agent import UNNAMED, AgentInfo, agent_name
from annad.recipes.agent_limits import MAX_KEYS, Limits
from tests.daemonfix import REPO


def test_admin_sets_and_a_user_only_restricts() -> None:
    admin = parse('[agents]\ncalls_per_minute = 600\ndeny_tools = ["anna_check"]\n',
                  source="/etc/anna/policy.toml")
    user = parse('[agents]\nenabled = true\npropose = false\ncalls_per_minute = 900\n'
                 'max_waiting = 2\ndeny_names = "goose*"\n', source="~/p", origin="user")
    rules = combine(admin, user).agents
    assert rules is not None
    assert rules.calls_per_minute == 600  # a user cannot raise a limit
    assert rules.max_waiting == 2 and rules.propose is False
    assert rules.deny_tools == ("anna_check",) and rules.deny_names == ("goose*",)
    assert rules.refusal("anna_check", "x") is not None
    assert rules.refusal("anna_propose", "x") is not None
    assert rules.refusal("anna_rollback", "x") is not None
    assert rules.refusal("anna_status", "goose-1.0") is not None
    assert rules.refusal("anna_status", "claude-code") is None
    # no table anywhere: no rules object (the daemon uses the defaults)
    assert combine(parse("", source="a"), parse("", source="u", origin="user")).agents is None
    # a user file with no table leaves the administrator's limits as they are
    assert combine(admin, parse("", source="u", origin="user")).agents == admin.agents


@pytest.mark.parametrize("text", [
    "[agents]\nbogus = 1\n", "[agents]\nenabled = 'yes'\n", "[agents]\ncalls_per_minute = -1\n",
    "[agents]\ncalls_per_minute = true\n", "[agents]\nmax_waiting = 100001\n",
    '[agents]\ndeny_tools = ["rm"]\n', "[agents]\ndeny_names = [5]\n", "agents = 5\n",
    '[agents]\ndeny_names = ["' + "*" * 300 + '"]\n'])
def test_malformed_agents_table_is_an_error_with_its_line(text: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse(text, source="/etc/anna/policy.toml")
    assert caught.value.code == ErrorCode.POLICY_INVALID
    assert caught.value.detail["line"] >= 1


def test_sliding_window_refuses_over_the_limit_and_recovers() -> None:
    now = [1000.0]
    limits = Limits(clock=lambda: now[0])
    for _ in range(5):
        limits.take(("u", "a"), 5, 60.0, "calls")
    with pytest.raises(AnnaError) as caught:
        limits.take(("u", "a"), 5, 60.0, "calls")
    assert caught.value.code == ErrorCode.RATE_LIMITED
    assert 1 <= caught.value.detail["retry_after_s"] <= 60
    limits.take(("u", "other"), 5, 60.0, "calls")  # keys are separate
    now[0] += 60.0  # the previous window still weighs fully at its end
    with pytest.raises(AnnaError):
        limits.take(("u", "a"), 5, 60.0, "calls")
    now[0] += 30.0  # half of it still overlaps: 2.5 counted, room for 2
    limits.take(("u", "a"), 5, 60.0, "calls")
    limits.take(("u", "a"), 5, 60.0, "calls")
    with pytest.raises(AnnaError):
        limits.take(("u", "a"), 5, 60.0, "calls")
    now[0] += 1000.0
    for _ in range(5):
        limits.take(("u", "a"), 5, 60.0, "calls")
    with pytest.raises(AnnaError):
        limits.take(("u", "zero"), 0, 60.0, "calls")  # 0 turns it off


def test_limit_memory_is_bounded_by_the_number_of_keys() -> None:
    limits = Limits()
    for i in range(MAX_KEYS * 3):
        limits.take(("u", f"name-{i}"), 10, 60.0, "calls")
    assert len(limits._windows) == MAX_KEYS


@pytest.mark.parametrize(("raw", "shown"), [
    ("claude-code", "claude-code"), ("Claude Desktop", "Claude Desktop"),
    ("\x1b[31mred\x07", "31mred"), ("<b>x</b>&amp;", "b-x-/b-amp"),
    ("", UNNAMED), (None, UNNAMED), ("\n\t ", UNNAMED), ("a" * 200, "a" * 64),
    ("$(touch x)", "touch x"), ("\u202eevil", "evil"),
])
def test_agent_names_are_printable_and_short(raw: object, shown: str) -> None:
    assert agent_name(raw) == shown
    assert AgentInfo.of(raw).name == shown


def test_other_commands_never_import_the_mcp_sdk() -> None:
    probe = ("import sys; sys.argv = ['annactl', *sys.argv[1:]]; from annactl.cli import main;"
             "\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'mcp_types'}))")
    for args in (["--version"], ["--help"], ["explain", "--help"]):
        out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True,
                             text=True, timeout=120, cwd=REPO, check=False)
        assert out.stdout.strip().splitlines()[-1] == "[]", (args, out.stdout, out.stderr)
