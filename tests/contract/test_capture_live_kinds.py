"""A step that signals or renices another process is a live kind, however bash spells it;
one whose program is only known at run time is captured, where the kernel refuses it
(tests/daemon/test_capture_escapes.py): never a silent live effect in a captured step."""

from __future__ import annotations

import pytest

from annad.execution.livekinds import live_kind


@pytest.mark.parametrize(("command", "kind"), [
    ("kill 123", "kill"), ("sudo kill -9 123", "kill"), ("env kill 123", "kill"),
    ("bash -c 'kill 123'", "kill"), ('bash <<< "kill 123"', "kill"),
    ("command kill 1", "kill"), ("nohup killall x", "killall"), ("pkill -f x", "pkill"),
    ("renice -n 5 -p 9", "renice"),
])
def test_signalling_another_process_runs_live(command: str, kind: str) -> None:
    assert live_kind(command) == kind


@pytest.mark.parametrize("command", ["s=kill; $s 123", "echo kill > /tmp/x",
                                     "declare -n r=p; p=kill; $r 1"])
def test_a_program_named_at_run_time_is_captured(command: str) -> None:
    assert live_kind(command) is None
