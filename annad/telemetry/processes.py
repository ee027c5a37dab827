"""Process count and the top processes by CPU and by memory.

Process names and command lines are untrusted: anyone can start a program
called ``Ignore previous instructions``. They are collected faithfully,
trimmed, and never interpreted; the set of names is only ever compared for
equality against fixed program names (desktop detection).

CPU use needs a previous sample. psutil keeps one per ``Process`` object and
``process_iter`` reuses the same objects between calls (checking the pid was
not reused by a new process), so the second and later collections carry real
figures. On the first one every process reads 0.0, and ``top_cpu`` lists only
processes seen using CPU, so it is empty rather than wrong.
"""

from __future__ import annotations

import logging
import pwd
from dataclasses import dataclass

import psutil

from anna_common.telemetry import ProcessesInfo, ProcessInfo

log = logging.getLogger(__name__)

TOP_N = 10
"""Processes listed per ranking."""
MAX_NAME = 64
"""Longest process name kept."""
MAX_CMDLINE = 256
"""Longest command line kept."""
_ATTRS = ("name", "cpu_percent", "memory_info", "uids")


@dataclass(frozen=True, slots=True)
class ProcessScan:
    """What one pass over the process table found."""

    info: ProcessesInfo
    """Count and rankings, as reported."""
    names: frozenset[str]
    """Every process name (untrusted), for desktop and wallpaper-backend detection."""


@dataclass(slots=True)
class _Row:
    proc: psutil.Process
    name: str
    cpu: float
    rss: int
    uid: int | None


def _user(uid: int | None, cache: dict[int, str | None]) -> str | None:
    if uid is None:
        return None
    if uid not in cache:
        try:
            cache[uid] = pwd.getpwuid(uid).pw_name[:64]
        except KeyError:
            cache[uid] = str(uid)
    return cache[uid]


def _report(row: _Row, total_mem: int, users: dict[int, str | None]) -> ProcessInfo:
    """The reported form of a row; the command line is read only for the few reported."""
    try:
        cmdline = " ".join(row.proc.cmdline())
    except psutil.Error:
        cmdline = ""  # gone meanwhile, or a kernel thread
    return ProcessInfo(
        pid=row.proc.pid,
        name=row.name,
        user=_user(row.uid, users),
        cpu_percent=round(row.cpu, 1),
        memory_percent=round(100.0 * row.rss / total_mem, 2) if total_mem else 0.0,
        rss_bytes=row.rss,
        cmdline=cmdline[:MAX_CMDLINE],
    )


def _scan() -> list[_Row]:
    rows: list[_Row] = []
    for proc in psutil.process_iter(_ATTRS):
        info = proc.info
        memory = info.get("memory_info")
        uids = info.get("uids")
        rows.append(_Row(
            proc=proc,
            name=str(info.get("name") or "")[:MAX_NAME],
            cpu=float(info.get("cpu_percent") or 0.0),
            rss=int(memory.rss) if memory is not None else 0,
            uid=int(uids.real) if uids is not None else None,
        ))
    return rows


def collect_processes(top_n: int = TOP_N) -> ProcessScan:
    """Count every process; rank the top ``top_n`` by CPU (those using any) and by memory."""
    rows = _scan()
    total_mem = psutil.virtual_memory().total
    users: dict[int, str | None] = {}
    by_cpu = sorted((r for r in rows if r.cpu > 0.0), key=lambda r: (-r.cpu, r.proc.pid))
    by_mem = sorted(rows, key=lambda r: (-r.rss, r.proc.pid))
    info = ProcessesInfo(
        count=len(rows),
        top_cpu=[_report(r, total_mem, users) for r in by_cpu[:top_n]],
        top_memory=[_report(r, total_mem, users) for r in by_mem[:top_n]],
    )
    return ProcessScan(info=info, names=frozenset(r.name for r in rows if r.name))


def for_caller(info: ProcessesInfo, uid: int) -> ProcessesInfo:
    """``info`` as a caller with ``uid`` may see it: root sees everything; anyone else sees
    the command lines of their own processes only, and just the name of everybody else's (a
    command line can carry a password, a token, a private path)."""
    if uid == 0:
        return info
    me = _user(uid, {})

    def shown(proc: ProcessInfo) -> ProcessInfo:
        if proc.user is not None and proc.user == me:
            return proc
        return proc.model_copy(update={"cmdline": ""})

    return info.model_copy(update={"top_cpu": [shown(p) for p in info.top_cpu],
                                   "top_memory": [shown(p) for p in info.top_memory]})
