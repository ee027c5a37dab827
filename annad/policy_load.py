"""Reading the policy files and applying the policy to a plan (the daemon's side).

The administrator's file (``policy_file``, default ``/etc/anna/policy.toml``) is read at
start-up: a malformed one stops the daemon with the file and line, never "allow
everything". It is read again whenever a plan is submitted, has its checks run or is
executed, so an edit between submit and execute counts (an unchanged file is not parsed
again). A file that has become malformed since start-up refuses those requests with the
same error; a missing file is an empty policy.

The plan owner's ``~/.config/anna/policy.toml`` may only add restrictions. It is read as
the daemon (often root) in a directory the owner controls, so it is opened without
following a final symlink, must be a regular file owned by the owner and is size-capped:
the daemon never reads, and never quotes in an error, a file the owner could not.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode, PlanError
from anna_common.plan import RiskLevel
from anna_common.policy.decide import Policy, PolicyError, combine, decide, parse
from anna_common.policy.subject import subject
from anna_common.protocol.models import CheckResult
from anna_common.protocol.policy import PolicyCheckResponse, PolicyView
from anna_common.risk.assess import assess
from annad.config import untrusted

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.findings import AnnotatedPlan, AnnotatedStep
    from anna_common.risk.rules.base import AssessContext
    from annad.journal.store import Journal

MAX_POLICY_BYTES = 1024 * 1024
"""Largest policy file read."""
USER_POLICY = ".config/anna/policy.toml"
"""The owner's file, relative to their home."""


class PolicyStore:
    """The administrator's policy (cached by content) and each owner's addition."""

    def __init__(self, admin_file: Path, *, user_files: bool = True) -> None:
        self.admin_file = admin_file
        self.user_files = user_files
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[bytes, Policy]] = {}

    def admin(self) -> Policy:
        """The administrator's policy as the file is now (empty when there is none). A root
        daemon refuses one another user could change (:func:`annad.config.untrusted`): an
        ``allow path="/**"`` written by anyone else would waive every confirmation."""
        why = untrusted(self.admin_file)
        if why is not None:
            raise PolicyError(f"{self.admin_file}:1: refused: {why}; a root daemon reads only "
                              "a policy root alone can change",
                              detail={"file": str(self.admin_file), "line": 1})
        data = _read(self.admin_file, owner=None)
        return Policy() if data is None else self._parsed(str(self.admin_file), data, "admin")

    def for_owner(self, uid: int, home: str | None) -> Policy:
        """The administrator's policy followed by the owner's restrictions."""
        admin = self.admin()
        if not self.user_files or not home:
            return admin
        path = Path(home) / USER_POLICY
        data = _read(path, owner=uid)
        return combine(admin, None if data is None else self._parsed(str(path), data, "user"))

    def _parsed(self, source: str, data: bytes, origin: str) -> Policy:
        with self._lock:
            cached = self._cache.get(source)
            if cached is not None and cached[0] == data:
                return cached[1]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise PolicyError(f"{source}:1: not UTF-8 text", detail={"file": source, "line": 1}
                              ) from None
        policy = parse(text, source=source, origin="user" if origin == "user" else "admin")
        with self._lock:
            self._cache[source] = (data, policy)
        return policy


def _read(path: Path, *, owner: int | None) -> bytes | None:
    """The file's bytes, None when it does not exist. ``owner``: it must be a regular
    file of that uid, not a symlink (a user's file read by root)."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (os.O_NOFOLLOW if owner is not None
                                                          else 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if owner is not None and not path.parent.is_dir():
            return None
        raise PolicyError(f"{path}:1: cannot read the policy: {exc.strerror}",
                          detail={"file": str(path), "line": 1}) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (owner is not None and info.st_uid != owner):
            raise PolicyError(f"{path}:1: not a regular file owned by uid {owner}; ignored "
                              "nothing, refused", detail={"file": str(path), "line": 1})
        if info.st_size > MAX_POLICY_BYTES:
            raise PolicyError(f"{path}:1: larger than {MAX_POLICY_BYTES} bytes",
                              detail={"file": str(path), "line": 1})
        chunks: list[bytes] = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
            if sum(len(c) for c in chunks) > MAX_POLICY_BYTES:
                raise PolicyError(f"{path}:1: larger than {MAX_POLICY_BYTES} bytes",
                                  detail={"file": str(path), "line": 1})
        return b"".join(chunks)
    finally:
        os.close(fd)


def mark_plan(policy: Policy, annotated: AnnotatedPlan, ctx: AssessContext) -> AnnotatedPlan:
    """The annotation with every item's policy mark set from ``policy`` (a copy)."""

    def marked(items: list[AnnotatedStep]) -> list[AnnotatedStep]:
        out = []
        for item in items:
            decision = decide(policy, subject(item.command, ctx), item.final_risk, item.scope)
            out.append(item.model_copy(update={"policy": decision.mark()}))
        return out

    return annotated.model_copy(update={"checks": marked(annotated.checks),
                                        "steps": marked(annotated.steps),
                                        "rollback": marked(annotated.rollback)})


