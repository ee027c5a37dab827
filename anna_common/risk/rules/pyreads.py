"""What interpreter code reads, as the shell words ``cat`` would be given (issue 34 item 5).

``sudo python3 -c "print(open('/etc/shadow').read())"`` was LOW: its code only reads, so
it was proven read-only, and what it read (root's password hashes) went to the model. Now
an interpreter's reads are judged like ``cat`` of the same paths
(:func:`anna_common.risk.rules.code.judge_reads`), so every secret, device and tree rule of
:mod:`anna_common.risk.rules.reads` applies to them.

Python is read from its syntax tree: every path-like string the code holds (``'/etc/shadow'``,
``'~/.ssh/id_rsa'``), with constant expressions folded (``'/etc/' + 'sha' + 'dow'``,
``os.path.join('/etc', 'shadow')``, f-strings of constants, a name assigned a constant), and
code handed to ``exec``/``eval``/``compile`` as a constant read in turn. A path handed to a
call that reads files but not known until run time (``open(sys.argv[1])``,
``open('/etc/' + name)``) is a read of anything below what is known (``"$X"``,
``'/etc/'"$X"``). A path only given to a function that looks at metadata (``os.path.exists``,
``os.stat``, ``print``) is not a read. Other languages (Perl, Ruby, Node, PHP, Lua, Tcl,
awk…) have no parser here: every path-like token of their code counts as read.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.risk.rules.base import Out

MAX_READS = 24
"""Paths judged per piece of code (one nested ``cat``: the analysis stays bounded)."""
_MAX_EXEC_DEPTH = 3
_UNKNOWN = '"$COMPUTED_PATH"'
"""How a part only known at run time is spelled for ``cat`` (a variable never assigned)."""
_PATHLIKE = re.compile(r"^(?:/|~(?:/|$))")
_METADATA = frozenset({
    "exists", "isfile", "isdir", "islink", "ismount", "lexists", "getsize", "getmtime",
    "getctime", "getatime", "stat", "lstat", "access", "listdir", "scandir", "readlink",
    "print", "basename", "dirname", "split", "splitext", "is_file", "is_dir", "is_symlink",
    "is_mount", "iterdir", "samefile", "normpath", "chdir", "isabs", "write"})
"""Calls that look at a path (or print it) without reading the file's content."""
_READERS = frozenset({
    "open", "read_text", "read_bytes", "getline", "getlines", "FileInput", "copy",
    "copyfile", "copy2", "copytree", "loadtxt", "genfromtxt", "read_csv", "ZipFile",
    "TarFile", "fromfile", "imread"})
"""Calls whose path argument is read (``open``, ``Path.read_text``, ``shutil.copy``…);
``fileinput.input`` too (a method, not the ``input`` builtin)."""


