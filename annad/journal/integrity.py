"""What binds a stored plan row to the journal's hash chain (used by :mod:`annad.journal.store`).

A plan row is state the daemon acts on: ``annotated_json`` holds the exact commands that
run, ``status`` decides whether the plan may run again. Neither is evidence by itself
(anyone who can write the SQLite file can change them), so at submit the daemon records a
*seal* of the row in the chained ``plan_submitted`` event: the sha256 of the plan, of the
annotation, of the request, and the owner, home, source and digest; a revision (the refined
plan of the same request, before anything ran) seals the new row in a ``plan_revised``
event, which the row must match from then on. Every status change is a chained event too.
A row whose fields no longer match its seal, or whose status is not the last one the chain
recorded, was altered behind the daemon's back: execute and
rollback refuse it (``AUDIT_CHAIN_BROKEN``) and ``/v1/audit/verify`` reports it.

Like the event chain itself, a seal has no secret key: it detects edits of the file, not a
writer who recomputes the whole chain.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import unicodedata
from typing import TYPE_CHECKING, Any

from anna_common.plan import canonical_json

if TYPE_CHECKING:
    from annad.journal.rows import PlanRow

SEAL_FIELDS = ("digest", "plan_sha256", "annotated_sha256", "request_sha256", "caller_uid",
               "home", "source")
"""The keys of a seal, all of which must match."""
GENESIS = "0" * 64
"""prev_hash of the first event row."""
MIGRATED_KIND = "journal_migrated"
"""The event that seals the plans of a journal written before seals existed."""
REVISED_KIND = "plan_revised"
"""The event that seals a plan's revision (its refined content after its checks ran): from
it on, the plan row must match this seal, no longer the one ``plan_submitted`` recorded."""
PREVIEWED_KIND = "plan_previewed"
"""The event holding a plan's preview (hash-chained with the plan; :mod:`annad.preview.engine`
writes it at submit, a revision writes its own)."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def seal_of(row: PlanRow) -> dict[str, Any]:
    """The seal of a plan row: what the chain records about it at submit."""
    return {"digest": row.digest, "plan_sha256": _sha(row.plan_json),
            "annotated_sha256": _sha(row.annotated_json), "request_sha256": _sha(row.request),
            "caller_uid": row.caller_uid, "home": row.home, "source": row.source}


def row_hash(prev: str, fields: dict[str, Any], *, legacy: bool = False) -> str:
    """sha256 of the previous hash and the canonical row.

    ``legacy``: rows written before schema version 1 were hashed over Unicode-NFC
    normalised text; verification accepts that form only for rows before the migration.
    """
    data = _nfc(fields) if legacy else fields
    return hashlib.sha256(prev.encode("ascii") + canonical_json(data)).hexdigest()


