"""Which steps can cut the person off from the machine (the ``netplan try`` pattern).

A step that changes how people reach or log in to the machine — sshd, network managers
and interfaces, firewall rules, the display manager, PAM, sudoers — can leave the
person who approved it unable to come back and undo it. Such a plan is *guarded*
(:mod:`annad.execution.guard`): it is rolled back by the daemon unless confirmed from a new
connection before a deadline.

The decision is made from the daemon's own analysis of the command, never from its text:

- every file the step writes (:func:`annad.backups.targets.snapshot_targets`, the same targets the
  backup uses, nested ``sh -c``/``eval``/``sudo`` code included) is compared with the
  login-relevant places under ``/etc`` *and* under the configured etc root (tests point it
  at a scratch tree); writing a directory that holds one of them (``rm -r /etc/ssh``,
  ``cp -r x /etc``) counts too;
- every program call (:func:`anna_common.shell.grammar.analyse`, wrappers peeled): firewall and
  network tools, ``systemctl`` verbs that stop or change units people log in through,
  account locks (``usermod -L``, ``passwd -l``, ``chsh``);
- the daemon's own risk codes for the step (network, firewall, login-critical services).

A step whose targets cannot be known in advance is not run at all (its backup refuses
it), so unknown targets never slip past this check.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from anna_common.shell.grammar import SimpleCommand, analyse
from annad.backups.backup import BackupRefused
from annad.backups.targets import snapshot_targets

if TYPE_CHECKING:
    from collections.abc import Iterable

LOCKOUT_PATHS = (
    "ssh/sshd_config", "ssh/sshd_config.d", "ssh/ssh_host_", "pam.d", "security",
    "sudoers", "sudoers.d", "doas.conf", "NetworkManager", "systemd/network",
    "systemd/networkd.conf", "netplan", "network/interfaces", "network/interfaces.d",
    "iptables", "nftables.conf", "nftables.d", "ufw", "firewalld", "hosts.allow", "hosts.deny",
    "wpa_supplicant", "iwd", "dhcpcd.conf", "X11/xorg.conf", "X11/xorg.conf.d", "gdm",
    "gdm3", "sddm.conf", "sddm.conf.d", "lightdm", "ly", "greetd", "nologin", "securetty",
    "nsswitch.conf", "shells", "systemd/logind.conf", "login.defs")
"""Places under /etc whose change can keep people from logging in or reaching the machine
(a prefix: ``ssh/ssh_host_`` matches every host key)."""
LOCKOUT_UNITS = frozenset({
    "sshd", "ssh", "sshd.socket", "ssh.socket", "networkmanager", "systemd-networkd",
    "systemd-resolved", "iwd", "wpa_supplicant", "dhcpcd", "netctl", "connman", "networking",
    "nftables", "iptables", "ip6tables", "firewalld", "ufw", "gdm", "gdm3", "sddm", "lightdm",
    "display-manager", "ly", "greetd", "systemd-logind", "getty@tty1", "dbus", "polkit"})
"""Units (lower case, without ``.service``) people reach or log in to the machine through."""
_CUTTING_VERBS = frozenset({"stop", "restart", "try-restart", "reload-or-restart", "disable",
                            "mask", "kill", "isolate", "reload", "edit", "revert", "set-property"})
FIREWALL_PROGRAMS = frozenset({"iptables", "ip6tables", "iptables-restore", "ip6tables-restore",
                               "iptables-legacy", "iptables-nft", "nft", "ufw", "firewall-cmd",
                               "ebtables", "arptables"})
NETWORK_PROGRAMS = frozenset({"nmcli", "nmtui", "networkctl", "ifdown", "ifup", "netplan",
                              "wg-quick", "iwctl", "wpa_cli", "dhcpcd", "dhclient", "netctl",
                              "ifconfig", "route", "brctl", "tc"})
_READ_ONLY_WORDS = frozenset({"show", "list", "status", "monitor", "get"})
_CHANGING_WORDS = frozenset({"up", "down", "delete", "del", "add", "modify", "flush", "off",
                             "disable", "enable", "reset", "reload", "set", "apply", "edit"})
_LISTING_OPTIONS = frozenset({"-L", "-S", "--list", "--list-rules", "-n", "--numeric", "-v",
                              "--verbose", "-x", "--exact", "-t", "--table", "--line-numbers"})
_CODES = frozenset({"NETWORK_CONFIG", "FIREWALL_CHANGE", "CRITICAL_SERVICE"})
"""The daemon's own risk codes that mean the same thing."""


