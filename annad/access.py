"""Who may do what, and with which plan: the daemon's access checks on the kernel's peer.

The caller is the :class:`~annad.peer.Peer` the kernel reported for the connection, never
what a request says. A per-user daemon serves only its owner; changing the system needs
root or the daemon's group (:func:`annad.peer.authorised`); a plan is found by its id or the
end of it, and another user's plan is reported as missing, not as forbidden: plan ids are
not secrets, the requests stored with them are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.errors import AnnaError, ErrorCode, PlanError
from anna_common.protocol.models import MAX_PLAN_REF
from annad.peer import Peer, authorised, served

if TYPE_CHECKING:
    from annad.journal.rows import PlanRow
    from annad.journal.store import Journal

SHORT_ID_MIN = 4
"""Shortest end of an id accepted for a plan (``history`` shows the last six characters)."""
MAX_PLAN_ID = MAX_PLAN_REF
"""Longest plan id or end of one looked up (ids are 22 characters). A longer one is a coded
400 before any lookup: the journal finds an end of an id with LIKE, and SQLite refuses (an
error, a 500) LIKE patterns over 50,000 bytes. The path parameter (annad.api.routing), the
``before`` query and the ids of a gc request are bounded alike; this is the one place every
id a caller sends passes through on its way to the journal."""


class Access:
    """The access checks of one daemon (its mode, its owner, its group, its journal)."""

    def __init__(self, *, journal: Journal, user_mode: bool, owner_uid: int, group: str
                 ) -> None:
        self.journal = journal
        self.user_mode = user_mode
        self.owner_uid = owner_uid
        self.group = group

    def served(self, peer: Peer | None) -> Peer:
        """The caller, if this daemon serves it at all (reads included)."""
        if peer is None or not served(peer, user_mode=self.user_mode, owner_uid=self.owner_uid):
            raise AnnaError("this per-user daemon serves only its owner",
                            code=ErrorCode.PERMISSION_DENIED)
        return peer

    def authorised(self, peer: Peer | None) -> Peer:
        """The caller, if it may change the system."""
        peer = self.served(peer)
        if not self.may_change(peer):
            raise AnnaError(f"uid {peer.uid} may only read (health, telemetry); root and "
                            f"members of group {self.group!r} may change the system",
                            code=ErrorCode.PERMISSION_DENIED,
                            hint=f"ask an administrator to add you to group {self.group!r}")
        return peer

    def may_change(self, peer: Peer) -> bool:
        """Root, the daemon's group, or (per-user daemon) its owner."""
        return authorised(peer, user_mode=self.user_mode, owner_uid=self.owner_uid,
                          group=self.group)

    def owned(self, peer: Peer, plan_id: str) -> PlanRow:
        """The caller's plan by id or by the end of its id (``history`` shows short ids)."""
        if len(plan_id) > MAX_PLAN_ID:
            raise AnnaError(f"a plan id is at most {MAX_PLAN_ID} characters, not {len(plan_id)}",
                            code=ErrorCode.BAD_REQUEST)
        found = self.journal.resolve_id(plan_id) if len(plan_id) >= SHORT_ID_MIN else []
        if len(found) > 1:
            raise PlanError(f"{plan_id!r} matches more than one plan; give more of the id",
                            code=ErrorCode.PLAN_NOT_FOUND)
        row = self.journal.get_plan(found[0]) if found else None
        # another user's plan is reported as missing: plan ids are not secrets, requests are
        if row is None or (peer.uid not in (0, row.caller_uid)):
            raise PlanError(f"no plan {plan_id!r}", code=ErrorCode.PLAN_NOT_FOUND)
        return row
