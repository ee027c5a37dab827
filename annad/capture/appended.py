"""The one line a step appended to an rc file, read from the capture (issue 36.8).

The classifier judges ``echo "alias ll='ls -la'" >> ~/.bashrc`` by the line it appends
(:mod:`anna_common.risk.rules.rcappend`). The judge of the observed change must ask the
same question of what really landed, or a LOW approval would be refused at commit: so a
file change at an rc path whose new content is exactly the old content and one more whole
line is spelled as ``printf '%s\\n' LINE >> PATH`` for the rules, not as ``tee -- PATH``.

Both files are read without following a symlink at the last component, bounded in size;
anything unusual (a file that is not regular, a change that is not a pure append, the old
file not ending in a newline so the line would join its last one, more than one line,
text that is not UTF-8) gives None, and the change is judged as any write there (HIGH).
"""

from __future__ import annotations

import os
import stat

MAX_BYTES = 1 << 20
"""rc files larger than this are not read (judged as any write)."""


def appended_line(old_path: str, new_path: str) -> str | None:
    """The line (without its newline) ``new_path`` adds at the end of ``old_path``, when
    that is the whole difference; None otherwise."""
    old, new = _read(old_path), _read(new_path)
    if old is None or new is None or len(new) <= len(old) or not new.startswith(old):
        return None
    if old and not old.endswith(b"\n"):
        return None  # the "line" would continue the file's last line
    tail = new[len(old):]
    if not tail.endswith(b"\n") or tail.count(b"\n") != 1:
        return None
    try:
        return tail[:-1].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        return None
    finally:
        os.close(fd)