def cut_off_reasons(command: str, *, home: str, etc_roots: Iterable[str],
                    codes: Iterable[str] = (), user_scope: bool = False) -> list[str]:
    """Why ``command`` can cut the person off (empty: it cannot, as far as Anna can see)."""
    reasons: list[str] = []
    roots = [os.path.normpath(r) for r in dict.fromkeys(["/etc", *etc_roots])]
    try:
        targets, _ = snapshot_targets(command, home=home, cwd=home if user_scope else "/")
    except BackupRefused:
        targets = []  # such a step is refused before it runs; nothing to guard
    keys = [f"{h.rstrip('/')}/.ssh/authorized_keys" for h in dict.fromkeys([home, "/root"])]
    for target in targets:
        path = os.path.normpath(target.path)
        place = _login_place(path, roots)
        if place is None and any(path == k or path.startswith(k) or k.startswith(path + "/")
                                 for k in keys):
            place = "the keys ssh logs in with"
        if place is not None:
            reasons.append(f"writes {target.path} ({place})")
    for cmd in analyse(command).commands:
        why = _program_reason(cmd)
        if why is not None:
            reasons.append(why)
    reasons += [f"Anna rates it {code}" for code in codes if code in _CODES]
    return list(dict.fromkeys(reasons))


def _login_place(path: str, roots: list[str]) -> str | None:
    """The login-relevant place ``path`` is, holds or lies in, under one of ``roots``.

    A target with a glob (``/etc/ssh/sshd_c*fig``) counts when it could name such a place:
    everything from its first wildcard on is treated as unknown (guarding too much only
    asks for a confirmation; guarding too little can lock the person out)."""
    if any(c in path for c in "*?["):
        return _glob_place(path, roots)
    for root in roots:
        if path == root:
            return "the whole configuration directory"
        if not path.startswith(root + "/"):
            continue
        relative = path[len(root) + 1:]
        for place in LOCKOUT_PATHS:
            inside = relative == place or relative.startswith(place + "/") or (
                place.endswith("_") and relative.startswith(place))
            if inside or place.startswith(relative + "/"):
                return place
    return None


def _glob_place(pattern: str, roots: list[str]) -> str | None:
    """The first login-relevant place ``pattern`` could name, hold or lie in."""
    wild = min(pattern.find(c) for c in "*?[" if c in pattern)
    prefix = pattern[:wild]
    for root in roots:
        for place in LOCKOUT_PATHS:
            full = f"{root}/{place}"
            holders = [full, *(str(p) for p in PurePosixPath(full).parents)]
            if prefix.startswith(full) or any(fnmatch.fnmatchcase(h, pattern)
                                               for h in holders):
                return place
    return None


def _unit_name(word: str) -> str:
    name = word.lower()
    return name.removesuffix(".service")


def _program_reason(cmd: SimpleCommand) -> str | None:
    program = cmd.program or ""
    words = [w.text for w in cmd.args]
    if program in FIREWALL_PROGRAMS:
        return None if _read_only(words) else f"{program} changes firewall rules"
    if program in NETWORK_PROGRAMS:
        return None if _read_only(words) else f"{program} changes the network"
    if program == "ip" and len([w for w in words if not w.startswith("-")]) >= 2:
        verb = [w for w in words if not w.startswith("-")][1]
        if verb in ("set", "add", "del", "delete", "change", "replace", "flush", "down", "up"):
            return "ip changes network configuration"
    if program == "systemctl":
        verbs = [w for w in words if not w.startswith("-")]
        if verbs and verbs[0] in _CUTTING_VERBS:
            units = [u for u in verbs[1:] if _unit_name(u) in LOCKOUT_UNITS]
            if units or verbs[0] == "isolate":
                return f"systemctl {verbs[0]} {' '.join(units)}".strip()
    if program in ("usermod", "passwd", "chage") and any(
            w in ("-L", "--lock", "-l", "-e", "--expire", "--expiredate", "-E", "-s",
                  "--shell", "-d", "--delete") for w in words):
        return f"{program} changes how an account logs in"
    if program == "chsh":
        return "chsh changes a login shell"
    return None


def _read_only(words: list[str]) -> bool:
    """Whether a firewall or network tool call only reads: its verb (the first, or for
    ``nmcli con show`` the second, plain word) reads, or every option of an iptables-style
    call is a listing option."""
    if not words:
        return True
    plain = [w for w in words if not w.startswith("-")]
    if plain and (plain[0] in _READ_ONLY_WORDS or (len(plain) > 1 and plain[1] in
                                                    _READ_ONLY_WORDS and plain[0] not in
                                                    _READ_ONLY_WORDS)):
        return not any(w in _CHANGING_WORDS for w in plain)
    options = [w for w in words if w.startswith("-")]
    return bool(options) and all(w in _LISTING_OPTIONS for w in options) and any(
        w in ("-L", "-S", "--list", "--list-rules") for w in options)