def python_reads(tree: ast.AST, depth: int = 0, *,
                 argv: list[str | None] | None = None) -> list[str]:
    """The paths ``tree`` reads, as shell words for ``cat`` (at most :data:`MAX_READS`);
    ``argv``: the script's ``sys.argv[1:]`` where known (``python -c CODE /etc/hostname``)."""
    names = _constants(tree)
    names.update({f"{_ARGV}{n}": a for n, a in enumerate(argv or [], start=1) if a is not None})
    found: dict[str, None] = {}
    metadata_only = _metadata_arguments(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            _exec_code(node, names, depth, found)
            name = _call_name(node)
            if name in _READERS or (name == "input" and isinstance(node.func, ast.Attribute)):
                for arg in _path_arguments(node):
                    word = _word(arg, names)
                    if word is not None:
                        found.setdefault(word, None)
        if isinstance(node, ast.Constant | ast.BinOp | ast.JoinedStr) and \
                id(node) not in metadata_only:
            value = _fold(node, names)
            if value is not None and _PATHLIKE.match(value):
                found.setdefault(_quote(value), None)
    return list(found)[:MAX_READS]


_ARGV = "\0argv"
"""Key prefix of the script's arguments among the folded names (no name can hold NUL)."""
_AWK_READ = re.compile(r'getline\b[^<;{}\n]*<\s*"([^"]+)"|ARGV\[[^]]*\]\s*=\s*"([^"]+)"')


def awk_reads(code: str) -> list[str]:
    """What an awk program reads besides its operands: ``getline < "F"``, ``ARGV[n] = "F"``."""
    return [_quote(a or b) for a, b in _AWK_READ.findall(code)][:MAX_READS]


def text_reads(code: str) -> list[str]:
    """Path-like tokens of code Anna has no parser for (Perl, Ruby, Node, awk…), as words."""
    found: dict[str, None] = {}
    for match in _TOKEN.finditer(code):
        found.setdefault(_quote(match.group(0)), None)
        if len(found) >= MAX_READS:
            break
    return list(found)


_TOKEN = re.compile(r"(?<![\w.$@%\\])(?:~/|/)(?!/)[^\s'\"`;|&<>(){}\[\],:*?!]+")
"""A path-like token: ``/etc/shadow`` quoted or bare (``/`` alone and ``//`` comments and
regex delimiters like ``s/a/b/`` mostly fall out; what is left only costs a harmless read)."""


_WILDCARD = re.compile(r"([*?])")


def _quote(path: str) -> str:
    """A literal path as a ``cat`` word: quoted, but a leading ``~/`` stays a home and a
    ``*`` or ``?`` stays a wildcard (``glob.glob('/etc/sha*')`` reads what it matches)."""
    home = path.startswith("~/") or path == "~"
    rest = path[2:] if home else path
    pieces = [p if _WILDCARD.fullmatch(p) else shlex.quote(p)
              for p in _WILDCARD.split(rest) if p]
    return ("~/" if home else "") + "".join(pieces) if pieces or not home else "~"


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _path_arguments(node: ast.Call) -> list[ast.expr]:
    """The argument a reading call reads: ``open(P)``, ``shutil.copy(SRC, …)``, and for a
    method (``Path(P).read_text()``), the ``P`` of the object it is called on."""
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and \
            not node.args and func.value.args:
        return [func.value.args[0]]
    return list(node.args[:1]) + [k.value for k in node.keywords if k.arg in ("file", "path",
                                                                              "filename")]


def _metadata_arguments(tree: ast.AST) -> set[int]:
    """ids of the constants that are only handed to a metadata call (``os.path.exists(P)``,
    ``Path(P).exists()``, ``print(P)``)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _call_name(node) not in _METADATA:
            continue
        targets: list[ast.AST] = list(node.args)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
            targets += func.value.args  # Path(P).exists()
        for target in targets:
            out.update(id(n) for n in ast.walk(target))
    return out


def _constants(tree: ast.AST) -> dict[str, str]:
    """Names assigned exactly once, to a constant string (``p = '/etc/shadow'``)."""
    seen: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    seen.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.withitem |
                        ast.NamedExpr) and isinstance(getattr(node, "target", None), ast.Name):
            seen.setdefault(node.target.id, []).append(ast.Constant(None))  # type: ignore[union-attr]
    names: dict[str, str] = {}
    for name, values in seen.items():
        if len(values) == 1:
            folded = _fold(values[0], {})
            if folded is not None:
                names[name] = folded
    return names


def _fold(node: ast.AST, names: dict[str, str]) -> str | None:
    """The string value of a constant expression, or None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
            ast.unparse(node.value) == "sys.argv":
        return names.get(f"{_ARGV}{node.slice.value!s}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold(node.left, names), _fold(node.right, names)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        pieces = [_fold(v.value if isinstance(v, ast.FormattedValue) else v, names)
                  for v in node.values]
        known = [p for p in pieces if p is not None]
        return "".join(known) if len(known) == len(pieces) else None
    if isinstance(node, ast.Call) and _call_name(node) == "join" and node.args:
        parts = [p for p in (_fold(a, names) for a in node.args) if p is not None]
        if len(parts) != len(node.args):
            return None
        joined = ""
        for part in parts:  # os.path.join: an absolute part starts again
            joined = part if part.startswith("/") or not joined else \
                f"{joined.rstrip('/')}/{part}"
        return joined
    return None


def _word(node: ast.AST, names: dict[str, str]) -> str | None:
    """A read call's argument as a ``cat`` word: literal where Anna can fold it, the known
    head with an unknown rest where it can fold a head, an unknown word otherwise."""
    folded = _fold(node, names)
    if folded is not None:
        return _quote(folded) if _PATHLIKE.match(folded) else None
    head = node
    while isinstance(head, ast.BinOp) and isinstance(head.op, ast.Add):
        head = head.left
    known = _fold(head, names) if head is not node else None
    if isinstance(node, ast.Call) and _call_name(node) == "join" and node.args:
        known = _fold(node.args[0], names)
        known = f"{known.rstrip('/')}/" if known is not None else None
    if isinstance(node, ast.Call) and _call_name(node) in ("Path", "PurePath", "PosixPath") \
            and node.args:
        return _word(node.args[0], names)
    if known is not None and _PATHLIKE.match(known):
        return _quote(known) + _UNKNOWN
    return _UNKNOWN


def _exec_code(node: ast.Call, names: dict[str, str], depth: int,
               found: dict[str, None]) -> None:
    """``exec("…")``, ``eval("…")``, ``compile("…", …)`` of a constant: its reads too."""
    if _call_name(node) not in ("exec", "eval", "compile") or not node.args or \
            depth >= _MAX_EXEC_DEPTH:
        return
    text = _fold(node.args[0], names)
    if text is None:
        return
    try:
        inner = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for word in python_reads(inner, depth + 1):
        found.setdefault(word, None)


def judge_reads(prog: str, words: list[str], out: Out,
                assess_into: Callable[[str, Out], None]) -> None:
    """Judge what ``prog``'s code reads as one ``cat`` of the same paths (one nested run,
    bounded); the reasons name ``prog``'s code, not the ``cat`` that stands for it."""
    if not words:
        return
    before = len(out.reasons)
    assess_into("cat -- " + " ".join(words[:MAX_READS]), out)
    for index in range(before, len(out.reasons)):
        reason = out.reasons[index]
        if reason.message.startswith("cat "):
            said = reason.message[3:].replace("$COMPUTED_PATH, a path", "a path").replace(
                "$COMPUTED_PATH", "…")
            out.reasons[index] = replace(reason, message=f"{prog} code{said}")
