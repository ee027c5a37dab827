"""Does a plan answer the request? An action request needs a step that could perform it.

"install htop" answered by a health summary is a valid plan and a wrong one.
The request's leading verb says what kind of step must be there:

* install → a package manager install step (``pacman -S``, ``yay -S``, ``apt install``…);
  steps are read through the shell analysis (argv after ``sudo``/``env``/paths are peeled
  off), never matched as text: ``echo pacman -S htop`` installs nothing;
* restart, start, stop, enable, disable, reload → a service manager step with that action;
* change, set, remove, update and the like → at least one step that changes something
  (Anna's own assessment above INFO, never the model's label).

Questions ("how do I install htop?") are answered in notes and are never flagged, nor
are verbs that may rightly end in an answer ("make a list…", "fix my wifi": diagnosis first);
the rule only looks at imperative requests, so a miss is a missed flag, not a refusal.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.findings import Finding, FindingCode

if TYPE_CHECKING:
    from anna_common.findings import AnnotatedPlan

_FILLER = re.compile(
    r"^(?:please|pls|kindly|hey|hi|ok|okay|anna|now|just|go ahead and|can you|could you|"
    r"would you|will you|i want to|i'd like to|i would like to|i need to|help me|let's|"
    r"lets|try to)\b[\s,:]*", re.IGNORECASE)
_QUESTION = frozenset({"how", "what", "why", "which", "where", "when", "who", "whom", "whose",
                       "should", "is", "are", "does", "do", "did", "can", "could", "would",
                       "will", "may", "might", "has", "have", "was", "were"})
INSTALL = frozenset({"install", "setup"})
"""Verbs that need a package install step. Not "add": "add alice to the docker group" adds
no package (found by the golden tasks, bench/golden/tasks.json)."""
SERVICE = frozenset({"restart", "start", "stop", "enable", "disable", "reload"})
"""Verbs that need a service-manager step with that action."""
CHANGE = frozenset({"change", "set", "switch", "configure", "edit", "update", "upgrade",
                    "remove", "uninstall", "delete", "clean", "clear", "create", "mount",
                    "unmount", "kill", "rename", "move", "copy", "turn", "replace",
                    "increase", "decrease", "apply", "add"})
"""Verbs that need at least one step that changes something."""
PACMAN_LIKE = frozenset({"pacman", "yay", "paru", "pikaur", "trizen", "aura", "pamac"})
"""Programs that take pacman's ``-S`` operation."""
_SYNC_QUERY = frozenset("sigplcw")
"""``-S`` modifiers that only search, inform, list, print, clean or download."""
VERB_INSTALLERS = frozenset({"apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "flatpak",
                             "snap", "pipx", "pip", "pip3", "brew", "apk", "nix-env", "pkg"})
"""Programs whose first word (or ``-i``) says install."""
_INSTALL_WORDS = frozenset({"install", "in", "add", "-i", "--install"})
ALWAYS_INSTALLERS = frozenset({"xbps-install", "emerge", "pkgin"})
"""Programs that install whatever they are given."""
SERVICE_MANAGERS = frozenset({"systemctl", "service", "rc-service", "sv", "rc-update"})
"""Programs that start, stop, enable or disable services."""
_SERVICE_WORDS = frozenset({"start", "restart", "stop", "enable", "disable", "reload",
                            "try-restart", "reload-or-restart", "mask", "unmask", "up", "down",
                            "add", "del"})


def _argv_commands(command: str) -> list[tuple[str, list[str]]]:
    """(program, arguments) of every simple command the shell analysis finds in a step,
    nested code included (``sudo sh -c '…'``), with wrappers peeled off (``sudo``, ``env``,
    ``/usr/bin/pacman``); a program only named at run time has no name and is skipped."""
    from anna_common.shell.grammar import analyse

    try:
        found = analyse(command).commands
    except Exception:  # an unparsable step performs nothing we can vouch for
        return []
    return [(c.program, [w.text for w in c.args]) for c in found if c.program]


def _installs(program: str, args: list[str]) -> bool:
    if program in PACMAN_LIKE:
        for arg in args:
            if arg in ("-U", "--upgrade"):
                return True
            if arg == "--sync" or (arg.startswith("-S") and not arg.startswith("--")):
                letters = set(arg[2:]) if arg != "--sync" else set()
                return not letters & _SYNC_QUERY and not {"--search", "--info"} & set(args)
        return False
    if program in VERB_INSTALLERS:
        words = [a for a in args if not a.startswith("-") or a in _INSTALL_WORDS]
        return bool(words) and words[0] in _INSTALL_WORDS
    if program == "makepkg":
        return any(a == "--install" or (a.startswith("-") and not a.startswith("--")
                                        and "i" in a) for a in args)
    return program in ALWAYS_INSTALLERS


def _services(program: str, args: list[str], verb: str) -> bool:
    del verb  # any service action answers: "restart" done as stop+start is still done
    return program in SERVICE_MANAGERS and any(a in _SERVICE_WORDS for a in args)


def performs_install(command: str) -> bool:
    """A step whose parsed commands include a package install (``sudo pacman -S htop``,
    ``env pacman -S``, ``/usr/bin/pacman -Syu htop``; never ``echo pacman -S htop``)."""
    return any(_installs(p, a) for p, a in _argv_commands(command))


def performs_service_action(command: str, verb: str) -> bool:
    """A step whose parsed commands include a service-manager action."""
    return any(_services(p, a, verb) for p, a in _argv_commands(command))


def action_verb(request: str) -> str | None:
    """The request's leading verb when it is an imperative action, else None."""
    text = request.strip()
    first = text.split(maxsplit=1)[0].lower().strip(",:") if text else ""
    if first in _QUESTION and not re.match(r"(?i)(can|could|would|will) you\b", text):
        return None
    previous = None
    while previous != text:
        previous, text = text, _FILLER.sub("", text, count=1)
    head = text.split(maxsplit=1)[0].lower().strip(",.:!") if text else ""
    return head if head in INSTALL | SERVICE | CHANGE else None


def off_request_findings(plan: AnnotatedPlan, request: str) -> list[Finding]:
    """A finding when an action request's plan has no step that could perform it."""
    verb = action_verb(request)
    if verb is None:
        return []
    steps = plan.steps
    if verb in INSTALL:
        ok = any(performs_install(s.command) for s in steps)
        need = "a package install step (pacman -S, or the distribution's own installer)"
    elif verb in SERVICE:
        ok = any(performs_service_action(s.command, verb) for s in steps)
        need = f"a service step that does {verb!r} (systemctl {verb} UNIT)"
    else:
        ok = any(str(s.final_risk) != "INFO" for s in steps)
        need = "at least one step that makes the change"
    if ok:
        return []
    return [Finding(code=FindingCode.LLM_OFF_REQUEST,
                    message=f"the request asks to {verb}, but the plan has no step that could "
                            f"do it: it needs {need}. Plan what the user asked for.")]
