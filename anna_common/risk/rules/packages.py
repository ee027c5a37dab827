"""Package managers: pacman first, the rest recognised and flagged when not native.

Installs, removals and upgrades are MEDIUM (they have a clear rollback: the
daemon removes what a plan newly installed). A partial upgrade (``-Sy``
without ``-u``), removing with ``-dd``, ``--overwrite`` and removing the
packages the system boots with are HIGH. AUR helpers build and run a stranger's
PKGBUILD: HIGH.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.rules.destructive import guarded_removal, removed_packages
from anna_common.risk.rules.langpackages import language_packages
from anna_common.risk.rules.pmhooks import HOOK_RULES, alternatives, gpg, trust_tools
from anna_common.risk.writes import operands

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand

CRITICAL_PACKAGES = frozenset({
    "base", "linux", "linux-lts", "linux-zen", "linux-hardened", "linux-firmware", "glibc",
    "systemd", "systemd-libs", "systemd-sysvcompat", "pacman", "sudo", "bash", "coreutils",
    "filesystem", "util-linux", "shadow", "pam", "grub", "mkinitcpio", "openssh", "networkmanager",
    "iwd", "dhcpcd", "iproute2", "archlinux-keyring", "gcc-libs", "zlib", "openssl",
    "ca-certificates", "dbus", "libsystemd", "efibootmgr", "dracut", "lvm2", "cryptsetup",
    "e2fsprogs", "btrfs-progs",
})
"""Removing these can leave a machine that does not boot, log in or reach the network."""

FOREIGN_ON_ARCH = frozenset({"apt", "apt-get", "aptitude", "dpkg", "dnf", "dnf5", "yum", "zypper",
                             "rpm",
                             "snap", "apk", "emerge", "xbps-install", "xbps-remove", "pkg",
                             "port", "brew", "nala", "eopkg", "swupd", "urpmi", "tdnf",
                             "microdnf", "opkg", "slackpkg", "installpkg", "nix-env",
                             "dpkg-reconfigure"})
"""Package managers that are not native on Arch."""

NATIVE = {
    "debian": frozenset({"apt", "apt-get", "aptitude", "dpkg", "nala", "snap", "dpkg-reconfigure"}),
    "fedora": frozenset({"dnf", "dnf5", "yum", "rpm", "microdnf", "tdnf"}),
    "suse": frozenset({"zypper", "rpm"}),
    "alpine": frozenset({"apk"}),
    "gentoo": frozenset({"emerge"}),
    "void": frozenset({"xbps-install", "xbps-remove"}),
}
"""Each distribution family's own package tools (for NOT_NATIVE outside Arch)."""

_ALL_MANAGERS = FOREIGN_ON_ARCH | {"pacman", "yay", "paru", "pikaur", "trizen", "aura", "pamac"}


_PACMAN_FAMILY = frozenset({"pacman", "yay", "paru", "pikaur", "trizen", "aura", "pamac"})
_ANYWHERE = frozenset({"nix-env", "brew", "flatpak"})


def not_native(program: str, distro: str | None) -> bool:
    """True when ``program`` is a package manager foreign to ``distro`` (None: unknown distro)."""
    if distro is None or program not in _ALL_MANAGERS:
        return False
    if distro == "arch":
        return program in FOREIGN_ON_ARCH
    native = NATIVE.get(distro)
    if native is None:
        return False
    return program not in native and program not in _ANYWHERE


def _pacman_ops(cmd: SimpleCommand) -> tuple[str, set[str], list[str]]:
    """Operation letter (Q/S/R/U/D/T/F/V/h), modifier letters and long options, targets."""
    op = ""
    mods: set[str] = set()
    for word in cmd.args:
        text = word.text
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            long_ops = {"--query": "Q", "--sync": "S", "--remove": "R", "--upgrade": "U",
                        "--database": "D", "--deptest": "T", "--files": "F", "--version": "V",
                        "--help": "h"}
            if name in long_ops and not op:
                op = long_ops[name]
            mods.add(name)
        elif text.startswith("-") and len(text) > 1:
            for ch in text[1:]:
                if ch.isupper() and not op and ch in "QSRUDTFV":
                    op = ch
                else:
                    mods.add(ch)
                if ch in _SHORT_VALUE:
                    break  # ``-r/tmp/p``: the rest of the cluster is -r's value, not letters
    targets = [w.text for w in operands(cmd.args, frozenset({"--root", "--dbpath", "-r", "-b",
                                                             "--cachedir", "--config",
                                                             "--logfile", "--gpgdir", "--hookdir",
                                                             "--arch", "--overwrite",
                                                             "--assume-installed", "--ignore",
                                                             "--ignoregroup", "--sysroot",
                                                             "--print-format"}))]
    return op, mods, targets


