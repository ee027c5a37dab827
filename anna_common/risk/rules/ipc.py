"""Programs that change the machine through a socket, D-Bus or another process.

A read-only file tree (the confinement checks run in) does not stop these: ``busctl call``
can power the machine off, ``tmux send-keys`` types into another shell, ``swaymsg exec``
starts any program, ``xdotool type`` types into whatever window has focus. Each is INFO
only for its read verbs, judged on the parsed argv (options may come before the verb);
anything else is at least LOW, and those that run commands or reach other sessions HIGH.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.rules.desktop import desktop_tool
from anna_common.risk.writes import options
from anna_common.shell.argv import operands

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand
    from anna_common.shell.words import Word

_REMOTE = frozenset({"-H", "--host"})

DBUS_READ_METHODS = frozenset({
    "org.freedesktop.DBus.Properties.Get", "org.freedesktop.DBus.Properties.GetAll",
    "org.freedesktop.DBus.Introspectable.Introspect", "org.freedesktop.DBus.Peer.Ping",
    "org.freedesktop.DBus.Peer.GetMachineId", "org.freedesktop.DBus.ListNames",
    "org.freedesktop.DBus.ListActivatableNames", "org.freedesktop.DBus.GetNameOwner",
    "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.DBus.GetId",
    "org.freedesktop.DBus.GetConnectionUnixUser",
    "org.freedesktop.DBus.GetConnectionUnixProcessID",
})
"""D-Bus methods that only read, whoever implements them (busctl, dbus-send, gdbus, qdbus)."""


def positionals(cmd: SimpleCommand, values: frozenset[str]) -> list[Word]:
    """The words that are not options or option values (``-p X show u`` → ``show u``)."""
    words: list[Word] = []
    skip = False
    for word in cmd.args:
        if skip:
            skip = False
            continue
        if word.literal and word.text.startswith("-") and word.text != "-":
            skip = word.text in values
            continue
        words.append(word)
    return words


def remote_host(cmd: SimpleCommand, out: Out) -> bool:
    """``-H user@host`` / ``--host=``: the command acts on another machine over SSH."""
    for word in cmd.args:
        if word.text in _REMOTE or word.text.startswith("--host="):
            out.high(Code.REMOTE_ACCESS, f"{cmd.program} -H acts on another machine over SSH",
                     target=cmd.program)
            return True
    return False


def _system_bus(cmd: SimpleCommand) -> bool:
    return "--user" not in options(cmd.args) and "--session" not in options(cmd.args)


def _dbus_message(cmd: SimpleCommand, out: Out, what: str) -> None:
    out.high(Code.SYSTEM_SETTING, f"{cmd.program} {what}: a D-Bus call can change anything the "
             "receiving service controls (power, logins, network, packages)",
             system=_system_bus(cmd), target=cmd.program)


def _bus_monitor(cmd: SimpleCommand, out: Out) -> None:
    out.high(Code.SECRET_READ, f"{cmd.program} records every message on the bus (secrets "
             "handed to agents included)", system=_system_bus(cmd), target="dbus")


def busctl_reads(words: list[str], cmd: SimpleCommand, out: Out) -> bool:
    """busctl's verbs that are not plain reads; True when judged here."""
    verb = words[0] if words else ""
    if verb in ("monitor", "capture"):
        _bus_monitor(cmd, out)
        return True
    if verb == "call" and len(words) >= 5 and f"{words[3]}.{words[4]}" in DBUS_READ_METHODS:
        out.read_only()
        return True
    if verb in ("call", "set-property", "emit"):
        _dbus_message(cmd, out, f"{verb} {' '.join(words[1:3])}")
        return True
    return False


def dbus_send(cmd: SimpleCommand, out: Out) -> None:
    """``dbus-send [opts] PATH IFACE.MEMBER [ARGS]``: INFO only for a read-only method call."""
    texts = [w.text for w in cmd.args]
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    kind = next((t.split("=", 1)[1] for t in texts if t.startswith("--type=")), None)
    if kind is None:
        kind = "method_call" if "--print-reply" in texts or any(
            t.startswith("--print-reply=") for t in texts) else "signal"
    reads = kind == "method_call" and len(words) >= 2 and words[1] in DBUS_READ_METHODS
    if help_only(cmd) or (reads and all(w.literal for w in cmd.args)):
        out.read_only()
    else:
        _dbus_message(cmd, out, f"sends {words[1] if len(words) > 1 else 'a message'}")