def _nfc(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, dict):
        return {_nfc(k): _nfc(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nfc(v) for v in value]
    return value


class PlanLedger:
    """Seals and last statuses per plan, read from plan-level events in chain order."""

    def __init__(self) -> None:
        self.seals: dict[str, tuple[Any, ...]] = {}
        """Each plan's seal: its :data:`SEAL_FIELDS` in order, packed (:func:`_packed`)."""
        self.status: dict[str, str] = {}
        self.seal_row: dict[str, int] = {}

    @classmethod
    def of(cls, rows: list[tuple[Any, ...]]) -> PlanLedger:
        """The ledger of event rows ``(id, ts, plan_id, kind, step_id, body, prev, hash)``."""
        ledger = cls()
        for row_id, _ts, plan_id, kind, step_id, body, _prev, _hash in rows:
            ledger.add(row_id, plan_id, kind, step_id, body)
        return ledger

    def add(self, row_id: int, plan_id: str | None, kind: str, step_id: str | None,
            body_text: str) -> None:
        """Take one event row into account (plan-level rows only: a step's status is not
        the plan's)."""
        if step_id is not None:
            return
        try:
            body = json.loads(body_text)
        except ValueError:
            return
        if not isinstance(body, dict):
            return
        if kind == MIGRATED_KIND and isinstance(body.get("plans"), dict):
            for pid, seal in body["plans"].items():
                if isinstance(seal, dict):
                    self._seal(row_id, str(pid), seal)
            return
        if plan_id is None:
            return
        if kind in ("plan_submitted", REVISED_KIND) and "annotated_sha256" in body:
            self._seal(row_id, plan_id, body)
        if "status" in body:
            self.status[plan_id] = sys.intern(str(body["status"]))

    def _seal(self, row_id: int, plan_id: str, seal: dict[str, Any]) -> None:
        self.seals[plan_id] = tuple(_packed(seal.get(k)) for k in SEAL_FIELDS)
        self.seal_row[plan_id] = row_id
        if "status" in seal:
            self.status[plan_id] = sys.intern(str(seal["status"]))

    def problem(self, row: PlanRow) -> str | None:
        """Why ``row`` does not match the chain, or None when it does."""
        seal = self.seals.get(row.plan_id)
        if seal is None:
            return f"plan {row.plan_id} has no seal in the event chain"
        mine = seal_of(row)
        changed = [k for k, kept in zip(SEAL_FIELDS, seal, strict=True)
                   if _packed(mine[k]) != kept]
        if changed:
            return f"plan {row.plan_id}: {', '.join(changed)} changed after it was recorded"
        recorded = self.status.get(row.plan_id, "submitted")
        if str(row.status) != recorded:
            return (f"plan {row.plan_id}: status {row.status} is not the last one the chain "
                    f"recorded ({recorded})")
        return None


def _packed(value: Any) -> Any:
    """A seal's value as the ledger keeps it for a whole journal's plans (``audit verify``
    holds every plan's seal until the plan rows are read: ~1.1 kB a plan as dicts of hex
    text, ~0.4 kB so): a sha256 as its 32 bytes when that gives back exactly this text,
    other text interned (a home and a source recur in every seal)."""
    if isinstance(value, str):
        if len(value) == 64:
            with contextlib.suppress(ValueError):
                packed = bytes.fromhex(value)
                if packed.hex() == value:
                    return packed
        return sys.intern(value)
    return value


def event_hash(prev: str, row_id: int, ts: float, plan_id: str | None, kind: str,
              step_id: str | None, body: str, *, legacy: bool = False) -> str:
    """The hash of one event row, chained to ``prev``."""
    fields = {"id": row_id, "ts": ts, "plan_id": plan_id, "kind": kind, "step_id": step_id,
              "body": body}
    return row_hash(prev, fields, legacy=legacy)


def chain_break(rows: list[tuple[Any, ...]], prev: str, *, first_number: int,
                legacy_until: int | None = None) -> int | None:
    """The id of the first row that breaks the chain starting at ``prev``, or None.

    Rows before the ``journal_migrated`` event (``legacy_until``: its id, found in ``rows``
    when not given — a caller checking in batches gives it) were written by schema 0 and
    may carry the NFC-normalised hash; every later row must hash its exact text.
    """
    if legacy_until is None:
        legacy_until = next((r[0] for r in rows if r[3] == MIGRATED_KIND), 0)
    for number, (row_id, ts, plan_id, kind, step_id, body, prev_hash, digest) in \
            enumerate(rows, start=first_number):
        expected = event_hash(prev, row_id, ts, plan_id, kind, step_id, body)
        if digest != expected and row_id < legacy_until:
            expected = event_hash(prev, row_id, ts, plan_id, kind, step_id, body, legacy=True)
        # ids are consecutive: a gap means rows were deleted
        if row_id != number or prev_hash != prev or digest != expected:
            return int(row_id)
        prev = digest
    return None


def own_rows_problem(plan: PlanRow, rows: list[tuple[Any, ...]],
                     links: dict[int, tuple[str | None, str | None]], *, last: int,
                     legacy_until: int) -> str | None:
    """Why ``plan`` does not match its own event rows, or None: each row hashes its exact
    text, is chained to the row before it and the row after it (``links``: the neighbours'
    hash and prev_hash) with no row missing around it, and the seal and last status they
    record match the plan row.

    The cost is the plan's own events, never the journal's size. An edit elsewhere in the
    chain does not block this plan (``/v1/audit/verify`` reports it); like the whole chain,
    this detects edits of the file, not a writer who recomputes the hashes.
    """
    for row_id, ts, plan_id, kind, step_id, body, prev_hash, digest in rows:
        expected = event_hash(prev_hash, row_id, ts, plan_id, kind, step_id, body)
        if digest != expected and row_id < legacy_until:
            expected = event_hash(prev_hash, row_id, ts, plan_id, kind, step_id, body,
                                  legacy=True)
        before, after = links[row_id]
        chained_before = prev_hash == (GENESIS if row_id == 1 else before)
        chained_after = after == digest if row_id < last else after is None
        if digest != expected or not chained_before or not chained_after:
            return f"event row {row_id} does not match the chain"
    return PlanLedger.of(rows).problem(plan)

