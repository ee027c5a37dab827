"""systemd and friends: services, logs, clocks, sessions, power and processes.

Reading state is INFO. Starting, stopping, enabling or restarting a service is
MEDIUM (the daemon records ``is-enabled``/``is-active`` first and can restore
them); for units that keep you connected or logged in (sshd, NetworkManager,
the display manager, logind) it is HIGH. Stopping or disabling a firewall,
AppArmor or auditd is a hard ban. Per-user units are LOW.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.rules.destructive import every_process, foreign_unit, vacuums
from anna_common.risk.rules.ipc import busctl_reads, positionals, remote_host
from anna_common.risk.writes import options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand

_SYSTEMCTL_READ = frozenset({
    "status", "show", "cat", "is-active", "is-enabled", "is-failed", "is-system-running",
    "list-units", "list-unit-files", "list-sockets", "list-timers", "list-jobs",
    "list-dependencies", "list-machines", "list-automounts", "list-paths", "get-default",
    "show-environment", "help", "whoami", "--version", "-h", "--help",
})
_SYSTEMCTL_POWER = frozenset({"reboot", "poweroff", "halt", "kexec", "suspend", "hibernate",
                              "hybrid-sleep", "suspend-then-hibernate", "rescue", "emergency",
                              "default", "switch-root", "soft-reboot", "exit"})
_SYSTEMCTL_HIGH = frozenset({"isolate", "set-default", "edit", "kill", "set-property", "link",
                             "daemon-reexec", "revert", "import-environment", "set-environment",
                             "unset-environment", "clean", "freeze", "thaw", "bind",
                             "mount-image"})
_SECURITY_UNITS = ("firewalld", "ufw", "nftables", "iptables", "ip6tables", "apparmor", "auditd",
                   "fail2ban", "selinux", "ebtables", "arptables", "opensnitch", "clamav",
                   "crowdsec")
_CRITICAL_UNITS = ("sshd", "ssh", "NetworkManager", "systemd-networkd", "systemd-resolved",
                   "iwd", "wpa_supplicant", "dhcpcd", "network", "networking", "dbus",
                   "systemd-logind", "polkit", "gdm", "sddm", "lightdm", "ly", "greetd",
                   "display-manager", "getty", "systemd-journald", "systemd-udevd", "netctl",
                   "connman", "nscd", "sssd", "systemd-homed", "rsyslog", "syslog-ng", "syslog",
                   "cron", "cronie", "crond", "atd", "systemd-journald", "journald")
_STOPPING = frozenset({"stop", "disable", "mask", "kill", "isolate", "freeze"})
_REWRITING = frozenset({"edit", "set-property", "revert", "mask", "unmask", "link"})
"""Verbs that write a unit's file or drop-ins (``/etc/systemd/system{,.control}``)."""
_ANNA_UNITS = frozenset({"annad", "anna-recipe"})


def security_unit(unit: str) -> bool:
    """``unit`` (a name or unit file name) is a security service (firewall, AppArmor,
    auditd, ...)."""
    return _unit_base(unit) in _SECURITY_UNITS


def _named(base: str) -> str:
    """A unit glob (``'ssh*'``, ``'apparm?r'``, ``'*'``: systemctl matches it against the
    loaded units) as the security or critical unit it can match, else itself."""
    if not any(c in base for c in "*?["):
        return base
    return next((name for name in (*_SECURITY_UNITS, *_CRITICAL_UNITS)
                 if fnmatch.fnmatchcase(name, base)), base)


def _unit_base(unit: str) -> str:
    base = unit.rsplit("/", 1)[-1]
    for suffix in (".service", ".socket", ".target", ".timer", ".path", ".mount"):
        base = base.removesuffix(suffix)
    return base.split("@", 1)[0]


_SYSTEMCTL_VALUES = frozenset({
    "-p", "--property", "-P", "-t", "--type", "--state", "-n", "--lines", "-o", "--output",
    "-s", "--signal", "--kill-whom", "--kill-value", "--what", "--job-mode", "--root",
    "--image", "-M", "--machine", "-H", "--host", "--timestamp", "--preset-mode",
    "--boot-loader-menu", "--boot-loader-entry", "--reboot-argument", "--message", "--drop-in",
    "--when", "--image-policy", "--check-inhibitors"})
