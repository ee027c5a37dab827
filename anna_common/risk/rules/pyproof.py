"""Proving a Python one-liner read-only, by allowlist.

A denylist of dangerous calls cannot be complete in Python (``getattr(os, 'sys' + 'tem')``,
``o = os; o.remove(...)``, ``Path(p).write_text``), so Anna proves the opposite: every
import comes from a module it knows, every use of a module names an attribute on that
module's read-only list, modules are never bound to other names, no dunder is touched, no
builtin that reaches arbitrary attributes or code is called, and files are opened only for
reading. Anything else is unproven, and the caller treats unproven code as able to write
files Anna cannot see.
"""

from __future__ import annotations

import ast
import sys

_READ_MODULES: dict[str, frozenset[str] | None] = {
    # None: every attribute of the module only computes or reads
    "json": None, "math": None, "re": None, "string": None, "textwrap": None,
    "collections": None, "itertools": None, "functools": None, "statistics": None,
    "decimal": None, "fractions": None, "hashlib": None, "base64": None, "binascii": None,
    "struct": None, "unicodedata": None, "shlex": None, "pprint": None, "calendar": None,
    "random": None, "html": None, "zlib": None, "ipaddress": None,
    "datetime": None, "time": None, "glob": None, "fnmatch": None, "stat": None, "pwd": None,
    "grp": None, "locale": None, "csv": None, "tomllib": None, "sysconfig": None,
    "difflib": None, "heapq": None, "bisect": None, "colorsys": None, "keyword": None,
    "platform": frozenset({"system", "machine", "release", "version", "node", "processor",
                           "python_version", "python_implementation", "platform", "uname",
                           "freedesktop_os_release", "libc_ver"}),
    "sys": frozenset({"version", "version_info", "platform", "argv", "stdin", "stdout",
                      "stderr", "exit", "maxsize", "byteorder", "executable", "prefix",
                      "base_prefix", "getsizeof", "getrecursionlimit", "getdefaultencoding",
                      "getfilesystemencoding", "implementation", "hexversion", "float_info",
                      "int_info", "maxunicode"}),
    "os": frozenset({"path", "getcwd", "listdir", "scandir", "stat", "lstat", "uname",
                     "cpu_count", "getuid", "geteuid", "getgid", "getegid", "getgroups",
                     "getpid", "getppid", "getlogin", "getenv", "environ", "sep", "linesep",
                     "pathsep", "walk", "get_terminal_size", "getloadavg", "sysconf",
                     "statvfs", "access", "readlink", "name", "devnull", "curdir", "pardir",
                     "R_OK", "W_OK", "X_OK", "F_OK"}),
    "pathlib": frozenset({"Path", "PurePath", "PurePosixPath", "PosixPath"}),
    "urllib": frozenset({"parse"}),
    "getpass": frozenset({"getuser"}),
    "resource": frozenset({"getrlimit", "getrusage", "RLIMIT_NOFILE", "RUSAGE_SELF"}),
}
_SUBMODULES = frozenset({"os.path", "urllib.parse"})
_STDLIB = frozenset(sys.stdlib_module_names)

_DANGEROUS_BUILTINS = frozenset({
    "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "globals",
    "locals", "vars", "breakpoint", "help",
})
# methods that change files or run things whatever object they are called on
# (Path.write_text, Path.touch, Path.rename, file.truncate, ...)
_WRITING_METHODS = frozenset({
    "write_text", "write_bytes", "touch", "mkdir", "makedirs", "unlink", "rmdir", "rename",
    "chmod", "lchmod", "chown", "symlink_to", "hardlink_to", "link_to", "truncate", "system",
    "popen", "spawn", "fork", "kill", "exec", "execute", "executescript", "run", "call",
    "check_call", "check_output", "Popen", "remove_file", "rmtree", "copyfile", "copytree",
    "move", "setattr", "mkfifo", "mknod", "chdir", "chroot", "setuid", "setgid", "putenv",
    "unsetenv", "seteuid", "setegid", "write_to", "to_csv", "savefig", "save", "dump_to",
    "copy_into", "move_into",
})
_READ_MODES = frozenset({"r", "rb", "rt", "br", "tr", "U", "rU"})


