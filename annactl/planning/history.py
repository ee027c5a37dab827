"""Conversation history: every request and reply as a versioned, redacted packet in SQLite.

Packets follow the envelope of seed 001, renamed for Anna::

    {"protocol": {"name": "anna.llmcp", "version": 1}, "id": "...", "type": "request",
     "created_at": "2026-01-24T12:34:56.789Z", "conversation": {"id": "...", "turn": 3},
     "sender": {"role": "user"}, ...}

Before storage a packet is redacted: secrets are masked (:func:`trace.mask`)
and telemetry is kept only as a sha256 digest and a one-line preview, never in
full. The database lives at ``state_dir/history.sqlite3`` (0600).
The REPL reads :meth:`History.recent_turns` to give the model the
conversation so far.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from anna_common.levels import canonical_json
from annactl.planning.llm.trace import mask, mask_value
from annactl.planning.packet import (
    PROTOCOL,
    UNTRUSTED,
    RequestSpec,
    Trace,
    memory_document,
    request_packet,
    response_packet,
    stored,
)

if TYPE_CHECKING:
    from anna_common.telemetry import Telemetry
    from annactl.planning.outcome import PlanOutcome

log = logging.getLogger(__name__)

DB_NAME = "history.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY, created_at TEXT NOT NULL, title TEXT);
CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id),
  turn INTEGER NOT NULL, created_at TEXT NOT NULL, sender_role TEXT NOT NULL,
  packet_type TEXT NOT NULL, in_reply_to TEXT, model_id TEXT, packet_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_messages_conversation_turn ON messages(conversation_id, turn);
"""


def now_iso() -> str:
    """UTC time as ISO-8601 with milliseconds and ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def telemetry_digest(telemetry: Telemetry | None) -> dict[str, Any] | None:
    """sha256 of the telemetry's canonical JSON plus a short preview (never the whole)."""
    if telemetry is None:
        return None
    data = telemetry.model_dump(mode="json")
    digest = hashlib.sha256(canonical_json(data)).hexdigest()
    preview = (f"{telemetry.system.distro_id or '?'} {telemetry.system.kernel}, "
               f"{telemetry.cpu.cores_logical} cpus load {telemetry.cpu.load_1:.2f}, "
               f"mem {telemetry.memory.percent:.0f}%, {telemetry.packages.count} packages, "
               f"{len(telemetry.services.failed)} failed units, "
               f"desktop {telemetry.desktop.wm or telemetry.desktop.de or '-'}")
    return {"sha256": digest, "preview": preview[:240], "trust": "untrusted"}


def reply_summary(packet: dict[str, Any]) -> str:
    """One line describing a response packet (for the model's view of earlier turns)."""
    if packet.get("evaluation"):
        evaluation = packet["evaluation"]
        met = "goals met" if evaluation.get("goals_met") else "goals not met"
        return f"evaluation of plan {evaluation.get('plan_id')}: {met}. " \
               f"{evaluation.get('summary', '')}"[:300]
    if packet.get("error"):
        return f"error {packet['error'].get('code')}: {packet['error'].get('message', '')}"[:300]
    plan = packet.get("plan") or {}
    goals = plan.get("goals") or []
    steps = [s.get("command", "") for s in plan.get("command_plan") or []]
    text = f"{goals[0] if goals else 'no goal'}; {len(steps)} step(s)"
    if steps:
        text += f": {steps[0][:120]}"
    notes = plan.get("notes_for_user") or ""
    return f"{text}. {notes}"[:300]


def request_text(packet: dict[str, Any]) -> str:
    """The person's request in a stored request packet (older rows: ``input.text``)."""
    given = packet.get("input") or {}
    message = given.get("user_message")
    if isinstance(message, dict):
        return str(message.get("text", ""))
    return str(given.get("text", ""))


def _assistant(outcome: PlanOutcome | None, error: AnnaError | None) -> dict[str, Any]:
    """Title, paragraphs and items of a response packet's ``assistant.render``."""
    if outcome is not None and outcome.result.plan is not None:
        plan = outcome.result.plan.plan
        return {"title": plan.goals[0] if plan.goals else "Answer",
                "paragraphs": [plan.notes_for_user],
                "items": [s.command for s in plan.command_plan],
                "citations": [c.to_dict() for c in outcome.citations]}
    if error is not None:
        return {"title": f"Error {error.code}", "paragraphs": [error.message]}
    return {"title": "No plan", "paragraphs": []}


