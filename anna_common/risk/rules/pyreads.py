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
import base64
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


_AWK_VAR_READ = re.compile(r'getline\b[^<;{}\n]*<\s*[^\s"]|ARGV\[[^]]*\]\s*=\s*[^\s"=]')
"""``getline < f``, ``ARGV[1] = f``: a read of a path held in a variable."""
_AWK_NAME = re.compile(r"[A-Za-z_]\w*=")


def awk_reads(code: str, args: list[str | None] | None = None) -> list[str]:
    """What an awk program reads besides its operands: ``getline < "F"``, ``ARGV[n] = "F"``;
    and where it reads a path held in a variable (``getline < f``), every path the command
    line assigns (``-v f=/etc/shadow``, an operand ``f=/etc/shadow``, ``--assign``), or a
    path only known at run time when it assigns none."""
    words = [_quote(a or b) for a, b in _AWK_READ.findall(code)]
    if _AWK_VAR_READ.search(code):
        values = _awk_assigned(args or [])
        words += [_UNKNOWN if v is None else _quote(v) for v in values
                  if v is None or _PATHLIKE.match(v)] or [_UNKNOWN]
    return words[:MAX_READS]


def _awk_assigned(args: list[str | None]) -> list[str | None]:
    """The values ``-v N=V``, ``-vN=V``, ``--assign[=]N=V`` and operands ``N=V`` set (None
    for a word only known at run time)."""
    values: list[str | None] = []
    take = False
    for arg in args:
        if arg is None:
            values.append(None)
            take = False
            continue
        text = arg
        if take or (not text.startswith("-") and _AWK_NAME.match(text)):
            take = False
        elif text in ("-v", "--assign"):
            take = True
            continue
        elif text.startswith("-v"):
            text = text[2:]
        elif text.startswith("--assign="):
            text = text[len("--assign="):]
        else:
            continue
        if _AWK_NAME.match(text):
            values.append(text.split("=", 1)[1])
    return values


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
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _percent(_fold(node.left, names), node.right, names)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _sliced(_fold(node.value, names), node.slice)
    if isinstance(node, ast.Call):
        folded = _fold_call(node, names)
        if folded is not None:
            return folded
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


_MAX_FOLD = 4096
"""The longest string folding builds (a path is far shorter; nothing grows without bound)."""
_FORMAT_FIELD = re.compile(r"\{(\d*)\}")


def _percent(text: str | None, right: ast.AST, names: dict[str, str]) -> str | None:
    """``'/etc/%s' % 'shadow'`` (and a tuple of strings); only ``%s`` and ``%%``, so no
    width can make a huge string."""
    items = right.elts if isinstance(right, ast.Tuple) else [right]
    values = [_fold(item, names) for item in items]
    if text is None or None in values or re.search(r"%(?![s%])", text):
        return None
    pieces = iter(values)
    try:
        return re.sub(r"%[s%]", lambda m: "%" if m.group() == "%%" else str(next(pieces)),
                      text)
    except StopIteration:
        return None


def _sliced(text: str | None, part: ast.Slice) -> str | None:
    """``'/etc/wodahs'[::-1]``: a constant string sliced by constant integers."""
    bounds = [None if b is None else _integer(b) for b in (part.lower, part.upper, part.step)]
    ints = [b for b in bounds if not isinstance(b, str)]
    if text is None or len(ints) < len(bounds) or ints[2] == 0:
        return None
    return text[ints[0]:ints[1]:ints[2]]


def _integer(node: ast.expr) -> int | str:
    """A constant integer (``-1`` included), or the text ``"?"`` for anything else."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return "?"


def _fold_call(node: ast.Call, names: dict[str, str]) -> str | None:
    """Calls of constants that make a path: ``chr(47)``, ``bytes.fromhex('2f…').decode()``,
    ``base64.b64decode('…').decode()``, ``'{}/{}'.format(…)``, ``''.join([…])``,
    ``s.replace(a, b)``."""
    name, func = _call_name(node), node.func
    args = [_fold(a, names) for a in node.args]
    if name == "chr" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and \
            isinstance(node.args[0].value, int) and 0 <= node.args[0].value < 0x110000:
        return chr(node.args[0].value)
    if not isinstance(func, ast.Attribute):
        return None
    base = _fold(func.value, names)
    if name == "decode" and isinstance(func.value, ast.Call):
        return _decoded(func.value, names)
    if name == "decode" and isinstance(func.value, ast.Constant) and \
            isinstance(func.value.value, bytes):
        return func.value.value.decode(errors="replace")
    if base is not None and name == "join" and len(node.args) == 1 and \
            isinstance(node.args[0], ast.List | ast.Tuple):
        parts = [_fold(e, names) for e in node.args[0].elts]
        known = [p for p in parts if p is not None]
        return base.join(known) if len(known) == len(parts) else None
    if base is None or None in args:
        return None
    if name == "format" and not node.keywords:
        known = [a for a in args if a is not None]
        fields = _FORMAT_FIELD.findall(base)
        if base.count("{") != len(fields) or sum(map(len, known)) > _MAX_FOLD:
            return None
        numbers = iter(range(len(fields)))
        try:
            return _FORMAT_FIELD.sub(
                lambda m: known[int(m.group(1)) if m.group(1) else next(numbers)], base)
        except IndexError:
            return None
    if name == "replace" and len(args) == 2:
        joined = base.replace(args[0] or "", args[1] or "")
        return joined if len(joined) <= _MAX_FOLD else None
    return None


def _decoded(call: ast.Call, names: dict[str, str]) -> str | None:
    """``bytes.fromhex(C).decode()``, ``base64.b64decode(C).decode()`` of a constant."""
    name = _call_name(call)
    arg = call.args[0] if len(call.args) == 1 else None
    text = _fold(arg, names) if arg is not None else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, bytes):
        text = arg.value.decode("latin-1")
    if text is None or len(text) > _MAX_FOLD:
        return None
    try:
        if name == "fromhex":
            return bytes.fromhex(text).decode(errors="replace")
        if name in ("b64decode", "standard_b64decode", "decodebytes"):
            return base64.b64decode(text).decode(errors="replace")
        if name == "b32decode":
            return base64.b32decode(text).decode(errors="replace")
    except ValueError:
        return None
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
