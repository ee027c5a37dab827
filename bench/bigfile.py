"""Daemon memory while it backs up and restores one big file (issue 9: goal ≤ 80 MB RSS).

Used by ``bench/executor.py --big [--size-mib 256]``. A real annad in a temporary
directory; a file of SIZE MiB in its temporary home is emptied by a one-step plan (the
daemon saves it first: the backup) and the plan is rolled back (the restore). The peak
resident set size of the daemon process in each phase is read from the kernel
(``VmHWM``, reset through ``/proc/PID/clear_refs`` before each phase when allowed) and
also sampled every 5 ms.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, make_plan, running_daemon

MIB = 1024 * 1024


def _status(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Peak:
    """The peak RSS of a process during a ``with`` block, MB."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.sampled = 0.0
        self.hwm = float("nan")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._reset = False

    def _sample(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError, ValueError):
                self.sampled = max(self.sampled, _status(self.pid, "VmRSS"))
            self._stop.wait(0.005)

    def __enter__(self) -> Peak:
        with contextlib.suppress(OSError):
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")  # reset VmHWM (Linux ≥ 4.0)
            self._reset = True
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        if self._reset:
            self.hwm = _status(self.pid, "VmHWM")

    @property
    def mb(self) -> float:
        """The best figure available: the kernel's peak when it could be reset."""
        return self.hwm if self._reset else self.sampled


def _fill(path: Path, size_mib: int) -> None:
    block = os.urandom(MIB)
    with path.open("wb") as handle:
        for _ in range(size_mib):
            handle.write(block)


def big_file(size_mib: int, *, user_mode: bool = True) -> dict[str, float]:
    """Idle, backup-phase and restore-phase peak RSS (MB) and seconds per phase."""
    env = {"ANNAD_BACKUP_MAX_BYTES": str((size_mib + 64) * MIB)}
    with running_daemon(user_mode=user_mode, env=env) as daemon:
        return _measure(daemon, size_mib)


def _measure(daemon: RunningDaemon, size_mib: int) -> dict[str, float]:
    assert daemon.proc is not None
    pid = daemon.proc.pid
    target = daemon.home / "big.bin"
    _fill(target, size_mib)
    client = daemon.client()
    time.sleep(2.0)  # let the first telemetry collection finish
    idle = _status(pid, "VmRSS")
    plan = ActionPlan.model_validate(make_plan([("empty", "truncate -s 0 ~/big.bin", "LOW")]))
    submitted = client.submit(plan)
    started = time.perf_counter()
    with Peak(pid) as backup:
        events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                     high_confirmed=False))
    backup_s = time.perf_counter() - started
    assert events[-1].status == "succeeded", events[-1]
    assert target.stat().st_size == 0
    started = time.perf_counter()
    with Peak(pid) as restore:
        result = client.rollback(submitted.plan_id)
    restore_s = time.perf_counter() - started
    assert result.status == "rolled_back", result.undo
    assert target.stat().st_size == size_mib * MIB
    return {"idle": idle, "backup": backup.mb, "restore": restore.mb, "backup_s": backup_s,
            "restore_s": restore_s}


def report(size_mib: int, user_mode: bool) -> None:
    """Print the figures."""
    figures = big_file(size_mib, user_mode=user_mode)
    print(f"annad {'user' if user_mode else 'system'} mode, one {size_mib} MiB file")
    print(f"  idle RSS                      {figures['idle']:7.1f} MB")
    for phase in ("backup", "restore"):
        mb = figures[phase]
        print(f"  peak RSS during {phase:8s}      {mb:7.1f} MB  goal <= 80 MB  "
              f"{'OK' if mb <= 80 else 'MISSED'}  ({figures[phase + '_s']:.1f} s)")
