"""annad's entry point: settings, logging, the socket, uvicorn, systemd notification.

``annad [--socket PATH] [--state-dir DIR] [--pacman-dbpath DIR] [--user-mode]
[--idle-exit SECONDS]``. As root it is the system daemon; otherwise (or with
``--user-mode``) a per-user daemon that runs user-scope steps only and exits
after ``--idle-exit`` seconds without requests. Logs go to stderr (journald).
``READY=1`` is sent once the socket serves; SIGTERM stops it cleanly: a running
apply or rollback may finish first, within ``stop_grace_s``, while its event stream
and reads keep being served; only then does uvicorn close the connections.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError
from anna_common.protocol.models import DaemonMode

if TYPE_CHECKING:
    import socket

    import uvicorn

    from annad.api.app import Activity
    from annad.config import DaemonSettings
    from annad.policy_load import PolicyStore
    from annad.service import PlanService

log = logging.getLogger("annad")

EXIT_DAMAGED = 65
"""Exit status when the state (the journal) is damaged: restarting cannot help, so the unit
lists it in ``RestartPreventExitStatus=`` (65 is sysexits' EX_DATAERR)."""
EXIT_CONFIG = 2
"""Exit status for settings that cannot be used (also not restarted by the unit)."""
CLOSE_GRACE_S = 5
"""After the running plan has ended: how long requests still in flight may take to answer
before uvicorn cancels them (the plan's own grace is ``stop_grace_s``, spent before)."""
SWITCH_INTERVAL_S = 0.0005
"""How long a thread may hold the GIL while another waits (Python's default: 5 ms). A plan's
thread waits on its step (the confinement helper's answers) and must get the GIL back at once
when it wakes, while the event loop thread streams events: at 5 ms each of the run's three
wake-ups could wait that long. Measured with ``bench/executor.py --plans 4``, runs
interleaved, a load of 16–18 on 2 cores: 62 and 72 ms per INFO step at 5 ms, 54 and 64 ms at
0.5 ms; CPU per step 14–15 ms either way."""
MALLOC_ARENAS = 2
"""glibc malloc arenas the daemon may use (mallopt M_ARENA_MAX; glibc's default is 8 per
core). Each worker thread that allocates while another holds an arena gets an arena of its
own, and memory freed into one is not reused by the others: with at most two, the idle
daemon holds ~0.6 MB less after work (bench/daemon_memory.py, issue 22). Allocation is
serialised by the GIL for Python objects anyway; the C parts (pydantic-core, SQLite) share
two arenas."""
_M_ARENA_MAX = -8
"""``M_ARENA_MAX`` in glibc's <malloc.h>."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (anything not given falls back to env, TOML, defaults)."""
    parser = argparse.ArgumentParser(prog="annad", description="The Anna daemon.")
    parser.add_argument("--socket", type=Path, help="Unix socket to listen on")
    parser.add_argument("--state-dir", type=Path, help="journal and backups directory")
    parser.add_argument("--pacman-dbpath", type=Path, help="pacman database for telemetry")
    parser.add_argument("--user-mode", action="store_true", default=None,
                        help="per-user daemon: user-scope steps only")
    parser.add_argument("--idle-exit", type=float, metavar="SECONDS",
                        help="user mode: exit after this long without requests (0: never)")
    parser.add_argument("--check-journal", type=Path, metavar="FILE",
                        help="verify a journal file (a copy moved aside) and exit: 0 when its "
                             f"hash chain holds, {EXIT_DAMAGED} when it does not")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the daemon until SIGTERM/SIGINT (or idle exit); return the exit status."""
    args = parse_args(argv)
    if args.check_journal is not None:
        return check_journal(args.check_journal)
    limit_malloc_arenas()
    from annad.config import load_settings
    from annad.journal.damage import JournalDamaged

    try:
        settings = load_settings(socket=args.socket, state_dir=args.state_dir,
                                 pacman_dbpath=args.pacman_dbpath, user_mode=args.user_mode,
                                 idle_exit_s=args.idle_exit)
    except AnnaError as exc:
        print(f"annad: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
        return EXIT_CONFIG
    from annad import logs

    logs.setup(settings.log_level)
    try:
        return serve(settings)
    except JournalDamaged as exc:
        # one line, what is wrong and what to do; never a traceback, never a restart loop
        log.critical("%s; %s", exc.message, exc.hint)
        return EXIT_DAMAGED
    except AnnaError as exc:
        log.error("%s%s", exc.message, f" ({exc.hint})" if exc.hint else "")
        return 1


def limit_malloc_arenas() -> bool:
    """Cap glibc's malloc arenas at :data:`MALLOC_ARENAS`, before any thread starts (what
    ``MALLOC_ARENA_MAX`` does, here for the per-user daemon the client starts as well as the
    unit's). False where the C library has no such setting (not glibc): nothing changes."""
    import ctypes  # the confinement's Landlock binding imports it anyway

    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    return mallopt is not None and mallopt(_M_ARENA_MAX, MALLOC_ARENAS) == 1


def check_journal(path: Path) -> int:
    """``annad --check-journal FILE``: one line saying whether the file's chain holds."""
    from annad.journal.audit import verify

    if not path.is_file():
        print(f"annad: {path} is not a file", file=sys.stderr)
        return EXIT_CONFIG
    report = verify(path)
    print(f"{path}: {report.message}", file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else EXIT_DAMAGED


def serve(settings: DaemonSettings) -> int:
    """Bind, build the service, and serve until told to stop."""
    import uvicorn

    from annad.api import listen
    from annad.api.app import Activity, create_app
    from annad.confine import cgroups, loopback
    from annad.confine.spec import protect
    from annad.peer import PeerH11Protocol, group_id
    from annad.policy_load import PolicyStore

    sys.setswitchinterval(SWITCH_INTERVAL_S)
    # a malformed policy is a start-up error naming the file and line, before anything binds
    policy = PolicyStore(settings.policy_file, user_files=settings.user_policy)
    admin = policy.admin()
    os.umask(0o077)  # journal, backups and lock are the daemon's alone
    system = settings.mode is DaemonMode.SYSTEM
    socket_path = settings.socket_path
    state = settings.state_path
    state.mkdir(parents=True, exist_ok=True, mode=0o700)
    state.chmod(0o700)  # backups may hold copies of secret files
    # no confined command (check, INFO step, validator) sees the journal, the backups or the
    # socket: they hold every member's plans and output
    protect(state, socket_path.parent)
    # where each confined run's cgroup goes, before anything runs (cgroup v2: the daemon moves
    # itself into a child of its cgroup, which it can only do while it is alone there)
    why = cgroups.prepare()
    if why is not None:
        log.warning("confined runs get no cgroup of their own, so capless-root reads are "
                    "refused: %s", why)
    if os.geteuid() == 0:  # the wall of captured steps, built once now (logged if it fails)
        loopback.check()
    gid = group_id(settings.group) if system else None
    dir_fd = listen.prepare_dir(socket_path.parent, mode=0o750 if system else 0o700, gid=gid)
    lock_fd = listen.acquire_lock(socket_path, dir_fd)
    sock = listen.bind(socket_path, mode=settings.socket_mode, dir_fd=dir_fd)
    ino = os.stat(socket_path.name, dir_fd=dir_fd).st_ino
    try:
        service = assemble(settings, policy)
        # crash recovery and retention read the journal's plans: a damaged page found there
        # is JournalDamaged, one line and EXIT_DAMAGED (main), before anything serves
        service.start()
    except BaseException:  # a damaged journal: leave no socket behind that nobody serves
        sock.close()
        listen.remove_socket(socket_path, ino, dir_fd)
        os.close(lock_fd)
        os.close(dir_fd)
        raise
    activity = Activity()
    config = uvicorn.Config(create_app(service, activity, started=True), http=PeerH11Protocol,
                            ws="none",
                            lifespan="on", log_config=None, access_log=False, loop="asyncio",
                            timeout_graceful_shutdown=CLOSE_GRACE_S)
    server = _draining_server(config, service)
    log.info("annad %s mode on %s, state in %s", settings.mode, socket_path, state)
    log.info("policy: %d rules from %s", len(admin.rules),
             ", ".join(admin.sources) or f"no file at {settings.policy_file}")
    # uvicorn re-raises a captured SIGTERM/SIGINT after its graceful shutdown, through the
    # handler that was installed before it: make that a no-op so cleanup below still runs
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    try:
        asyncio.run(_serve(server, sock, settings, service, activity))
    finally:
        listen.remove_socket(socket_path, ino, dir_fd)
        os.close(lock_fd)
        os.close(dir_fd)
    return 0


def assemble(settings: DaemonSettings, policy: PolicyStore) -> PlanService:
    """The daemon's service and everything it drives (journal, executor, telemetry), as
    :func:`serve` runs it; tests build the same one around the ASGI app."""
    from annad.config import config_file
    from annad.confine import runner
    from annad.execution.executor import Executor
    from annad.journal.store import Journal
    from annad.service import PlanService
    from annad.stepspec import Bounds, Limits
    from annad.telemetry.source import open_telemetry

    state = settings.state_path
    journal = Journal(state / "journal.sqlite3")
    limits = Limits(step_timeout_s=settings.step_timeout_s, max_output=settings.max_output,
                    backup_max_bytes=settings.backup_max_bytes,
                    backup_max_files=settings.backup_max_files,
                    confine_python=settings.confine_python,
                    capture=Bounds(max_files=settings.capture_max_files,
                                   max_bytes=settings.capture_max_bytes,
                                   max_depth=settings.capture_max_depth))
    executor = Executor(journal=journal, backups=state / "backups", runner=runner,
                        limits=limits, root_daemon=os.geteuid() == 0,
                        capture_userns=settings.capture_userns)
    executor.validator_path = tuple(str(p) for p in settings.preview_validator_path)
    executor.own_config = tuple(str(p) for p in (
        config_file(), settings.policy_file, settings.recipes_dir))
    telemetry = open_telemetry(pacman_dbpath=settings.pacman_dbpath,
                               refresh_s=settings.telemetry_refresh_s)
    return PlanService(settings, journal=journal, executor=executor, telemetry=telemetry,
                       runner=runner, policy=policy)


def _draining_server(config: uvicorn.Config, service: PlanService) -> uvicorn.Server:
    import uvicorn

    class DrainingServer(uvicorn.Server):
        """uvicorn's server, whose shutdown first lets the running plan end.

        uvicorn closes every connection ``timeout_graceful_shutdown`` seconds after a
        signal; an event stream cut then would leave the client blind while the plan
        goes on. So the daemon's own grace comes first, with the socket still serving
        the stream and reads; new plans are refused meanwhile.
        """

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            log.info("stopping: new plans are refused; waiting for a running plan")
            await asyncio.to_thread(service.drain)
            await super().shutdown(sockets=sockets)

    return DrainingServer(config)


async def _serve(server: uvicorn.Server, sock: socket.socket, settings: DaemonSettings,
                 service: PlanService, activity: Activity) -> None:
    watcher = asyncio.create_task(_watch(server, settings, service, activity))
    try:
        await server.serve(sockets=[sock])
    finally:
        server.should_exit = True
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(watcher, 2)


async def _watch(server: uvicorn.Server, settings: DaemonSettings, service: PlanService,
                 activity: Activity) -> None:
    """Notify systemd once serving; keep its watchdog fed from this event loop (a loop that
    hangs, or a daemon stopped with SIGSTOP, stops the pings, and systemd restarts the unit:
    ``WatchdogSec=``); in user mode, stop after the idle timeout."""
    from annad.api.listen import sd_notify, watchdog_interval

    while not server.started:
        if server.should_exit:
            return
        await asyncio.sleep(0.01)
    sd_notify(f"READY=1\nSTATUS=serving on {settings.socket_path}\nMAINPID={os.getpid()}")
    ping = watchdog_interval()
    next_ping = time.monotonic()
    idle = settings.idle_exit_s if settings.mode is DaemonMode.USER else 0.0
    while not server.should_exit:
        if ping is not None and time.monotonic() >= next_ping:
            sd_notify("WATCHDOG=1")
            next_ping = time.monotonic() + ping
        await asyncio.sleep(0.1)
        if idle and activity.idle_for() >= idle and not service.busy():
            log.info("idle for %.0f s: exiting", idle)
            server.should_exit = True
    sd_notify("STOPPING=1")


if __name__ == "__main__":
    sys.exit(main())