def denied(annotated: AnnotatedPlan) -> list[AnnotatedStep]:
    """The items a deny rule matched."""
    return [s for s in (*annotated.checks, *annotated.steps, *annotated.rollback)
            if s.policy is not None and s.policy.action == "deny"]


def refuse_denied(annotated: AnnotatedPlan) -> None:
    """Raise ``POLICY_DENIED`` naming the first denied item and its rule."""
    hits = denied(annotated)
    if not hits:
        return
    first = hits[0]
    mark = first.policy
    assert mark is not None  # denied() returns marked items only
    raise PlanError(f"policy rule {mark.rule!r} ({mark.source}) denies {first.kind} "
                    f"{first.id}" + (f": {mark.note}" if mark.note else ""),
                    code=ErrorCode.POLICY_DENIED,
                    detail={"rule": mark.rule, "source": mark.source, "note": mark.note,
                            "items": [f"{s.kind}:{s.id}" for s in hits]})


def journal_fields(annotated: AnnotatedPlan, phase: str) -> dict[str, Any]:
    """What the journal keeps of the policy's verdict on a plan."""
    return {"phase": phase, "items": [
        {"item": f"{s.kind}:{s.id}", "action": s.policy.action, "rule": s.policy.rule,
         "source": s.policy.source, "note": s.policy.note}
        for s in (*annotated.checks, *annotated.steps, *annotated.rollback)
        if s.policy is not None]}


def judge(store: PolicyStore, journal: Journal, annotated: AnnotatedPlan, *,
          owner: tuple[int, str], ctx: AssessContext, plan_id: str | None, phase: str,
          items: str = "all") -> AnnotatedPlan:
    """The annotation marked by the policy as its files are now.

    A denied item (of ``items``: ``all`` or ``rollback``) or an unreadable policy refuses
    the request; both are journalled. The verdict of a stored plan is journalled too.
    """
    try:
        policy = store.for_owner(*owner)
    except AnnaError as exc:
        journal.event("policy_invalid", plan_id, phase=phase, error=exc.message)
        raise
    marked = mark_plan(policy, annotated, ctx)
    judged = marked if items == "all" else marked.model_copy(update={"checks": [],
                                                                     "steps": []})
    try:
        refuse_denied(judged)
    except AnnaError:
        journal.event("policy_denied", plan_id, **journal_fields(judged, phase))
        raise
    if plan_id is not None:
        journal.event("policy", plan_id, **journal_fields(marked, phase))
    return marked


def asked_checks(annotated: AnnotatedPlan
                 ) -> tuple[AnnotatedPlan, Callable[[list[CheckResult]], list[CheckResult]]]:
    """The plan without the checks a policy ``ask`` holds back (they never run unasked),
    and how to put refusals for them back in plan order among the results."""
    asked = {c.id: c.policy.rule for c in annotated.checks
             if c.policy is not None and c.policy.action == "ask"}
    unasked = annotated.model_copy(update={"checks": [c for c in annotated.checks
                                                      if c.id not in asked]})

    def merge(results: list[CheckResult]) -> list[CheckResult]:
        ran = iter(results)
        return [CheckResult(id=c.id, command=c.command, ran=False,
                            reason=f"policy rule {asked[c.id]!r} asks for a confirmation: "
                            "not run unasked") if c.id in asked else next(ran)
                for c in annotated.checks]

    return unasked, merge


def view(store: PolicyStore, uid: int, home: str | None) -> PolicyView:
    """``GET /v1/policy``: the rules in force for ``uid``."""
    policy = store.for_owner(uid, home)
    user = str(Path(home) / USER_POLICY) if store.user_files and home else None
    return PolicyView(admin_file=str(store.admin_file), user_file=user,
                      sources=list(policy.sources), rules=list(policy.rules),
                      notes=list(policy.notes))


def check(store: PolicyStore, command: str, ctx: AssessContext, uid: int,
          home: str | None) -> PolicyCheckResponse:
    """``POST /v1/policy/check``: the decision for ``command`` as one plan step."""
    policy = store.for_owner(uid, home)
    verdict = assess(command, ctx)
    decision = decide(policy, subject(command, ctx), verdict.risk, verdict.scope)
    if verdict.risk == RiskLevel.HIGH:
        needed = 2
    elif decision.action == "ask":
        needed = 1
    elif decision.action == "allow":
        needed = 0
    else:
        needed = int(verdict.risk >= RiskLevel.LOW)
    return PolicyCheckResponse(command=command, decision=decision, tier=verdict.risk,
                               scope=verdict.scope, banned=verdict.banned,
                               confirmations=needed, reasons=verdict.reasons)