def gdbus(cmd: SimpleCommand, out: Out) -> None:
    """gdbus introspect/wait read; call only for read-only methods; monitor sees everything."""
    verb = cmd.args[0].text if cmd.args else ""
    texts = [w.text for w in cmd.args]
    if verb in ("introspect", "wait", "help", "") or help_only(cmd):
        out.read_only()
        return
    if verb == "monitor":
        _bus_monitor(cmd, out)
        return
    method = next((texts[i + 1] for i, t in enumerate(texts[:-1]) if t in ("--method", "-m")),
                  None) or next((t.split("=", 1)[1] for t in texts if t.startswith("--method=")),
                                None)
    if verb == "call" and method in DBUS_READ_METHODS and all(w.literal for w in cmd.args):
        out.read_only()
        return
    _dbus_message(cmd, out, f"{verb} {method or ''}".strip())


def qdbus(cmd: SimpleCommand, out: Out) -> None:
    """``qdbus [SERVICE [PATH [METHOD ARGS]]]``: listing reads; calling a method can do anything
    (``qdbus org.kde.ksmserver /KSMServer logout 0 2 2`` shuts the machine down)."""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    if len(words) <= 2 or help_only(cmd):
        out.read_only()
        return
    method = words[2]
    if method in DBUS_READ_METHODS or (len(words) >= 4 and method.rsplit(".", 1)[-1] in (
            "Get", "GetAll") and "Properties" in method):
        out.read_only()
        return
    _dbus_message(cmd, out, f"calls {method}")


def dbus_monitor(cmd: SimpleCommand, out: Out) -> None:
    """dbus-monitor records the bus."""
    if help_only(cmd):
        out.read_only()
    else:
        _bus_monitor(cmd, out)


def varlinkctl(cmd: SimpleCommand, out: Out) -> None:
    """varlinkctl: describing interfaces reads; ``call`` invokes a method."""
    verb = next((w.text for w in cmd.args if not w.text.startswith("-")), "")
    if verb in ("info", "list-interfaces", "introspect", "list-methods", "validate-idl",
                "help", "") or help_only(cmd):
        out.read_only()
    else:
        out.high(Code.SYSTEM_SETTING, f"varlinkctl {verb} calls a service method, which can "
                 "change anything that service controls", system=True, target=verb)


_RUN_WORDS = frozenset({"exec", "exec_always", "exec-once", "execr", "spawn", "spawn-sh",
                        "spawn_sh", "run", "shell"})
_EXIT_WORDS = frozenset({"exit", "quit", "logout"})


def wm_message(cmd: SimpleCommand, out: Out) -> None:
    """swaymsg/i3-msg/hyprctl/bspc/herbstclient/awesome-client/niri: ``exec`` runs any
    program and ``exit`` ends the session (HIGH); queries read; the rest is LOW."""
    prog = cmd.program or ""
    tokens = [t for w in cmd.args for t in re.split(r"[\s;,]+", w.text) if t]
    if prog == "awesome-client" or any(t in _RUN_WORDS for t in tokens):
        out.high(Code.EMBEDDED_SHELL, f"{prog} is asked to start a program Anna does not see",
                 target=prog)
        return
    if any(t in _EXIT_WORDS for t in tokens):
        out.high(Code.KILL_CRITICAL, f"{prog} ends your desktop session", target=prog)
        return
    if prog in ("swaymsg", "i3-msg"):
        _sway_like(cmd, out)
    else:
        desktop_tool(cmd, out)


