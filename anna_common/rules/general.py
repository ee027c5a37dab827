"""Everyday programs: the read-only allowlist, file tools, git, archives, editors, schedulers.

A command is INFO only when every program in it is on the parsed allowlist
below (with read-only arguments) and nothing is written. File tools (``cp``,
``rm``, ``sed -i``, ...) take their risk from where they write
(:mod:`anna_common.rules.locations`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common import paths
from anna_common.rules.base import Code, Out
from anna_common.rules.disk import help_only
from anna_common.writes import operands, options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell import SimpleCommand

READ_ONLY = frozenset({
    "ls", "cat", "tac", "head", "tail", "wc", "cut", "tr", "nl", "fold", "fmt", "paste", "join",
    "expand", "unexpand", "column", "rev", "od", "hexdump", "strings", "file", "stat", "du", "df",
    "free", "uptime", "uname", "id", "whoami", "groups", "who", "w", "users", "last", "lastb",
    "lastlog", "tty", "pwd", "basename", "dirname", "realpath", "readlink", "which", "whereis",
    "type", "locate", "plocate", "mlocate", "true", "false", "test", "[", "[[", "echo", "printf",
    "printenv", "nproc", "getconf", "arch", "lscpu", "lspci", "lsusb", "lsblk", "lsmod", "lsof",
    "lsns", "lslocks", "lsipc", "lsattr", "lshw", "dmidecode", "hwinfo", "inxi", "neofetch",
    "fastfetch", "screenfetch", "sensors", "ps", "pgrep", "pidof", "pstree", "vmstat", "iostat",
    "mpstat", "sar", "ss", "netstat", "findmnt", "blkid", "cmp", "diff", "comm",
    "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
    "sum", "jq", "yq", "grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "zcat", "bzcat",
    "xzcat", "zstdcat", "lz4cat", "cal", "ncal", "env", "locale", "seq", "yes", "expr",
    "bc", "factor", "shuf", "base64", "base32", "basenc", "sleep", "wait", ":", "cd",
    "pushd", "popd", "dirs", "hash", "alias", "shopt", "trap", "read", "return", "exit",
    "break", "continue", "shift", "getopts", "umask", "ulimit", "times", "tput", "clear", "reset",
    "fc-list", "fc-match", "fc-query", "xdpyinfo", "xprop", "xwininfo", "glxinfo", "eglinfo",
    "vulkaninfo", "vainfo", "vdpauinfo", "clinfo", "nvidia-smi", "lsinitcpio", "modinfo",
    "getfacl", "getcap", "namei", "tree", "exa", "eza", "lsd", "bat", "batcat", "identify",
    "exiftool", "ffprobe", "mediainfo", "pdfinfo", "zipinfo", "numfmt", "tsort", "ptx",
    "iconv", "uniq", "sort", "xxd", "mountpoint", "systemd-detect-virt", "systemd-cgls",
    "systemd-cgtop", "systemd-path", "systemd-escape", "systemd-id128", "journalctl?",
    "acpi", "iwgetid", "nmap?", "vnstat", "bmon", "iftop?", "ip?", "lsirq", "lsfd", "chrt?",
    "ionice?", "nice?", "taskset?", "pwdx", "ldd", "objdump", "readelf", "nm", "size", "id3v2?",
    "checkupdates?", "pacman-conf?", "command", "builtin", "help", "man?", "apropos", "whatis",
    "tldr", "declare", "typeset", "local", "export", "readonly", "let", "unalias", "set",
    "history", "unset", "diff3", "sdiff", "colordiff", "jc", "xmllint?", "csvlook",
    "stdbuf?", "time", "hostid", "logname", "top", "btop?", "glances?", "atop?",
})
"""Programs that only read and print (the ``?`` marks are filtered below)."""
_READ_ONLY = frozenset(p for p in READ_ONLY if not p.endswith("?"))

_HISTORY_VARS = frozenset({"HISTFILE", "HISTSIZE", "HISTFILESIZE", "HISTCONTROL", "HISTIGNORE",
                           "HISTTIMEFORMAT"})


def read_only(cmd: SimpleCommand, out: Out) -> None:
    """Programs on the allowlist, with the few arguments that would make them write."""
    prog = cmd.program or ""
    texts = [w.text for w in cmd.args]
    if prog == "history" and options(cmd.args) & {"-c", "-d", "-w", "-r", "-a", "-n", "-s"}:
        out.high(Code.HISTORY_TAMPER, "history changes the shell history", target="history")
        return
    if prog == "set" and any(t in ("+o", "-o") for t in texts) and "history" in texts and \
            "+o" in texts:
        out.high(Code.HISTORY_TAMPER, "set +o history stops recording shell history",
                 target="history")
        return
    if prog == "unset" and any(t in _HISTORY_VARS for t in texts):
        out.high(Code.HISTORY_TAMPER, "unset removes shell history settings", target="history")
        return
    if prog == "top" and not options(cmd.args) & {"-b", "-n"}:
        out.high(Code.INTERACTIVE_PROGRAM, "top without -b is interactive", target="top")
        return
    if prog == "uniq" and len(operands(cmd.args, frozenset({"-f", "-s", "-w"}))) >= 2:
        return  # uniq IN OUT writes OUT: judged as a write (no read-only mark)
    if prog == "xxd" and options(cmd.args) & {"-r", "-revert"} and \
            len(operands(cmd.args)) >= 2:
        return
    out.read_only()


def date(cmd: SimpleCommand, out: Out) -> None:
    """date prints the time; -s/--set changes the system clock (TLS, logs and logins depend on it)."""
    if any(w.text in ("-s", "--set") or w.text.startswith("--set=") for w in cmd.args):
        out.high(Code.SYSTEM_SETTING, "date sets the system clock", system=True, target="clock")
    else:
        out.read_only()


def touch(cmd: SimpleCommand, out: Out) -> None:
    """touch with a chosen time rewrites timestamps (hiding when files changed)."""
    if any(w.text.startswith(("-t", "-d", "-r", "--date", "--reference", "--time")) for w in
           cmd.args):
        out.high(Code.HISTORY_TAMPER, "touch sets file timestamps to a chosen time",
                 target="timestamps")


def install(cmd: SimpleCommand, out: Out) -> None:
    """install -m with a setuid mode creates a privileged program."""
    args = cmd.args
    for i, word in enumerate(args):
        mode = word.text[2:] if word.text.startswith("-m") and len(word.text) > 2 else (
            word.text.split("=", 1)[1] if word.text.startswith("--mode=") else (
                args[i + 1].text if word.text in ("-m", "--mode") and i + 1 < len(args) else ""))
        if mode and mode_is_setuid(mode):
            out.high(Code.SETUID, "install creates a setuid or setgid program", target=mode)
            return


def dd(cmd: SimpleCommand, out: Out) -> None:
    """dd copies raw bytes; reading a block device bypasses every file permission."""
    source = next((w.after(3) for w in cmd.args if w.text.startswith("if=")), None)
    if source is not None:
        for place in out.paths(source):
            if place.path.startswith("/dev/") and place.path not in (
                    "/dev/zero", "/dev/urandom", "/dev/random", "/dev/null", "/dev/stdin"):
                out.high(Code.SECRET_READ, f"dd reads the raw device {place.path}",
                         target=place.path, system=True)
                return
    out.medium(Code.SYSTEM_WRITE, "dd copies raw data", target="dd")


def enable(cmd: SimpleCommand, out: Out) -> None:
    """bash's ``enable -f LIB`` loads a shared library into the shell."""
    if any(w.text.startswith("-") and "f" in w.text for w in cmd.args):
        out.high(Code.LIBRARY_PRELOAD, "enable -f loads a shared library into the shell",
                 target="enable")
    else:
        out.read_only()


