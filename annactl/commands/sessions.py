"""Conversations from the shell: ``ask --continue``, ``ask --session NAME`` and the
``annactl sessions`` command (list, show, forget). The store is
:mod:`annactl.planning.sessions`; what the model gets of it is the packet's ``conversation``
document (the last four turns, cut short), as in the REPL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annactl.core.exit_codes import ExitStatus
from annactl.planning.sessions import LAST, Conversation, Sessions, check_name

if TYPE_CHECKING:
    from pathlib import Path

    from annactl.commands.prepared import Prepared
    from annactl.ui.console import Consoles

PACKET_TURNS = 4
"""Turns sent to the model (the packet's conversation document holds four)."""


@dataclass
class Talk:
    """The conversation one ``ask`` belongs to."""

    conversation: Conversation
    """Its stored turns before this request."""
    carried: bool
    """``--continue`` or ``--session``: the earlier turns go to the model."""


def open_conversation(state_dir: Path, *, name: str | None, resume: bool) -> Talk:
    """``--session NAME``: that conversation (new when there is none); ``--continue``: the
    latest one; neither: a new ``last``."""
    store = Sessions(state_dir)
    if name is not None:
        return Talk(store.load(check_name(name)), True)
    if resume:
        return Talk(store.latest() or Conversation(LAST), True)
    return Talk(Conversation(LAST), False)


def sent_turns(talk: Talk) -> list[tuple[str, str]]:
    """The turns the model gets with this request."""
    return talk.conversation.turns[-PACKET_TURNS:] if talk.carried else []


def say_continued(consoles: Consoles, talk: Talk, *, as_json: bool) -> None:
    """One line on stderr: which conversation goes on, with how many earlier turns."""
    if as_json or not talk.carried:
        return
    from rich.text import Text

    sent = len(sent_turns(talk))
    name = talk.conversation.name
    words = (f"conversation {name}: {sent} earlier turn{'s' if sent != 1 else ''} go to the "
             f"model (annactl sessions show {name})" if sent else
             f"conversation {name}: a new one")
    consoles.err.print(Text(words, style="dim"))


def summary(prepared: Prepared) -> str:
    """What Anna answered, as the next request's context: the goal and the notes (the
    model's words, inert; the packet marks them untrusted)."""
    from annactl.ui.console import inert

    plan = prepared.annotated.plan
    goal = plan.goals[0] if plan.goals else ""
    return inert(f"{goal}. {plan.notes_for_user}", max_chars=400)


def record(state_dir: Path, talk: Talk, request: str, prepared: Prepared) -> None:
    """Add this request's turn to its conversation, and say in ``--json`` what was sent."""
    from annactl.ui.console import inert

    sent = sent_turns(talk)
    if talk.carried:
        prepared.conversation = {"name": talk.conversation.name, "earlier_turns": len(sent),
                                 "turns": [{"request": r, "answer": a} for r, a in sent]}
    try:
        Sessions(state_dir).add(talk.conversation, inert(request, max_chars=1000),
                                summary(prepared))
    except OSError as exc:  # the answer matters more than keeping it for later
        import logging

        logging.getLogger(__name__).warning("conversation %s not kept: %s",
                                            talk.conversation.name, exc)


# ---------------------------------------------------------------------- annactl sessions


def _json(conversation: Conversation) -> dict[str, Any]:
    return {"name": conversation.name, "updated": conversation.updated,
            "turns": [{"request": r, "answer": a} for r, a in conversation.turns]}


def list_all(consoles: Consoles, state_dir: Path, *, as_json: bool) -> int:
    """``annactl sessions``: every conversation, newest first."""
    store = Sessions(state_dir)
    found = sorted((store.load(n) for n in store.names()), key=lambda c: -c.updated)
    if as_json:
        from annactl.ui.console import emit_json

        emit_json(consoles, {"code": "OK", "sessions": [_json(c) for c in found]})
        return ExitStatus.SUCCESS
    from rich.table import Table

    from annactl.ui.console import inert_text

    if not found:
        consoles.out.print("No conversations kept. annactl ask --session NAME \"…\" keeps one.",
                           markup=False)
        return ExitStatus.SUCCESS
    table = Table(box=None, padding=(0, 2), show_edge=False)
    for column in ("NAME", "TURNS", "LAST REQUEST"):
        table.add_column(column, overflow="fold")
    for talk in found:
        last = talk.turns[-1][0] if talk.turns else ""
        table.add_row(inert_text(talk.name), str(len(talk.turns)), inert_text(last,
                                                                                max_chars=60))
    consoles.out.print(table)
    return ExitStatus.SUCCESS


def show(consoles: Consoles, state_dir: Path, name: str, *, as_json: bool) -> int:
    """``annactl sessions show NAME``: its turns, as the model gets them."""
    from anna_common.errors import UsageError

    talk = Sessions(state_dir).load(check_name(name))
    if not talk.turns:
        raise UsageError(f"no conversation {name!r}", hint="annactl sessions lists them")
    if as_json:
        from annactl.ui.console import emit_json

        emit_json(consoles, {"code": "OK", **_json(talk)})
        return ExitStatus.SUCCESS
    from rich.text import Text

    from annactl.ui.console import inert_text

    for number, (request, answer) in enumerate(talk.turns, 1):
        sent = number > len(talk.turns) - PACKET_TURNS
        mark = "" if sent else "  (kept, no longer sent)"
        consoles.out.print(Text(f"{number}. ", style="bold") + inert_text(request)
                           + Text(mark, style="dim"))
        consoles.out.print(Text("   ") + inert_text(answer, "dim"))
    return ExitStatus.SUCCESS


def forget(consoles: Consoles, state_dir: Path, names: list[str], *, every: bool,
           as_json: bool) -> int:
    """``annactl sessions forget NAME… | --all``: delete conversations."""
    from anna_common.errors import UsageError

    store = Sessions(state_dir)
    if every:
        names = store.names()
    elif not names:
        raise UsageError("name the conversations to forget, or --all",
                         hint="annactl sessions lists them")
    gone = [n for n in names if store.forget(check_name(n))]
    if as_json:
        from annactl.ui.console import emit_json

        emit_json(consoles, {"code": "OK", "forgotten": gone})
        return ExitStatus.SUCCESS
    from annactl.ui.console import inert

    missing = [n for n in names if n not in gone]
    if gone:
        consoles.out.print(f"Forgot {inert(', '.join(gone))}.", markup=False)
    if missing:
        consoles.err.print(f"No conversation {inert(', '.join(missing))}.", markup=False)
    return ExitStatus.SUCCESS