def _sway_like(cmd: SimpleCommand, out: Out) -> None:
    """Only a ``-t get_*``/``subscribe`` query with no command text reads."""
    texts = [w.text for w in cmd.args]
    kind = next((texts[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-t", "--type")), None)
    kind = kind or next((t.split("=", 1)[1] for t in texts if t.startswith("--type=")), None)
    rest = positionals(cmd, frozenset({"-t", "--type", "-s", "--socket"}))
    if help_only(cmd) or (kind is not None and (kind.startswith("get_") or kind == "subscribe")
                          and not rest):
        out.read_only()
        return
    out.low(Code.USER_CONFIG, f"{cmd.program} changes your desktop session",
            target=cmd.program)


_XDOTOOL_READ = frozenset({"getactivewindow", "getwindowfocus", "getwindowname",
                           "getwindowpid", "getwindowgeometry", "getmouselocation",
                           "getdisplaygeometry", "search", "get_desktop", "get_num_desktops",
                           "getwindowclassname", "get_desktop_for_window", "get_desktop_viewport",
                           "version", "help"})
_TYPING = frozenset({"type", "key", "keydown", "keyup", "exec", "behave", "behave_screen_edge",
                     "sendkey", "stdin"})


def input_injection(cmd: SimpleCommand, out: Out) -> None:
    """xdotool/ydotool/wtype/dotool: typing into another window can run commands in it."""
    prog = cmd.program or ""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    if help_only(cmd) or (prog == "xdotool" and words and words[0] in _XDOTOOL_READ
                          and not set(words) & (_TYPING | _WINDOW_CHANGES)):
        out.read_only()
        return
    if prog in ("wtype", "dotool") or set(words) & _TYPING:
        out.high(Code.INTERACTIVE_PROGRAM, f"{prog} types keys into whatever window has focus, "
                 "which can run commands there", target=prog)
        return
    out.low(Code.USER_CONFIG, f"{prog} moves the pointer or windows", target=prog)


_WINDOW_CHANGES = frozenset({"click", "mousedown", "mouseup", "mousemove", "mousemove_relative",
                             "windowactivate", "windowfocus", "windowkill", "windowclose",
                             "windowquit", "windowmap", "windowunmap", "windowminimize",
                             "windowmove", "windowsize", "windowraise", "windowreparent",
                             "windowstate", "set_window", "set_desktop", "set_num_desktops",
                             "set_desktop_for_window", "set_desktop_viewport", "sleep"})

_TMUX_READ = frozenset({"ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp",
                        "list-clients", "lsc", "list-buffers", "lsb", "list-keys", "lsk",
                        "list-commands", "lscm", "show-options", "show", "show-window-options",
                        "showw", "show-environment", "showenv", "has-session", "has", "info",
                        "server-info", "start-server", "start"})


def tmux(cmd: SimpleCommand, out: Out) -> None:
    """tmux: listing reads; ``send-keys`` types into another shell, ``run-shell`` runs one.

    Commands chain with ``;`` and formats run shell code with ``#(...)``, so every command in
    the chain must be a read and no argument may hold a format command.
    """
    texts = [w.text for w in cmd.args]
    if help_only(cmd) or texts in (["-V"],):
        out.read_only()
        return
    words = [w.text for w in positionals(cmd, frozenset({"-L", "-S", "-f", "-c", "-t", "-F",
                                                          "-T"}))]
    chain: list[list[str]] = [[]]
    for word in words:
        if word in (";", "\\;"):
            chain.append([])
        else:
            chain[-1].append(word)
    reads = all(part and part[0] in _TMUX_READ for part in chain)
    if reads and all(w.literal for w in cmd.args) and not any("#(" in t for t in texts) and \
            "-f" not in texts and "-c" not in texts:
        out.read_only()
        return
    out.high(Code.INTERACTIVE_PROGRAM, f"tmux {' '.join(words[:1])} acts on terminal sessions "
             "(send-keys and run-shell run commands in them)", target="tmux")


def screen(cmd: SimpleCommand, out: Out) -> None:
    """screen -ls reads; -X sends commands (``stuff`` types into the session)."""
    texts = {w.text for w in cmd.args}
    if (texts and texts <= {"-ls", "-list", "-v", "--version", "-q"}) or help_only(cmd):
        out.read_only()
        return
    out.high(Code.INTERACTIVE_PROGRAM, "screen opens or drives terminal sessions (-X stuff "
             "types commands into them)", target="screen")


def agents(cmd: SimpleCommand, out: Out) -> None:
    """gpg-connect-agent sends commands to gpg-agent (``/run``, ``/datafile`` reach files and
    programs); ssh-agent with a command runs it."""
    prog = cmd.program or ""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    if help_only(cmd):
        out.read_only()
        return
    if prog == "ssh-agent":
        if words:
            out.high(Code.SCRIPT_FILE, f"ssh-agent runs {words[0]}, which Anna does not "
                     "analyse", target=words[0])
        elif "-k" in options(cmd.args):
            out.medium(Code.PROCESS_SIGNAL, "ssh-agent -k stops your SSH agent")
        else:
            out.low(Code.PROCESS_SIGNAL, "ssh-agent starts an agent")
        return
    if any(w.startswith("/") and w.split()[0] not in ("/bye", "/echo", "/nop") for w in words):
        out.high(Code.EMBEDDED_SHELL, "gpg-connect-agent meta-commands open files and run "
                 "programs", target=prog)
        return
    commands = [w.split()[0].lower() for w in words if w.split() and w not in ("/bye",)]
    if commands and all(c in ("keyinfo", "getinfo", "help", "/echo") for c in commands):
        out.read_only()
        return
    out.medium(Code.SYSTEM_SETTING, f"{prog} sends commands to gpg-agent", target=prog)


def broadcast(cmd: SimpleCommand, out: Out) -> None:
    """logger writes the system log; wall writes every terminal."""
    if help_only(cmd):
        out.read_only()
    elif cmd.program == "logger":
        # an entry in the system log is evidence others rely on: it can be forged
        out.medium(Code.SYSTEM_SETTING, "logger adds an entry to the system log",
                   target="logger")
    else:
        out.medium(Code.SYSTEM_SETTING, f"{cmd.program} writes a message on other users' "
                   "terminals", target=cmd.program)


def udevadm(cmd: SimpleCommand, out: Out) -> None:
    """udevadm info/monitor/settle/verify/cat read; trigger/control/test re-run rules."""
    verb = next((w.text for w in cmd.args if not w.text.startswith("-")), "")
    if verb in ("info", "monitor", "settle", "verify", "cat", "") or help_only(cmd):
        out.read_only()
        return
    out.medium(Code.SYSTEM_SETTING, f"udevadm {verb} re-runs device rules or changes udev",
               system=True, target=verb)


def networkctl(cmd: SimpleCommand, out: Out) -> None:
    """networkctl list/status/lldp/label/cat read; up/down/reload/reconfigure change links."""
    verb = next((w.text for w in cmd.args if not w.text.startswith("-")), "list")
    if verb in ("list", "status", "lldp", "label", "cat") or help_only(cmd):
        out.read_only()
        return
    out.high(Code.NETWORK_CONFIG, f"networkctl {verb} changes network links", system=True,
             target=verb)


def fuser(cmd: SimpleCommand, out: Out) -> None:
    """fuser lists users of a file; -k kills them."""
    opts = options(cmd.args)
    if "-k" in opts or "--kill" in opts:
        wide = [w.text for w in operands(cmd.args)
                if not w.literal or (posixpath.normpath(w.text).count("/") <= 1 and
                w.text.startswith("/"))]
        if wide or "-m" in opts or "--mount" in opts:
            # every process using a whole filesystem, or / or a top-level directory: the
            # services, the sessions and the shell that asked
            out.high(Code.KILL_CRITICAL, f"fuser -k kills every process using the filesystem "
                     f"of {(wide or ['the path'])[0][:40]}", system=True, target="fuser")
            return
        out.medium(Code.PROCESS_SIGNAL, "fuser -k kills every process using the path",
                   target="fuser")
    else:
        out.read_only()


IPC_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    "dbus-send": dbus_send,
    "gdbus": gdbus,
    **dict.fromkeys(("qdbus", "qdbus6", "qdbus-qt5", "qdbus-qt6"), qdbus),
    "dbus-monitor": dbus_monitor,
    "varlinkctl": varlinkctl,
    **dict.fromkeys(("swaymsg", "i3-msg", "hyprctl", "bspc", "herbstclient", "awesome-client",
                     "niri", "riverctl", "qtile"), wm_message),
    **dict.fromkeys(("xdotool", "ydotool", "wtype", "dotool"), input_injection),
    "tmux": tmux,
    "screen": screen,
    **dict.fromkeys(("gpg-connect-agent", "ssh-agent"), agents),
    **dict.fromkeys(("logger", "wall"), broadcast),
    "udevadm": udevadm,
    "networkctl": networkctl,
    "fuser": fuser,
}
"""Rules for programs that act through IPC (applied after every other table)."""
