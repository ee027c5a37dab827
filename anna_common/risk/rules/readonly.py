"""The read-only allowlist: programs that only read and print, and the few arguments that make
them write. Its own module so the builtins' rules and the general rules share it without an
import circle."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.rules.base import HISTORY_VARS, Code, Out
from anna_common.risk.writes import operands, options

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

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
    "systemd-cgtop", "systemd-path", "systemd-escape", "systemd-id128", "acpi", "iwgetid",
    "vnstat", "bmon", "lsirq", "lsfd", "pwdx", "ldd", "objdump", "readelf", "nm", "size",
    "command", "builtin", "help", "apropos", "whatis",
    "tldr", "declare", "typeset", "local", "export", "readonly", "let", "unalias", "set",
    "history", "unset", "diff3", "sdiff", "colordiff", "jc", "csvlook",
    "time", "hostid", "logname", "top",
    # known and harmless (issue 36.8): sync only flushes writes already made to disk
    "sync", "lsb_release", "lslogins", "jobs", "xdg-user-dir",
})
"""Programs that only read and print (with the argument exceptions :func:`read_only` checks)."""

# HISTTIMEFORMAT only changes how history is shown; unsetting it is still tampering with it
_HISTORY_VARS = HISTORY_VARS | {"HISTTIMEFORMAT"}


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
