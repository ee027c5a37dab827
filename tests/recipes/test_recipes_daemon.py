"""Recipes with the real daemon: a timer-triggered run (the unit's own ExecStart), a step
that may not run unattended is queued (and the desktop told), approved or dismissed from
the command line; parameters stay one word; bad recipes are coded errors."""

from __future__ import annotations

import configparser
import json
import shlex
import sys
from pathlib import Path

from tests.daemonfix import REPO, http

from .conftest import BUS, RecipeSite

UNIT = REPO / "systemd" / "anna-recipe@.service"


def _exec_start(instance: str) -> tuple[list[str], dict[str, str]]:
    """The unit's ExecStart with %i filled in (annactl: this checkout's), and its
    Environment= settings."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    argv = shlex.split(parser["Service"]["ExecStart"].replace("%i", instance))
    assert argv[0] == "/usr/bin/annactl"
    env = {}
    for line in UNIT.read_text().splitlines():
        if line.startswith("Environment="):
            key, value = line.removeprefix("Environment=").split("=", 1)
            env[key] = value
    return [sys.executable, "-m", "annactl.cli", *argv[1:]], env


TIDY = """
description = "Tidy the scratch directory"
[params]
name = "stamp"
[[steps]]
id = "stamp"
description = "Leave a stamp"
command = "echo tidied > {work}/{{name}}.txt"
risk = "LOW"
rollback = "rm -f {work}/{{name}}.txt"
"""


def test_timer_triggered_run_executes_low_steps(site: RecipeSite) -> None:
    site.recipe("tidy", TIDY.replace("{work}", str(site.work)).replace("{{name}}", "{name}"))
    argv, unit_env = _exec_start("tidy")
    proc = site.annactl(*argv[3:], env=unit_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import json

    out = json.loads(proc.stdout)
    assert out["outcome"] == "ran" and out["status"] == "succeeded" and out["risk"] == "LOW"
    assert (site.work / "stamp.txt").read_text() == "tidied\n"
    # stored and journalled like any plan, so it can be rolled back
    rc, shown = site.json("show", out["plan_id"])
    assert rc == 0 and shown["status"] == "succeeded"
    rc, _undone = site.json("rollback", out["plan_id"], "--yes")
    assert rc == 0 and not (site.work / "stamp.txt").exists()
    assert site.notified == ""  # nothing waits: nobody is disturbed


MEDIUM = """
description = "Clear old files"
[[steps]]
id = "clear"
description = "Remove the old directory"
command = "rm -r {work}/old"
risk = "LOW"
"""


def test_step_above_low_is_queued_and_notified_then_approved(site: RecipeSite) -> None:
    (site.work / "old").mkdir()
    site.recipe("clear", MEDIUM.replace("{work}", str(site.work)))
    rc, out = site.json("recipe", "run", "clear", "--trigger", "timer")
    assert rc == 0 and out["outcome"] == "queued", out
    # the recipe said LOW: the daemon's own analysis (MEDIUM) decides
    assert out["risk"] == "MEDIUM" and out["status"] == "submitted"
    assert any("MEDIUM needs a person" in r for r in out["reasons"])
    assert (site.work / "old").is_dir()  # nothing ran
    assert out["notified"] == 1
    assert f"bus={BUS}" in site.notified and "arg=Anna: a plan waits for you" in site.notified
    rc, queue = site.json("queue")
    assert [e["plan_id"] for e in queue["entries"]] == [out["plan_id"]]
    # --yes covers MEDIUM; it runs like apply ID
    rc, ran = site.json("queue", "approve", out["plan_id"], "--yes")
    assert rc == 0 and ran["status"] == "succeeded", ran
    assert not (site.work / "old").exists()
    rc, queue = site.json("queue")
    assert queue["entries"] == []


def test_dismissed_plan_leaves_the_queue_and_cannot_be_approved_there(site: RecipeSite
                                                                      ) -> None:
    (site.work / "old").mkdir()
    site.recipe("clear", MEDIUM.replace("{work}", str(site.work)))
    rc, out = site.json("recipe", "run", "clear")
    rc, dismissed = site.json("queue", "dismiss", out["plan_id"])
    assert rc == 0 and dismissed["state"] == "dismissed"
    rc, queue = site.json("queue")
    assert queue["entries"] == []
    proc = site.annactl("queue", "approve", out["plan_id"], "--yes")
    assert proc.returncode == 2 and "not waiting" in proc.stderr
    assert (site.work / "old").is_dir()


def test_parameters_are_one_shell_word(site: RecipeSite) -> None:
    site.recipe("say", f"""
