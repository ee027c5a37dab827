"""The lock-out guard: a plan that can cut the person off is undone unless they come back.

After a plan whose steps :mod:`annad.execution.lockout` flags has succeeded, the guard is *armed*:
a deadline (``lockout_revert_s``, 120 s by default) is journalled, and unless
``POST /v1/plans/{id}/confirm`` arrives from a *new login* (``annactl confirm ID`` run in an
ssh or console session opened after the plan finished), the daemon rolls the plan back by
itself and journals why.

A new login is told by the kernel, not by the request: the caller's pid (``SO_PEERCRED``)
must carry an audit login session (``/proc/PID/sessionid``, given by ``pam_loginuid`` at
login and inherited by everything started in it) that did not exist when the guard was
armed. Processes the plan started run in the daemon's session (none, for the system
daemon) or in one that existed before, so a background process a step left behind cannot
confirm; nor can the connection that streamed the execution, or any connection older than
the plan's end. A kernel without audit sessions cannot tell a login: nothing confirms there,
and the plan is rolled back at its deadline.

Everything the guard knows is in the journal (``guard_armed``, ``guard_confirmed``,
``guard_expired``, ``guard_rolled_back``, ``guard_failed`` events), so a daemon that stops
while a guard is armed finds it at start (:meth:`Guard.resume`): a deadline that passed
is acted on at once, one still ahead is waited for again, and every connection to the new
process counts as new.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, ErrorCode, PlanError
from anna_common.protocol.models import GuardState, PlanStatus
from annad.peer import CONNECTIONS

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.protocol.models import RollbackResponse
    from annad.journal.store import Journal

log = logging.getLogger(__name__)

ARMED, CONFIRMED, EXPIRED, ROLLED_BACK, FAILED, DISARMED = (
    "guard_armed", "guard_confirmed", "guard_expired", "guard_rolled_back", "guard_failed",
    "guard_disarmed")
"""Journal event kinds of the guard, in the order they can happen."""
_STATE = {ARMED: "armed", CONFIRMED: "confirmed", EXPIRED: "expired",
          ROLLED_BACK: "expired", FAILED: "failed", DISARMED: "disarmed"}
_UNDONE = (PlanStatus.ROLLED_BACK, PlanStatus.ROLLBACK_UNVERIFIED)
"""A manual rollback ending so leaves the guard nothing to wait for."""
RETRY_S = 1.0
"""How often an expired guard retries its rollback while another plan runs."""


NO_SESSION = 4294967295
"""``/proc/PID/sessionid`` of a process started outside any login (``(u32)-1``)."""


def login_session(pid: int) -> int | None:
    """The audit login session of process ``pid``; None when it has none or cannot be read."""
    try:
        with open(f"/proc/{pid}/sessionid", encoding="ascii") as handle:  # noqa: PTH123
            value = int(handle.read().strip())
    except (OSError, ValueError):
        return None
    return None if value == NO_SESSION else value


def sessions_now() -> frozenset[int]:
    """Every login session some process is in at this moment."""
    found: set[int] = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            session = login_session(int(entry.name))
            if session is not None:
                found.add(session)
    return frozenset(found)


@dataclass
class _Armed:
    deadline: float
    first_connection: int
    """Connections numbered from this one on were made after the plan finished."""
    old_sessions: frozenset[int] = frozenset()
    """Login sessions that existed when the guard was armed: none of them is a new login."""
    done: threading.Event = field(default_factory=threading.Event)


class Guard:
    """Arms, confirms and expires lock-out guards; one per daemon."""

    def __init__(self, *, journal: Journal, revert_s: float,
                 rollback: Callable[[str], RollbackResponse]) -> None:
        self.journal = journal
        self.revert_s = revert_s
        self.rollback = rollback
        """Rolls a plan back (the daemon's own rollback, no confirmation asked)."""
        self._lock = threading.Lock()
        self._armed: dict[str, _Armed] = {}
        self._stopping = threading.Event()

    def arm(self, plan_id: str, reasons: list[str]) -> float:
        """Journal the deadline and start waiting for the confirmation; returns it."""
        deadline = time.time() + self.revert_s
        # a connection made from now on is new; the executing one was made before this
        armed = _Armed(deadline=deadline, first_connection=CONNECTIONS.last() + 1,
                       old_sessions=sessions_now())
        self.journal.event(ARMED, plan_id, deadline=round(deadline, 3), reasons=reasons[:20],
                           revert_s=self.revert_s)
        log.warning("plan %s can cut you off (%s): it is rolled back at %s unless "
                    "`annactl confirm %s` arrives from a new connection", plan_id,
                    "; ".join(reasons[:3]), time.strftime("%H:%M:%S",
                                                          time.localtime(deadline)), plan_id)
        self._start(plan_id, armed)
        return deadline

    def _start(self, plan_id: str, armed: _Armed) -> None:
        with self._lock:
            self._armed[plan_id] = armed
        threading.Thread(target=self._wait, args=(plan_id, armed), name=f"guard-{plan_id}",
                         daemon=True).start()

    def confirm(self, plan_id: str, connection: int | None, pid: int | None = None) -> None:
        """Keep the plan: only from a new login (``pid``: the caller, as the kernel says),
        on a connection made after the plan finished."""
        with self._lock:
            armed = self._armed.get(plan_id)
            if armed is None:
                state = state_of(self.journal, plan_id)
                raise PlanError(f"plan {plan_id} is not waiting for a confirmation"
                                + (f" (its guard is {state.state})" if state else ""),
                                code=ErrorCode.PLAN_STATE,
                                detail={"guard": state.state if state else None})
            if connection is None or connection < armed.first_connection:
                raise AnnaError("confirm from a new connection: this one was open before the "
                                "plan finished, so it proves nothing about reaching the "
                                "machine now", code=ErrorCode.PERMISSION_DENIED,
                                hint=f"run `annactl confirm {plan_id}`")
            session = login_session(pid) if pid is not None else None
            if session is None or session in armed.old_sessions:
                raise AnnaError("confirm from a new login: this process "
                                + ("belongs to no login session (a service, or a process the "
                                   "plan started)" if session is None else
                                   "runs in a login session that was open before the plan "
                                   "finished")
                                + ", so it proves nothing about logging in now",
                                code=ErrorCode.PERMISSION_DENIED,
                                hint=f"log in again (ssh or a console) and run `annactl "
                                     f"confirm {plan_id}` there")
            del self._armed[plan_id]
            armed.done.set()
            self.journal.event(CONFIRMED, plan_id, connection=connection, session=session,
                               left_s=round(armed.deadline - time.time(), 3))
        log.info("plan %s confirmed from a new login (session %s): kept", plan_id, session)

    def disarm(self, plan_id: str, status: PlanStatus) -> None:
        """A rollback the person asked for ended in ``status``: when it undid the plan, the
        guard stops waiting and says so (``disarmed``); otherwise it stays armed, and its
        deadline still rolls back what is left."""
        with self._lock:
            armed = self._armed.get(plan_id)
            if armed is None or status not in _UNDONE:
                return
            del self._armed[plan_id]
            armed.done.set()
            self.journal.event(DISARMED, plan_id, status=str(status),
                               message=f"the plan was rolled back by hand ({status}) before "
                                       "the guard's deadline")
        log.info("plan %s: rolled back by hand; its lock-out guard is disarmed", plan_id)

    def _wait(self, plan_id: str, armed: _Armed) -> None:
        while not armed.done.wait(timeout=max(0.0, armed.deadline - time.time())):
            if self._stopping.is_set():
                return  # the next start resumes it from the journal
            with self._lock:
                if self._armed.get(plan_id) is not armed:
                    return
                if time.time() < armed.deadline:
                    continue
                del self._armed[plan_id]
                self.journal.event(EXPIRED, plan_id, message="no confirmation from a new "
                                   "connection before the deadline: rolling the plan back")
            self._undo(plan_id)
            return

    def _undo(self, plan_id: str) -> None:
        """Roll the plan back, retrying while another plan runs."""
        while not self._stopping.is_set():
            try:
                result = self.rollback(plan_id)
            except PlanError as exc:
                if exc.code is ErrorCode.PLAN_RUNNING:
                    self._stopping.wait(RETRY_S)
                    continue
                row = self.journal.get_plan(plan_id)
                if row is not None and row.status is PlanStatus.ROLLED_BACK:
                    # the person rolled it back before the deadline: nothing left to undo
                    self.journal.event(ROLLED_BACK, plan_id, status=str(row.status),
                                       message="already rolled back before the deadline")
                    return
                self.journal.event(FAILED, plan_id, message=f"not rolled back: {exc.message}")
                return
            except Exception as exc:  # journalled: the person must learn it was not undone
                log.exception("plan %s: the guard's rollback failed", plan_id)
                self.journal.event(FAILED, plan_id, message=f"rollback failed: {exc}")
                return
            ok = result.status in (PlanStatus.ROLLED_BACK, PlanStatus.ROLLBACK_UNVERIFIED)
            self.journal.event(ROLLED_BACK if ok else FAILED, plan_id, status=str(result.status),
                               message=("rolled back by the lock-out guard" + (
                                   "; not verified: a live step's rollback command Anna "
                                   "cannot check" if result.status is not
                                   PlanStatus.ROLLED_BACK else "")) if ok else
                               "the lock-out guard's rollback did not undo everything")
            log.warning("plan %s: no confirmation came; %s", plan_id, result.status)
            return

    def resume(self) -> None:
        """At start: take up the guards a stopped daemon left armed (from the journal)."""
        last: dict[str, tuple[str, dict[str, object]]] = {}
        for plan_id, kind, _step, body in self.journal.events_of(None, "guard_"):
            if kind in _STATE:
                last[plan_id] = (kind, body)
        for plan_id, (kind, body) in last.items():
            if kind == EXPIRED:  # the daemon stopped while rolling back: finish it
                threading.Thread(target=self._undo, args=(plan_id,), daemon=True,
                                 name=f"guard-{plan_id}").start()
                continue
            if kind != ARMED:
                continue
            raw = body.get("deadline")
            deadline = float(raw) if isinstance(raw, (int, float)) else 0.0
            self.journal.event("guard_resumed", plan_id, deadline=deadline,
                               message="the daemon restarted while the guard was armed")
            log.warning("plan %s: guard still armed after a restart (deadline %s)", plan_id,
                        time.strftime("%H:%M:%S", time.localtime(deadline)))
            self._start(plan_id, _Armed(deadline=deadline, first_connection=0,
                                        old_sessions=sessions_now()))

    def stop(self) -> None:
        """Stop waiting (the journal keeps what is armed for the next start)."""
        self._stopping.set()
        with self._lock:
            for armed in self._armed.values():
                armed.done.set()
            self._armed.clear()


def state_of(journal: Journal, plan_id: str) -> GuardState | None:
    """The guard of a plan as the journal records it (None: never armed)."""
    events = [e for e in journal.events_of(plan_id, "guard_") if e[1] in _STATE]
    if not events:
        return None
    armed = next((body for _p, kind, _s, body in events if kind == ARMED), {})
    _plan, kind, _step, body = events[-1]
    reasons = armed.get("reasons")
    deadline = armed.get("deadline")
    return GuardState(state=_STATE[kind],
                      deadline=float(deadline) if isinstance(deadline, (int, float))
                      and kind == ARMED else None,
                      reasons=[str(r) for r in reasons] if isinstance(reasons, list) else [],
                      message=str(body.get("message", "")))
