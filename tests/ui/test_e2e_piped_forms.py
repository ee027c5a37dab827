"""Issue 23: text piped into every form of annactl, through the real annactl and a real
daemon (real subprocesses, real pipes).

* ``… | annactl "QUESTION"`` is ``ask``: the pipe is the question's context, data for the
  model, with its terminal codes removed before the model or the terminal sees any of it;
* ``… | annactl`` and ``… | annactl ask`` with no question: a usage error saying how to ask
  (piped text is never taken as the request: it is untrusted);
* ``… | annactl repl`` and ``… | annactl tui``: the REPL and the approval screen read keys at
  a terminal, so they refuse at once, with a hint, whether or not the writer ever closes its
  end (never a hang, never a traceback, never a line of the pipe run as typed).
"""

from __future__ import annotations

import json
import subprocess

from annactl.planning.prompt import system_message
from tests.waiting import WAIT_S

from .conftest import Anna

HOSTILE = ("Nov 27 10:00:00 box app[7]: \x1b]0;owned\x07\x1b[2J[bold red]LOOK[/] "
           "\x1b[31mred\x1b[0m\n")
JOURNAL = HOSTILE + "".join(f"Nov 27 10:00:{i:02d} box kernel: usb 1-2: error -71\n"
                            for i in range(1, 9))
ANSWER = '{"answer": "USB 1-2 fails to enumerate.", "citations": []}'
EXAMPLE = 'journalctl -b -p err | annactl "what is wrong?"'


def test_the_bare_form_reads_the_pipe_like_ask(anna: Anna) -> None:
    anna.llm.push(ANSWER)
    proc = anna.run("what is wrong?", stdin=JOURNAL)
    assert proc.returncode == 0, proc.stderr
    assert "USB 1-2 fails to enumerate." in proc.stdout
    assert "note: read 9 lines" in proc.stderr and "the model read it as data" in proc.stderr
    body = anna.llm.chat_bodies()[0]
    assert body["messages"][0]["content"] == system_message("answer")  # never in the system
    user = body["messages"][1]["content"]
    block = json.loads(user.split('<piped trust="untrusted">', 1)[1].split("</piped>", 1)[0])
    assert "error -71" in block["text"] and "[bold red]LOOK[/]" in block["text"]
    assert "\x1b" not in json.dumps(body) and "\x07" not in json.dumps(body)
    assert "\x1b" not in proc.stdout + proc.stderr
    # --json typed first is the same request, and one document
    anna.llm.push(ANSWER)
    proc = anna.run("--json", "what is wrong?", stdin=JOURNAL)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "answered" and doc["piped"]["lines"] == 9


def test_a_pipe_without_a_question_says_how_to_ask(anna: Anna) -> None:
    for argv in ([], ["ask"], ["--json"], ["ask", "--json"]):
        proc = anna.run(*argv, stdin=JOURNAL)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert proc.stderr.startswith("annactl: USAGE_ERROR: text was piped in, but no "
                                      "question"), (argv, proc.stderr)
        assert f"hint: say what you want to know: {EXAMPLE}" in proc.stderr
        if "--json" in argv:
            doc = json.loads(proc.stdout)  # exactly one document
            assert doc["code"] == "USAGE_ERROR" and EXAMPLE in doc["hint"]
        else:
            assert proc.stdout == "", argv
        assert "LOOK" not in proc.stdout + proc.stderr  # the pipe was not read, nor shown
    assert anna.llm.chat_bodies() == []


