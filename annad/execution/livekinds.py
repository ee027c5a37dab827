"""Which steps act on the running system and so run live, not captured.

A step whose effect is the running system — a service manager, the package manager,
desktop IPC, network configuration, kernel state — cannot be captured in an overlay: what
it changes lives in processes, not (only) in files. Such a step runs live through the typed
adapters of :mod:`annad.execution.prestate` (pre-state recorded, undone by kind). Every other
step of a root daemon runs captured (:mod:`annad.execution.capturing`).
"""

from __future__ import annotations

from anna_common.shell.grammar import analyse

LIVE_PROGRAMS = frozenset({
    # services and the session
    "systemctl", "loginctl", "busctl", "hostnamectl", "timedatectl", "localectl",
    "resolvectl", "machinectl", "journalctl", "reboot", "shutdown", "poweroff",
    # package managers (their database and hooks are the running system's)
    "pacman", "yay", "paru", "pamac", "makepkg", "apt", "apt-get", "aptitude", "dpkg", "dnf",
    "yum", "rpm", "zypper", "flatpak", "snap", "pip", "pipx",
    # desktop IPC
    "gsettings", "dconf", "hyprctl", "swaymsg", "i3-msg", "qdbus", "gdbus", "dbus-send",
    "xdg-settings", "plasma-apply-wallpaperimage", "swww", "feh", "nitrogen", "notify-send",
    # network and kernel state
    "nmcli", "ip", "iw", "iwctl", "wg", "wg-quick", "ufw", "iptables", "ip6tables", "nft",
    "firewall-cmd", "sysctl", "modprobe", "rmmod", "insmod", "mount", "umount", "swapon",
    "swapoff", "tc", "ethtool", "rfkill", "docker", "podman",
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