def proven_read_only(tree: ast.AST) -> bool:
    """True when every construct of ``tree`` is on the read-only allowlist."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and not _import_ok(node, aliases):
            return False
    module_roots = _module_roots(tree, aliases)
    return all(_node_ok(node, aliases, module_roots) for node in ast.walk(tree))


def _allowed(dotted: str) -> bool:
    """``json.loads``, ``os.path.join``, ``sys.stdout.write``: on the module allowlist.

    Every link after the first must not name another module (``glob.os.system``,
    ``os.path.os.remove``, ``json.codecs.open`` reach modules that are not on the list)
    nor a writing method.
    """
    if dotted in _READ_MODULES or dotted in _SUBMODULES:
        return True
    head, *links = dotted.split(".")
    if head not in _READ_MODULES or not links:
        return False
    allowed = _READ_MODULES[head]
    if allowed is not None and links[0] not in allowed:
        return False
    for position, link in enumerate(links):
        # datetime.datetime, time.time: the module's own namesake at the first link only
        same = position == 0 and (link == head or allowed is not None)
        if link in _STDLIB and not same:
            return False
        if position and link in _WRITING_METHODS:
            return False
    return True


def _import_ok(node: ast.Import | ast.ImportFrom, aliases: dict[str, str]) -> bool:
    if isinstance(node, ast.Import):
        for name in node.names:
            if not _allowed(name.name):
                return False
            if name.asname:
                aliases[name.asname] = name.name
            else:
                head = name.name.split(".", 1)[0]
                aliases[head] = head
        return True
    if node.level or node.module is None:
        return False
    for name in node.names:
        dotted = f"{node.module}.{name.name}"
        if name.name == "*" or not _allowed(dotted):
            return False
        aliases[name.asname or name.name] = dotted
    return True


def _module_roots(tree: ast.AST, aliases: dict[str, str]) -> set[int]:
    """ids of the Name and Attribute nodes of allowed ``module.attr`` chains
    (``platform.system`` is allowed although ``x.system`` is not)."""
    roots: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain: list[str] = [node.attr]
            links: list[ast.AST] = [node]
            base: ast.expr = node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                links.append(base)
                base = base.value
            if isinstance(base, ast.Name) and base.id in aliases:
                dotted = ".".join([aliases[base.id], *reversed(chain)])
                if _allowed(dotted):
                    roots.update(id(link) for link in [base, *links])
    return roots


def _node_ok(node: ast.AST, aliases: dict[str, str], module_roots: set[int]) -> bool:
    if isinstance(node, ast.Name):
        if "__" in node.id and node.id != "__name__":
            return False
        if node.id in aliases and id(node) not in module_roots:
            # a module (or an imported function) used as a value: it must itself be allowed
            # and not be a module that could be rebound and reached through generic methods
            target = aliases[node.id]
            return target.count(".") >= 1 and _allowed(target) and target not in _SUBMODULES
        return node.id not in _DANGEROUS_BUILTINS
    if isinstance(node, ast.Attribute):
        if "__" in node.attr:
            return False
        base: ast.expr = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id in aliases:
            # every attribute chain that starts at a module must itself be allowed
            return id(node) in module_roots
        return node.attr not in _WRITING_METHODS
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "__" not in node.value
    if isinstance(node, ast.Call):
        return _call_ok(node)
    return not isinstance(node, ast.Global | ast.Nonlocal | ast.AsyncFunctionDef | ast.Await)


def _call_ok(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "replace" and len(node.args) < 2:
        return False  # Path.replace(target) renames; str.replace takes two arguments
    if isinstance(func, ast.Attribute) and func.attr == "copy" and (node.args or node.keywords):
        return False  # Path.copy(target) writes; dict.copy()/list.copy() take nothing
    name = func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else None)
    if name == "open":
        # open(path, mode); Path(path).open(mode): whichever position, only reading modes
        return _read_mode(node, method=isinstance(func, ast.Attribute))
    if not isinstance(func, ast.Name | ast.Attribute):
        return isinstance(func, ast.Call | ast.Lambda)
    return True


def _read_mode(node: ast.Call, *, method: bool) -> bool:
    modes: list[ast.expr] = list(node.args) if method else node.args[1:2]
    for keyword in node.keywords:
        if keyword.arg == "mode":
            modes.append(keyword.value)
        elif keyword.arg in ("opener", None):
            return False
    return all(isinstance(m, ast.Constant) and m.value in _READ_MODES for m in modes)