def pacman(cmd: SimpleCommand, out: Out) -> None:
    """pacman by operation: -Q/-Ss/-Si/-F read; -S/-U/-R change; -Sy alone is a partial upgrade."""
    op, mods, targets = _pacman_ops(cmd)
    dynamic = any(not w.literal for w in cmd.args)
    if not op and dynamic:
        # no operation Anna can read, and a word only known at run time: that word can be
        # the operation (``pacman $OPT linux`` with OPT=-Rdd)
        out.high(Code.PACKAGE_CHANGE, "pacman's operation is only known at run time",
                 system=True, target="pacman")
        return
    if op in ("Q", "T", "V", "h", "") or (op == "F" and "y" not in mods) or (
            op == "S" and mods & {"s", "i", "l", "g", "p", "--print", "--search", "--info",
                                  "--list", "--groups"} and "y" not in mods and "u" not in mods):
        out.read_only()
        return
    if op == "D" and mods & {"k", "--check"} and not mods & {"--asdeps", "--asexplicit"}:
        out.read_only()
        return
    foreign_options(cmd, out)
    if "--overwrite" in mods:
        out.high(Code.FORCE_REMOVE, "pacman --overwrite replaces files owned by other packages",
                 system=True, target="--overwrite")
    if "--assume-installed" in mods or "--dbonly" in mods:
        out.high(Code.FORCE_REMOVE, "pacman --assume-installed/--dbonly makes the package "
                 "database disagree with the files", system=True, target="pacman")
    if op in ("S", "U") and ("d" in mods or "--nodeps" in mods):
        out.high(Code.FORCE_REMOVE, "pacman --nodeps installs without checking dependencies",
                 system=True, target="--nodeps")
    if op == "S" and "y" in mods and "u" not in mods:
        out.high(Code.PARTIAL_UPGRADE, "pacman -Sy without -u is a partial upgrade, which can "
                 "break the system", system=True, target=targets[0] if targets else "pacman")
        return
    if op == "U":
        # every -U operand is a file or URL: it bypasses the signed repositories
        name = targets[0].rsplit("/", 1)[-1][:60] if targets else "pacman"
        out.high(Code.UNTRUSTED_BUILD, "pacman -U installs a package file or URL outside the "
                 f"signed repositories ({(targets or ['?'])[0][:60]})", system=True,
                 target=name or "pacman")
        return
    if op == "R":
        nodeps = sum(w.text.count("d") for w in cmd.args
                     if w.text.startswith("-") and not w.text.startswith("--"))
        nodeps += sum(1 for w in cmd.args if w.text == "--nodeps")
        if nodeps >= 2:
            out.high(Code.FORCE_REMOVE, "pacman -Rdd removes packages ignoring dependencies",
                     system=True, target=targets[0] if targets else "pacman")
        guarded_removal(targets, "pacman", out)
        critical = [t for t in targets if t in CRITICAL_PACKAGES]
        if critical:
            out.high(Code.CRITICAL_PACKAGE, f"removes {critical[0]}, which the system needs to "
                     "boot, log in or connect", system=True, target=critical[0])
        if dynamic:
            out.high(Code.PACKAGE_CHANGE, "removes packages Anna cannot list in advance",
                     system=True, target="packages")
    if op == "S" and "c" in mods:
        out.medium(Code.PACKAGE_CHANGE, "pacman cleans the package cache", system=True)
        return
    verb = {"S": "installs or upgrades", "U": "installs", "R": "removes", "D": "changes the "
            "install reason of", "F": "refreshes the file database of"}.get(op, "changes")
    out.medium(Code.PACKAGE_CHANGE, f"pacman {verb} packages", system=True,
               target=targets[0] if targets else "packages")


# the system's own values of the options that choose where pacman reads code, trust and
# state from; anything else (a scratch root, another config, a hook directory) is HIGH
_OWN_VALUES: dict[str, tuple[str, ...]] = {
    "--root": ("/",), "--sysroot": ("/",), "--dbpath": ("/var/lib/pacman",),
    "--config": ("/etc/pacman.conf",), "--gpgdir": ("/etc/pacman.d/gnupg",),
    "--cachedir": ("/var/cache/pacman/pkg",), "--hookdir": ("/etc/pacman.d/hooks",),
    "--logfile": ("/var/log/pacman.log",),
}
_SHORT_VALUE = {"r": "--root", "b": "--dbpath"}
_WHY = {
    "--root": "installs into another root", "--sysroot": "runs in another root",
    "--dbpath": "uses another package database", "--config": "reads another configuration "
    "(repositories, SigLevel, hooks)", "--gpgdir": "trusts another keyring",
    "--cachedir": "installs from another package cache", "--hookdir": "runs hooks from "
    "another directory as root", "--logfile": "writes its log to another file",
}