def _refusal(anna: Anna, argv: list[str], *, close: bool) -> tuple[int, str, str]:
    """Run with a real pipe on stdin (its write end left open unless ``close``); annactl
    must end on its own while the writer still holds the pipe open."""
    proc = subprocess.Popen([*anna.argv, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=anna.env, text=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write("ok\n/quit\n")  # words a REPL would run, were it reading the pipe
        proc.stdin.flush()
        if close:
            proc.stdin.close()
        code = proc.wait(timeout=WAIT_S)  # a hang fails here; the writer is still there
        return code, proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not proc.stdin.closed:
            proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()


REFUSALS = [
    (["repl"], "the REPL reads what you type at a terminal"),
    (["repl", "--no-templates"], "the REPL reads what you type at a terminal"),
    (["tui"], "the approval screen reads your keys at a terminal"),
    (["tui", "what is wrong?"], "the approval screen reads your keys at a terminal"),
    ([], "text was piped in, but no question was asked about it"),
]
"""Forms that cannot use a pipe, and what each says."""


def test_repl_and_tui_refuse_a_pipe_at_once(anna: Anna) -> None:
    for argv, what in REFUSALS:
        for close in (False, True):
            code, out, err = _refusal(anna, argv, close=close)
            assert code == 2, (argv, close, err)
            assert err.startswith(f"annactl: USAGE_ERROR: {what}"), (argv, err)
            assert EXAMPLE in err and "Traceback" not in err, (argv, err)
            assert out == "" and "anna>" not in err, (argv, out, err)  # no prompt, no line run
    assert anna.llm.chat_bodies() == []


def test_without_a_terminal_or_a_pipe_the_hint_names_the_way_without(anna: Anna) -> None:
    for argv, hint in ((["repl"], 'run annactl repl in a terminal, or annactl "REQUEST" '
                                  "without one"),
                       (["tui", "install htop"], "use annactl ask or annactl apply without a "
                                                 "terminal")):
        proc = anna.run(*argv)  # stdin is /dev/null
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("annactl: USAGE_ERROR: ")
        assert "stdin is not a terminal" in proc.stderr and f"hint: {hint}" in proc.stderr
        assert proc.stdout == ""


NOWHERE = {"ANNA_LLM_URL": "http://127.0.0.1:9"}
"""No model answers here."""
SECRET_LINE = "Nov 27 10:00:30 box app[7]: login with password=hunter2secret failed\n"


def test_offline_anna_counts_the_piped_log_lines_and_says_it_is_a_count(anna: Anna) -> None:
    proc = anna.run("what is wrong?", stdin=JOURNAL + SECRET_LINE, extra_env=NOWHERE)
    assert proc.returncode == 8, proc.stderr  # nothing answered the question
    assert proc.stderr.startswith("annactl: LLM_UNAVAILABLE")
    words = " ".join(proc.stdout.split())
    assert "No model read the piped text; Anna counted it (a count, not a diagnosis): " \
        "10 of 10 lines are log lines, from 2 programs, 3 kinds of message" in words
    assert "8× kernel usb 1-2: error -71" in words
    assert "[bold red]LOOK[/]" in words and "password=***" in words  # inert, masked
    assert "hunter2secret" not in proc.stdout + proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr
    # --json: one document, the count in the error's detail
    code, doc = anna.json("ask", "what is wrong?", stdin=JOURNAL + SECRET_LINE,
                          extra_env=NOWHERE)
    assert code == 8 and doc["code"] == "LLM_UNAVAILABLE"
    counted = doc["detail"]["piped"]["tally"]
    assert (counted["log_lines"], counted["programs"], counted["kinds"]) == (10, 2, 3)
    assert counted["top"][0] == {"count": 8, "program": "kernel",
                                 "example": "usb 1-2: error -71"}
    assert "hunter2secret" not in json.dumps(doc)
    # a template answered instead: the count follows its note, and is in --json's piped
    proc = anna.run("how is my system?", stdin=JOURNAL, extra_env=NOWHERE)
    assert proc.returncode == 0, proc.stderr
    assert "Anna counted it (a count, not a diagnosis)" in " ".join(proc.stdout.split())
    code, doc = anna.json("how is my system?", stdin=JOURNAL, extra_env=NOWHERE)
    assert code == 0 and doc["template"] and doc["piped"]["tally"]["log_lines"] == 9
    # text that is not a log: no count, only the error
    proc = anna.run("what is wrong?", stdin="some words\nmore words\n", extra_env=NOWHERE)
    assert proc.returncode == 8 and proc.stdout == ""
    assert anna.llm.chat_bodies() == []


def test_with_a_model_there_is_no_count(anna: Anna) -> None:
    anna.llm.push(ANSWER)
    proc = anna.run("what is wrong?", stdin=JOURNAL)
    assert proc.returncode == 0, proc.stderr
    assert "Anna counted" not in proc.stdout and "USB 1-2 fails" in proc.stdout