def getent(cmd: SimpleCommand, out: Out) -> None:
    """getent reads name databases; shadow and gshadow hold password hashes."""
    if any(w.text in ("shadow", "gshadow") for w in cmd.args):
        out.high(Code.SECRET_READ, "getent reads password hashes", target="shadow", system=True)
    else:
        out.read_only()


def find(cmd: SimpleCommand, out: Out) -> None:
    """find reads; -delete, -exec and -fprint are judged through their targets and commands."""
    if any(w.text in ("-ok", "-okdir") for w in cmd.args):
        out.high(Code.INTERACTIVE_PROGRAM, "find -ok asks on a terminal for every file")
        return
    out.read_only()


def fd(cmd: SimpleCommand, out: Out) -> None:
    """fd/fdfind search; -x/-X run a command per match (not analysed: HIGH)."""
    if options(cmd.args) & {"-x", "--exec", "-X", "--exec-batch"}:
        out.high(Code.OPAQUE, f"{cmd.program} -x runs commands Anna does not analyse")
    else:
        out.read_only()


_SED_SAFE = re.compile(
    r"""^\s*(?:
        (?:\d+|\$|/(?:[^/\\]|\\.)*/)?(?:\s*,\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/))?\s*!?\s*
        (?:[pdqQnNgGhHxl=]|s(.)(?:(?!\1)[^\\]|\\.)*\1(?:(?!\1)[^\\]|\\.)*\1[gpiIm0-9]*
           |y(.)(?:(?!\2).)*\2(?:(?!\2).)*\2|\{|\}|\#[^\n]*|)
        \s*[;\n]?\s*)+$""",
    re.VERBOSE,
)


