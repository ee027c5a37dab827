"""Live commands that destroy what no undo brings back: HIGH (issue 34, "Also").

These act on the running system (:mod:`annad.execution.livekinds`), where Anna records no
state that could put them back, and each takes more than it seems to name:

- killing every process of a user (``pkill -u root``, ``killall -u alice``, ``pkill -9 .``,
  ``pkill -v sshd``, ``killall5``): sessions, daemons, the shell that asked;
- vacuuming the journal (``journalctl --vacuum-size=1``, ``--vacuum-time``,
  ``--vacuum-files``): the logs that would show what happened;
- removing the package that gives remote access (openssh-server, dropbear) or mandatory
  access control (AppArmor, SELinux policy), or a firewall or audit package, in any
  family's spelling (``apt purge``, ``dnf erase``, ``rpm -e``, ``zypper rm``, ``pacman -R``,
  ``apk del``, ``apt install openssh-server-``);
- deleting a virtual machine's storage (``virsh undefine --remove-all-storage``,
  ``vol-delete``, ``vol-wipe``, ``pool-delete``);
- enabling or starting a unit from a file another user can write (``systemctl enable --now
  /home/x.service``): root would run what that user puts in it, at every boot.

Each is HIGH with the reason, so the person types a word naming what goes.
"""

from __future__ import annotations

import fnmatch
import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out
from anna_common.risk.rules.pmscan import places, writable_by_others

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

# -------------------------------------------------------------------- every process of a user

_PKILL_VALUES = frozenset({"-u", "--euid", "-U", "--uid", "-G", "--group", "-g", "--pgroup",
                           "-s", "--session", "-P", "--parent", "-t", "--terminal", "--ns",
                           "--nslist", "-F", "--pidfile", "--signal", "-c", "--cgroup"})
_KILLALL_VALUES = frozenset({"-u", "--user", "-s", "--signal", "-o", "--older-than", "-y",
                             "--younger-than", "-n", "--ns", "-Z", "--context"})
_WHOSE = frozenset({"-u", "--euid", "-U", "--uid", "-G", "--group", "-s", "--session", "-t",
                    "--terminal", "-c", "--cgroup", "-P", "--parent"})
"""pkill's options that choose processes by owner, session, terminal, cgroup or parent
(``-P 1``: every service PID 1 started), not name."""
_KILLALL_WHOSE = frozenset({"-u", "--user"})
_EVERYTHING = frozenset({"", ".", ".*", ".+", "^", "$", "^.*$", "^.*", ".*$", "[^]", "?",
                         "*", "^.", "..*"})
"""Patterns that match every process name."""


def every_process(cmd: SimpleCommand, out: Out) -> bool:
    """pkill/killall/skill/killall5 ending every process of a user (or of everyone): HIGH.
    True when found."""
    prog = cmd.program or ""
    if prog == "killall5":
        out.high(Code.KILL_CRITICAL, "killall5 signals every process outside its session",
                 system=True, target="killall5")
        return True
    if prog not in ("pkill", "killall", "skill"):
        return False
    values = _KILLALL_VALUES if prog == "killall" else _PKILL_VALUES
    whose: list[str] = []
    names: list[str] = []
    inverse = regex = exact = False
    words = cmd.args
    i = 0
    while i < len(words):
        text = words[i].text
        name = text.split("=", 1)[0]
        if name not in values and text[:2] in values and not text.startswith("--"):
            text = f"{text[:2]}={text[2:]}"  # -uroot: a short option's value attached
            name = text[:2]
        if name in values:
            value = text.split("=", 1)[1] if "=" in text else (
                words[i + 1].text if i + 1 < len(words) else "")
            if name in (_KILLALL_WHOSE if prog == "killall" else _WHOSE):
                whose.append(value or "?")
            i += 1 if "=" in text else 2
            continue
        if text in ("-v", "--inverse"):
            inverse = True
        elif text in ("-r", "--regexp"):
            regex = True
        elif text in ("-x", "--exact"):
            exact = True
        elif not text.startswith("-") or text == "-":
            names.append(text if words[i].literal else "*")
        i += 1
    return _judge_kill(prog, out, whose, names, inverse=inverse, regex=regex and not exact,
                       every=prog == "pkill" and not exact)


