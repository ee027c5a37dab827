"""Seeing through command wrappers, shells and interpreters.

``sudo -u root env FOO=1 nice -n 5 /usr/bin/rm -rf /`` runs ``rm``. This module
walks the wrapper chain with each wrapper's own option grammar (which options
take a value, how many positional arguments precede the command) and reports
what finally runs, and what code a shell, ``eval`` or an interpreter is handed.
It never guesses: an option it does not know ends the walk at the wrapper,
whose program is then judged on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from anna_common.shell.argv import xargs_files, xargs_replace
from anna_common.shell.interpreters import (
    AWKS,
    INTERPRETER_CODE_OPTS,
    SHELLS,
    ShellCall,
    interpreter_code,
    language_of,
    shell_call,
)
from anna_common.shell.longopts import expand_word
from anna_common.shell.words import Word

__all__ = ["AWKS", "INTERPRETER_CODE_OPTS", "SHELLS", "WRAPPERS", "Invocation", "ShellCall",
           "interpreter_code", "language_of", "peel", "program_name", "shell_call"]


@dataclass(frozen=True, slots=True)
class WrapperSpec:
    """The option grammar of one wrapper program."""

    short_values: str = ""
    """Short options that take a value (``-u USER``)."""
    long_values: frozenset[str] = frozenset()
    """Long options that take a value when not written ``--opt=value``."""
    positionals: int = 0
    """Positional arguments before the wrapped command (``timeout DURATION``)."""
    privileged: bool = False
    """Whether the wrapped command runs with elevated privileges."""
    stop_options: frozenset[str] = frozenset()
    """Options after which no command follows (``sudo -l``, ``command -v``)."""
    shell_options: frozenset[str] = frozenset()
    """Options that make the wrapper run the rest through a shell (``sudo -s``)."""


def _spec(
    short: str = "",
    long: tuple[str, ...] = (),
    positionals: int = 0,
    privileged: bool = False,
    stop: tuple[str, ...] = (),
    shell: tuple[str, ...] = (),
) -> WrapperSpec:
    return WrapperSpec(
        short, frozenset(long), positionals, privileged, frozenset(stop), frozenset(shell)
    )


WRAPPERS: dict[str, WrapperSpec] = {
    "sudo": _spec(
        "ugpCrtUDRTh",
        ("--user", "--group", "--prompt", "--close-from", "--role", "--type", "--other-user",
         "--chdir", "--chroot", "--command-timeout", "--host"),
        privileged=True,
        stop=("-l", "--list", "-v", "--validate", "-k", "--reset-timestamp", "-K",
              "--remove-timestamp", "-V", "--version", "-h", "--help", "-e", "--edit"),
        shell=("-s", "--shell", "-i", "--login"),
    ),
    "doas": _spec("uC", privileged=True, stop=("-L",), shell=("-s",)),
    "pkexec": _spec("", ("--user",), privileged=True),
    "run0": _spec("uDg", ("--user", "--group", "--unit", "--property", "--description",
                          "--slice", "--chdir", "--setenv", "--nice", "--machine"),
                  privileged=True),
    "runuser": _spec("ugGw", ("--user", "--group", "--supp-group", "--whitelist-environment"),
                     privileged=True),
    "env": _spec("uCS", ("--unset", "--chdir", "--split-string", "--block-signal",
                         "--default-signal", "--ignore-signal")),
    "command": _spec("", stop=("-v", "-V")),
    "builtin": _spec(),
    "exec": _spec("a"),
    "nohup": _spec(),
    "setsid": _spec(),
    "stdbuf": _spec("ioe", ("--input", "--output", "--error")),
    "time": _spec("fo", ("--format", "--output")),
    "nice": _spec("n", ("--adjustment",)),
    "ionice": _spec("cnt", ("--class", "--classdata"), stop=("-p", "--pid", "-P", "--pgid",
                                                            "-u", "--uid")),
    "timeout": _spec("sk", ("--signal", "--kill-after"), positionals=1),
    "chrt": _spec("T P D", positionals=1, stop=("-p", "--pid", "-m", "--max")),
    "taskset": _spec("", positionals=1, stop=("-p", "--pid")),
    "busybox": _spec(),
    "xargs": _spec("EILnPsda", ("--eof", "--replace", "--max-lines", "--max-args",
                                    "--max-procs", "--max-chars", "--delimiter", "--arg-file",
                                    "--process-slot-var")),
    "flock": _spec("wEc", ("--timeout", "--conflict-exit-code", "--command"), positionals=1),
    "chroot": _spec("", ("--userspec", "--groups"), positionals=1, privileged=True),
    "unshare": _spec("S G R w", ("--setuid", "--setgid", "--root", "--wd", "--propagation",
                                 "--map-user", "--map-group", "--kill-child")),
    # (nsenter's namespace options take a file only when attached: ``-m`` then the command)
    "nsenter": _spec("tSG", ("--target", "--setuid", "--setgid"), privileged=True),
    "capsh": _spec("", ("--chroot", "--user", "--uid", "--gid", "--groups", "--caps",
                        "--inh", "--drop", "--addamb", "--delamb", "--iab", "--secbits")),
    "systemd-run": _spec("pEMuH", ("--unit", "--property", "--description", "--slice",
                                   "--setenv", "--uid", "--gid", "--nice", "--working-directory",
                                   "--on-calendar", "--on-active", "--on-boot", "--on-startup",
                                   "--on-unit-active", "--on-unit-inactive", "--timer-property",
                                   "--path-property", "--socket-property", "--machine", "--host",
                                   "--service-type", "--expand-environment"), privileged=True,
                         shell=("-S", "--shell")),
    "strace": _spec("abeEIoOpPsSuUX", ("--output", "--signal", "--trace", "--attach")),
    "ltrace": _spec("aAbDeEflLnopsSuwX"),
    "valgrind": _spec(),
    "rlwrap": _spec("abCcDfFghHiIlmMnNoOpPqrRsStvwWz"),
    "firejail": _spec(),
    "fakeroot": _spec("ils", ("--lib", "--faked", "-s")),
    "faketime": _spec("f", positionals=1),
    "proxychains": _spec("fq"),
    "proxychains4": _spec("fq"),
    "torsocks": _spec("uapPdi"),
    "catchsegv": _spec(),
    "dbus-launch": _spec(),
    "dbus-run-session": _spec(),
    "systemd-inhibit": _spec("", ("--what", "--who", "--why", "--mode")),
    "numactl": _spec("CNmplip"),
    "cgexec": _spec("g"),
    "sg": _spec("", positionals=1, privileged=True),
    "setpriv": _spec("", ("--reuid", "--regid", "--groups", "--securebits", "--pdeathsig",
                          "--inh-caps", "--ambient-caps", "--bounding-set", "--selinux-label",
                          "--apparmor-profile", "--landlock-access", "--landlock-rule")),
    "caffeinate": _spec("t"),
    "aa-exec": _spec("pn", ("--profile", "--namespace")),
    "openvt": _spec("cCu", ("--console", "--user")),
}
"""Programs that run another program given after their options."""


@dataclass(slots=True)
class Invocation:
    """What a command line runs once its wrappers are peeled off."""

    words: list[Word]
    """Program word first, then its arguments."""
    wrappers: list[str] = field(default_factory=list)
    """Wrapper programs, outermost first."""
    privileged: bool = False
    """Whether a privilege-raising wrapper (sudo, doas, pkexec, ...) was crossed."""
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    """``NAME=value`` given through ``env``."""
    code: list[tuple[str, Word]] = field(default_factory=list)
    """(language, code) handed over by a wrapper: ``su -c``, ``env -S``, ``watch``, ``sudo -s``."""
    interactive_shell: bool = False
    """A wrapper opens an interactive shell (``sudo -i``, ``su``, ``doas -s``)."""
    stdin_args: bool = False
    """Arguments come from standard input (``xargs``)."""
    stdin_replaces: bool = False
    """With ``xargs -I R`` the input replaces R in the arguments (already marked unknown)
    instead of being appended."""
    wrapper_options: dict[str, set[str]] = field(default_factory=dict)
    """Options each wrapper was given (``systemd-run --on-calendar`` schedules the command)."""
    inputs: list[Word] = field(default_factory=list)
    """Files a wrapper reads in place of standard input (``xargs -a FILE``)."""


def program_name(word: Word) -> str | None:
    """The program a command word names: basename of a literal word, else None."""
    if not word.literal or word.alternatives:
        return None
    text = word.text
    if not text:
        return None
    return text.rsplit("/", 1)[-1] or None


def _is_option(word: Word) -> bool:
    return word.literal and word.text.startswith("-") and word.text != "-"


def _skip_options(words: list[Word], spec: WrapperSpec) -> tuple[int, set[str], bool]:
    """Index of the first non-option word, the options seen, and whether ``--`` ended them."""
    seen: set[str] = set()
    i = 0
    while i < len(words):
        word = words[i]
        text = word.text
        if not _is_option(word):
            return i, seen, False
        if text == "--":
            return i + 1, seen, True
        if text.startswith("--"):
            name, eq, _ = text.partition("=")
            seen.add(name)
            i += 2 if (not eq and name in spec.long_values) else 1
            continue
        letters = text[1:]
        consumed_next = False
        for pos, letter in enumerate(letters):
            seen.add("-" + letter)
            if letter in spec.short_values and letter != " ":
                if pos == len(letters) - 1:
                    consumed_next = True
                break
        i += 2 if consumed_next else 1
    return i, seen, False


def _peel_env(words: list[Word], inv: Invocation) -> list[Word] | None:
    """``env [-i] [-u NAME] [NAME=value]... [cmd]``; ``-S STRING`` hands over shell code."""
    spec = WRAPPERS["env"]
    i = 0
    while i < len(words):
        word = words[i]
        if _is_option(word):
            text = word.text
            if text in ("-S", "--split-string") and i + 1 < len(words):
                inv.code.append(("sh", words[i + 1]))
                return []
            if text.startswith("-S") and len(text) > 2:
                inv.code.append(("sh", word.after(2)))
                return []
            if text.startswith("--split-string="):
                inv.code.append(("sh", word.after(len("--split-string="))))
                return []
            j, _, dashdash = _skip_options([word, *words[i + 1 : i + 2]], spec)
            i += max(j, 1)
            if dashdash:
                break
            continue
        if _assignment(word, inv):
            i += 1
            continue
        break
    return words[i:]


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _assignment(word: Word, inv: Invocation) -> bool:
    """``NAME=value`` before the command of ``env`` or ``sudo`` (a value computed at run time
    too: ``sudo FOO=$(x) rm -rf /`` still runs ``rm``)."""
    match = _ASSIGNMENT.match(word.text)
    if match is None:
        return False
    name = match.group(0)[:-1]
    value = Word.of(word.text[match.end():]) if word.literal else word.after(match.end())
    inv.assignments.append((name, value))
    return True


def _peel_su(words: list[Word], inv: Invocation) -> list[Word] | None:
    """``su [-] [-l] [-s SHELL] [-c CMD] [user]``: without -c it is an interactive root shell."""
    i = 0
    while i < len(words):
        text = words[i].text
        if text in ("-c", "--command", "--session-command") and i + 1 < len(words):
            inv.code.append(("sh", words[i + 1]))
            return []
        if text in ("-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w"):
            i += 2
            continue
        i += 1
    inv.interactive_shell = True
    return []


def _peel_watch(words: list[Word], inv: Invocation) -> list[Word] | None:
    """``watch [opts] CMD...`` runs ``sh -c "CMD ..."`` repeatedly (``-x``: exec directly)."""
    spec = _spec("nqd", ("--interval", "--differences", "--equexit", "--chgexit"))
    i, seen, _ = _skip_options(words, spec)
    rest = words[i:]
    if not rest:
        return []
    if "-x" in seen or "--exec" in seen:
        return rest
    if all(w.literal for w in rest):
        inv.code.append(("sh", Word.of(" ".join(w.text for w in rest))))
    else:
        inv.code.append(("sh", Word.unknown(" ".join(w.text for w in rest))))
    return []


def _peel_script(words: list[Word], inv: Invocation) -> list[Word] | None:
    """``script [opts] -c CMD [file]`` runs CMD through a shell; without -c, an interactive one."""
    for i, word in enumerate(words):
        if word.text in ("-c", "--command") and i + 1 < len(words):
            inv.code.append(("sh", words[i + 1]))
            return []
    inv.interactive_shell = True
    return []


def peel(words: list[Word]) -> Invocation:
    """Peel wrappers off ``words`` (program first) and say what finally runs."""
    inv = Invocation(words=list(words))
    for _ in range(16):  # wrappers nest; a longer chain is pathological and stops here
        if not inv.words:
            return inv
        prog = program_name(inv.words[0])
        if prog is None:
            return inv
        rest = _peel_one(prog, _expand_leading(prog, inv.words[1:]), inv)
        if rest is None:
            return inv
        inv.wrappers.append(prog)
        if not rest:
            inv.words = [inv.words[0]] if not inv.code and not inv.interactive_shell else []
            if inv.words:
                inv.wrappers.pop()
            return inv
        inv.words = rest
    return inv


_SU_SPEC = _spec("sgGw", ("--shell", "--group", "--supp-group", "--whitelist-environment",
                          "--command", "--session-command"))


def _expand_leading(prog: str, args: list[Word]) -> list[Word]:
    """The wrapper's own option words with abbreviated long options expanded (``sudo --us=x``,
    ``env --split-s``, ``su --comm``); the wrapped command's words are left as they are."""
    spec = _SU_SPEC if prog == "su" else WRAPPERS.get(prog, WrapperSpec())
    out = list(args)
    i = 0
    while i < len(out):
        if not _is_option(out[i]) or out[i].text == "--":
            break
        out[i] = expand_word(prog, out[i])
        text = out[i].text
        takes = (text.startswith("--") and "=" not in text and text in spec.long_values) or (
            not text.startswith("--") and text[-1] in spec.short_values.replace(" ", ""))
        i += 2 if takes else 1
    return out