def _option_values(cmd: SimpleCommand) -> list[tuple[str, str, bool]]:
    """``(long option, value, literal)`` for every path option, in any spelling."""
    found: list[tuple[str, str, bool]] = []
    args = cmd.args
    for i, word in enumerate(args):
        text = word.text
        nxt = args[i + 1] if i + 1 < len(args) else None
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if name in _OWN_VALUES:
                if eq:
                    found.append((name, value, word.literal))
                elif nxt is not None:
                    found.append((name, nxt.text, nxt.literal))
        elif text.startswith("-") and len(text) > 1:
            for pos, letter in enumerate(text[1:], start=2):
                if letter in _SHORT_VALUE:
                    rest = text[pos:]
                    if rest:
                        found.append((_SHORT_VALUE[letter], rest, word.literal))
                    elif nxt is not None:
                        found.append((_SHORT_VALUE[letter], nxt.text, nxt.literal))
                    break
    return found


def foreign_options(cmd: SimpleCommand, out: Out) -> None:
    """Options that make a changing pacman load code, trust or state from elsewhere: HIGH.

    A hook directory runs its hooks as root; another config brings its own repositories,
    ``SigLevel`` and ``HookDir``; another keyring, cache, root or database changes what is
    trusted or where it lands. The system's own values are fine.
    """
    for name, value, literal in _option_values(cmd):
        normal = value.rstrip("/") or "/"
        if literal and normal in _OWN_VALUES[name]:
            continue
        out.high(Code.UNTRUSTED_BUILD, f"{cmd.program} {name} {value[:60]}: "
                 f"{_WHY[name]}", system=True, target=name)


_PACKAGE_FILE = re.compile(r"(?:^|/)[^/]+\.(?:rpm|deb|snap|apk|txz|tbz|pkg\.tar(?:\.\w+)?|"
                           r"flatpak(?:ref)?|AppImage)$|://")


def package_files(cmd: SimpleCommand, out: Out) -> bool:
    """Installing from a file or URL bypasses the repositories' signatures: HIGH."""
    for word in operands(cmd.args, frozenset({"--root", "--dbpath", "-r", "-b", "--cachedir",
                                              "--config"})):
        if _PACKAGE_FILE.search(word.text) or word.text.startswith(("./", "../")):
            out.high(Code.UNTRUSTED_BUILD, f"{cmd.program} installs a package file or URL "
                     f"outside the signed repositories ({word.text[:60]})", system=True,
                     target=word.text.rsplit("/", 1)[-1][:60] or cmd.program)
            return True
    return False


def aur_helper(cmd: SimpleCommand, out: Out) -> None:
    """yay/paru/pikaur/trizen: queries read; installs build an untrusted PKGBUILD."""
    op, mods, targets = _pacman_ops(cmd)
    if help_only(cmd) or op in ("Q", "T", "V", "h") or (
            op == "S" and mods & {"s", "i", "l", "g", "p"} and "y" not in mods and "u" not in mods
    ) or (cmd.args and cmd.args[0].text in ("-Ps", "-Gp", "-Pw", "--show")):
        out.read_only()
        return
    if op == "R":
        pacman(cmd, out)
        return
    out.high(Code.UNTRUSTED_BUILD, f"{cmd.program} builds and installs AUR packages, running "
             "their PKGBUILD", target=targets[0] if targets else cmd.program)


def makepkg(cmd: SimpleCommand, out: Out) -> None:
    """makepkg builds a package from a PKGBUILD; -i installs it."""
    opts = {w.text for w in cmd.args}
    if help_only(cmd) or opts & {"--printsrcinfo", "--packagelist", "-V", "--verifysource"}:
        out.read_only()
        return
    if any(t.startswith("-") and not t.startswith("--") and "i" in t for t in opts) or \
            "--install" in opts:
        out.high(Code.UNTRUSTED_BUILD, "makepkg builds and installs a package", target="makepkg")
    else:
        out.medium(Code.UNTRUSTED_BUILD, "makepkg runs a PKGBUILD to build a package")


