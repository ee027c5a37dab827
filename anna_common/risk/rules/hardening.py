"""Seed 000's "NEVER: disable security mechanisms", through the files that configure them.

``setenforce 0`` is caught by its program; the same effect written into a file is caught
here, whatever carries the text (:mod:`anna_common.risk.rules.content`): ``SELINUX=disabled``
into the SELinux config, ``SigLevel = Never`` into pacman's configuration, a ``NOPASSWD``
grant of everything into sudoers, ``apparmor=0`` and friends onto the kernel command line,
ASLR or ptrace protection off through ``/proc/sys`` or ``sysctl.d``, and ``/etc/shadow``
opened to the world. Each is a hard ban. Content Anna cannot know keeps the location's
own verdict (HIGH for every one of these files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.content.settings import (
    CMDLINE,
    SYSCTL_OFF,
    WHAT,
    disabling,
    file_kind,
    sysctl_off,
)
from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.content import file_content, stdin_of, word_text, written_by
from anna_common.risk.rules.editscripts import config_tool_disables, edit_disables
from anna_common.risk.rules.meaningwrites import meaning_writes
from anna_common.risk.rules.services import security_unit
from anna_common.risk.rules.shadowperms import shadow_exposed
from anna_common.risk.writes import CP_VALUES, write_targets
from anna_common.shell.argv import dest_and_sources

if TYPE_CHECKING:
    from anna_common.risk.writes import WriteTarget
    from anna_common.shell.grammar import Analysis, SimpleCommand

__all__ = ["SYSCTL_OFF", "file_kind", "security_writes", "sysctl_off"]

_BOOT_ARG_TOOLS = frozenset({"grubby", "kernelstub", "efibootmgr", "grub-editenv",
                             "grub2-editenv", "kernel-install", "bootctl"})
_REMOVE_OPTS = frozenset({"--remove-args", "-d", "--delete-options", "-r"})


def security_writes(cmd: SimpleCommand, analysis: Analysis, out: Out) -> None:
    """Ban writes whose content (or permission change) switches a security mechanism off."""
    for target in write_targets(cmd):
        for place in out.paths(target.word):
            if meaning_writes(cmd, target, place, analysis, out):
                return
            kind = out.once(("file kind", place), file_kind, place)
            if kind is not None and _judge_target(cmd, target, kind, place.path, analysis, out):
                return
    prog = cmd.program or ""
    if prog in ("ln", "cp", "install", "mv") and masked_unit(cmd, out):
        return
    if prog in ("augtool", "crudini"):
        found = config_tool_disables(cmd, analysis, out)
        if found:
            _ban(out, *found)
    elif prog in _BOOT_ARG_TOOLS:
        _boot_args(cmd, out)
    elif prog == "sysctl":
        _sysctl_files(cmd, analysis, out)
    elif prog == "sshd":
        # ``sshd -o PermitRootLogin=yes``: a second sshd started with the weak setting
        values = [word_text(w, out) for w in cmd.args]
        settings = [v[2:] if v.startswith("-o") and len(v) > 2 else values[i + 1]
                    for i, v in enumerate(values) if v.startswith("-o") and (
                        len(v) > 2 or i + 1 < len(values))]
        hit = disabling("sshd", [v.replace("=", " ", 1) for v in settings])
        if hit:
            _ban(out, "sshd", hit, "sshd -o")
    elif prog == "visudo":
        texts = stdin_of(cmd, analysis, out)
        hit = disabling("sudoers", texts or [], "")
        if hit:
            _ban(out, "sudoers", hit, "/etc/sudoers")


def _judge_target(cmd: SimpleCommand, target: WriteTarget, kind: str, path: str,
                  analysis: Analysis, out: Out) -> bool:
    if kind == "shadow":
        why = shadow_exposed(cmd, target, out)
        if why:
            out.ban(Code.BAN_SECURITY_DISABLE, f"{why} {path}: every user could read or "
                    "change the password hashes", target=path)
            return True
        return False
    if target.how == "edit" and cmd.program in ("sed", "perl", "ruby"):
        # the script is the command's, whatever the target: read once, not once per target
        hit = out.once(("edit", kind, id(cmd), id(out.known)), edit_disables, kind, cmd, out)
        out.memo["edit kept", id(cmd), id(out.known)] = (cmd, out.known)  # ids stay theirs
    else:
        texts = written_by(cmd, target.word, analysis, out)
        # content Anna cannot follow (a nested shell's inherited stdin, an unknown file):
        # the setting written anywhere else in the same command is taken to be what lands
        hit = disabling(kind, texts, path) if texts is not None else _anywhere(
            kind, path, analysis, out)
    if hit:
        _ban(out, kind, hit, path)
        return True
    return False


_UNIT_DIRS = ("/etc/systemd/system/", "/run/systemd/system/", "/usr/lib/systemd/system/",
              "/lib/systemd/system/", "/etc/systemd/system.control/")


def masked_unit(cmd: SimpleCommand, out: Out) -> bool:
    """``ln -s /dev/null /etc/systemd/system/apparmor.service`` is ``systemctl mask``: a unit
    file linked to /dev/null (or empty) is never started. Banned for a security unit."""
    dest, sources = dest_and_sources(cmd.args, CP_VALUES)
    if dest is None or not any(w.text == "/dev/null" for w in sources):
        return False
    for place in out.paths(dest):
        unit = place.path.rsplit("/", 1)[-1]
        if place.path.startswith(_UNIT_DIRS) and security_unit(unit):
            out.ban(Code.BAN_SECURITY_DISABLE, f"masks {unit} (links it to /dev/null): a "
                    "security service would never start again", target=place.path)
            return True
    return False


_PATHLESS = frozenset({"selinux", "pacman", "sudoers", "cmdline", "sshd", "pam", "sysctl"})
"""Kinds whose verdict on a text does not depend on the file written (``lsm`` and
``procsys`` read the path)."""


def _anywhere(kind: str, path: str, analysis: Analysis, out: Out) -> str | None:
    """The setting of ``kind`` written anywhere in the command, if any. Asked for each target
    of a command (``rm -f`` of 190 globs asked it 390 times, each over every word): the texts
    and a path-independent verdict are computed once per command string and variables known."""
    known = (id(analysis), tuple(out.known.items()))
    kept = out.memo.get(("visible", *known))
    if not isinstance(kept, tuple):
        # the analysis is kept with its texts: while the memo lives no other analysis (a
        # nested one parsed later) can be given the same id and be answered these texts
        kept = out.memo[("visible", *known)] = (analysis, _visible_texts(analysis, out))
    texts: list[str] = kept[1]
    if kind not in _PATHLESS:
        return disabling(kind, texts, path)
    key = ("disabling", kind, *known)
    if key not in out.memo:
        out.memo[key] = disabling(kind, texts, path)
    hit = out.memo[key]
    return hit if isinstance(hit, str) else None


def _visible_texts(analysis: Analysis, out: Out) -> list[str]:
    """Every literal text of the command: words, heredocs and here-strings."""
    texts: list[str] = []
    for cmd in analysis.commands:
        texts.extend(word_text(w, out) for w in cmd.args)
        if cmd.stdin.text is not None and cmd.stdin.kind in ("heredoc", "herestring"):
            texts.append(word_text(cmd.stdin.text, out))
    return texts


def _ban(out: Out, kind: str, hit: str, path: str) -> None:
    out.ban(Code.BAN_SECURITY_DISABLE, f"writes {hit!r} into {path}, which "
            f"{WHAT.get(kind, 'switches a security mechanism off')}", target=path)


def _boot_args(cmd: SimpleCommand, out: Out) -> None:
    """``grubby --args=apparmor=0``, ``kernelstub -a selinux=0``, ``efibootmgr -u ...``."""
    skip = False
    for word in cmd.args:
        text = word_text(word, out)
        if skip:
            skip = False
            continue
        if text in _REMOVE_OPTS:
            skip = True
            continue
        if text.startswith("--remove-args="):
            continue
        match = CMDLINE.search(text)
        if match:
            out.ban(Code.BAN_SECURITY_DISABLE, f"{cmd.program} puts {match.group(0)!r} on the "
                    "kernel command line, switching a security module or auditing off",
                    target=cmd.program)
            return


def _sysctl_files(cmd: SimpleCommand, analysis: Analysis, out: Out) -> None:
    """``sysctl -p FILE`` / ``--load=FILE`` where FILE was written earlier in the command."""
    args = cmd.args
    for i, word in enumerate(args):
        source = None
        if word.text in ("-p", "--load", "-f") and i + 1 < len(args):
            source = args[i + 1]
        elif word.text.startswith("--load="):
            source = word.after(len("--load="))
        if source is None:
            continue
        texts = file_content(source, cmd, analysis, out)
        hit = disabling("sysctl", texts or [])
        if hit:
            _ban(out, "sysctl", hit, source.text)
            return