def systemctl(cmd: SimpleCommand, out: Out) -> None:
    """systemctl by verb and unit, judged on the parsed argv (options may come first)."""
    words = positionals(cmd, _SYSTEMCTL_VALUES)
    opts = options(cmd.args)
    user = bool(opts & {"--user"}) and "--system" not in opts
    verb = words[0].text if words else "list-units"
    units = [w.text for w in words[1:]]
    if remote_host(cmd, out):
        return
    if words and not words[0].literal:
        out.high(Code.SERVICE_CHANGE, "systemctl with a verb only known at run time",
                 system=not user, target="systemctl")
        return
    if verb in _SYSTEMCTL_READ or (verb == "log-level" and len(words) == 1) or help_only(cmd):
        out.read_only()
        return
    if verb in _SYSTEMCTL_POWER:
        out.high(Code.POWER, f"systemctl {verb} changes the power state", system=True,
                 target=verb)
        return
    bases = [_named(_unit_base(u)) for u in units]
    if verb in _STOPPING and any(b in _SECURITY_UNITS for b in bases) and not user:
        hit = next(b for b in bases if b in _SECURITY_UNITS)
        out.ban(Code.BAN_SECURITY_DISABLE, f"systemctl {verb} switches off {hit}", target=hit)
        return
    if verb in _REWRITING and not user and _ANNA_UNITS & set(bases):
        out.ban(Code.BAN_ANNA_CONFIG, f"systemctl {verb} rewrites annad's own unit or its "
                "drop-ins: only the administrator changes it, never a plan", target="annad")
        return
    if any(not w.literal for w in words[1:]):
        out.high(Code.SERVICE_CHANGE, f"systemctl {verb} on units only known at run time",
                 system=not user, target=verb)
        return
    if not user and foreign_unit(verb, units, out):
        return
    critical = next((u for u, b in zip(units, bases, strict=False) if b in _CRITICAL_UNITS), None)
    if user:
        out.low(Code.SERVICE_CHANGE, f"systemctl --user {verb} changes your own services",
                target=units[0] if units else verb)
    elif critical is not None and verb not in ("start", "enable", "unmask", "reset-failed"):
        out.high(Code.CRITICAL_SERVICE, f"systemctl {verb} {critical} can cut off logins or "
                 "the network", system=True, target=critical)
    elif verb in _SYSTEMCTL_HIGH:
        out.high(Code.SERVICE_CHANGE, f"systemctl {verb} changes system state in ways Anna "
                 "cannot undo", system=True, target=units[0] if units else verb)
    elif verb == "reset-failed":
        out.low(Code.SERVICE_CHANGE, "systemctl reset-failed clears failure records",
                system=True)
    else:
        out.medium(Code.SERVICE_CHANGE, f"systemctl {verb} changes system services",
                   system=True, target=units[0] if units else verb)


def service(cmd: SimpleCommand, out: Out) -> None:
    """SysV ``service NAME ACTION`` / OpenRC ``rc-service`` / runit ``sv``."""
    texts = [w.text for w in cmd.args if not w.text.startswith("-")]
    if cmd.program in ("sv", "rc-update"):  # ACTION NAME (rc-update del sshd)
        action, name = (texts[0] if texts else "status"), (texts[1] if len(texts) > 1 else "")
    else:
        name, action = (texts[0] if texts else ""), (texts[1] if len(texts) > 1 else "status")
    if "/" in name or ".." in name:
        out.high(Code.SCRIPT_FILE, f"{cmd.program} is given a path instead of a service name",
                 target=name)
        return
    if action in ("status", "--status-all") or not texts or help_only(cmd):
        out.read_only()
        return
    base = _named(_unit_base(name))
    if action in ("stop", "disable", "down", "kill", "del", "delete", "off", "remove") and \
            base in _SECURITY_UNITS:
        out.ban(Code.BAN_SECURITY_DISABLE, f"{cmd.program} stops {base}", target=base)
        return
    if base in _CRITICAL_UNITS:
        out.high(Code.CRITICAL_SERVICE, f"{cmd.program} {action} {base} can cut off logins or "
                 "the network", system=True, target=base)
        return
    out.medium(Code.SERVICE_CHANGE, f"{cmd.program} {action} {name}", system=True, target=name)


_JOURNAL_WRITE = ("--vacuum-size", "--vacuum-time", "--vacuum-files", "--rotate", "--flush",
                  "--sync", "--relinquish-var", "--smart-relinquish-var", "--setup-keys",
                  "--update-catalog")


