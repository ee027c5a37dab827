"""``creates:``/``removes:`` for ``--mode shell`` steps, so ``ansible-playbook --check``
can say what a step would do without running it.

Ansible's shell module runs nothing in check mode; given ``creates: PATH`` it reports
"would change" when PATH is missing and "ok" when it exists (``removes:`` the other
way round), and in a real run it skips the step when the path says it is done. Anna
derives the path only where the command's effect is exactly "this one path will
exist" or "will be gone": one simple command, no wrapper, no redirection, no
substitution, every word literal (no variables, globs, braces or ``~``), one absolute
path. Anything else gets neither key (the step is simply skipped under ``--check``),
which is always safe: a wrong ``creates`` would skip a step that should run.
"""

from __future__ import annotations

from anna_common.shell.grammar import analyse

_CREATES = {"mkdir", "touch"}
"""Programs whose operands are paths that exist afterwards."""
_REMOVES = {"rm", "rmdir"}
"""Programs whose operands are paths that are gone afterwards."""
_OPTIONS = {"mkdir": {"-p", "--parents"}, "touch": set(), "rmdir": set(),
            "rm": {"-f", "-r", "-R", "-rf", "-fr", "--force", "--recursive"}}
"""The only options accepted (others change the meaning, e.g. ``touch -r``)."""


def derive(command: str) -> tuple[str, str] | None:
    """``("creates"|"removes", PATH)`` for a command whose effect is one path, else None."""
    analysis = analyse(command)
    if not analysis.parse_ok or analysis.opaque or analysis.tainted or analysis.too_large \
            or analysis.functions or analysis.assignments or len(analysis.commands) != 1:
        return None
    cmd = analysis.commands[0]
    if cmd.program not in _CREATES | _REMOVES or cmd.wrappers or cmd.redirects \
            or cmd.assignments or cmd.substitutions or cmd.code or cmd.name is None \
            or cmd.name.text != cmd.program:
        return None
    words = cmd.args
    if any(not w.literal or w.glob or w.tilde or w.alternatives or w.variables
           or w.substituted for w in words):
        return None
    allowed = _OPTIONS[cmd.program]
    paths: list[str] = []
    end_of_options = False
    for word in words:
        text = word.text
        if not end_of_options and text == "--":
            end_of_options = True
        elif not end_of_options and text.startswith("-"):
            if text not in allowed:
                return None
        else:
            paths.append(text)
    if len(paths) != 1 or not paths[0].startswith("/") or "\n" in paths[0]:
        return None
    return ("creates" if cmd.program in _CREATES else "removes", paths[0])
