"""Which steps act on the running system and so run live, not captured.

A step whose effect is the running system — a service manager, the package manager,
desktop IPC, network configuration, kernel state — cannot be captured in an overlay: what
it changes lives in processes, not (only) in files. Such a step runs live through the typed
adapters of :mod:`annad.execution.prestate` (pre-state recorded, undone by kind). Every other
step of a root daemon runs captured (:mod:`annad.capture.step`). A rollback command is
live only when it is nothing else (:func:`live_only`): one that names a live program beside a
file tool (``kill -0 $$; cd /etc && xz -k passwd``) runs captured, and its live part fails there
rather than its file part running unseen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.shell.grammar import analyse

if TYPE_CHECKING:
    from anna_common.shell.model import SimpleCommand

LIVE_PROGRAMS = frozenset({
    # services and the session
    "systemctl", "loginctl", "busctl", "hostnamectl", "timedatectl", "localectl",
    "resolvectl", "machinectl", "journalctl", "reboot", "shutdown", "poweroff",
    # package managers (their database and hooks are the running system's); pip, pipx, npm,
    # cargo, gem only write files, so they are not here: they run captured, their writes
    # observed, judged, backed up and undone like any file step's
    "pacman", "yay", "paru", "pamac", "makepkg", "apt", "apt-get", "aptitude", "dpkg", "dnf",
    "yum", "rpm", "zypper", "flatpak", "snap",
    # desktop IPC
    "gsettings", "dconf", "hyprctl", "swaymsg", "i3-msg", "qdbus", "gdbus", "dbus-send",
    "xdg-settings", "plasma-apply-wallpaperimage", "swww", "feh", "nitrogen", "notify-send",
    # network and kernel state
    "nmcli", "ip", "iw", "iwctl", "wg", "wg-quick", "ufw", "iptables", "ip6tables", "nft",
    "firewall-cmd", "sysctl", "modprobe", "rmmod", "insmod", "mount", "umount", "swapon",
    "swapoff", "tc", "ethtool", "rfkill",
    # container and VM managers act through their daemon (a Unix socket a capture refuses);
    # one with host access is HIGH, "runs live; Anna cannot undo it" (rules.containers)
    "docker", "podman", "nerdctl", "docker-compose", "podman-compose", "lxc", "incus",
    "virsh", "ctr", "crictl",
    # other processes: a captured step may not signal or renice one (its Landlock scope and
    # seccomp filter refuse it, :mod:`annad.confine.capture_walls`), so asking is live
    "kill", "pkill", "killall", "renice",
})
"""Programs whose effect is on the running system (matched on the command word)."""


def live_kind(command: str) -> str | None:
    """The first live program ``command`` runs, or None (then its effects are files)."""
    for cmd in analyse(command).commands:
        if cmd.program in LIVE_PROGRAMS:
            return cmd.program
    return None


INERT = frozenset({"cd", "true", "false", ":", "test", "[", "echo", "printf", "sleep"})
"""Builtins a live command may carry beside its live programs: they change no file unless
redirected to one."""


def _quiet(cmd: SimpleCommand) -> bool:
    """No redirection of ``cmd`` opens a file for writing (``2>/dev/null`` aside)."""
    return not any(r.writes and not (r.target is not None and r.target.literal and
                                     r.target.text == "/dev/null") for r in cmd.redirects)


def live_only(command: str) -> str | None:
    """The live program ``command`` runs when everything it runs is a live program or one of
    :data:`INERT`, nothing embedded, nothing redirected into a file; None otherwise (then what
    it does may be files: it runs captured)."""
    analysis = analyse(command)
    if analysis.too_large or analysis.opaque:
        return None
    found = None
    for cmd in analysis.commands:
        if cmd.program is None or cmd.code or not _quiet(cmd):
            return None
        if cmd.program in LIVE_PROGRAMS:
            found = found or cmd.program
        elif cmd.program not in INERT:
            return None
    return found