def pacman_tools(cmd: SimpleCommand, out: Out) -> None:
    """paccache, pacman-key, pacdiff, pkgfile, checkupdates, pactree, expac."""
    prog = cmd.program or ""
    texts = [w.text for w in cmd.args]
    if prog in ("checkupdates", "pactree", "expac", "pkgfile", "pacman-conf",
                "paclog", "vercmp", "namcap", "lsinitcpio") or help_only(cmd):
        if prog == "pkgfile" and any(t in ("-u", "--update") for t in texts):
            out.medium(Code.PACKAGE_CHANGE, "pkgfile updates its database", system=True)
            return
        out.read_only()
        return
    if prog == "paccache":
        if any(t in ("-d", "--dryrun") or t.startswith("-d") for t in texts) and not any(
                t in ("-r", "--remove") for t in texts):
            out.read_only()
            return
        out.medium(Code.PACKAGE_CHANGE, "paccache deletes cached packages", system=True)
        return
    if prog == "pacman-key":
        if any(t in ("-l", "--list-keys", "--list-sigs", "-f", "--finger", "-v", "--verify",
                     "--export") for t in texts):
            out.read_only()
            return
        if any(t in ("--init", "--populate", "--refresh-keys", "-u", "--updatedb") for t in texts):
            out.medium(Code.PACKAGE_CHANGE, "pacman-key updates the keyring", system=True)
            return
        out.high(Code.SECURITY_CONFIG, "pacman-key changes which package signers are trusted",
                 system=True, target="keyring")
        return
    out.medium(Code.PACKAGE_CHANGE, f"{prog} changes packages", system=True)


_READ_VERBS = frozenset({"list", "show", "search", "info", "policy", "madison", "depends",
                         "rdepends", "showpkg", "showsrc", "changelog", "-l", "-L", "-s", "-S",
                         "-q", "-qa", "-qi", "-ql", "-qf", "--list", "--status", "--search",
                         "--listfiles", "--query", "history", "repolist", "provides",
                         "check-update", "whatprovides", "repoquery", "find", "se", "if", "pa",
                         "--get-selections", "-p", "--print-avail"})


_PACKAGE_OPS = frozenset({"-i", "--install", "-r", "--remove", "-P", "--purge", "-e", "--erase",
                          "-U", "--upgrade", "-F", "--freshen", "--unpack", "--configure",
                          "--set-selections", "-Uvh", "-ivh", "--import", "--rebuilddb",
                          "--initdb", "--setperms", "--setugids", "--restore"})


def foreign(cmd: SimpleCommand, out: Out) -> None:
    """apt/dnf/zypper/snap/...: queries read, the rest change packages; flagged off-distro."""
    prog = cmd.program or ""
    hooks = HOOK_RULES.get(prog)
    if hooks is not None:  # options that make it run, read or trust something else: first
        hooks(cmd, out)
    words = [w.text for w in cmd.args]
    verb = next((w for w in words if not w.startswith("-")), words[0] if words else "")
    # "dpkg -l", "rpm -qa": the operation is an option; "apt-get -q install" is not a query
    option_op = prog in ("dpkg", "rpm") and bool(words) and (
        words[0] in _READ_VERBS or (prog == "rpm" and words[0].split("=", 1)[0] in (
            "-E", "--eval"))) and not {w for w in words if w.startswith("-")} & _PACKAGE_OPS
    simulated = prog in ("apt", "apt-get") and bool(set(words) & {
        "-s", "--simulate", "--dry-run", "--just-print", "--no-act", "--recon"})
    if help_only(cmd) or verb in _READ_VERBS or option_op or simulated:
        out.read_only()
        return
    guarded_removal(removed_packages(cmd), prog, out)
    if package_files(cmd, out):
        return
    if prog == "snap" and {"--dangerous", "--devmode", "--classic", "--jailmode"} & set(words):
        out.high(Code.UNTRUSTED_BUILD, "snap installs an unconfined or unsigned snap",
                 system=True, target=verb)
        return
    out.medium(Code.PACKAGE_CHANGE, f"{prog} {verb} changes packages", system=True,
               target=verb or prog)


PACKAGE_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    "pacman": pacman,
    **dict.fromkeys(("yay", "paru", "pikaur", "trizen", "aura", "pakku", "aurman"), aur_helper),
    "makepkg": makepkg,
    **dict.fromkeys(("paccache", "pacman-key", "checkupdates", "pactree", "expac", "pkgfile",
                     "pacman-conf", "paclog", "vercmp", "namcap", "lsinitcpio", "pacman-db-upgrade",
                     "repo-add", "repo-remove", "pacstrap", "arch-chroot", "pacdiff"),
                    pacman_tools),
    **dict.fromkeys(sorted(FOREIGN_ON_ARCH), foreign),
    **dict.fromkeys(("update-alternatives", "alternatives"), alternatives),
    **dict.fromkeys(("add-apt-repository", "apt-key", "rpmbuild"), trust_tools),
    **dict.fromkeys(("gpg", "gpg2"), gpg),
    **dict.fromkeys(("pip", "pip3", "pipx", "npm", "pnpm", "yarn", "gem", "cargo", "flatpak",
                     "go", "composer", "luarocks", "cpan", "cpanm", "conda", "mamba", "uv",
                     "pamac"), language_packages),
}
"""Rules for package managers."""
