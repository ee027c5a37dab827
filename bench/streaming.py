"""When the first words of an answer reach the person, against when the reply is complete.

Issue 36.1. A real per-user ``annad`` in a temporary directory, the fake model server
(tests/fakellm.py) writing a ~300-character answer at a steady pace (``--delay`` seconds per
4-character piece, like a small model on a CPU), and the real ``annactl`` in a pseudo-terminal
(so it believes a person is watching). Every byte annactl writes is stamped; the run prints
a recording's text with the time of each line, then the figures: time to the first word of
the answer, time the model's reply ended (the server's last piece), time annactl exited.

    .venv/bin/python bench/streaming.py [--api ollama|openai] [--delay 0.02]

Measured 2026-12-07 (2 shared cores, load 12-14), Ollama API, 0.03 s a piece: main 33b370e
printed the whole answer at 6.86 s, with the telemetry table, 0.09 s before it exited; with
streaming the first words came at 3.26 s (0.14 s after the model call began), the last at
5.94 s, and annactl exited at 7.19 s.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.daemonfix import running_daemon  # noqa: E402
from tests.fakellm import FakeLLM, Reply  # noqa: E402

ANSWER = ("Most of your memory, 5.1 of 7.6 GiB, is page cache the kernel gives back as soon "
          "as a program asks for it; of the programs, firefox holds the most (1.2 GiB over "
          "nine processes), then code (640 MiB). Nothing is swapping, so there is no pressure "
          "now; closing firefox tabs frees the most if you need room.")


def record(api: str, delay: float) -> None:
    """One run; prints the stamped recording and the figures."""
    with running_daemon(user_mode=True) as daemon, FakeLLM(models=("m",)) as llm:
        llm.push(Reply(json.dumps({"answer": ANSWER, "citations": []}), chunk_delay=delay))
        env = {**os.environ, "ANNA_SOCKET": str(daemon.socket), "ANNA_AUTOSTART": "false",
               "ANNA_LLM_MODEL": "m", "PYTHONPATH": str(REPO), "COLUMNS": "100",
               "ANNA_LLM_URL": llm.openai_url if api == "openai" else llm.ollama_url,
               "ANNA_LLM_PROVIDER": api}
        main, child = pty.openpty()
        began = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "annactl.cli", "what uses my memory?",
                                 "--no-templates"], stdin=child, stdout=child, stderr=child,
                                env=env, close_fds=True)
        os.close(child)
        stamped: list[tuple[float, str]] = []
        while True:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    data = os.read(main, 4096)
                except OSError:
                    break
                if not data:
                    break
                stamped.append((time.monotonic() - began, data.decode("utf-8", "replace")))
            elif proc.poll() is not None:
                break
        proc.wait()
        ended = time.monotonic() - began
    _report(stamped, ended, api, delay)


def _report(stamped: list[tuple[float, str]], ended: float, api: str, delay: float) -> None:
    import re

    plain = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\r")
    first = next((t for t, text in stamped if "Most of" in plain.sub("", text)), None)
    last = next((t for t, text in reversed(stamped) if "need room" in plain.sub("", text)),
                None)
    print(f"# {api}, {delay:g} s per 4-character piece")
    for at, text in stamped:
        for line in plain.sub("", text).splitlines():
            if line.strip():
                print(f"[{at:6.2f} s] {line[:110]}")
    print(f"first word of the answer: {first:.2f} s" if first is not None else
          "first word: never")
    print(f"last word of the answer:  {last:.2f} s" if last is not None else "last: never")
    print(f"annactl exited:           {ended:.2f} s")


def main() -> None:
    """Parse the options and record."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--api", choices=("ollama", "openai"), default="ollama")
    parser.add_argument("--delay", type=float, default=0.02)
    args = parser.parse_args()
    record(args.api, args.delay)


if __name__ == "__main__":
    main()