def _judge_kill(prog: str, out: Out, whose: list[str], names: list[str], *, inverse: bool,
                regex: bool, every: bool) -> bool:
    everyone = bool(names) and (every or regex) and all(n in _EVERYTHING for n in names)
    if inverse and names:
        out.high(Code.KILL_CRITICAL, f"{prog} -v signals every process but {names[0][:40]}",
                 system=True, target=prog)
        return True
    if everyone:
        out.high(Code.KILL_CRITICAL, f"{prog} {names[0]!r} matches every process name: it "
                 "signals every process it may", system=True, target=prog)
        return True
    if whose and not names:
        out.high(Code.KILL_CRITICAL, f"{prog} signals every process of {whose[0][:40]}: "
                 "sessions, services and the shell that asked", system=True, target=whose[0])
        return True
    return False


# ------------------------------------------------------------------------------ the journal

VACUUM = ("--vacuum-size", "--vacuum-time", "--vacuum-files")
"""journalctl options that delete archived journal files."""


def vacuums(cmd: SimpleCommand, out: Out) -> bool:
    """``journalctl --vacuum-*``: deletes the logs that would show what happened. HIGH."""
    found = next((w.text for w in cmd.args if w.text.startswith(VACUUM)), None)
    if found is None:
        return False
    out.high(Code.HISTORY_TAMPER, f"journalctl {found[:40]} deletes archived logs; nothing "
             "brings them back", system=True, target="journal")
    return True


# ------------------------------------------------------------------- guarded packages

GUARDED_PACKAGES = {
    "openssh-server": "remote access (SSH)", "openssh": "remote access (SSH)",
    "ssh": "remote access (SSH)", "openssh-sshd": "remote access (SSH)",
    "dropbear": "remote access (SSH)", "dropbear-bin": "remote access (SSH)",
    "dropbear-run": "remote access (SSH)", "tinysshd": "remote access (SSH)",
    "apparmor": "mandatory access control (AppArmor)",
    "apparmor-parser": "mandatory access control (AppArmor)",
    "libapparmor1": "mandatory access control (AppArmor)",
    "apparmor-profiles": "mandatory access control (AppArmor)",
    "selinux-policy": "mandatory access control (SELinux)",
    "selinux-policy-*": "mandatory access control (SELinux)",
    "selinux-basics": "mandatory access control (SELinux)",
    "policycoreutils": "mandatory access control (SELinux)",
    "libselinux*": "mandatory access control (SELinux)",
    "tomoyo-tools": "mandatory access control (TOMOYO)",
    "firewalld": "the firewall", "ufw": "the firewall", "nftables": "the firewall",
    "iptables": "the firewall", "iptables-nft": "the firewall", "shorewall": "the firewall",
    "audit": "the audit system", "auditd": "the audit system",
}
"""Packages whose removal takes away remote access or a security mechanism (any family's
name); a ``*`` is a family of names."""

_REMOVE_VERBS = frozenset({"remove", "purge", "autoremove", "erase", "rm", "del", "uninstall",
                           "autopurge", "reinstall-remove"})


def removed_packages(cmd: SimpleCommand) -> list[str]:
    """The package names a command removes, by family: ``apt|dnf|yum|zypper|apk VERB``,
    ``dpkg -r/-P``, ``rpm -e``, ``apt install NAME-`` (a trailing ``-`` removes)."""
    prog = cmd.program or ""
    texts = [w.text for w in cmd.args]
    words = [t for t in texts if not t.startswith("-")]
    if prog == "xbps-remove" or (prog == "emerge" and {"-C", "--unmerge", "--depclean",
                                                       "-c"} & set(texts)):
        return words
    if prog in ("dpkg", "rpm"):
        flags = {t for t in texts if t.startswith("-")}
        removing = flags & {"-r", "--remove", "-P", "--purge", "-e", "--erase"} or any(
            t.startswith("-") and not t.startswith("--") and set(t[1:]) & {"r", "P", "e"}
            for t in flags)
        return words if removing else []
    if not words:
        return []
    verb, names = words[0], words[1:]
    if verb in _REMOVE_VERBS:
        return names
    if verb == "swap" and prog in ("dnf", "dnf5", "yum"):
        return names[:1]  # dnf swap OLD NEW removes OLD
    if verb in ("install", "in") and prog in ("apt", "apt-get", "aptitude", "nala"):
        return [n[:-1] for n in names if n.endswith(("-", "_"))]  # NAME- removes, NAME_ purges
    if verb in ("install", "in") and prog == "zypper":
        after = texts[texts.index("--") + 1:] if "--" in texts else []
        return [n[1:] for n in names + after if n[:1] in ("!", "~", "-") and len(n) > 1]
    return []


_QUALIFIER = re.compile(r"(?::[a-z0-9_-]+|[=/].*|\.(?:x86_64|i[3-6]86|aarch64|armv7hl|noarch|"
                        r"ppc64le|s390x|src))$")
