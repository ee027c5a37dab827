"""Files interpreter code opens for writing by a literal path: judged as the redirect that
writes them (``open("/etc/shadow", "w")`` is ``: > /etc/shadow``), by
:mod:`anna_common.risk.rules.code`. Python is read from its syntax tree; awk's ``print >
"F"`` and perl's ``open(F, ">F")`` by their text (Anna has no parser for them, and they
stay HIGH besides)."""

from __future__ import annotations

import ast
import re
import shlex

_TEXT_WRITES = re.compile(
    r'(?:print|printf)\b[^;}>|]*?(>>?)\s*"([^"]+)"'  # awk: print > "F"
    r"""|\bopen\s*\(?\s*(?:my\s+)?[\w$]+\s*,\s*["']\s*(\+?>>?|\+<)\s*([^"']+)["']"""  # 2-arg
    r"""|\bopen\s*\(?\s*(?:my\s+)?[\w$]+\s*,\s*["'](\+?>>?|\+<)["']\s*,\s*["']([^"']+)["']""")
"""``print > "F"`` (awk), ``open(F, ">F")`` and ``open(F, ">", "F")`` (perl)."""


def text_writes(code: str) -> list[str]:
    """Shell redirects equivalent to the literal writes in awk or perl ``code``."""
    found = []
    for match in _TEXT_WRITES.finditer(code):
        groups = [g for g in match.groups() if g is not None]
        op, path = groups[0], groups[1]
        found.append(f": {'>>' if '>>' in op else '>'} {shlex.quote(path.strip())}")
    return found


def _const(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def python_written(node: ast.Call, name: str) -> tuple[str, str] | None:
    """(path, ``>`` or ``>>``) when the call opens a literal path for writing: ``open(P, "w")``,
    ``os.open(P, os.O_WRONLY)``, ``Path(P).write_text(…)``, ``Path(P).open("a")``."""
    func = node.func
    mode: str | None = None
    path: str | None = None
    if (name == "open" and not isinstance(func, ast.Attribute)) or (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.value.id in ("io", "codecs", "builtins") and name == "open"):
        path = _const(node.args[0]) if node.args else None
        mode = _const(node.args[1]) if len(node.args) > 1 else next(
            (_const(k.value) for k in node.keywords if k.arg == "mode"), None)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
            func.value.id == "os" and name == "open" and len(node.args) > 1:
        path = _const(node.args[0])
        flags = ast.unparse(node.args[1])
        mode = "w" if any(f in flags for f in ("WRONLY", "RDWR", "APPEND", "TRUNC", "CREAT")) \
            or not isinstance(node.args[1], ast.Attribute | ast.BinOp) else None
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and \
            func.value.args and name in ("write_text", "write_bytes", "open", "touch"):
        inner = func.value.func
        maker = inner.attr if isinstance(inner, ast.Attribute) else getattr(inner, "id", "")
        if maker in ("Path", "PosixPath", "PurePath"):
            path = _const(func.value.args[0])
            mode = "w" if name != "open" else (_const(node.args[0]) if node.args else "r")
    if path is None or mode is None or not set(mode) & set("wax+"):
        return None
    return path, ">>" if "a" in mode else ">"
