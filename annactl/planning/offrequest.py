"""Does a plan answer the request? An action request needs a step that could perform it.

"install htop" answered by a health summary is a valid plan and a wrong one.
The request's leading verb says what kind of step must be there:

* install → a package manager install step (``pacman -S``, ``yay -S``, ``apt install``…);
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
INSTALL = frozenset({"install", "add", "setup"})
"""Verbs that need a package install step."""
SERVICE = frozenset({"restart", "start", "stop", "enable", "disable", "reload"})
"""Verbs that need a service-manager step with that action."""
CHANGE = frozenset({"change", "set", "switch", "configure", "edit", "update", "upgrade",
                    "remove", "uninstall", "delete", "clean", "clear", "create", "mount",
                    "unmount", "kill", "rename", "move", "copy", "turn", "replace",
                    "increase", "decrease", "apply"})
"""Verbs that need at least one step that changes something."""
_PKG_INSTALL = re.compile(
    r"\b(?:pacman|yay|paru|pikaur|trizen|aura)\b[^|;&]*\s-S(?![sigpl]\b)[a-z]*\b"
    r"|\b(?:apt|apt-get|dnf|yum|zypper|flatpak|snap|pipx|pip|pip3|brew|apk|nix-env|emerge|"
    r"xbps-install)\b[^|;&]*\b(?:install|in|add|-i)\b|\bxbps-install\b|\bmakepkg\b[^|;&]*-s?i",
    re.IGNORECASE)
_SERVICE_STEP = re.compile(
    r"\b(?:systemctl|service|rc-service|sv|rc-update)\b[^|;&]*\b(?:re)?(?:start|stop|enable|"
    r"disable|load|try-restart|reload-or-restart|mask|unmask|up|down|add|del)\b",
    re.IGNORECASE)


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
        ok = any(_PKG_INSTALL.search(s.command) for s in steps)
        need = "a package install step (pacman -S, or the distribution's own installer)"
    elif verb in SERVICE:
        ok = any(_SERVICE_STEP.search(s.command) for s in steps)
        need = f"a service step that does {verb!r} (systemctl {verb} UNIT)"
    else:
        ok = any(str(s.final_risk) != "INFO" for s in steps)
        need = "at least one step that makes the change"
    if ok:
        return []
    return [Finding(code=FindingCode.LLM_OFF_REQUEST,
                    message=f"the request asks to {verb}, but the plan has no step that could "
                            f"do it: it needs {need}. Plan what the user asked for.")]
