"""The daemon caps glibc's malloc arenas (annad.main.limit_malloc_arenas, issue 22: idle memory).

A real interpreter starts eight threads that all allocate while the others live, then asks
glibc (``malloc_info``) how many arenas it made: one per thread without the cap, at most
:data:`annad.main.MALLOC_ARENAS` with it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from annad.main import MALLOC_ARENAS

REPO = Path(__file__).resolve().parent.parent.parent
PROBE = """
import ctypes, sys, threading
from annad.main import limit_malloc_arenas
if sys.argv[1] == "capped" and not limit_malloc_arenas():
    sys.exit("mallopt refused the cap")
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.fopen.restype = ctypes.c_void_p
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
started, done = threading.Barrier(9), threading.Event()
def work():
    block = libc.malloc(4096)
    started.wait()
    done.wait()
    libc.free(block)
threads = [threading.Thread(target=work) for _ in range(8)]
for thread in threads:
    thread.start()
started.wait()
out = libc.fopen(sys.argv[2].encode(), b"w")
libc.malloc_info(0, out)
libc.fclose(out)
done.set()
for thread in threads:
    thread.join()
"""


def _arenas(mode: str, tmp_path: Path) -> int:
    report = tmp_path / f"{mode}.xml"
    subprocess.run([sys.executable, "-c", PROBE, mode, str(report)], cwd=REPO, check=True,
                   env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    return report.read_text().count("<heap nr=")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_info")
def test_the_daemon_uses_at_most_two_malloc_arenas(tmp_path: Path) -> None:
    uncapped = _arenas("default", tmp_path)
    assert uncapped > MALLOC_ARENAS, "the probe must see the threads' own arenas"
    assert _arenas("capped", tmp_path) <= MALLOC_ARENAS
