"""Issue 13 item 2: the real daemon enforces the policy at submit, checks, execute and
rollback; reads it again between them; journals every verdict; refuses to start on a
malformed file. The policy file lives in the daemon's temporary base (never /etc)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from annactl.ui.render import policy_notes
from tests.daemonfix import REPO, RunningDaemon, make_plan, new_daemon, stop_and_remove

RULES = """
[[rule]]
id = "no-shred"
action = "deny"
program = "shred"

[[rule]]
id = "protected"
action = "deny"
path = "~/protected/**"

[[rule]]
id = "no-journal-reads"
action = "deny"
program = "journalctl"

[[rule]]
id = "ask-listing"
action = "ask"
program = "ls"

[[rule]]
id = "mkdir-ok"
action = "allow"
program = "mkdir"
"""


@contextlib.contextmanager
def daemon_with(policy: str | None) -> Iterator[RunningDaemon]:
    daemon = new_daemon(user_mode=True)
    if policy is not None:
        (daemon.base / "policy.toml").write_text(policy)
    try:
        yield daemon.start()
    finally:
        stop_and_remove(daemon)


def submit(daemon: RunningDaemon, steps: list[tuple[str, str, str]], **kw: Any) -> Any:
    return daemon.client().submit(ActionPlan.model_validate(make_plan(steps, **kw)))


def events(daemon: RunningDaemon, kind: str) -> list[tuple[str | None, dict[str, Any]]]:
    db = sqlite3.connect(f"file:{daemon.state / 'journal.sqlite3'}?mode=ro", uri=True,
                         timeout=5)
    try:
        rows = db.execute("SELECT plan_id, body FROM events WHERE kind=? ORDER BY id",
                          (kind,)).fetchall()
    finally:
        db.close()
    return [(plan_id, json.loads(body)) for plan_id, body in rows]


@pytest.mark.parametrize(("text", "line"), [
    ("[[rule]]\naction = \"deny\"\nprogram = [\"rm\"\n", 3),          # bad TOML
    ("[[rule]]\naction = \"deny\"\nprogramme = \"rm\"\n", 3),         # unknown key
    ("\n[[rule]]\naction = \"allow-all\"\n", 3),                     # bad action
    ("[[rule]]\naction = \"deny\"\npath = \"/etc/[ssh/**\"\n", 3),   # bad glob
])
def test_a_malformed_policy_stops_the_real_daemon_naming_file_and_line(text: str,
                                                                       line: int) -> None:
    daemon = new_daemon(user_mode=True)
    policy = daemon.base / "policy.toml"
    policy.write_text(text)
    try:
        with pytest.raises(RuntimeError, match="annad exited"):
            daemon.start()
        assert daemon.proc is not None and daemon.proc.returncode == 1
        assert f"{policy}:{line}:" in daemon.output()
        assert not daemon.socket.exists()  # it never served: no "allow everything"
    finally:
        stop_and_remove(daemon)


def test_deny_refuses_a_step_a_check_and_a_rollback_command_at_submit() -> None:
    with daemon_with(RULES) as daemon:
        cases = [
            ({"steps": [("s", "shred -u ~/notes.txt", "LOW")]}, "no-shred", "step:s"),
            ({"steps": [("s", "touch ~/protected/a", "LOW")]}, "protected", "step:s"),
            ({"steps": [("s", "touch ~/a", "LOW")], "checks": [("c", "journalctl -n 5")]},
             "no-journal-reads", "check:c"),
            ({"steps": [("s", "touch ~/b", "LOW")], "rollback": {"s": "shred -u ~/b"}},
             "no-shred", "rollback:undo-s"),
        ]
        for plan, rule, item in cases:
            with pytest.raises(AnnaError) as caught:
                submit(daemon, **plan)
            assert caught.value.code is ErrorCode.POLICY_DENIED, plan
            assert caught.value.detail["rule"] == rule and item in caught.value.detail["items"]
        denied = events(daemon, "policy_denied")
        assert [e[1]["phase"] for e in denied] == ["submit"] * 4
        assert denied[0][1]["items"][0]["rule"] == "no-shred"
        assert daemon.client().list_plans().plans == []  # nothing was stored


def test_ask_and_allow_change_the_confirmations_are_shown_and_journalled() -> None:
    with daemon_with(RULES) as daemon:
        client = daemon.client()
        listing = submit(daemon, [("l", "ls -la ~", "INFO")])
        mark = listing.annotated.steps[0].policy
        assert mark is not None and (mark.action, mark.rule) == ("ask", "ask-listing")
        assert tiers.confirmations_needed(listing.annotated) == 1  # INFO, yet asked
        assert any("ask-listing" in line.plain for line in policy_notes(listing.annotated))
        with pytest.raises(AnnaError) as caught:
            list(client.execute(listing.plan_id, listing.digest, confirmed=False,
                                high_confirmed=False))
        assert caught.value.code is ErrorCode.CONFIRMATION_REQUIRED
        list(client.execute(listing.plan_id, listing.digest, confirmed=True,
                            high_confirmed=False))
        assert client.get_plan(listing.plan_id).status == "succeeded"

        made = submit(daemon, [("m", "mkdir ~/made", "LOW")])
        assert made.annotated.steps[0].final_risk == "LOW"
        assert made.annotated.steps[0].policy.action == "allow"  # type: ignore[union-attr]
        assert tiers.confirmations_needed(made.annotated) == 0  # the single LOW one waived
        list(client.execute(made.plan_id, made.digest, confirmed=False, high_confirmed=False))
        assert (daemon.home / "made").is_dir()
        stored = client.get_plan(made.plan_id).annotated.steps[0].policy
        assert stored is not None and stored.rule == "mkdir-ok"
        phases = [(p, e["phase"], e["items"][0]["rule"]) for p, e in events(daemon, "policy")]
        assert (listing.plan_id, "submit", "ask-listing") in phases
        assert (listing.plan_id, "execute", "ask-listing") in phases
        assert (made.plan_id, "execute", "mkdir-ok") in phases


def test_an_ask_holds_a_check_back_from_running_unasked() -> None:
    with daemon_with(RULES) as daemon:
        client = daemon.client()
        plan = submit(daemon, [("t", "touch ~/c", "LOW")],
                      checks=[("c1", "ls ~"), ("c2", "cat /etc/hostname")])
        results = client.run_checks(plan.plan_id).results
        assert [r.id for r in results] == ["c1", "c2"]
        assert not results[0].ran and "ask-listing" in (results[0].reason or "")
        assert results[1].ran or "ask" not in (results[1].reason or "")


def test_the_policy_is_read_again_at_execute() -> None:
    with daemon_with(None) as daemon:
        client = daemon.client()
        later = submit(daemon, [("m", "mkdir ~/later", "LOW")])
        assert later.annotated.steps[0].policy is None
        policy = daemon.base / "policy.toml"
        policy.write_text('[[rule]]\nid = "no-mkdir"\naction = "deny"\nprogram = "mkdir"\n')
        with pytest.raises(AnnaError) as caught:
            list(client.execute(later.plan_id, later.digest, confirmed=True,
                                high_confirmed=False))
        assert caught.value.code is ErrorCode.POLICY_DENIED
        assert not (daemon.home / "later").exists()
        assert events(daemon, "policy_denied")[-1][1]["phase"] == "execute"

        policy.write_text("[[rule]]\naction = \"deny\"\nprogram = \n")  # broken meanwhile
        with pytest.raises(AnnaError) as caught:
            list(client.execute(later.plan_id, later.digest, confirmed=True,
                                high_confirmed=False))
        assert caught.value.code is ErrorCode.POLICY_INVALID
        assert f"{policy}:3" in caught.value.message
        assert events(daemon, "policy_invalid")[-1][1]["phase"] == "execute"
        policy.unlink()  # no file: no rules; the plan runs as its tier says
        list(client.execute(later.plan_id, later.digest, confirmed=True,
                            high_confirmed=False))
        assert (daemon.home / "later").is_dir()


def test_a_user_policy_adds_restrictions_and_its_allow_is_ignored_visibly() -> None:
    with daemon_with(RULES) as daemon:
        mine = daemon.home / ".config" / "anna"
        mine.mkdir(parents=True)
        (mine / "policy.toml").write_text(
            '[[rule]]\nid = "me-no-touch"\naction = "deny"\nprogram = "touch"\n\n'
            '[[rule]]\nid = "me-shred"\naction = "allow"\nprogram = "shred"\n')
        with pytest.raises(AnnaError) as caught:
            submit(daemon, [("t", "touch ~/x", "LOW")])
        assert caught.value.detail["rule"] == "me-no-touch"
        view = daemon.client().policy_view()
        assert [r.id for r in view.rules][-1] == "me-no-touch"
        assert any("me-shred" in n and "ignored" in n for n in view.notes)
        with pytest.raises(AnnaError) as caught:
            submit(daemon, [("s", "shred ~/x", "LOW")])
        assert caught.value.detail["rule"] == "no-shred"  # the user's allow changed nothing


def test_policy_show_and_check_through_annactl() -> None:
    with daemon_with(RULES) as daemon:
        env = {**daemon.env, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "0"}

        def annactl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "annactl.cli", *args], env=env,
                                  capture_output=True, text=True, cwd=str(REPO), timeout=120,
                                  stdin=subprocess.DEVNULL, check=False)

        shown = annactl("policy", "show", "--json")
        assert shown.returncode == 0, shown.stderr
        view = json.loads(shown.stdout)
        assert [r["id"] for r in view["rules"]][:2] == ["no-shred", "protected"]
        assert view["admin_file"] == str(daemon.base / "policy.toml")
        checked = annactl("policy", "check", "--json", "sudo env shred -u ~/x")
        assert checked.returncode == 0, checked.stderr
        result = json.loads(checked.stdout)
        assert result["decision"]["action"] == "deny"
        assert result["decision"]["rule"]["id"] == "no-shred" and result["tier"]
        text = annactl("policy", "check", "mkdir ~/new")
        assert text.returncode == 0 and "allow" in text.stdout and "mkdir-ok" in text.stdout
        assert "no confirmation" in text.stdout
        table = annactl("policy", "show")
        assert table.returncode == 0 and "ask-listing" in table.stdout


def test_a_later_rollback_is_judged_against_the_policy_as_it_is_then() -> None:
    with daemon_with(None) as daemon:
        client = daemon.client()
        plan = submit(daemon, [("t", "touch ~/rb", "LOW")], rollback={"t": "rm -f ~/rb"})
        list(client.execute(plan.plan_id, plan.digest, confirmed=True, high_confirmed=False))
        assert (daemon.home / "rb").exists()
        (daemon.base / "policy.toml").write_text(
            '[[rule]]\nid = "no-rm"\naction = "deny"\nprogram = "rm"\n')
        with pytest.raises(AnnaError) as caught:
            client.rollback(plan.plan_id, confirmed=True)
        assert caught.value.code is ErrorCode.POLICY_DENIED
        assert caught.value.detail["items"] == ["rollback:undo-t"]
        assert (daemon.home / "rb").exists()  # nothing was undone
        assert events(daemon, "policy_denied")[-1][1]["phase"] == "rollback"
        (daemon.base / "policy.toml").unlink()
        client.rollback(plan.plan_id, confirmed=True)
        assert not (daemon.home / "rb").exists()
        assert [e[1]["phase"] for e in events(daemon, "policy")][-1] == "rollback"