def sed_script_safe(script: str) -> bool:
    """True when a sed script only substitutes, prints and deletes (no ``e``, ``w``, ``r``)."""
    return bool(_SED_SAFE.match(script)) if len(script) < 2000 else False


def sed(cmd: SimpleCommand, out: Out) -> None:
    """sed: scripts that execute (``e``) or write files (``w``) are not read-only."""
    scripts: list[str] = []
    args = cmd.args
    for i, word in enumerate(args):
        if word.text in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1].text)
        elif word.text.startswith("--expression="):
            scripts.append(word.text.split("=", 1)[1])
        elif word.text in ("-f", "--file"):
            out.medium(Code.SCRIPT_FILE, "sed runs a script file Anna cannot see")
            return
    if not scripts:
        ops = operands(args, frozenset({"-l", "--line-length"}))
        scripts = [ops[0].text] if ops else []
    if any(not w.literal for w in args[:1]) or not all(sed_script_safe(s) for s in scripts):
        out.high(Code.OPAQUE, "sed script may execute commands or write files", target="sed")
        return
    out.read_only()  # in-place edits are judged through write targets


_SETUID_OCTAL = re.compile(r"[0-7]?[2-7][0-7]{3}")
_SETUID_SYMBOLIC = re.compile(r"[ugoa]*[+=][rwxXt]*s")
_WORLD_WRITABLE = re.compile(r"[0-7]*[2367]|([ugo]*a[ugo]*|o)[+=][rwxXst]*w[rwxXst]*")


def mode_is_setuid(mode: str) -> bool:
    """An octal or symbolic mode that sets the setuid or setgid bit."""
    return bool(_SETUID_OCTAL.fullmatch(mode) or _SETUID_SYMBOLIC.search(mode))


def chmod(cmd: SimpleCommand, out: Out) -> None:
    """chmod: setuid/setgid bits grant privileges; world-writable modes invite tampering."""
    for word in cmd.args:
        text = word.text
        if mode_is_setuid(text):
            out.high(Code.SETUID, "chmod sets a setuid or setgid bit", target=text)
            return
        if (re.fullmatch(r"[0-7]{3,4}", text) and text[-1] in "2367") or \
                _WORLD_WRITABLE.fullmatch(text):
            out.high(Code.SYSTEM_PERMISSIONS, "chmod makes files writable by everyone",
                     target=text)
            return
        if not word.literal and cmd.args.index(word) == 0:
            out.high(Code.UNKNOWN_TARGET, "chmod applies a mode only known at run time",
                     target="chmod")
            return


