"""Issue 36.1: the model's prose is printed while the model writes it, on stdout, inert.

The fake model server streams the first pieces of a reply, then holds the rest until the
test has seen the first words on annactl's stdout: the words came before the reply ended,
by construction, whatever the machine's load. Both streaming APIs (Ollama's NDJSON, the
OpenAI SSE) are tried; ``--json`` stays one document.
"""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Any

import pytest

from tests.daemonfix import make_plan
from tests.fakellm import Reply
from tests.waiting import wait_until

from .conftest import Anna

ANSWER = ("Memory is mostly used by the page cache, which the kernel gives back when a "
          "program needs it; firefox holds the most of any program.")
FIRST = "Memory is mostly"
LATER = "firefox holds"


class Reader:
    """annactl's stdout (or stderr), read as it comes (a thread drains the pipe)."""

    def __init__(self, proc: subprocess.Popen[str], stream: str = "stdout") -> None:
        self.proc = proc
        self.stream = stream
        self.text = ""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        pipe = getattr(self.proc, self.stream)
        assert pipe is not None
        while piece := pipe.read(1):
            with self._lock:
                self.text += piece

    def now(self) -> str:
        with self._lock:
            return self.text

    def rest(self) -> str:
        self.proc.wait(timeout=90)
        self._thread.join(timeout=30)
        return self.now()


def _start(anna: Anna, *args: str, env: dict[str, str] | None = None) -> Reader:
    proc = subprocess.Popen([*anna.argv, *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**anna.env, **(env or {})})
    return Reader(proc)


def _api(anna: Anna, api: str) -> dict[str, str]:
    if api == "openai":
        return {"ANNA_LLM_PROVIDER": "openai", "ANNA_LLM_URL": anna.llm.openai_url}
    return {}


@pytest.mark.parametrize("api", ["ollama", "openai"])
def test_first_words_appear_before_the_reply_ends(anna: Anna, api: str) -> None:
    resume = threading.Event()
    reply = json.dumps({"answer": ANSWER, "citations": []})
    anna.llm.push(Reply(reply, pause_after=8, resume=resume))  # 8 pieces: 32 characters
    out = _start(anna, "what uses my memory?", "--no-templates", env=_api(anna, api))
    try:
        wait_until(lambda: FIRST in out.now(), "the first words on stdout", saw=out.now)
        assert out.proc.poll() is None  # still planning: the model has not finished
        assert LATER not in out.now()
    finally:
        resume.set()
    text = out.rest()
    assert out.proc.returncode == 0, out.proc.stderr.read() if out.proc.stderr else ""
    assert text.count(ANSWER) == 1, text  # printed as it came, never again after
    streamed = [b for b in anna.llm.chat_bodies() if b.get("stream")]
    assert len(streamed) == 1


def test_plan_prose_streams_and_the_table_follows_once(anna: Anna) -> None:
    target = anna.work / "f.txt"
    target.write_text("original\n")
    plan = make_plan([("write", f"echo changed > {target}", "LOW")], goal="Change the file")
    plan["analysis"] = "The file holds one line; one echo replaces it with the new text."
    resume = threading.Event()
    anna.llm.push(Reply(json.dumps(plan), pause_after=10, resume=resume))
    out = _start(anna, "ask", "--dry-run", "--no-templates", "change the file")
    err = Reader(out.proc, "stderr")
    try:
        # a plan's prose streams with the chrome (stderr: a read-only plan's answer alone is
        # stdout, issue 36.5); the plan view on stdout then carries it, once
        wait_until(lambda: "The file holds" in err.now(), "the analysis on stderr",
                   saw=err.now)
        assert out.proc.poll() is None and "echo changed" not in out.now()  # no table yet
    finally:
        resume.set()
    text = out.rest()
    assert out.proc.returncode == 0
    assert err.rest().count(plan["analysis"]) == 1
    assert text.count(plan["analysis"]) == 1, text
    assert text.index(plan["analysis"]) < text.index("echo changed")  # table after prose
    assert target.read_text() == "original\n"


def test_json_stays_one_document(anna: Anna) -> None:
    anna.llm.push(Reply(json.dumps({"answer": ANSWER, "citations": []}), chunk_delay=0.001))
    code, doc = anna.json("what uses my memory?", "--no-templates")
    assert code == 0 and doc["status"] == "answered"
    proc_text = json.dumps(doc)
    assert ANSWER in proc_text


def test_streamed_prose_is_inert(anna: Anna) -> None:
    hostile: dict[str, Any] = {"answer": "Clear \x1b[2J\x1b]0;owned\x07 [bold red]now[/] "
                                         "\x9b31m done \u202e", "citations": []}
    anna.llm.push(Reply(json.dumps(hostile)))
    proc = anna.run("what uses my memory?", "--no-templates")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x9b" not in proc.stdout
    assert "\u202e" not in proc.stdout and "\x07" not in proc.stdout
    assert "[bold red]now[/]" in proc.stdout  # markup shown as text, not obeyed
    # printed once as it streamed; the line marking the uncited claim quotes it again
    # (issue 39.7), and that quote is inert too
    body = "\n".join(line for line in proc.stdout.splitlines() if "unverified" not in line)
    assert body.count("done") == 1, proc.stdout


def test_the_repl_streams_too(anna: Anna) -> None:
    from .ptyrun import PtyProcess

    resume = threading.Event()
    reply = json.dumps({"answer": ANSWER, "citations": []})
    anna.llm.push(Reply(reply, pause_after=8, resume=resume))
    term = PtyProcess([*anna.argv, "repl", "--no-templates"],
                      {**anna.env, "PROMPT_TOOLKIT_NO_CPR": "1"})
    term.expect(r"anna>")
    term.send("what uses my memory?\r")
    try:
        term.expect(FIRST)
        assert LATER not in term.text  # the rest is still held by the server
    finally:
        resume.set()
    term.expect(r"the most of any program\.[\s\S]*anna>")
    assert term.text.count(LATER) == 1  # the answer is not printed again
    term.send("\x04")
    assert term.wait(timeout=20) == 0
