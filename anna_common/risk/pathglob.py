"""A wildcard path judged as every protected path it can match.

``cp x /e?c/shadow`` writes ``/etc/shadow``; ``rm -rf /h*/victim`` deletes a home;
``dd of=/d?v/sda`` writes a disk. The rules in :mod:`anna_common.risk.paths` judge literal paths,
so a pattern is first matched, component by component, against the tree of names those rules
protect (top-level directories, identity databases, sensitive ``/etc`` files, devices, the
home's startup and key files). Every protected path it can match becomes a candidate of its
own, beside the pattern itself, so it gets that path's verdict. There is no filesystem
access: the tree is built from the rules' own tables, and a component that matches no known
name stays a pattern (``/home/*`` is still "some home").
"""

from __future__ import annotations

import re
from functools import lru_cache

from anna_common.risk import paths

MAX_CANDIDATES = 512
"""Protected paths one pattern may expand to before it is too large to analyse (``/**/x``
reaches about 300 with the secret, persistence and boot tables)."""
MAX_PER_COMMAND = 512
"""Protected paths all the patterns of one command may expand to."""

_GLOB = re.compile(r"[*?\[]")
_DEVICES = ("sda", "sdb", "sdc", "hda", "vda", "vdb", "xvda", "nvme0n1", "nvme1n1", "mmcblk0",
            "md0", "dm-0", "loop0", "sr0", "mem", "kmem", "port", "mapper")
_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z",
            "lower": "a-z", "space": r"\s", "xdigit": "0-9a-fA-F", "word": r"\w"}


def _tables() -> list[str]:
    found: list[str] = []
    for table in (paths.TOP_LEVEL, paths.CRITICAL, paths.IDENTITY_DB, paths.SECRET_PATTERNS,
                  paths.PERSISTENCE_PATTERNS, paths.LOG_PATTERNS, paths.SENSITIVE_ETC,
                  paths.BOOT_PATTERNS):
        found.extend(p for p in table if p.startswith(("/", "~/")))
    found += ["/dev/" + d for d in _DEVICES]
    found += ["/proc/1/environ", "/proc/1/mem", "/proc/kcore"]
    found += ["/proc/sys/kernel", "/proc/sysrq-trigger", "/sys/kernel", "/root/.ssh",
              "/etc/sudoers.d", "/etc/ld.so.preload", "/usr/bin", "/usr/lib", "/usr/sbin"]
    return found


Tree = dict[str, "Tree"]


@lru_cache(maxsize=1)
def _tree() -> Tree:
    """Known literal names, as a tree (``{"etc": {"shadow": {}, ...}, "~": {...}}``)."""
    root: Tree = {}
    for path in _tables():
        node = root
        parts = ["~", *path[2:].split("/")] if path.startswith("~/") else path[1:].split("/")
        for index, part in enumerate(parts):
            if not part or "[" in part or (_GLOB.search(part) and (
                    index != len(parts) - 1 or part in ("*", "*.*"))):
                break
            # a wildcard in a pattern's last name stands as one sample name it matches
            # (``/etc/ssh/ssh_host_*_key`` → ``ssh_host_x_key``), so a command's glob that can
            # match the pattern (``/etc/ssh/*``) reaches it; one that cannot (``*.pub``) not
            node = node.setdefault(re.sub(r"[*?]", "x", part), {})
    return root


@lru_cache(maxsize=512)  # a command's glob parts: bounded memory (issue 22)
def _component(pattern: str, nocase: bool) -> re.Pattern[str]:
    """A bash glob component as a regex (``*``, ``?``, ``[...]`` with ``!``/``^`` and
    ``[:class:]``, backslash escapes). Unknown constructs match more, never less."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif ch == "[":
            end, regex = _bracket(pattern, i)
            out.append(regex)
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out) + r"\Z", re.IGNORECASE | re.DOTALL if nocase else re.DOTALL)


def _bracket(pattern: str, start: int) -> tuple[int, str]:
    """Index of the closing ``]`` and the regex of ``[...]`` at ``start``; a ``[`` without a
    closing bracket is a literal character."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    i += negate
    body: list[str] = []
    first = True
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]" and not first:
            return i, ("[^" if negate else "[") + "".join(body) + "]"
        if ch == "[" and pattern[i + 1 : i + 2] == ":":
            close = pattern.find(":]", i + 2)
            if close < 0:
                return len(pattern), "."  # malformed: match any character
            body.append(_CLASSES.get(pattern[i + 2 : close], r"\s\S"))
            i = close + 2
            first = False
            continue
        body.append("\\" + ch if ch in "\\]^-[" and ch != "-" else ch)
        first = False
        i += 1
    return start, re.escape("[")


