"""Which unasked commands may open a Unix socket, and to which sockets.

A confined run gets no ``AF_UNIX`` socket (seccomp) unless it is made only of read verbs
that must ask a service — ``systemctl status``, ``busctl introspect``, ``loginctl
list-sessions`` … — joined by plain text filters. Then its ``/run`` holds only the system
bus, systemd's private socket and, for the owner, their session bus and user manager
(:func:`bus_sockets`); /tmp and /var/tmp are empty (agents, tmux and X servers listen
there). This is a conservative reading of the words, not a parse: anything it does not
recognise — another program, a variable, a substitution, an assignment, a nested script, a
write verb, a remote host — means no Unix socket, never more of them.
"""

from __future__ import annotations

import shlex

READ_VERBS: dict[str, frozenset[str]] = {
    "systemctl": frozenset({
        "status", "is-active", "is-enabled", "is-failed", "is-system-running", "list-units",
        "list-unit-files", "list-timers", "list-sockets", "list-dependencies", "list-jobs",
        "list-paths", "list-automounts", "show", "cat", "get-default", "show-environment"}),
    "busctl": frozenset({"list", "status", "tree", "introspect", "get-property"}),
    "loginctl": frozenset({"list-sessions", "session-status", "show-session", "list-users",
                           "user-status", "show-user", "list-seats", "seat-status",
                           "show-seat"}),
    "hostnamectl": frozenset({"status"}),
    "timedatectl": frozenset({"status", "show", "list-timezones", "timesync-status",
                              "show-timesync"}),
    "localectl": frozenset({"status", "list-locales", "list-keymaps"}),
    "networkctl": frozenset({"list", "status"}),
}
"""Programs that read through D-Bus or systemd's socket, and their verbs that only read."""
DEFAULT_VERB = {"systemctl": "list-units", "busctl": "list", "loginctl": "list-sessions",
                "hostnamectl": "status", "timedatectl": "status", "localectl": "status",
                "networkctl": "list"}
"""What each program does with no verb."""
FILTERS = frozenset({"grep", "egrep", "fgrep", "head", "tail", "wc", "cut", "tr", "uniq",
                     "column", "cat", "echo", "printf", "true"})
"""Text filters that start nothing and open no socket."""
VALUE_OPTIONS = frozenset({"-t", "--type", "-p", "--property", "-P", "-n", "--lines", "-o",
                           "--output", "--state"})
"""Options whose value is the next word (so it is not taken for the verb)."""
REMOTE = frozenset({"-H", "--host", "-M", "--machine", "--root", "--image"})
"""Options that reach another machine, container or tree: never with a socket."""
_SEPARATORS = frozenset({";", "&", "&&", "|", "||", "\n"})


def _segments(command: str) -> list[list[str]] | None:
    """Simple commands as word lists, redirections dropped; None for anything unusual."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    segments: list[list[str]] = [[]]
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in _SEPARATORS:
            segments.append([])
        elif set(word) <= set("<>&") and word:
            if segments[-1] and segments[-1][-1].isdigit():
                segments[-1].pop()  # the descriptor number of 2>/dev/null
            skip = True
        elif set(word) & set("()$`\\") or any(c.isspace() for c in word) or (
                "=" in word and not word.startswith("-")):
            return None
        else:
            segments[-1].append(word)
    return [s for s in segments if s]


def _reads(words: list[str]) -> str | None:
    """``"filter"``, ``"reader"`` (a read verb of a bus reader) or None (anything else)."""
    while words and words[0] == "sudo":  # a shim in confined runs: it runs the rest as is
        words = words[1:]
        while words and words[0].startswith("-") and words[0] != "--":
            words = words[1:]
        if words and words[0] == "--":
            words = words[1:]
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program in FILTERS:
        return "filter"
    verbs = READ_VERBS.get(program)
    if verbs is None:
        return None
    verb = None
    args = iter(words[1:])
    for word in args:
        if word in REMOTE or word.split("=", 1)[0] in REMOTE:
            return None
        if word in VALUE_OPTIONS:
            next(args, None)
        elif not word.startswith("-") and verb is None:
            verb = word
    return "reader" if (verb or DEFAULT_VERB[program]) in verbs else None


def needs_bus(command: str) -> bool:
    """Whether ``command`` is only read verbs that need a service's socket (and filters)."""
    kinds = [_reads(s) for s in _segments(command) or ()]
    return bool(kinds) and None not in kinds and "reader" in kinds


def bus_sockets(uid: int, runtime_dir: str | None) -> tuple[str, ...]:
    """The sockets a bus reader's ``/run`` keeps: the system bus, systemd's own socket (root
    only, by its mode), and the owner's session bus and user manager when their runtime
    directory is the usual ``/run/user/UID``."""
    found = ["/run/dbus/system_bus_socket", "/run/systemd/private"]
    mine = f"/run/user/{uid}"
    if uid != 0 and runtime_dir in (None, mine, mine + "/"):
        found += [f"{mine}/bus", f"{mine}/systemd/private"]
    return tuple(found)