description = "Write a message"
[params]
msg = "hello"
[[steps]]
id = "say"
description = "say"
command = "printf '%s' {{msg}} > {site.work}/said.txt"
""".replace("{{msg}}", "{msg}"))
    hostile = ["$(touch PWN)", "`touch PWN`", "a; touch PWN", "x' ; touch PWN; '",
               "$'\\x27'; touch PWN", "a\nb", "{msg}", "*", "~root", "$HOME"]
    for value in hostile:
        rc, out = site.json("recipe", "run", "say", "--param", f"msg={value}")
        assert rc == 0 and out["outcome"] == "ran", (value, out)
        assert (site.work / "said.txt").read_text() == value
    assert not list(Path(site.daemon.base).rglob("PWN"))
    rc, out = site.json("recipe", "run", "say", "--param", "other=1")
    assert rc == 2 and "unknown parameter" in out["message"]


def test_bad_names_and_bad_files_are_coded_errors(site: RecipeSite) -> None:
    (site.daemon.base / "evil.toml").write_text('[[steps]]\nid="x"\ncommand="touch /tmp/x"\n')
    for name in ("../evil", "..%2Fevil", "%2e%2e%2fevil", "Evil", "a%20b", ".hidden", "a%00b", "x" * 65):
        status, body = http(site.daemon.socket, "POST", f"/v1/recipes/{name}/run", {})
        assert status in (400, 404), (name, status, body)
    rc, out = site.json("recipe", "run", "../evil")
    assert rc == 2 and out["code"] == "BAD_REQUEST"
    site.recipe("broken", "description = \n")
    rc, out = site.json("recipe", "run", "broken")
    assert rc == 2 and out["code"] == "CONFIG_INVALID"
    site.recipe("typo", '[[steps]]\nid="x"\ncommand="true"\nrisk_level="LOW"\n')
    rc, out = site.json("recipe", "run", "typo")
    assert rc == 2 and "unknown key" in out["message"]
    site.recipe("brace", '[[steps]]\nid="x"\ncommand="echo ${HOME}"\n')
    rc, out = site.json("recipe", "run", "brace")
    assert rc == 2 and "names no parameter" in out["message"]
    rc, out = site.json("recipe", "run", "missing")
    assert rc == 2 and out["code"] == "BAD_REQUEST"


def test_a_banned_recipe_step_is_refused_not_queued(site: RecipeSite) -> None:
    site.recipe("wipe", '[[steps]]\nid="x"\ncommand="rm -rf /"\nrisk="LOW"\n')
    rc, out = site.json("recipe", "run", "wipe")
    assert rc == 3 and out["code"] == "PLAN_BANNED"
    rc, queue = site.json("queue")
    assert queue["entries"] == []


def _policy(site: RecipeSite, text: str) -> None:
    """The administrator's policy of this test daemon (daemonfix points ANNAD_POLICY_FILE
    into its temporary base; the file is read again on every submit and execute)."""
    (site.daemon.base / "policy.toml").write_text(text)


def test_a_recipe_step_the_policy_denies_is_refused_never_run_nor_queued(
        site: RecipeSite) -> None:
    site.recipe("tidy", TIDY.replace("{work}", str(site.work)).replace("{{name}}", "{name}"))
    # the deny names the program the step runs through a wrapper: judged on the parsed argv
    _policy(site, '[[rule]]\nid = "no-echo"\naction = "deny"\nprogram = "echo"\n')
    proc = site.annactl("recipe", "run", "tidy", "--trigger", "timer", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode != 0 and out["code"] == "POLICY_DENIED", out
    assert not (site.work / "stamp.txt").exists()
    rc, queued = site.json("queue")
    assert rc == 0 and queued["entries"] == []
    assert site.notified == ""


def test_a_low_recipe_step_the_policy_asks_about_waits_in_the_queue(site: RecipeSite) -> None:
    site.recipe("tidy", TIDY.replace("{work}", str(site.work)).replace("{{name}}", "{name}"))
    _policy(site, '[[rule]]\nid = "stamps-ask"\naction = "ask"\npath = "' + str(site.work)
            + '/**"\n')
    rc, out = site.json("recipe", "run", "tidy", "--trigger", "timer")
    assert rc == 0 and out["outcome"] == "queued", out
    assert any("stamps-ask" in reason for reason in out["reasons"]), out
    assert not (site.work / "stamp.txt").exists()
    assert "arg=" in site.notified