class History:
    """One conversation's view of the history database."""

    def __init__(self, state_dir: Path, *, conversation_id: str | None = None) -> None:
        self.path = state_dir / DB_NAME
        """The SQLite file."""
        try:
            state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.path.touch(mode=0o600, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False)
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise AnnaError(f"cannot open the history store {self.path}: {exc}",
                            code=ErrorCode.INTERNAL_ERROR) from None
        self.conversation_id = conversation_id or uuid.uuid4().hex
        """The conversation new packets belong to."""
        self._secrets: tuple[str, ...] = ()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def set_secrets(self, secrets: tuple[str, ...]) -> None:
        """Literal secrets (the API key) to mask in addition to the patterns."""
        self._secrets = secrets

    def _ensure_conversation(self, title: str) -> None:
        self._db.execute("INSERT OR IGNORE INTO conversations(id, created_at, title) "
                         "VALUES (?, ?, ?)", (self.conversation_id, now_iso(),
                                              mask(title, self._secrets)[:120]))

    def next_turn(self) -> int:
        """The turn number the next exchange gets."""
        row = self._db.execute("SELECT COALESCE(MAX(turn), 0) FROM messages WHERE "
                               "conversation_id = ?", (self.conversation_id,)).fetchone()
        return int(row[0]) + 1

    def _envelope(self, packet_type: str, role: str, turn: int) -> dict[str, Any]:
        return {"protocol": dict(PROTOCOL), "id": uuid.uuid4().hex, "type": packet_type,
                "created_at": now_iso(), "conversation": {"id": self.conversation_id,
                                                          "turn": turn},
                "sender": {"role": role}}

    def store(self, packet: dict[str, Any], *, model: str | None = None) -> dict[str, Any]:
        """Redact and store one packet; returns what was stored."""
        clean: dict[str, Any] = mask_value(packet, self._secrets)
        self._db.execute(
            "INSERT INTO messages(id, conversation_id, turn, created_at, sender_role, "
            "packet_type, in_reply_to, model_id, packet_json) VALUES (?,?,?,?,?,?,?,?,?)",
            (clean["id"], self.conversation_id, clean["conversation"]["turn"],
             clean["created_at"], clean["sender"]["role"], clean["type"],
             (clean.get("in_reply_to") or {}).get("request_id"), model,
             json.dumps(clean, ensure_ascii=False, sort_keys=True)))
        return clean

    def record_exchange(self, request: str, *, mode: str, telemetry: Telemetry | None,
                        preferences: dict[str, str] | None, outcome: PlanOutcome | None,
                        error: AnnaError | None, trace_id: str,
                        packet: dict[str, Any] | None = None) -> tuple[dict[str, Any],
                                                                       dict[str, Any]]:
        """Store a request packet and its response packet (one turn).

        ``packet`` is the LLMCP request packet the model's user message was rendered from;
        it is stored in its history form (:func:`packet.stored`: program output as digests)
        and redacted like everything else.

        Raises :class:`AnnaError` (never a bare ``sqlite3`` error) so callers outside this
        module need not know the storage.
        """
        try:
            return self._record(request, mode=mode, telemetry=telemetry,
                                preferences=preferences, outcome=outcome, error=error,
                                trace_id=trace_id, packet=packet)
        except sqlite3.Error as exc:
            raise AnnaError(f"the history store {self.path} failed: {exc}",
                            code=ErrorCode.INTERNAL_ERROR) from None

    def _record(self, request: str, *, mode: str, telemetry: Telemetry | None,
                preferences: dict[str, str] | None, outcome: PlanOutcome | None,
                error: AnnaError | None, trace_id: str,
                packet: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        with self._db:
            self._ensure_conversation(request)
            turn = self.next_turn()
            req = self._request_packet(request, mode=mode, telemetry=telemetry,
                                       preferences=preferences, trace_id=trace_id,
                                       packet=packet, turn=turn)
            stored_req = self.store(req)
            res = response_packet(stored_req, **_assistant(outcome, error))
            res["conversation"] = {"id": self.conversation_id, "turn": turn}
            if outcome is not None:
                annotated = outcome.result.plan
                res.update(plan=annotated.plan.model_dump(mode="json") if annotated else None,
                           validation={"ok": outcome.result.ok,
                                       "banned": bool(annotated and annotated.banned),
                                       "errors": [str(f.code) for f in outcome.result.errors]},
                           template=outcome.template, offline_reason=outcome.offline_reason,
                           model_calls=outcome.model_calls, repairs=outcome.repairs,
                           contradictions=[c.to_dict() for c in outcome.contradictions],
                           confidence=outcome.confidence)
            if error is not None:
                res["error"] = {"code": str(error.code), "message": error.message}
            model = outcome.model if outcome is not None else None
            stored_res = self.store(res, model=model or None)
        return stored_req, stored_res

    def _request_packet(self, request: str, *, mode: str, telemetry: Telemetry | None,
                        preferences: dict[str, str] | None, trace_id: str,
                        packet: dict[str, Any] | None, turn: int) -> dict[str, Any]:
        """The request packet to store: the one sent, or (no model asked) one built here."""
        if packet is None:
            docs = [d for d in [memory_document(preferences)] if d is not None]
            spec = RequestSpec(request, "anna.plan", {"mode": mode}, docs)
            packet = request_packet(spec, Trace(trace_id))
            if telemetry is not None:
                packet["context"]["documents"].append(
                    {"doc_id": "doc:telemetry", "kind": "telemetry", "trust": UNTRUSTED,
                     "source": {"program": "annad"}, "content": telemetry_digest(telemetry)})
        clean = stored(packet)
        clean["conversation"] = {"id": self.conversation_id, "turn": turn}
        clean["sender"] = {"role": "agent"}
        return clean
    def record_evaluation(self, request: str, *, results: dict[str, Any],
                          evaluation: dict[str, Any], model: str | None) -> dict[str, Any]:
        """Store an evaluation turn: Anna's execution results (an untrusted document) and
        the evaluation (the model's, or Anna's own). Raises :class:`AnnaError`."""
        try:
            with self._db:
                self._ensure_conversation(request)
                turn = self.next_turn()
                req = self._envelope("request", "agent", turn)
                req.update(input={"text": request, "task": "evaluate"},
                           context={"documents": [{
                               "doc_id": f"execution_results:{results.get('plan_id')}",
                               "kind": "anna.execution_results.v1", "trust": "untrusted",
                               "source": "annad journal", "content": results}]})
                stored_req = self.store(req)
                res = self._envelope("response", "assistant", turn)
                res.update(in_reply_to={"request_id": stored_req["id"]}, evaluation=evaluation)
                return self.store(res, model=model)
        except sqlite3.Error as exc:
            raise AnnaError(f"the history store {self.path} failed: {exc}",
                            code=ErrorCode.INTERNAL_ERROR) from None

    def packets(self, conversation_id: str | None = None) -> list[dict[str, Any]]:
        """Every packet of a conversation, in order."""
        rows = self._db.execute(
            "SELECT packet_json FROM messages WHERE conversation_id = ? ORDER BY turn, "
            "CASE packet_type WHEN 'request' THEN 0 ELSE 1 END",
            (conversation_id or self.conversation_id,)).fetchall()
        return [json.loads(r[0]) for r in rows]

    def recent_turns(self, limit: int = 4,
                     conversation_id: str | None = None) -> list[tuple[str, str]]:
        """The last ``limit`` turns as (request, reply summary), oldest first."""
        requests: dict[int, str] = {}
        replies: dict[int, str] = {}
        for packet in self.packets(conversation_id):
            turn = packet["conversation"]["turn"]
            if packet["type"] == "request":
                requests[turn] = request_text(packet)
            else:
                replies[turn] = reply_summary(packet)
        turns = sorted(requests)[-limit:] if limit > 0 else []
        return [(requests[t], replies.get(t, "")) for t in turns]

    def conversations(self, limit: int = 20) -> list[dict[str, Any]]:
        """Recent conversations: id, created_at, title, turns."""
        rows = self._db.execute(
            "SELECT c.id, c.created_at, c.title, COUNT(m.id) / 2 FROM conversations c "
            "LEFT JOIN messages m ON m.conversation_id = c.id GROUP BY c.id "
            "ORDER BY c.created_at DESC LIMIT ?", (limit,)).fetchall()
        return [{"id": r[0], "created_at": r[1], "title": r[2], "turns": r[3]} for r in rows]


_AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
  trace_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, mode TEXT NOT NULL,
  prompt_version TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, schema_sha256 TEXT NOT NULL,
  parser_version TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
  loops INTEGER NOT NULL, steps INTEGER NOT NULL, model_calls INTEGER NOT NULL,
  repairs INTEGER NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
  template TEXT, error_code TEXT, started_at TEXT NOT NULL, completed_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_audit_started ON audit(started_at);
"""


class AuditStore:
    """The ``audit`` table beside the history (rows from :mod:`annactl.planning.audit`).

    Best-effort: a full disk or a locked database is logged, never raised.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / DB_NAME
        """The SQLite file."""

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path.touch(mode=0o600, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=5.0)
        db.executescript(_AUDIT_SCHEMA)
        return db

    def insert(self, row: dict[str, Any]) -> bool:
        """Store one row (keys are the audit record's own field names, never input)."""
        names, marks = ", ".join(row), ", ".join("?" for _ in row)
        try:
            db = self._connect()
            try:
                with db:
                    db.execute(f"INSERT OR REPLACE INTO audit({names}) VALUES ({marks})",  # noqa: S608
                               tuple(row.values()))
            finally:
                db.close()
        except (OSError, sqlite3.Error) as exc:
            log.warning("could not write the audit record to %s: %s", self.path, exc)
            return False
        return True

    def rows(self, names: list[str], limit: int) -> list[tuple[Any, ...]]:
        """The newest ``limit`` rows, columns ``names`` (the record's own field names)."""
        try:
            db = self._connect()
            try:
                return db.execute(f"SELECT {', '.join(names)} FROM audit "  # noqa: S608
                                  "ORDER BY started_at DESC, rowid DESC LIMIT ?",
                                  (limit,)).fetchall()
            finally:
                db.close()
        except (OSError, sqlite3.Error) as exc:
            log.warning("could not read the audit records in %s: %s", self.path, exc)
            return []