def _peel_one(prog: str, args: list[Word], inv: Invocation) -> list[Word] | None:
    """The words after wrapper ``prog``'s own options, ``[]`` when none, None if not a wrapper."""
    if prog == "env":
        return _peel_env(args, inv)
    if prog == "su":
        return _peel_su(args, inv)
    if prog == "watch":
        return _peel_watch(args, inv)
    if prog == "script":
        return _peel_script(args, inv)
    if prog == "busybox":
        return args if args and _is_busybox_applet(args[0]) else None
    spec = WRAPPERS.get(prog)
    if spec is None:
        return None
    i, seen, _ = _skip_options(args, spec)
    if seen & spec.stop_options:
        return None
    inv.wrapper_options[prog] = seen
    if prog == "flock" and ("-c" in seen or "--command" in seen):
        if i + 1 < len(args):
            inv.code.append(("sh", args[i + 1]))
            return []
        return None
    rest = args[i + spec.positionals :] if i + spec.positionals <= len(args) else []
    while prog == "sudo" and rest and _assignment(rest[0], inv):
        rest = rest[1:]  # sudo sets NAME=value for the command it runs
    if spec.privileged:
        inv.privileged = True
    if seen & spec.shell_options:
        if not rest:
            inv.interactive_shell = True
            return []
        if all(w.literal for w in rest):
            inv.code.append(("sh", Word.of(" ".join(w.text for w in rest))))
            return []
    if prog == "xargs":
        inv.stdin_args = True
        inv.inputs.extend(xargs_files(args[:i]))
        replace = xargs_replace(args[:i])
        if replace is None:
            return rest or [Word.of("echo")]
        # -I R: each input line replaces R wherever it occurs (nothing is appended)
        inv.stdin_replaces = True
        return [Word.unknown(w.text) if replace in w.text else w for w in rest]
    if not rest and prog in _SHELL_WHEN_EMPTY:
        inv.interactive_shell = True
        return []
    return rest


_SHELL_WHEN_EMPTY = frozenset({"chroot", "sg", "unshare", "nsenter", "runuser", "firejail",
                               "fakeroot", "doas", "pkexec", "run0", "systemd-run", "setpriv",
                               "capsh", "aa-exec"})
"""Wrappers that start a shell when no command follows them."""


def _is_busybox_applet(word: Word) -> bool:
    return word.literal and not word.text.startswith("-")