def journalctl(cmd: SimpleCommand, out: Out) -> None:
    """journalctl reads logs; vacuum/rotate/flush change them."""
    if vacuums(cmd, out):
        return
    if any(w.text.startswith(_JOURNAL_WRITE) for w in cmd.args):
        out.medium(Code.SYSTEM_SETTING, "journalctl deletes or rotates logs", system=True,
                   target="journal")
    elif any(w.text.startswith("--cursor-file") for w in cmd.args):
        out.high(Code.UNCAPTURED_WRITE, "journalctl --cursor-file writes a file Anna does not "
                 "snapshot; Anna cannot back this up", target="--cursor-file")
    elif not remote_host(cmd, out):
        out.read_only()


def dmesg(cmd: SimpleCommand, out: Out) -> None:
    """dmesg reads the kernel log; -C/-c clear it, -n/-D/-E change console logging."""
    if options(cmd.args) & {"-C", "--clear", "-c", "--read-clear", "-D", "--console-off", "-E",
                            "--console-on", "-n", "--console-level"}:
        out.medium(Code.SYSTEM_SETTING, "dmesg clears the kernel log or changes console logging",
                   system=True)
    else:
        out.read_only()


_CTL_READ = {
    "hostnamectl": {"", "status", "hostname", "icon-name", "chassis", "deployment", "location"},
    "timedatectl": {"", "status", "show", "list-timezones", "timesync-status", "show-timesync"},
    "localectl": {"", "status", "list-locales", "list-keymaps", "list-x11-keymap-models",
                  "list-x11-keymap-layouts", "list-x11-keymap-variants",
                  "list-x11-keymap-options"},
    "loginctl": {"", "list-sessions", "session-status", "show-session", "list-users",
                 "user-status", "show-user", "list-seats", "seat-status", "show-seat"},
    "busctl": {"", "list", "status", "tree", "introspect", "get-property", "help", "--version",
               "wait"},
    "coredumpctl": {"", "list", "info"},
    "systemd-analyze": {"", "time", "blame", "critical-chain", "plot", "dot", "dump", "verify",
                        "security", "calendar", "timespan", "timestamp", "unit-paths",
                        "cat-config", "syscall-filter", "condition", "inspect-elf", "fdstore",
                        "log-level", "log-target", "service-watchdogs", "image-policy",
                        "has-tpm2", "pcrs", "srk", "architectures", "smbios11", "exit-status",
                        "capability", "unit-files", "filesystems"},
    "powerprofilesctl": {"", "get", "list", "list-holds", "version"},
    "upower": {"", "-d", "--dump", "-e", "--enumerate", "-i", "--show-info", "-v"},
}


_GETTERS = {
    "hostnamectl": ("hostname", "icon-name", "chassis", "deployment", "location"),
    "systemd-analyze": ("log-level", "log-target", "service-watchdogs"),
}
def ctl(cmd: SimpleCommand, out: Out) -> None:
    """hostnamectl/timedatectl/localectl/loginctl: status read; set-* change settings."""
    prog = cmd.program or ""
    words = [w.text for w in positionals(cmd, _SYSTEMCTL_VALUES)]
    verb = words[0] if words else ""
    read = _CTL_READ.get(prog, set())
    # "hostnamectl hostname NAME", "systemd-analyze log-level debug": a value sets it
    single = verb in _GETTERS.get(prog, ()) and len(words) > 1
    if remote_host(cmd, out):
        return
    if prog == "busctl" and busctl_reads(words, cmd, out):
        return
    if (verb in read and not single) or help_only(cmd):
        out.read_only()
        return
    if prog == "timedatectl" and verb == "set-time":
        out.high(Code.SYSTEM_SETTING, "timedatectl set-time sets the system clock",
                 system=True, target="clock")
        return
    if prog == "loginctl" and verb.startswith(("terminate", "kill")):
        out.high(Code.KILL_CRITICAL, f"loginctl {verb} ends login sessions", system=True,
                 target=words[1] if len(words) > 1 else verb)
        return
    if prog == "loginctl" and verb in ("reboot", "poweroff", "halt", "suspend", "hibernate"):
        out.high(Code.POWER, f"loginctl {verb} changes the power state", system=True, target=verb)
        return
    if prog == "loginctl" and verb.startswith(("lock", "unlock", "activate")):
        out.low(Code.USER_CONFIG, f"loginctl {verb} locks or switches sessions")
        return
    out.medium(Code.SYSTEM_SETTING, f"{prog} {verb} changes a system setting", system=True,
               target=words[1] if len(words) > 1 else verb)


def power(cmd: SimpleCommand, out: Out) -> None:
    """reboot/poweroff/halt/shutdown/init N: the machine goes down."""
    texts = [w.text for w in cmd.args]
    if cmd.program == "shutdown" and ("-c" in texts or "--show" in texts):
        out.low(Code.POWER, "shutdown -c cancels a scheduled shutdown", system=True)
        return
    if help_only(cmd):
        out.read_only()
        return
    out.high(Code.POWER, f"{cmd.program} changes the power state", system=True,
             target=cmd.program)