def chown(cmd: SimpleCommand, out: Out) -> None:
    """chown/chgrp/setfacl give files to other users (root only); a computed owner is HIGH."""
    ops = operands(cmd.args, frozenset({"--from", "-m", "-x", "-M", "-X", "--modify",
                                        "--remove", "--set"}))
    owner = next((w for w in cmd.args if w.text in ("-m", "--modify", "--set")), None)
    spec = cmd.args[cmd.args.index(owner) + 1] if owner is not None and \
        cmd.args.index(owner) + 1 < len(cmd.args) else (ops[0] if ops else None)
    if spec is not None and not spec.literal:
        out.high(Code.SYSTEM_PERMISSIONS, f"{cmd.program} gives files to an owner only known at "
                 "run time", target=cmd.program, system=True)
        return
    if spec is not None and cmd.program == "chown" and spec.text.split(":")[0] in ("root", "0"):
        for word in ops[1:]:
            for place in out.paths(word):
                if paths.in_tmp(place.path) or paths.in_home(place.path):
                    # a root-owned file in a shared or personal directory is how a
                    # privileged program gets planted (then chmod u+s)
                    out.high(Code.SETUID, f"chown gives {place.path} in a user-writable "
                             "directory to root", target=place.path, system=True)
                    return
    out.medium(Code.SYSTEM_PERMISSIONS, f"{cmd.program} changes who owns or may use files",
               target=spec.text if spec is not None else cmd.program, system=True)


def setcap(cmd: SimpleCommand, out: Out) -> None:
    """File capabilities grant root powers to a program."""
    if help_only(cmd) or options(cmd.args) & {"-v"}:
        out.read_only()
        return
    out.high(Code.SETUID, "setcap grants capabilities to a program", system=True,
             target=(operands(cmd.args) or [None])[-1].text if operands(cmd.args) else None)


def chattr(cmd: SimpleCommand, out: Out) -> None:
    """chattr +i/+a make files immutable; -i unlocks them."""
    out.high(Code.SYSTEM_PERMISSIONS, "chattr changes file attributes", system=True,
             target=(operands(cmd.args) or [None])[-1].text if operands(cmd.args) else None)


_GIT_READ = frozenset({"status", "log", "diff", "show", "rev-parse", "describe", "ls-files",
                       "ls-tree", "ls-remote", "blame", "shortlog", "grep", "cat-file",
                       "whatchanged", "reflog", "version", "--version", "help", "rev-list",
                       "name-rev", "merge-base", "count-objects", "fsck", "verify-commit",
                       "var", "for-each-ref", "show-ref", "check-ignore", "annotate"})


def git(cmd: SimpleCommand, out: Out) -> None:
    """git: history and status read; hard resets, cleans and force pushes destroy work."""
    words = [w.text for w in cmd.args]
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    verb = words[i] if i < len(words) else ""
    rest = set(words[i + 1 :])
    destructive = (
        (verb == "reset" and "--hard" in rest)
        or (verb == "clean" and any(r.startswith("-") and "f" in r for r in rest)
            and not any(r.startswith("-") and "n" in r for r in rest))
        or (verb == "push" and (rest & {"-f", "--mirror", "--delete", "-d"} or
                                any(r.startswith(("--force", "+")) for r in rest)))
        or (verb == "branch" and ("-D" in rest or (rest & {"-d", "--delete"} and
                                                   rest & {"-f", "--force"})))
        or (verb == "checkout" and ("--" in rest or "-f" in rest or "." in rest))
        or (verb == "restore" and not rest & {"--staged"})
        or (verb == "stash" and rest & {"drop", "clear"})
        or (verb == "reflog" and rest & {"expire", "delete"})
        or (verb in ("filter-branch", "filter-repo", "update-ref") and (verb != "update-ref" or
                                                                        "-d" in rest))
        or (verb == "gc" and any(r.startswith("--prune") for r in rest))
    )
    if destructive:
        out.high(Code.DESTRUCTIVE_GIT, f"git {verb} discards work that cannot be recovered",
                 target=f"git {verb}")
        return
    if verb in _GIT_READ or (verb == "branch" and not rest & {"-d", "-m", "-M", "-c", "-C",
                                                             "--delete", "--move", "--copy"}
                             and not [r for r in rest if not r.startswith("-")]) or (
            verb == "remote" and (not rest or rest <= {"-v", "--verbose", "show", "get-url"})) or (
            verb == "config" and rest & {"--get", "--list", "-l", "--get-all", "--get-regexp"}) or (
            verb == "stash" and rest & {"list", "show"}) or (verb == "tag" and not rest) or (
            verb == "worktree" and "list" in rest) or (verb == "submodule" and "status" in rest):
        out.read_only()
        return
    if verb in ("clone", "fetch", "pull", "push", "submodule"):
        out.low(Code.NETWORK_READ, f"git {verb} talks to a remote repository", target=verb)
        return
    out.low(Code.HOME_WRITE, f"git {verb} changes a repository", target=verb)


