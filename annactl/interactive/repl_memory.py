"""The REPL's "remember …" and ``/memory``: whitelisted preferences the model gets
(:mod:`annactl.planning.memory`); values are untrusted text, shown inert."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.errors import UsageError
from annactl.ui.console import inert

if TYPE_CHECKING:
    from pathlib import Path

    from annactl.ui.console import Consoles


def remember(consoles: Consoles, state_dir: Path, text: str) -> None:
    """Store the preference "remember my editor is nvim" names (a usage error otherwise)."""
    from annactl.planning.memory import Memory, parse_remember

    found = parse_remember(text)
    if found is None:
        raise UsageError("I can remember your editor, AUR helper, shell, terminal, wallpaper "
                         "backend or directory, or language",
                         hint='e.g. "remember my editor is nvim"')
    key, value = found
    Memory(state_dir).set(key, value)
    consoles.out.print(f"Remembered: {key} = {inert(value)}", markup=False)


def show_or_forget(consoles: Consoles, state_dir: Path, arg: str) -> None:
    """``/memory``: what is remembered; ``/memory forget KEY``: forget it."""
    from annactl.planning.memory import Memory

    memory = Memory(state_dir)
    if arg.startswith("forget "):
        key = arg[7:].strip()
        done = memory.forget(key)
        consoles.out.print(f"Forgot {key}." if done else f"{key} was not remembered.",
                           markup=False)
        return
    prefs = memory.all()
    if not prefs:
        consoles.out.print("Nothing remembered yet.", markup=False)
    for key, value in prefs.items():
        consoles.out.print(f"{key} = {inert(value)}", markup=False, highlight=False)
