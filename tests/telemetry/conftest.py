"""Fixtures for the telemetry tests: the shared real-pacman ones, and real stand-in processes."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.pacmanfix import (  # noqa: F401 - fixtures are found by name
    hello_package,
    local_repo,
    package_builder,
    pacman_root,
    synced_root,
)
from tests.uids import machine_wide

StartProgram = Callable[[str], subprocess.Popen[bytes]]


@pytest.fixture
def fake_program(tmp_path: Path) -> Iterator[StartProgram]:
    """``start(name)``: run a copy of /bin/sleep called ``name``, a real process with that name.

    The copies live in ``tmp_path/bin`` (usable as a PATH directory); every process
    started is killed at teardown.
    """
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    started: list[subprocess.Popen[bytes]] = []

    def start(name: str) -> subprocess.Popen[bytes]:
        program = bindir / name
        shutil.copy2("/bin/sleep", program)
        proc = subprocess.Popen([str(program), "120"], stdin=subprocess.DEVNULL)
        started.append(proc)
        return proc

    # the stand-ins are in every process table view on the machine: one test at a time
    # (another worker's or another suite's swaybg was seen as running in this test)
    with machine_wide("desktop-processes"):
        try:
            yield start
        finally:
            for proc in started:
                proc.kill()
                proc.wait(timeout=10)
