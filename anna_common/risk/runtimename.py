"""New entries named at run time in a known directory: ``cp f f.bak.$(date +%s)``.

The seed's own example makes a backup copy whose name holds a timestamp. Such a
write is not "a path only known at run time": the directory is literal, only
the last name is computed, and the command computing it (``date +FORMAT``,
``hostname``, ...) reads nothing and writes nothing. What the step can change is
"a new entry in that directory", so it is judged as a write of the directory,
and the daemon snapshots the directory's listing and, on rollback, removes only
the entries the step created.

Only creations qualify (``cp``/``install`` destinations, ``touch``, ``mkdir``): an
overwrite, a deletion, a move or a redirection to a run-time name is not covered
and stays HIGH. The name must stay one name: the substitution's output is from a
fixed alphabet without ``/``, spaces or glob characters, so it cannot climb out
of the directory, split into several arguments or expand into other files.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.shell.words import Segment, Word

if TYPE_CHECKING:
    from anna_common.risk.writes import WriteTarget
    from anna_common.shell.model import SimpleCommand

CREATING = frozenset({"copy", "touch", "mkdir"})
"""Write kinds that make a new entry under the name given."""
_DATE_FORMAT = re.compile(r"^\+(?:%[sYmdHMSFTyjNuVGz]|[A-Za-z0-9._:-])+$")
"""``date`` formats whose output has no ``/``, space or glob character in any locale."""
_FIXED_OUTPUT = {
    "hostname": ((), ("-s", "--short")),
    "whoami": ((),),
    "uname": (("-r",), ("-n",), ("-m",), ("-s",)),
    "id": (("-u",), ("-g",), ("-un",), ("-gn",)),
}
"""Programs whose output is one name made of letters, digits, ``.``, ``_`` and ``-``."""


def _safe_command(source: str) -> bool:
    """Whether the substitution ``$(...)`` / `` `...` `` runs one read-only name-producing
    command with literal arguments."""
    if source.startswith("$(") and not source.startswith("$((") and source.endswith(")"):
        inner = source[2:-1]
    elif source.startswith("`") and source.endswith("`") and len(source) > 1:
        inner = source[1:-1]
    else:
        return False  # process substitution, arithmetic: not a name
    from anna_common.shell.grammar import analyse

    analysis = analyse(inner)
    if not analysis.parse_ok or analysis.opaque or len(analysis.commands) != 1:
        return False
    cmd = analysis.commands[0]
    if cmd.redirects or cmd.assignments or cmd.privileged or cmd.depth:
        return False
    if not all(w.literal for w in cmd.args):
        return False
    args = tuple(w.text for w in cmd.args)
    if cmd.program == "date":
        return _date_args(args)
    return args in _FIXED_OUTPUT.get(cmd.program or "", ())


def _date_args(args: tuple[str, ...]) -> bool:
    formats = [a for a in args if a not in ("-u", "--utc", "--universal")]
    return len(formats) == 1 and _DATE_FORMAT.match(formats[0]) is not None


def new_entry_dir(target: WriteTarget) -> Word | None:
    """The directory ``target`` creates a run-time-named entry in, else None.

    ``cp ~/w.png ~/w.png.bak.$(date +%s)`` → ``~``. None for every other write.
    """
    word = target.word
    if target.how not in CREATING or not word.substituted or word.glob or word.variables:
        return None
    segments = list(word.segments)
    first = next(i for i, s in enumerate(segments) if s.kind != "literal")
    for seg in segments:
        if seg.kind == "subst" and not _safe_command(seg.text):
            return None
        if seg.kind == "literal" and not seg.quoted and "{" in seg.text:
            return None  # brace expansion could make several names
    if any("/" in s.text for s in segments[first:] if s.kind == "literal"):
        return None  # the computed part is not the last component
    cut = max((i for i in range(first) if "/" in segments[i].text), default=None)
    if cut is None:
        return Word.of(".")
    head = segments[cut].text
    kept = [*segments[:cut], Segment(head[:head.rindex("/")] or "/", segments[cut].quoted)]
    kept = [s for s in kept if s.text] or [Segment("/", False)]
    text = "".join(s.text for s in kept)
    tilde = not kept[0].quoted and kept[0].text.startswith("~")
    return Word(text=text, literal=True, tilde=tilde, segments=tuple(kept))


def named_at_run_time_only(cmd: SimpleCommand) -> bool:
    """Whether every argument of ``cmd`` computed at run time is a new entry's name in a known
    directory (then the command does not act on "arguments computed at run time")."""
    from anna_common.risk.writes import write_targets

    computed = [w for w in cmd.args if w.substituted]
    names = [t.word for t in write_targets(cmd) if new_entry_dir(t) is not None]
    return bool(computed) and all(w in names for w in computed)