"""What follows a package's name: ``:amd64``, ``=1.2-3``, ``/stable`` (apt), ``.x86_64``."""
_VERSION = re.compile(r"-\d[\w.:~+]*(?:-[\w.~+]+)?$")
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
_APTITUDE = re.compile(r"^(?:~n(.+)|\?name\((.+)\))$")
_REGEX = re.compile(r"[\^$+|(){}\\]|\.\*")


def _name_forms(name: str) -> list[str]:
    """The names ``name`` may stand for: itself, without its qualifier, and an apt regex
    (``^openssh``) as the glob of what it matches."""
    forms = [name, _QUALIFIER.sub("", name), name.replace(".", "?"),  # apt: ``.`` is any
             _VERSION.sub("", name)]  # dnf: NAME-VERSION
    forms += [name.replace(m.group(0), alt) for m in [_BRACES.search(name)] if m
              for alt in m.group(1).split(",")]  # a brace bash left as is: openssh-{a,b}
    pattern = _APTITUDE.match(name)
    if pattern:  # aptitude/apt search patterns: ~nREGEX, ?name(REGEX)
        forms.append("*" + (pattern.group(1) or pattern.group(2) or "").strip("^$") + "*")
    if _REGEX.search(name):
        core = re.sub(r"[\^$+|(){}\\]|\.\*|\.\?", "*", name).strip("*")
        forms.append(f"*{core}*")
    return forms


def guarded_removal(names: list[str], prog: str, out: Out) -> bool:
    """HIGH when ``names`` (maybe globs, qualified or apt regexes) take away remote access or
    a security mechanism."""
    for name, form in ((n, f) for n in names for f in _name_forms(n)):
        for guarded, what in GUARDED_PACKAGES.items():
            if fnmatch.fnmatchcase(form, guarded) or fnmatch.fnmatchcase(guarded, form):
                out.high(Code.CRITICAL_PACKAGE, f"{prog} removes {name[:60]}: {what} of this "
                         "machine", system=True, target=name[:60])
                return True
    return False


# ------------------------------------------------------------------------- VM storage

_VIRSH_STORAGE = frozenset({"--remove-all-storage", "--storage", "--wipe-storage",
                            "--delete-storage-volume-snapshots"})
_VIRSH_DELETES = frozenset({"vol-delete", "vol-wipe", "pool-delete"})
_VIRSH_VALUES = frozenset({"-c", "--connect", "-d", "--debug", "-l", "--log", "-k",
                           "--keepalive-interval", "-K", "--keepalive-count", "-e", "--escape"})
"""virsh's global options that take a value (``virsh -c qemu:///system undefine …``)."""


def vm_storage(cmd: SimpleCommand, out: Out) -> bool:
    """virsh deleting a virtual machine's disks or a storage pool: HIGH."""
    if cmd.program != "virsh":
        return False
    texts = [w.text for w in cmd.args]
    verb = next((t for i, t in enumerate(texts) if not t.startswith("-") and
                 (i == 0 or texts[i - 1] not in _VIRSH_VALUES)), "")
    storage = next((t for t in texts if t.split("=", 1)[0] in _VIRSH_STORAGE), None)
    if verb in _VIRSH_DELETES or (verb == "undefine" and storage is not None):
        shown = storage if verb == "undefine" else verb
        out.high(Code.DISK_TOOL, f"virsh {verb} {shown or ''}: deletes a virtual machine's "
                 "storage; nothing brings it back", system=True, target=verb)
        return True
    return False


# ------------------------------------------------------------- units from others' files

_RUNS_UNIT = frozenset({"enable", "reenable", "start", "restart", "link", "preset",
                        "try-restart", "reload-or-restart", "add-wants", "add-requires"})


def foreign_unit(verb: str, units: list[str], out: Out) -> bool:
    """``systemctl enable --now /home/x.service``: a unit file another user can write,
    run by root (at every boot, when enabled). HIGH."""
    if verb not in _RUNS_UNIT:
        return False
    for unit in units:
        if "/" not in unit:
            continue
        where = places(out, unit)
        if any(writable_by_others(w) for w in where) or not all(w.startswith(
                ("/etc/systemd/", "/usr/lib/systemd/", "/lib/systemd/", "/run/systemd/"))
                for w in where):
            out.high(Code.PERSISTENCE, f"systemctl {verb} {unit[:60]}: a unit file outside "
                     "the system's unit directories, which root runs as it says (another "
                     "user may write it)", system=True, target=unit[:60])
            return True
    return False
