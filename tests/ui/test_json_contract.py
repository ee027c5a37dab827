"""``--json`` is a contract: every command prints exactly one JSON document on stdout,
success or failure, with ``code`` and, where a plan exists, ``plan_id``; and the words a
person reads never name an internal plan state."""

from __future__ import annotations

import json

import pytest

from tests.daemonfix import make_plan

from .conftest import Anna


def _one_document(anna: Anna, *args: str, **kwargs: object) -> tuple[int, dict[str, object]]:
    proc = anna.run(*args, "--json", **kwargs)  # type: ignore[arg-type]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, (args, proc.stdout, proc.stderr)
    doc = json.loads(lines[0])
    assert isinstance(doc, dict) and isinstance(doc.get("code"), str), doc
    return proc.returncode, doc


@pytest.mark.parametrize(("args", "code", "status"), [
    (("show", "zzzz"), "PLAN_NOT_FOUND", 2),
    (("rollback", "zzzz"), "PLAN_NOT_FOUND", 2),
    (("rollback", "zzzz", "--yes"), "PLAN_NOT_FOUND", 2),
    (("apply", "zzzz"), "PLAN_NOT_FOUND", 2),
    (("apply", "zzzz", "--yes"), "PLAN_NOT_FOUND", 2),
    (("confirm", "zzzz"), "PLAN_NOT_FOUND", 2),
    (("queue", "dismiss", "zzzz"), "PLAN_NOT_FOUND", 2),
    (("stauts",), "UNKNOWN_COMMAND", 12),
    (("status", "--bogus"), "USAGE_ERROR", 2),
    (("history", "--limit", "-1"), "USAGE_ERROR", 2),
])
def test_failures_print_one_document(anna: Anna, args: tuple[str, ...], code: str,
                                     status: int) -> None:
    exit_status, doc = _one_document(anna, *args)
    assert doc["code"] == code and doc["status"] == "error", doc
    assert exit_status == status, doc


def test_every_command_prints_one_document_with_a_code(anna: Anna) -> None:
    """The walk: each command with --json, succeeding and failing, offline (no model)."""
    good = anna.plan_file(make_plan([("look", "ls /tmp", "INFO")]), "good.json")
    banned = anna.plan_file(make_plan([("wipe", "rm -rf /", "LOW")]), "banned.json")
    broken = anna.work / "broken.json"
    broken.write_text("{not json")
    walk: list[tuple[tuple[str, ...], str, int]] = [
        (("--version",), "OK", 0),
        (("assess", "ls"), "OK", 0), (("assess",), "USAGE_ERROR", 2),
        (("explain", "ls -la", "--no-model"), "OK", 0),
        (("explain", "", "--no-model"), "USAGE_ERROR", 2),
        (("validate", str(good)), "OK", 0), (("validate", str(broken)), "PLAN_INVALID", 3),
        (("validate", str(banned)), "PLAN_BANNED", 3),
        (("validate", "/nonexistent"), "USAGE_ERROR", 2),
        (("ask", "how is my system?"), "OK", 0),
        (("ask", "--dry-run", "how is my system?"), "OK", 0),
        (("--dry-run", "how is my system?"), "OK", 0),  # ask's flags before the words
        (("--yes", "stauts"), "UNKNOWN_COMMAND", 12),
        (("ask", "--no-templates", "frobnicate the thing"), "LLM_UNAVAILABLE", 8),
        (("plan", "how is my system?"), "OK", 0),
        (("plan", "--telemetry-file", "/nonexistent", "x"), "USAGE_ERROR", 2),
        (("doctor",), "LLM_UNAVAILABLE", 8),
        (("memory", "set", "editor", "nvim"), "OK", 0),
        (("memory", "set", "bogus", "x"), "USAGE_ERROR", 2),
        (("memory", "forget", "editor"), "OK", 0),
        (("recipe", "run", "nonexistent"), "BAD_REQUEST", 2),
        (("audit", "verify"), "OK", 0),
        (("fleet", "apply", "zzzz", "--inventory", "/nonexistent"), "PLAN_NOT_FOUND", 2),
        (("queue", "show", "zzzz"), "PLAN_NOT_FOUND", 2),
        (("policy", "check", "rm -rf /"), "OK", 0),
        (("gc", "zzzz", "--yes"), "PLAN_NOT_FOUND", 2),
        (("history", "--before", "zzzz"), "PLAN_NOT_FOUND", 2),
        (("repl",), "USAGE_ERROR", 2), (("tui",), "USAGE_ERROR", 2),
        (("export", "zzzz"), "USAGE_ERROR", 2), (("show",), "USAGE_ERROR", 2),
    ]
    nowhere = {"ANNA_LLM_URL": "http://127.0.0.1:9"}
    for args, code, status in walk:
        exit_status, doc = _one_document(anna, *args, extra_env=nowhere)
        assert (doc["code"], exit_status) == (code, status), (args, doc)
    assert anna.llm.chat_bodies() == []


