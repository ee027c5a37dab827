"""Code that commands hand to shells and interpreters, found while walking a command.

A mixin of the analyser's walker (:mod:`anna_common.shell.grammar`): shells given ``-c`` code,
a script or standard input; ``eval``, ``source`` and ``trap``; ``find -exec``; interpreters given
code.
Literal shell code is analysed recursively; what cannot be seen is recorded as opaque.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.shell.argv import find_starts, listed_below
from anna_common.shell.interpreters import SHELLS, language_of, shell_call
from anna_common.shell.model import Analysis, Budget, EmbeddedCode, SimpleCommand, Stdin
from anna_common.shell.unwrap import peel, program_name
from anna_common.shell.words import Word

MAX_NESTED = 64
"""Nested code blocks analysed per command before giving up (opaque)."""

if TYPE_CHECKING:
    from tree_sitter import Node


class NestedCode:
    """Mixin: what shells, eval, find -exec and interpreters are given to run."""

    result: Analysis
    depth: int
    nested: int
    budget: Budget

    def _emit(self, cmd: SimpleCommand) -> None:  # provided by the walker
        raise NotImplementedError

    def visit(self, node: Node, origin: str, stdin: Stdin) -> list[SimpleCommand]:
        raise NotImplementedError  # provided by the walker

    def _analyse_nested(self, code: str, stdin: Stdin | None = None) -> Analysis:
        """Analyse *code* one level deeper on the same budget (provided by the walker, so this
        module never imports the parser that imports it)."""
        raise NotImplementedError

    def _inspect_program(self, cmd: SimpleCommand, program: str) -> None:
        """Shells, eval, source, find -exec and interpreters: what code do they run?"""
        if program in SHELLS:
            self._shell(cmd)
        elif program == "eval":
            if cmd.args:
                joined = " ".join(w.text for w in cmd.args)
                literal = all(w.literal for w in cmd.args)
                self._embed(cmd, "sh", "code", Word.of(joined) if literal else Word.unknown(joined))
        elif program == "trap":
            # trap 'CODE' SIGNAL... runs CODE later: analyse it like any other shell code
            code_words = [w for w in cmd.args if not w.text.startswith("-")]
            if len(code_words) >= 2:
                self._embed(cmd, "sh", "code", code_words[0])
        elif program in ("source", "."):
            if cmd.args:
                cmd.code.append(EmbeddedCode("sh", "script", cmd.args[0]))
                self.result.opaque.append(f"{program} runs a file Anna cannot see")
        elif program == "find":
            self._find_exec(cmd)
        elif program in ("at", "batch") and not any(w.text.startswith("-f") for w in cmd.args):
            self._stdin_code(cmd, "sh")  # the job is shell code read from standard input
        else:
            language = language_of(program)
            if language is not None:
                self._interpreter(cmd, program, language)

    def _shell(self, cmd: SimpleCommand) -> None:
        call = shell_call(cmd.args)
        if call.mode == "code":
            if call.code is None:
                self.result.opaque.append("a shell -c without code")
                return
            self._embed(cmd, "sh", "code", call.code)
        elif call.mode == "script":
            cmd.code.append(EmbeddedCode("sh", "script", call.code))
            self.result.opaque.append(f"{cmd.program} runs a script file Anna cannot see")
        else:
            self._stdin_code(cmd, "sh")

    def _interpreter(self, cmd: SimpleCommand, program: str, language: str) -> None:
        from anna_common.shell.interpreters import interpreter_code

        how, code = interpreter_code(program, cmd.args)
        if how == "stdin":
            self._stdin_code(cmd, language)
            return
        cmd.code.append(EmbeddedCode(language, how, code))
        if how == "script":
            self.result.opaque.append(f"{program} runs a script file Anna cannot see")

    def _stdin_code(self, cmd: SimpleCommand, language: str) -> None:
        """A shell or interpreter reading its program from standard input."""
        stdin = cmd.stdin
        if stdin.kind in ("heredoc", "herestring") and stdin.text is not None:
            if language == "sh":
                self._embed(cmd, "sh", "stdin", stdin.text)
            else:
                cmd.code.append(EmbeddedCode(language, "stdin", stdin.text))
            return
        if stdin.kind == "pipe":
            text = printed_text(stdin.producers)
            if text is not None and language == "sh":
                self._embed(cmd, "sh", "stdin", text)
            else:
                cmd.code.append(EmbeddedCode(language, "stdin", text))
                if text is None:
                    self.result.opaque.append(f"{cmd.program} runs code piped in at run time")
            return
        if stdin.kind == "file":
            cmd.code.append(EmbeddedCode(language, "script", stdin.text))
            self.result.opaque.append(f"{cmd.program} runs a file Anna cannot see")
            return
        cmd.interactive_shell = True

    def _embed(self, cmd: SimpleCommand, language: str, how: str, code: Word | None) -> None:
        cmd.code.append(EmbeddedCode(language, how, code))
        if language != "sh" or code is None:
            return
        if not code.literal:
            self.result.opaque.append("shell code is built at run time")
            return
        self.nested += 1
        if self.nested > MAX_NESTED:
            self.result.opaque.append("too much nested code to analyse")
            self.result.parse_ok = False
            return
        self.budget.spend("nested code blocks")
        # ``sh -c CODE`` reads the command's own input (``echo x | su -c sh``)
        inner = self._analyse_nested(code.text, cmd.stdin if how == "code" else None)
        origin = f"{cmd.program} -c" if how == "code" and cmd.program in SHELLS else (
            f"{cmd.program}" if how == "code" else f"{how} into {cmd.program}")
        for sub in inner.commands:
            if sub.origin == "top":
                sub.origin = origin
            self._emit(sub)
        self.result.merge(inner)

    def _find_exec(self, cmd: SimpleCommand) -> None:
        """``find ... -exec CMD {} ;`` runs CMD once per match, with ``{}`` unknown."""
        args = cmd.args
        i = 0
        while i < len(args):
            text = args[i].text
            if text in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(args) and args[j].text not in (";", "+"):
                    j += 1
                inner = [Word.unknown(w.text) if "{}" in w.text else w for w in args[i + 1 : j]]
                if inner:
                    self._emit_words(inner, "find -exec", cmd, find_starts(args))
                i = j + 1
                continue
            i += 1

    def _emit_words(self, words: list[Word], origin: str, parent: SimpleCommand,
                    found_below: list[Word] | None = None) -> None:
        inv = peel(words)
        if not inv.words:
            return
        program = program_name(inv.words[0])
        sub = SimpleCommand(
            program=program, name=inv.words[0], args=list(inv.words[1:]),
            assignments=inv.assignments, wrappers=inv.wrappers,
            privileged=parent.privileged or inv.privileged, origin=origin, depth=self.depth + 1,
            start=parent.start, scope=parent.scope,
            interactive_shell=inv.interactive_shell, found_below=found_below or [],
        )
        if program is None:
            self.result.opaque.append(f"{origin} runs a program computed at run time")
        self._emit(sub)
        for language, code in inv.code:
            self._embed(sub, language, "code", code)
        if program is not None:
            self._inspect_program(sub, program)


def printed_text(producers: list[SimpleCommand]) -> Word | None:
    """The literal text ``echo``/``printf``/``cat <<EOF`` pipe into the next stage, if knowable."""
    if len(producers) != 1:
        return None
    prod = producers[0]
    texts = [w.text for w in prod.args]
    if prod.program in ("echo", "printf") and (
            not all(w.literal for w in prod.args) or any("\\" in t for t in texts)):
        return None  # escapes (echo -e, sh's echo, printf) can spell anything: not knowable
    if prod.program == "echo":
        # only leading words of n/e/E are options (``echo x -n`` prints "-n")
        while texts and len(texts[0]) > 1 and texts[0][0] == "-" and set(texts[0][1:]) <= set(
                "neE"):
            texts = texts[1:]
        return Word.of(" ".join(texts))
    if prod.program == "printf":
        if texts[:1] == ["--"]:
            texts = texts[1:]  # ``printf -- FORMAT``: the format follows
        elif texts[:1] and texts[0].startswith("-"):
            return None  # ``-v VAR`` prints nothing; another option fails
        if texts and "%" not in texts[0]:
            return Word.of(texts[0])
        return None
    if prod.program == "cat" and not prod.args and prod.stdin.kind in ("heredoc", "herestring"):
        return prod.stdin.text
    return None


def found_by(producers: list[SimpleCommand], depth: int = 0) -> list[Word]:
    """Where the paths ``producers`` print lie, when every one is a listing command (``find``,
    ``ls``); empty otherwise (``xargs cat`` fed by them reads files below those places)."""
    lists = [_listed(prod, depth) for prod in producers]
    return [word for found in lists for word in found] if lists and all(lists) else []


_LINE_FILTERS = frozenset({"grep", "egrep", "fgrep", "head", "tail", "sort", "uniq"})


def _listed(prod: SimpleCommand, depth: int) -> list[Word]:
    """What ``prod`` lists; through filters that only drop or reorder the lines they read
    (``find D | grep x``), never through ``grep -o`` or a filter given files of its own."""
    found = listed_below(prod.program, prod.args)
    if found or prod.program not in _LINE_FILTERS or depth > 8 or prod.stdin.kind != "pipe":
        return found
    words = [w.text for w in prod.args]
    if prod.program in ("grep", "egrep", "fgrep") and (
            len([w for w in words if not w.startswith("-")]) > 1 or
            any(w.startswith("-") and not w.startswith("--") and "o" in w for w in words)):
        return []
    return found_by(prod.stdin.producers, depth + 1)

