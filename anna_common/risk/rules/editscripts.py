"""In-place edits (``sed -i``, ``perl -pi``) and config tools (``augtool``, ``crudini``) that
produce a setting which switches a security mechanism off.

The file's current text is unknown, so a replacement that only supplies the value
(``s/enforcing/disabled/``, ``s/Required/Never/``) counts, and so does uncommenting or
back-referencing a line the script names as a ``NOPASSWD`` grant.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.content.settings import (
    CMDLINE,
    SSHD_KEYS,
    SYSCTL_OFF,
    disabling,
    file_kind,
)
from anna_common.risk.paths import Resolved
from anna_common.risk.rules.content import stdin_of, word_text

if TYPE_CHECKING:
    from anna_common.risk.rules.base import Out
    from anna_common.shell.grammar import Analysis, SimpleCommand

_S_COMMAND = re.compile(r"s(.)((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1")
_TEXT_COMMAND = re.compile(r"(?:^|[;\n{}])\s*(?:\d+|\$|/(?:[^/\\\n]|\\.)*/)?\s*[aic]\\?\s*"
                           r"([^\n]*)")
_VALUE_WORDS = {
    "selinux": re.compile(r"\b(?:disabled|permissive)\b", re.I),
    "pacman": re.compile(r"\b(?:Package|Database)?(?:Never|TrustAll)\b", re.I),
    "sudoers": re.compile(r"NOPASSWD|!\s*authenticate"),
}


def sed_scripts(cmd: SimpleCommand, out: Out) -> list[str]:
    """The script a sed command runs (``-e X``, ``--expression=X`` or the first operand);
    several ``-e`` join with newlines as sed joins them (``-e 'a\\' -e TEXT``)."""
    scripts: list[str] = []
    args = cmd.args
    for i, word in enumerate(args):
        if word.text in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(word_text(args[i + 1], out))
        elif word.text.startswith("--expression="):
            scripts.append(word.text.split("=", 1)[1])
    if not scripts:
        first = next((w for w in args if not w.text.startswith("-")), None)
        scripts = [word_text(first, out)] if first is not None else []
    return ["\n".join(scripts)] if scripts else []


def edit_disables(kind: str, cmd: SimpleCommand, out: Out) -> str | None:
    """An in-place edit whose replacement (or appended text) produces a disabling setting:
    the ``sed`` script, or the code of ``perl -pi``/``ruby -pi`` (same ``s///`` syntax)."""
    if cmd.program == "sed":
        scripts = sed_scripts(cmd, out)
    else:
        scripts = [word_text(c.text, out) for c in cmd.code if c.text is not None]
    for script in scripts:
        candidates: list[str] = []
        for match in _S_COMMAND.finditer(script):
            pattern, replacement = match.group(2), match.group(3)
            expanded = re.sub(r"\\[1-9]|(?<!\\)&", lambda _m, p=pattern: p, replacement)
            candidates.append(expanded.replace("\\/", "/"))
            if _value_word(kind, script, pattern, replacement):
                return f"s/{pattern}/{replacement}/"[:80]
        candidates += [m.group(1) for m in _TEXT_COMMAND.finditer(script)]
        hit = disabling(kind, candidates)
        if hit:
            return hit
    return None


def _value_word(kind: str, script: str, pattern: str, replacement: str) -> bool:
    words = _VALUE_WORDS.get(kind)
    if words is not None and words.search(replacement):
        return True
    if kind == "sudoers" and "NOPASSWD" in script:
        return bool(re.search(r"\\[1-9]|(?<!\\)&", replacement)) or pattern.lstrip(
            "^ \t").startswith("#") or re.search(r"\^\s*\\?#|^#", pattern) is not None
    if kind == "sysctl":
        keys = [k for k in SYSCTL_OFF if k in script.replace("/", ".") or
                k.rsplit(".", 1)[-1] in script]
        return any(re.search(rf"(?<![\d.-]){v}(?![\d.])", replacement)
                   for k in keys for v in SYSCTL_OFF[k])
    if kind == "cmdline":
        return bool(CMDLINE.search(re.sub(r"\\[1-9]|(?<!\\)&", "", replacement)))
    if kind == "sshd":  # s/\(PermitRootLogin\) no/\1 yes/: the key comes back by reference
        return bool(re.search(r"\byes\b", replacement, re.I)) and bool(SSHD_KEYS.search(script))
    if kind == "pam":
        return "pam_permit" in replacement
    return False


_AUG_SET = re.compile(r"\bset\s+/files(/\S+)/([^/\s\[]+)(?:\[\d+\])?\s+[\"']?([^\"'\s]+)")


def config_tool_disables(cmd: SimpleCommand, analysis: Analysis,
                         out: Out) -> tuple[str, str, str] | None:
    """``augtool set /files/etc/selinux/config/SELINUX disabled``, ``crudini --set FILE
    SECTION KEY VALUE``: ``(kind, setting, path)`` when the setting switches a mechanism off."""
    texts = [word_text(w, out) for w in cmd.args]
    settings: list[tuple[str, str]] = []  # (path, "KEY = VALUE")
    if cmd.program == "crudini":
        for i, text in enumerate(texts):
            rest = texts[i + 1:]
            if text == "--set" and len(rest) >= 3:  # --set FILE SECTION KEY [VALUE]
                value = rest[3] if len(rest) > 3 else ""
                settings.append((rest[0], f"{rest[2]} = {value}"))
    else:
        commands = " ".join(texts) + "\n" + "\n".join(stdin_of(cmd, analysis, out) or [])
        settings += [(m.group(1), f"{m.group(2)} = {m.group(3)}")
                     for m in _AUG_SET.finditer(commands)]
    for path, setting in settings:
        kind = file_kind(Resolved(path, glob=False))
        if kind is None:
            continue
        line = setting if kind != "cmdline" else setting.split("=", 1)[-1]
        hit = disabling(kind, [line], path)
        if hit:
            return kind, hit, path
    return None