_ARCHIVE_EXEC = ("--to-command", "--checkpoint-action", "--use-compress-program", "--rsh-command",
                 "--info-script", "--new-volume-script", "--unzip-command", "-TT", "--rmt-command")


def archive(cmd: SimpleCommand, out: Out) -> None:
    """tar/zip/7z/gzip: listing is read-only; options that run programs are HIGH."""
    texts = [w.text for w in cmd.args]
    if any(t.startswith(_ARCHIVE_EXEC) for t in texts) or (
            cmd.program in ("tar", "bsdtar") and ("-I" in texts or any(
                t.startswith("-") and not t.startswith("--") and "I" in t for t in texts))) or (
            cmd.program == "zip" and "-T" in options(cmd.args) and "-TT" in texts):
        out.high(Code.EMBEDDED_SHELL, f"{cmd.program} is told to run another program",
                 target=cmd.program)
        return
    first = texts[0] if texts else ""
    opts = options(cmd.args) | ({"-" + c for c in first} if first and not first.startswith("-")
                                and cmd.program in ("tar", "bsdtar") else set())
    listing = {"tar": {"-t", "--list"}, "bsdtar": {"-t", "--list"}, "unzip": {"-l", "-v", "-t",
                                                                             "-Z"},
               "7z": set(), "gzip": {"-l", "--list", "-t", "--test"},
               "xz": {"-l", "--list", "-t", "--test"}, "zstd": {"-l", "--list", "-t"}}
    if opts & listing.get(cmd.program or "", set()) or help_only(cmd) or (
            cmd.program == "7z" and texts[:1] in (["l"], ["t"])) or (
            cmd.program in ("gzip", "xz", "zstd", "bzip2", "lz4") and opts & {"-c", "--stdout",
                                                                            "-d"} and
            opts & {"-c", "--stdout"}):
        out.read_only()
        return
    out.low(Code.HOME_WRITE, f"{cmd.program} packs or unpacks files", target=cmd.program)


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


def container(cmd: SimpleCommand, out: Out) -> None:
    """docker/podman/...: inspection reads; running with host access is HIGH."""
    texts = [w.text for w in cmd.args]
    verb = next((t for t in texts if not t.startswith("-")), "")
    if verb in ("ps", "images", "inspect", "logs", "info", "version", "stats", "top", "port",
                "history", "search", "list", "ls", "status", "") or help_only(cmd):
        out.read_only()
        return
    host_root = re.compile(r"(?:^|,)(?:src|source)=/(?:,|$)|^/:/|^--volume=/:|^-v/:")
    if "--privileged" in texts or any(host_root.search(t) for t in texts) or \
            "--pid=host" in texts or "--net=host" in texts or "--network=host" in texts:
        out.high(Code.CONTAINER, f"{cmd.program} runs a container with host access",
                 system=True, target=verb)
        return
    if verb in ("exec", "attach", "proxy", "port-forward", "cp", "debug") or \
            any("0.0.0.0" in t for t in texts):
        out.high(Code.CONTAINER, f"{cmd.program} {verb} opens a way into a container or out of it",
                 system=True, target=verb)
        return
    if verb in ("rm", "rmi", "prune", "system", "volume", "kill") and any(
            t in ("prune", "rm", "-f", "--force", "-a", "--all") for t in texts):
        out.high(Code.CONTAINER, f"{cmd.program} {verb} deletes containers, images or volumes",
                 system=True, target=verb)
        return
    out.medium(Code.CONTAINER, f"{cmd.program} {verb} manages containers", system=True,
               target=verb)


def run_parts(cmd: SimpleCommand, out: Out) -> None:
    """run-parts runs every program in a directory."""
    if options(cmd.args) & {"--test", "--list"}:
        out.read_only()
        return
    out.high(Code.SCRIPT_FILE, "run-parts runs every program in a directory",
             target="run-parts")


def compiler(cmd: SimpleCommand, out: Out) -> None:
    """Compilers and build tools write build outputs (judged as writes) and run build scripts."""
    if help_only(cmd):
        out.read_only()
        return
    if cmd.program in ("make", "cmake", "ninja", "meson"):
        out.medium(Code.SCRIPT_FILE, f"{cmd.program} runs the build rules of a project",
                   target=cmd.program)