def is_glob(path: str) -> bool:
    """Whether a candidate still holds wildcard characters."""
    return _GLOB.search(path) is not None


def lead(pattern: str) -> str:
    """The literal start of an ``fnmatch`` pattern, up to its first ``*``, ``?`` or ``[``:
    every name the pattern matches starts with it. A cheap test that rules a pattern out
    before it is compiled and matched (issue 38 item 4: hundreds of distinct globs)."""
    found = _GLOB.search(pattern)
    return pattern[:found.start()] if found else pattern


def _hidden(name: str, pattern: str, dotglob: bool) -> bool:
    """Without ``dotglob`` a pattern matches a leading dot only when it starts with one."""
    return name.startswith(".") and not pattern.startswith(".") and not dotglob


def expand(path: str, *, dotglob: bool = False, nocase: bool = False) -> list[str] | None:
    """Protected literal paths the glob ``path`` can match (excluding ``path`` itself).

    None when there are more than :data:`MAX_CANDIDATES` (the caller reports the pattern as
    too large to analyse).
    """
    if path.startswith(paths.HOME + "/"):
        parts, prefix = path[len(paths.HOME) + 1 :].split("/"), paths.HOME
        node: Tree | None = _tree().get("~")
    elif path.startswith("/"):
        parts, prefix, node = path[1:].split("/"), "", _tree()
    else:
        return []
    found: list[str] = []
    if not _walk(node, parts, prefix, found, dotglob=dotglob, nocase=nocase):
        return None
    return [p for p in dict.fromkeys(found) if p != path]


def _walk(node: Tree | None, parts: list[str], prefix: str, found: list[str], *,
          dotglob: bool, nocase: bool) -> bool:
    """Depth-first over the parts; False once the candidate budget is exhausted."""
    if not parts:
        found.append(prefix or "/")
        return len(found) <= MAX_CANDIDATES
    part, rest = parts[0], parts[1:]
    if node is None or not (_GLOB.search(part) or nocase):
        child = node.get(part) if node is not None else None
        return _walk(child, rest, f"{prefix}/{part}", found, dotglob=dotglob, nocase=nocase)
    if "**" in part and not _globstar(node, parts, prefix, found, dotglob=dotglob,
                                      nocase=nocase):
        return False
    regex = _component(part, nocase)
    for name, child in node.items():
        if regex.match(name) and not _hidden(name, part, dotglob) and not _walk(
                child, rest, f"{prefix}/{name}", found, dotglob=dotglob, nocase=nocase):
            return False
    # names the tree does not know: the pattern stays a pattern from here on
    return _walk(None, rest, f"{prefix}/{part}", found, dotglob=dotglob, nocase=nocase)


def _globstar(node: Tree, parts: list[str], prefix: str, found: list[str], *, dotglob: bool,
              nocase: bool) -> bool:
    """``**`` (with ``shopt -s globstar``) also matches several levels: ``/**/sshd_config``
    is ``/etc/ssh/sshd_config`` too. Assumed on: matching more is the cautious side."""
    rest = parts[1:]
    if not _walk(node, rest, prefix, found, dotglob=dotglob, nocase=nocase):
        return False
    for name, child in node.items():
        if not _hidden(name, parts[0], dotglob) and child and not _walk(
                child, parts, f"{prefix}/{name}", found, dotglob=dotglob, nocase=nocase):
            return False
    return True
