"""Interactive programs, schedulers, backups, containers (:mod:`.containers`) and system
maintenance tools."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.rules.code import untrusted_source
from anna_common.risk.rules.containers import container
from anna_common.shell.argv import options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand

def interactive(cmd: SimpleCommand, out: Out) -> None:
    """Editors, pagers, file managers and multiplexers can run commands and need a terminal."""
    if help_only(cmd):
        out.read_only()
        return
    out.high(Code.INTERACTIVE_PROGRAM, f"{cmd.program} is interactive and can run commands",
             target=cmd.program)


def scheduler(cmd: SimpleCommand, out: Out) -> None:
    """crontab/at/batch schedule code to run later (persistence)."""
    if cmd.program == "crontab" and options(cmd.args) & {"-l"} and not options(cmd.args) & {
            "-r", "-e"}:
        out.read_only()
        return
    if cmd.program in ("atq",) or help_only(cmd):
        out.read_only()
        return
    fed = [*cmd.substitutions, *(cmd.stdin.producers if cmd.stdin.kind == "pipe" else [])]
    source = untrusted_source(fed)
    if source is not None:
        # ``curl URL | crontab -``, ``at now -f <(curl URL)``: downloaded commands, run later
        out.ban(Code.BAN_UNTRUSTED_CODE, f"{cmd.program} schedules commands that "
                f"{source.program} downloaded or decoded", target=cmd.program)
        return
    out.high(Code.PERSISTENCE, f"{cmd.program} schedules commands to run later",
             target=cmd.program)


_BACKUP_DESTRUCTIVE = frozenset({"forget", "prune", "delete", "purge", "rm", "remove", "sync",
                                 "cleanup", "compact", "rmdir", "deletefile", "dedupe",
                                 "recreate", "key-remove?"})


_BACKUP_READ = frozenset({"list", "ls", "snapshots", "info", "check", "stats", "diff", "find",
                          "cat", "lsd", "lsf", "lsl", "size", "about", "version", "help",
                          "config", "listremotes", "tree", "md5sum", "sha1sum", "--help",
                          "--version"})


def backup(cmd: SimpleCommand, out: Out) -> None:
    """restic/borg/rclone/kopia/duplicity/timeshift/snapper: deletions are HIGH."""
    texts = [w.text for w in cmd.args]
    verb = next((t for t in texts if not t.startswith("-") and not t.startswith("::") and
                 "=" not in t), "")
    remote = next((t for t in texts if "://" in t), None)
    if remote is not None:
        out.high(Code.NETWORK_TRANSFER, f"{cmd.program} {verb} talks to a remote repository "
                 f"({remote[:50]})", target=remote[:60])
        return
    if any(t.startswith(("--delete", "--prune", "--keep")) for t in texts) or \
            verb in _BACKUP_DESTRUCTIVE:
        out.high(Code.DESTRUCTIVE_BACKUP, f"{cmd.program} {verb} deletes backups or files",
                 target=f"{cmd.program} {verb}".strip())
        return
    if verb in _BACKUP_READ:
        out.read_only()
        return
    out.medium(Code.SYSTEM_WRITE, f"{cmd.program} {verb} reads or writes backups",
               target=verb or cmd.program)


def run_parts(cmd: SimpleCommand, out: Out) -> None:
    """run-parts runs every program in a directory."""
    if options(cmd.args) & {"--test", "--list"}:
        out.read_only()
        return
    out.high(Code.SCRIPT_FILE, "run-parts runs every program in a directory",
             target="run-parts")


def system_maintenance(cmd: SimpleCommand, out: Out) -> None:
    """locale-gen, ldconfig, update-ca-trust, mandb, ...: rebuild system-wide state."""
    prog = cmd.program or ""
    if help_only(cmd):
        out.read_only()
        return
    if prog in ("update-ca-trust", "trust", "update-ca-certificates"):
        if cmd.args and cmd.args[0].text in ("list", "dump"):
            out.read_only()
            return
        out.high(Code.SECURITY_CONFIG, f"{prog} changes which certificates are trusted",
                 system=True, target="certificates")
        return
    out.medium(Code.SYSTEM_SETTING, f"{prog} rebuilds system-wide state", system=True,
               target=prog)


def config_editor(cmd: SimpleCommand, out: Out) -> None:
    """crudini/augtool edit configuration files in place, out of sight of the daemon's
    snapshots: reading (``crudini --get``, augtool without saving) is INFO, saving HIGH."""
    texts = [w.text for w in cmd.args]
    saves = any(t in ("--set", "--del", "--merge") for t in texts) if cmd.program == "crudini" \
        else bool({"-s", "--autosave", "-f", "--file", "-i", "--interactive"} & set(texts)) or any(
            re.search(r"(?:^|[\s;])save\b", t) for t in texts) or cmd.stdin.kind != "inherit"
    if help_only(cmd) or not saves:
        out.read_only()
        return
    out.high(Code.UNCAPTURED_WRITE, f"{cmd.program} edits configuration files Anna does not "
             "snapshot; Anna cannot back this up", target=cmd.program,
             system=any(t.startswith(("/etc", "/files/etc")) for t in texts))


TOOL_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    **dict.fromkeys(("crudini", "augtool"), config_editor),
    **dict.fromkeys(("vi", "vim", "nvim", "view", "vimdiff", "ex", "ed", "nano", "pico", "emacs",
                     "joe", "jed", "micro", "kak", "hx", "helix", "mcedit", "mc", "less", "more",
                     "most", "pg", "man", "info", "ranger", "nnn", "lf", "vifm", "tmux", "screen",
                     "byobu", "htop", "btop", "atop", "iftop", "nethogs", "iotop", "nmtui",
                     "sqlite3", "mysql", "psql", "gdb", "lldb", "irb", "ghci", "jshell", "jjs",
                     "tclsh", "wish", "expect", "minicom", "picocom", "dialog", "whiptail",
                     "zenity", "kdialog"), interactive),
    **dict.fromkeys(("crontab", "at", "batch", "atq", "atrm"), scheduler),
    **dict.fromkeys(("restic", "borg", "rclone", "kopia", "duplicity", "timeshift", "snapper",
                     "rdiff-backup", "bupstash", "duplicacy"), backup),
    **dict.fromkeys(("docker", "podman", "nerdctl", "lxc", "lxd", "incus", "virsh", "vagrant",
                     "systemd-nspawn", "machinectl", "distrobox", "toolbox", "buildah", "k3s",
                     "kubectl", "ctr", "crictl", "runc", "crun", "containerd", "docker-compose",
                     "podman-compose"), container),
    "run-parts": run_parts,
    **dict.fromkeys(("locale-gen", "ldconfig", "update-ca-trust", "trust",
                     "update-ca-certificates", "mandb", "updatedb", "update-mime-database",
                     "glib-compile-schemas", "systemd-tmpfiles", "systemd-sysusers",
                     "systemd-hwdb"), system_maintenance),
}
"""Rules for interactive programs, schedulers, backups, containers and maintenance tools."""