def test_stauts_is_a_mistyped_command_not_a_request(anna: Anna) -> None:
    _, doc = _one_document(anna, "stauts")
    assert "did you mean status?" in str(doc["message"])
    assert anna.llm.chat_bodies() == []


@pytest.mark.parametrize("args", [("status",), ("history",), ("queue",), ("policy", "show"),
                                  ("memory", "show"), ("gc", "--dry-run")])
def test_successes_carry_code_ok(anna: Anna, args: tuple[str, ...]) -> None:
    exit_status, doc = _one_document(anna, *args)
    assert exit_status == 0 and doc["code"] == "OK", doc


def test_plan_documents_name_their_plan(anna: Anna) -> None:
    target = anna.work / "f.txt"
    target.write_text("original\n")
    plan = anna.plan_file(make_plan([("write", f"echo changed > {target}", "LOW")],
                                    goal="Change the file"))
    # declined (no terminal, no --yes): the plan is named and not left "submitted"
    exit_status, declined = _one_document(anna, "apply", str(plan))
    assert exit_status == 4 and declined["code"] == "DECLINED" and declined["plan_id"]
    _, shown = _one_document(anna, "show", str(declined["plan_id"]))
    assert shown["status"] == "dry_run" and shown["code"] == "OK"
    exit_status, applied = _one_document(anna, "apply", str(declined["plan_id"]), "--yes")
    assert exit_status == 0 and applied["code"] == "OK" and applied["status"] == "succeeded"
    plan_id = str(applied["plan_id"])
    # rollback without --yes and without a terminal: declined, with its plan_id
    exit_status, doc = _one_document(anna, "rollback", plan_id)
    assert exit_status == 4 and doc["code"] == "DECLINED" and doc["plan_id"] == plan_id
    assert target.read_text() == "changed\n"
    # applying it again: a coded refusal in words, not "is succeeded; this needs …"
    proc = anna.run("apply", plan_id, "--yes")
    assert proc.returncode == 2, proc.stderr
    assert "already ran and succeeded, so it cannot be run" in proc.stderr
    assert "this needs" not in proc.stderr and "dry_run" not in proc.stderr
    exit_status, again = _one_document(anna, "apply", plan_id, "--yes")
    assert again["code"] == "PLAN_STATE" and again["plan_id"] == plan_id


def test_scope_requires_root_carries_the_plan_id(anna: Anna) -> None:
    # system scope (a system unit); harmless even if it ran: no such unit exists
    reply = json.dumps(make_plan([("restart", "systemctl restart anna-no-such-unit.service",
                                   "MEDIUM")], goal="Restart a unit"))
    anna.llm.push(reply, reply, reply)
    exit_status, doc = _one_document(anna, "ask", "--no-templates", "--yes", "restart it")
    assert doc["code"] == "SCOPE_REQUIRES_ROOT", doc
    assert isinstance(doc["plan_id"], str) and doc["plan_id"]
    assert exit_status == 9


def test_status_reports_an_invalid_setting(anna: Anna) -> None:
    proc = anna.run("status", extra_env={"ANNA_LLM_TIMEOUT": "abc"})
    assert proc.returncode == 0, proc.stderr
    assert "settings: invalid configuration: llm_timeout" in proc.stdout
    _, doc = _one_document(anna, "status", extra_env={"ANNA_LLM_TIMEOUT": "abc"})
    assert "llm_timeout" in str(doc["settings_problem"])
    _, fine = _one_document(anna, "status")
    assert fine["settings_problem"] is None
