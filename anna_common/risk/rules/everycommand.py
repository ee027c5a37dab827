"""Checks every simple command gets, whatever its program.

Variables assigned in or before a command that change what programs do (preloaded
libraries, code every shell start runs, the history file, PATH), options and variables that
hand a program a command to run later (``--password-command=``, ``RESTIC_PASSWORD_COMMAND=``,
``tcpdump -z``), and wrappers that change what a command is (``systemd-run`` timers,
``sudo -e``) or are used on their own. The risk assessment (:mod:`anna_common.risk.assess`) runs
them beside the program's own rule.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import HISTORY_VARS, Code, Out
from anna_common.risk.rules.code import SHELL_MENTION
from anna_common.risk.rules.pmhooks import CONFIG_VARIABLES

if TYPE_CHECKING:
    from anna_common.shell.grammar import Analysis, SimpleCommand

NO_MENTION_CHECK = frozenset({
    # programs whose arguments are data, names or paths: "grep bash", "pacman -S fish",
    # "ls -l /bin/sh", "chsh -s /bin/zsh" mention shells without running them
    "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "which", "whereis",
    "type", "command", "ls", "stat", "file", "test", "[", "[[", "basename", "dirname",
    "realpath", "readlink", "pacman", "yay", "paru", "systemctl", "journalctl", "chsh",
    "usermod", "useradd", "git", "notify-send", "logger", "man", "apropos", "whatis", "tldr",
    "cat", "head", "tail", "wc", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "sed",
    "sort", "uniq", "cut", "tr", "diff", "cmp", "strings", "od", "xxd", "hexdump", "kill",
    "pkill", "killall", "pgrep", "pidof", "ps", "find", "locate", "cp", "mv", "ln", "install",
    "rm", "chmod", "chown", "mkdir", "touch", "tee", "column", "ldd", "readelf", "objdump",
    "nm", "getfacl", "getcap", "lsof", "namei", "tree", "awk", "gawk", "mawk", "pactree",
    "expac", "checkupdates", "ldconfig", "update-alternatives", "fc-list",
    # package names ("apt install zsh", "rpm -q bash"); their hook options are judged by
    # what they run (rules.pmhooks), which reads the value as a command
    "apt", "apt-get", "aptitude", "nala", "apt-cache", "dpkg", "dpkg-query", "rpm", "dnf",
    "dnf5", "yum", "microdnf", "tdnf", "zypper",
})
"""Programs whose arguments are not searched for embedded shell code or hook options."""
PRELOAD_VARS = frozenset({"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH",
                          "PERL5LIB", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS", "GCONV_PATH"})
"""Variables that make programs load other code."""
STARTUP_VARS = frozenset({"PROMPT_COMMAND", "BASH_ENV", "ENV", "ZDOTDIR", "PS4"})
"""Variables that run code whenever a shell starts."""


def assignments(analysis: Analysis, out: Out) -> None:
    """Judge every variable assignment of ``analysis`` (which values later commands see is
    :mod:`anna_common.risk.knownvars`' answer)."""
    for name, value in analysis.assignments:
        judge_assignment(name, value.text, out)
    refs = analysis.namerefs
    for cmd in analysis.commands:
        for name, value in cmd.assignments:
            judge_assignment(refs.get(name) or name, value.text, out)


def code_variable(name: str) -> bool:
    """``name`` decides which program or library runs (PATH, LD_PRELOAD, BASH_ENV, PAGER...):
    text from input put there is code, whatever it looks like."""
    return name in PRELOAD_VARS or name in STARTUP_VARS or name in ("PATH", "IFS") or \
        runs_variable(name)


def judge_assignment(name: str, value: str, out: Out) -> None:
    """One ``name=value``: shell code in the value, or a variable that changes what programs
    do (history, preloaded libraries, shell start-up code, PATH)."""
    if SHELL_MENTION.search(value):
        out.high(Code.EMBEDDED_SHELL, f"{name} holds a shell command ({value[:60]})", target=name)
    if name in HISTORY_VARS:
        out.high(Code.HISTORY_TAMPER, f"setting {name} changes what shell history records",
                 target=name)
    elif name in PRELOAD_VARS:
        out.high(Code.LIBRARY_PRELOAD, f"{name} makes programs load other code", target=name)
    elif name in STARTUP_VARS:
        out.high(Code.PERSISTENCE, f"{name} runs code whenever a shell starts", target=name)
    elif name == "PATH":
        out.medium(Code.SYSTEM_SETTING, "PATH changes which programs commands resolve to")
    elif name in CONFIG_VARIABLES:
        out.high(Code.UNTRUSTED_BUILD, f"{name}={value[:60]}: {CONFIG_VARIABLES[name]}",
                 target=name, system=True)
    elif runs_variable(name) and not (name.endswith("PAGER") and value in SAFE_PAGERS):
        out.high(Code.EMBEDDED_SHELL, f"{name} tells programs what to run ({value[:60]})",
                 target=name)


HOOK_OPTIONS = ("--password-command", "--conf-script", "--command", "--exec", "--run",
                "--post-invoke", "--pre-invoke", "--postrotate", "--hook", "--askpass",
                "--editor", "--pager", "--shell", "--rsh", "--proxy-command", "--on-")
"""Option prefixes that hand a program a command to run later."""


def hook_options(cmd: SimpleCommand, out: Out) -> None:
    """Options and variables that hand a program a command to run later
    (``--password-command=X``, ``RESTIC_PASSWORD_COMMAND=X``, ``tcpdump -z X``)."""
    # (variables naming a program, ``PAGER=x journalctl``, are judged with every assignment)
    for word in cmd.args:
        if word.text.startswith(("--compress-program", "--use-compress-program")):
            out.high(Code.EMBEDDED_SHELL, f"{cmd.program} is handed a program to run "
                     f"({word.text[:60]})", target=cmd.program)
            return
    if cmd.program in NO_MENTION_CHECK or cmd.program in ("systemctl", "flock", "watch"):
        return
    for word in cmd.args:
        name = word.text.split("=", 1)[0]
        if name.startswith(HOOK_OPTIONS) and len(name) > 2:
            out.high(Code.EMBEDDED_SHELL, f"{cmd.program} is handed a command to run "
                     f"({word.text[:60]})", target=cmd.program)
            return
    if cmd.program == "tcpdump" and any(w.text == "-z" for w in cmd.args):
        out.high(Code.EMBEDDED_SHELL, "tcpdump -z runs a command on every capture file",
                 target="tcpdump")
        return


_RUN_VARIABLES = frozenset({"EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "GIT_SSH",
                            "GIT_EXTERNAL_DIFF", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR",
                            "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
                            "GIT_CONFIG", "TERMINAL", "SHELL", "DIFFPROG", "MERGEPROG"})
"""Variables that name a program (or a configuration naming one) another program starts."""


SAFE_PAGERS = frozenset({"", "cat", "less", "more", "less -R", "less -FRX"})
"""Pager settings that run nothing but a pager (``SYSTEMD_PAGER=cat`` is the usual idiom)."""


def runs_variable(name: str) -> bool:
    """Setting ``name`` tells programs what to run (``PAGER``, ``GIT_SSH_COMMAND``,
    ``SYSTEMD_PAGER``, ``GIT_CONFIG_KEY_0``, ``SUDO_ASKPASS``)."""
    return name in _RUN_VARIABLES or name.startswith("GIT_CONFIG_") or name.endswith((
        "_COMMAND", "_CMD", "_HOOK", "EDITOR", "PAGER", "_ASKPASS", "_PROGRAM", "_PROXY_COMMAND"))


TIMERS = ("--on-calendar", "--on-active", "--on-boot", "--on-startup", "--on-unit-active",
          "--on-unit-inactive", "--on-clock-change", "--on-timezone-change")
"""``systemd-run`` options that schedule the command for later."""


def wrapped(cmd: SimpleCommand, out: Out) -> None:
    """Wrappers that change what the command is: systemd-run timers schedule it for later."""
    opts = cmd.wrapper_options.get("systemd-run")
    if opts is None:
        return
    if any(o.startswith(TIMERS) for o in opts):
        out.high(Code.PERSISTENCE, "systemd-run schedules the command to run again later",
                 target="systemd-run")
    else:
        out.medium(Code.SERVICE_CHANGE, "systemd-run runs the command as a transient unit",
                   system="--user" not in opts)


def wrapper_alone(cmd: SimpleCommand, out: Out) -> None:
    """A shell with literal code, or a wrapper used on its own (``sudo -l``, ``nohup``)."""
    if cmd.program in ("sudo", "doas") and any(w.text in ("-e", "--edit") for w in cmd.args):
        out.high(Code.INTERACTIVE_PROGRAM, "sudoedit opens an editor as root", system=True,
                 target="sudoedit")
        return
    if not cmd.interactive_shell:
        out.read_only()


_LIBRARY = re.compile(r"(?:^|[=/\s:])[\w.+-]*\.so(?:\.\d+)*$")
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def hidden_characters(cmd: SimpleCommand, out: Out) -> None:
    """Invisible or direction-changing characters make a command read differently than it runs."""
    for word in [*cmd.args, *(w for _, w in cmd.assignments)]:
        if _INVISIBLE.search(word.text):
            out.high(Code.OPAQUE, f"{cmd.program} is given invisible or bidirectional characters",
                     target=cmd.program)
            return


def library_load(cmd: SimpleCommand, out: Out) -> None:
    """A shared object handed to a program (``--engine x.so``, ``-D lib.so``) runs its code."""
    for word in cmd.args:
        if _LIBRARY.search(word.text):
            out.high(Code.LIBRARY_PRELOAD, f"{cmd.program} is handed a shared library to load "
                     f"({word.text[:60]})", target=cmd.program)
            return