def writer(cmd: SimpleCommand, out: Out) -> None:
    """File tools: their risk is where they write (judged from their write targets)."""


def system_maintenance(cmd: SimpleCommand, out: Out) -> None:
    """locale-gen, ldconfig, update-ca-trust, mandb, ...: rebuild system-wide state."""
    prog = cmd.program or ""
    if help_only(cmd):
        out.read_only()
        return
    if prog in ("update-ca-trust", "trust", "update-ca-certificates"):
        if cmd.args and cmd.args[0].text in ("list", "extract?", "dump"):
            out.read_only()
            return
        out.high(Code.SECURITY_CONFIG, f"{prog} changes which certificates are trusted",
                 system=True, target="certificates")
        return
    out.medium(Code.SYSTEM_SETTING, f"{prog} rebuilds system-wide state", system=True,
               target=prog)


GENERAL_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    **dict.fromkeys(sorted(_READ_ONLY), read_only),
    "date": date,
    "find": find,
    **dict.fromkeys(("fd", "fdfind"), fd),
    "sed": sed,
    "chmod": chmod,
    **dict.fromkeys(("chown", "chgrp", "setfacl"), chown),
    "touch": touch,
    "install": install,
    "dd": dd,
    "enable": enable,
    "getent": getent,
    "setcap": setcap,
    "chattr": chattr,
    "git": git,
    **dict.fromkeys(("tar", "bsdtar", "zip", "unzip", "7z", "7za", "gzip", "gunzip", "xz", "unxz",
                     "zstd", "unzstd", "bzip2", "bunzip2", "lz4", "unrar", "cpio", "ar", "pax"),
                    archive),
    **dict.fromkeys(("vi", "vim", "nvim", "view", "vimdiff", "ex", "ed", "nano", "pico", "emacs",
                     "joe", "jed", "micro", "kak", "hx", "helix", "mcedit", "mc", "less", "more",
                     "most", "pg", "man", "info", "ranger", "nnn", "lf", "vifm", "tmux", "screen",
                     "byobu", "htop", "btop", "atop", "iftop", "nethogs", "iotop", "nmtui",
                     "cfdisk?", "visudo?", "sqlite3", "mysql", "psql", "ftp?", "gdb", "lldb",
                     "strace?", "ltrace?", "irb", "ghci", "jshell", "jjs", "tclsh", "wish",
                     "expect", "ssh-agent?", "watch?", "minicom", "picocom", "screen?", "dialog",
                     "whiptail", "zenity", "kdialog", "setsid?"), interactive),
    **dict.fromkeys(("crontab", "at", "batch", "atq", "atrm"), scheduler),
    **dict.fromkeys(("restic", "borg", "rclone", "kopia", "duplicity", "timeshift", "snapper",
                     "rdiff-backup", "bupstash", "duplicacy"), backup),
    **dict.fromkeys(("docker", "podman", "nerdctl", "lxc", "lxd", "incus", "virsh", "vagrant",
                     "systemd-nspawn", "machinectl", "distrobox", "toolbox", "buildah", "k3s",
                     "kubectl", "ctr", "crictl", "runc", "crun", "containerd"), container),
    "run-parts": run_parts,
    **dict.fromkeys(("gcc", "cc", "g++", "c++", "clang", "clang++", "ld", "as", "make", "cmake",
                     "ninja", "meson"), compiler),
    **dict.fromkeys(("cp", "mv", "rm", "rmdir", "unlink", "mkdir", "ln", "truncate", "tee",
                     "patch", "split", "csplit", "mktemp", "mkfifo", "exec"), writer),
    **dict.fromkeys(("locale-gen", "ldconfig", "update-ca-trust", "trust",
                     "update-ca-certificates", "mandb", "updatedb", "update-mime-database",
                     "glib-compile-schemas", "systemd-tmpfiles", "systemd-sysusers",
                     "systemd-hwdb", "udevadm?", "fc-cache?"), system_maintenance),
}
"""Rules for everyday programs (entries ending in ``?`` are documentation, filtered below)."""
GENERAL_RULES = {k: v for k, v in GENERAL_RULES.items() if not k.endswith("?")}
