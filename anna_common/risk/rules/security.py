"""Security mechanisms, firewalls, kernel knobs and user accounts.

Turning a security mechanism off (SELinux permissive, AppArmor torn down,
auditing off or flushed, a firewall disabled or flushed, ASLR off) is a hard
ban. Changing their configuration is HIGH; querying it is read-only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.rules.hardening import sysctl_off
from anna_common.risk.writes import operands, options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand


def _sec_ban(out: Out, what: str, target: str | None = None) -> None:
    out.ban(Code.BAN_SECURITY_DISABLE, what, target=target)


def setenforce(cmd: SimpleCommand, out: Out) -> None:
    """setenforce 0/Permissive turns SELinux enforcement off."""
    if not cmd.args or help_only(cmd):
        out.read_only()
        return
    value = cmd.args[0]
    if not value.literal or value.text.lower() in ("0", "permissive"):
        _sec_ban(out, "setenforce turns SELinux enforcement off", "selinux")
    else:
        out.high(Code.SECURITY_CONFIG, "setenforce changes SELinux mode", system=True,
                 target="selinux")


def apparmor(cmd: SimpleCommand, out: Out) -> None:
    """aa-disable/aa-teardown switch AppArmor off; aa-complain weakens a profile."""
    prog = cmd.program or ""
    if help_only(cmd) or prog in ("aa-status", "apparmor_status", "aa-enabled", "aa-unconfined",
                                  "aa-features-abi"):
        out.read_only()
        return
    if prog in ("aa-disable", "aa-teardown") or (prog == "apparmor_parser" and options(cmd.args)
                                                 & {"-R", "--remove"}):
        _sec_ban(out, f"{prog} disables AppArmor confinement", "apparmor")
    else:
        out.high(Code.SECURITY_CONFIG, f"{prog} changes AppArmor profiles", system=True,
                 target="apparmor")


def auditctl(cmd: SimpleCommand, out: Out) -> None:
    """auditctl -e 0 and -D switch auditing off or delete every rule."""
    texts = [w.text for w in cmd.args]
    opts = options(cmd.args)
    if "-D" in opts or any(t == "-e" and i + 1 < len(texts) and texts[i + 1] == "0"
                           for i, t in enumerate(texts)) or "-e0" in texts:
        _sec_ban(out, "auditctl disables auditing or deletes all audit rules", "audit")
    elif not cmd.args or opts <= {"-s", "-l", "-h", "-v", "--help", "--version"}:
        out.read_only()
    else:
        out.high(Code.SECURITY_CONFIG, "auditctl changes audit rules", system=True,
                 target="audit")


def ufw(cmd: SimpleCommand, out: Out) -> None:
    """ufw disable/reset turn the firewall off; status is read-only; rules are HIGH."""
    verbs = [w.text for w in cmd.args if not w.text.startswith("-")]
    verb = verbs[0] if verbs else ""
    if verb in ("disable", "reset"):
        _sec_ban(out, f"ufw {verb} turns the firewall off", "ufw")
    elif verb in ("status", "show", "version", "help", "") or (verb == "app" and "list" in verbs):
        out.read_only()
    else:
        out.high(Code.FIREWALL_CHANGE, f"ufw {verb} changes firewall rules", system=True,
                 target="firewall")


_IPT_READ = frozenset({"-L", "--list", "-S", "--list-rules", "-C", "--check", "-n", "--numeric",
                       "-v", "--verbose", "--line-numbers", "-t", "--table", "-x", "--exact",
                       "-w", "--wait", "-h", "--help", "-V", "--version"})


def iptables(cmd: SimpleCommand, out: Out) -> None:
    """iptables -F or a default ACCEPT policy disables the firewall; -L lists it."""
    texts = [w.text for w in cmd.args]
    opts = options(cmd.args)
    if opts & {"-F", "--flush"}:
        _sec_ban(out, f"{cmd.program} flushes firewall rules", "firewall")
        return
    for i, text in enumerate(texts):
        if text in ("-P", "--policy") and i + 2 < len(texts) and texts[i + 2] == "ACCEPT":
            _sec_ban(out, f"{cmd.program} sets a default ACCEPT policy", "firewall")
            return
    if opts and opts <= _IPT_READ:
        out.read_only()
        return
    out.high(Code.FIREWALL_CHANGE, f"{cmd.program} changes firewall rules", system=True,
             target="firewall")


def iptables_aux(cmd: SimpleCommand, out: Out) -> None:
    """iptables-save lists; iptables-restore replaces every rule."""
    if (cmd.program or "").endswith("-save"):
        out.read_only()
    else:
        out.high(Code.FIREWALL_CHANGE, f"{cmd.program} replaces firewall rules", system=True,
                 target="firewall")


def nft(cmd: SimpleCommand, out: Out) -> None:
    """nft flush ruleset empties the firewall; list is read-only."""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    if words[:2] == ["flush", "ruleset"]:
        _sec_ban(out, "nft flush ruleset removes every firewall rule", "firewall")
    elif (words and words[0] in ("list", "describe", "monitor")) or help_only(cmd) or (
            not words and options(cmd.args) <= {"-c", "--check", "-v", "--version"}
            and options(cmd.args)):
        out.read_only()
    else:
        out.high(Code.FIREWALL_CHANGE, "nft changes firewall rules", system=True,
                 target="firewall")


def firewall_cmd(cmd: SimpleCommand, out: Out) -> None:
    """firewall-cmd queries are read-only; changes are HIGH; a trusted default zone is a ban."""
    texts = [w.text for w in cmd.args]
    if any(t in ("--set-default-zone=trusted",) for t in texts) or (
            "--set-default-zone" in texts and "trusted" in texts):
        _sec_ban(out, "firewall-cmd makes every connection trusted", "firewall")
        return
    if texts and all(t.startswith(("--list", "--get", "--query", "--info", "--state", "--zone",
                                   "--permanent", "--help", "--version", "-h", "-V"))
                     for t in texts):
        out.read_only()
        return
    out.high(Code.FIREWALL_CHANGE, "firewall-cmd changes firewall rules", system=True,
             target="firewall")


def sysctl(cmd: SimpleCommand, out: Out) -> None:
    """sysctl reads kernel tunables; -w/KEY=VALUE/-p change them (HIGH)."""
    texts = [w.text for w in cmd.args]
    opts = options(cmd.args)
    settings = [t for t in texts if "=" in t and not t.startswith("-")]
    if not settings and not opts & {"-w", "--write", "-p", "--load", "--system", "-f"}:
        out.read_only()
        return
    for setting in settings:
        hit = sysctl_off(setting)
        if hit:
            # ASLR, ptrace protection, pointer hiding, link protections: seed 000 NEVER
            _sec_ban(out, f"sysctl sets {hit}, switching a kernel protection off",
                     hit.split("=", 1)[0])
            return
    target = settings[0].split("=")[0] if settings else "sysctl"
    out.high(Code.KERNEL, "sysctl changes kernel tunables", system=True, target=target)


def modules(cmd: SimpleCommand, out: Out) -> None:
    """modprobe/insmod/rmmod load or unload kernel modules (HIGH); dry runs are read-only."""
    opts = options(cmd.args)
    if cmd.program == "modprobe" and opts & {"-n", "--dry-run", "-c", "--showconfig", "-D",
                                             "--show-depends", "--show-modversions",
                                             "--dump-modversions"}:
        out.read_only()
        return
    if help_only(cmd):
        out.read_only()
        return
    names = [w.text for w in operands(cmd.args, frozenset({"-C", "--config", "-d", "--dirname",
                                                           "-S", "--set-version"}))]
    out.high(Code.KERNEL, f"{cmd.program} changes loaded kernel modules", system=True,
             target=names[0] if names else cmd.program)


def users(cmd: SimpleCommand, out: Out) -> None:
    """Account tools change who can log in and with what rights (HIGH)."""
    prog = cmd.program or ""
    opts = options(cmd.args)
    if help_only(cmd) or (prog == "passwd" and opts & {"-S", "--status"}) or (
            prog == "chage" and opts & {"-l", "--list"}) or (prog in ("pwck", "grpck") and
                                                              opts & {"-r", "--read-only"}):
        out.read_only()
        return
    ops = operands(cmd.args, frozenset({"-s", "-d", "-g", "-G", "-c", "-u", "-k", "-e", "-f",
                                        "-p", "-K", "-R", "-P", "-Z", "-l", "-m", "--shell",
                                        "--home", "--gid", "--groups", "--comment", "--uid",
                                        "--expiredate", "--login"}))
    target = ops[-1].text if ops else prog
    if prog in ("chsh", "chfn") and not cmd.privileged:
        out.medium(Code.USER_ACCOUNT, f"{prog} changes your account details", target=target)
        return
    out.high(Code.USER_ACCOUNT, f"{prog} changes user accounts or credentials", system=True,
             target=target)


SECURITY_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    "setenforce": setenforce,
    **dict.fromkeys(("aa-disable", "aa-teardown", "aa-complain", "aa-enforce", "aa-audit",
                     "aa-status", "apparmor_status", "apparmor_parser", "aa-enabled",
                     "aa-unconfined", "aa-features-abi", "aa-remove-unknown", "aa-genprof",
                     "aa-logprof", "aa-autodep"), apparmor),
    "auditctl": auditctl,
    "ufw": ufw,
    **dict.fromkeys(("iptables", "ip6tables", "iptables-nft", "ip6tables-nft", "iptables-legacy",
                     "ip6tables-legacy", "ebtables", "arptables"), iptables),
    **dict.fromkeys(("iptables-save", "ip6tables-save", "iptables-restore", "ip6tables-restore",
                     "iptables-apply"), iptables_aux),
    "nft": nft,
    "firewall-cmd": firewall_cmd,
    "sysctl": sysctl,
    **dict.fromkeys(("modprobe", "insmod", "rmmod", "depmod", "kmod"), modules),
    **dict.fromkeys(("useradd", "adduser", "userdel", "deluser", "usermod", "groupadd",
                     "groupdel", "groupmod", "addgroup", "delgroup", "gpasswd", "passwd",
                     "chpasswd", "chage", "newusers", "vipw", "vigr", "visudo", "chsh", "chfn",
                     "pwck", "grpck", "pw", "newgrp", "pwconv", "pwunconv", "grpconv",
                     "grpunconv", "usermod.exe"), users),
}
"""Rules for security, firewall, kernel and account programs."""
