"""The preview helper is kept from preview to preview (issue 38 item 2), like the check helper.

One ``python -I -S overlay_helper.py`` serves the previews that follow each other (a forked
child per preview builds its namespaces and overlays): the second preview is served by the
same process. A preview that runs past its timeout is stopped with everything it started —
a step that left its process group included — and the next preview runs as before.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from pathlib import Path

import pytest

from annad.confine.runner import RunResult, run_overlay
from annad.preview.overlay import tree_plan
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces as root")
NOBODY = 65534


def _spec(command: str) -> str:
    step = {"uid": NOBODY, "gid": NOBODY, "groups": "", "env": {"PATH": "/usr/bin:/bin"},
            "cwd": "/", "command": command, "validate": []}
    return json.dumps({"steps": [step], "plan": tree_plan(userns=False)[0], "userns": False,
                       "limits": {"file": 4096, "total": 65536, "entries": 10,
                                  "tmpfs": 1 << 20, "output": 4096}})


def _helpers() -> set[int]:
    """This process's preview helpers."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[stat.rfind(")") + 2:].split()[1]) == os.getpid() and \
                any(a.endswith(b"overlay_helper.py") for a in argv):
            found.add(int(entry.name))
    return found


def _sleeping(seconds: str) -> list[int]:
    """Processes that are ``sleep SECONDS`` (not the shell that started them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == f"sleep\0{seconds}\0".encode():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _output(report: bytes) -> str:
    return str(json.loads(report.splitlines()[0])["output"])


def test_previews_that_follow_each_other_share_one_helper() -> None:
    first, report = run_overlay(_spec("echo one"), timeout=60, max_output=4096)
    assert first.error is None and _output(report) == "one\n", first
    helpers = _helpers()
    assert len(helpers) == 1, helpers
    second, report = run_overlay(_spec("echo two"), timeout=60, max_output=4096)
    assert second.error is None and _output(report) == "two\n", second
    assert _helpers() == helpers


def test_a_preview_past_its_timeout_is_stopped_with_all_it_started() -> None:
    marker = f"{600 + secrets.randbelow(1000)}.{secrets.randbelow(1000)}"
    done: list[RunResult] = []

    def preview() -> None:
        # one process in the step's group, one in a session of its own (an orphan of the
        # helper's child when it is killed)
        done.append(run_overlay(_spec(f"setsid sleep {marker} & sleep {marker}"),
                                timeout=10, max_output=4096)[0])

    thread = threading.Thread(target=preview)
    thread.start()
    try:
        wait_until(lambda: len(_sleeping(marker)) == 2, "both sleeps running",
                   saw=lambda: _sleeping(marker))
    finally:
        thread.join(timeout=60)
    [result] = done
    assert result.timed_out and result.error is None and not result.refused, result
    wait_until(lambda: not _sleeping(marker), "the preview's processes gone",
               saw=lambda: _sleeping(marker))
    after, report = run_overlay(_spec("echo after"), timeout=60, max_output=4096)
    assert after.error is None and _output(report) == "after\n", after