_CRITICAL_PROCESSES = frozenset({"1", "-1", "init", "systemd", "sshd", "Xorg", "Xwayland",
                                 "Hyprland", "sway", "gnome-shell", "plasmashell", "kwin_wayland",
                                 "kwin_x11", "gdm", "sddm", "lightdm", "dbus-daemon",
                                 "systemd-logind", "NetworkManager", "annad", "pacman", "cron",
                                 "crond", "cronie", "rsyslogd", "syslog-ng", "auditd",
                                 "systemd-journald"})
_USER_DAEMONS = frozenset({"swaybg", "hyprpaper", "swww-daemon", "waybar", "dunst", "mako",
                           "polybar", "picom", "feh", "nitrogen", "xwallpaper", "swayidle",
                           "swaylock", "eww", "conky", "redshift", "gammastep", "wlsunset",
                           "xbindkeys", "sxhkd", "lemonbar", "tint2", "plank", "nm-applet",
                           "blueman-applet", "mpvpaper", "wbg", "swaync", "fnott", "hypridle"})
_SIGNAL_VALUES = frozenset({"-s", "--signal", "-n", "-u", "--user", "-g", "--pgroup", "-t",
                            "--terminal", "-P", "--parent", "-o", "--older", "-y", "--younger"})


def _probe_only(cmd: SimpleCommand, texts: list[str]) -> bool:
    """``kill -0 PID``, ``kill -s 0 PID``, ``pkill -0 NAME``: signal 0 delivers nothing."""
    if cmd.program not in ("kill", "pkill", "killall") or not all(w.literal for w in cmd.args):
        return False
    signal_words = [t for t in texts if t.startswith("-")]
    rest = [t for t in texts if not t.startswith("-")]
    if signal_words == ["-0"] and rest:
        return True
    return signal_words in (["-s"], ["-n"]) and len(rest) >= 2 and rest[0] == "0"


def kill(cmd: SimpleCommand, out: Out) -> None:
    """kill/pkill/killall: PID 1, -1, session-critical processes and every process of a
    user are HIGH."""
    if every_process(cmd, out):
        return
    targets: list[str] = []
    skip = False
    for index, word in enumerate(cmd.args):
        text = word.text
        if skip:
            skip = False
            continue
        if text in _SIGNAL_VALUES:
            skip = True
            continue
        if text == "-1" and cmd.program == "kill" and index == len(cmd.args) - 1:
            targets.append("-1")  # "kill -9 -1": every process; "kill -1 PID" is SIGHUP
            continue
        if text.startswith("-") and text != "-":
            continue
        # pkill takes a pattern: "^cron$" names cron
        targets.append(text.strip("^$") if word.literal else "$…")
    texts = [w.text for w in cmd.args]
    if cmd.program in ("kill", "killall") and set(texts) & {"-l", "-L", "--list"}:
        out.read_only()
        return
    if _probe_only(cmd, texts):
        out.read_only()  # signal 0 only asks whether the process exists
        return
    critical = next((t for t in targets if t in _CRITICAL_PROCESSES or t == "$…"), None)
    if critical is not None:
        out.high(Code.KILL_CRITICAL, f"{cmd.program} signals {critical}, which the system or "
                 "your session depends on", system=critical in ("1", "-1", "init", "systemd"),
                 target=critical)
    elif targets and all(t in _USER_DAEMONS for t in targets):
        out.low(Code.PROCESS_SIGNAL, f"{cmd.program} restarts a desktop helper ({targets[0]})",
                target=targets[0])
    else:
        out.medium(Code.PROCESS_SIGNAL, f"{cmd.program} signals processes",
                   target=targets[0] if targets else cmd.program)


SERVICE_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    "systemctl": systemctl,
    **dict.fromkeys(("service", "rc-service", "sv", "rc-update", "update-rc.d", "chkconfig",
                     "invoke-rc.d"), service),
    "journalctl": journalctl,
    "dmesg": dmesg,
    **dict.fromkeys(tuple(_CTL_READ), ctl),
    **dict.fromkeys(("reboot", "poweroff", "halt", "shutdown", "init", "telinit", "kexec"),
                    power),
    **dict.fromkeys(("kill", "pkill", "killall", "skill", "xkill", "killall5"), kill),
}
"""Rules for service, log, session, power and process programs."""
