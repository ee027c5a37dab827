"""Reads that are not harmless: secret material, raw block devices, raw memory.

Reading ``/etc/shadow`` or a private key is HIGH; reading a raw disk bypasses every file
permission (HIGH); touching ``/dev/mem``, ``/dev/kmem`` or ``/dev/port`` is a hard ban.
Wildcards are judged as every protected path they can match (``cat /e?c/shadow``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common import paths
from anna_common.rules.base import Code, Out
from anna_common.rules.readonly import READ_ONLY
from anna_common.writes import operands

if TYPE_CHECKING:
    from anna_common.shell import SimpleCommand

_METADATA_ONLY = frozenset({"ls", "stat", "chmod", "chown", "chgrp", "test", "[", "[[", "file",
                            "touch", "namei", "getfacl", "setfacl", "lsattr", "realpath",
                            "readlink", "basename", "dirname", "mkdir", "du"})

_RAW_MEMORY = frozenset({"/dev/port", "/dev/mem", "/dev/kmem"})
_GENERIC_READERS = READ_ONLY | {"cp", "gzip", "xz", "zstd", "pv", "nc", "ncat", "socat", "scp",
                                "rsync", "tar", "bsdtar", "base64", "openssl", "curl"}


def secrets(cmd: SimpleCommand, out: Out) -> None:
    """Reading secrets, raw block devices (which bypass every file permission) or raw memory."""
    if cmd.program in _METADATA_ONLY:
        return
    words = operands(cmd.args) + [r.target for r in cmd.redirects
                                  if r.op == "<" and r.target is not None]
    for word in words:
        if not word.literal and not word.variables:
            continue
        for place in out.paths(word):
            if place.path in _RAW_MEMORY:
                out.ban(Code.BAN_DISK_WRITE, f"{cmd.program} touches raw memory or I/O ports "
                        f"({place.path})", target=place.path)
                return
            if paths.is_device(place.path) and cmd.program in _GENERIC_READERS:
                out.high(Code.SECRET_READ, f"{cmd.program} reads the raw device {place.path}, "
                         "bypassing every file permission", target=place.path, system=True)
                return
            if paths.is_secret(place.path):
                root_only = place.path.startswith(("/etc/", "/root/", "/var/lib/"))
                out.high(Code.SECRET_READ, f"{cmd.program} reads secret material "
                         f"({place.path})", target=place.path, system=root_only)
                return
