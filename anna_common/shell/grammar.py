"""Understanding a shell command through a real bash grammar (tree-sitter-bash).

:func:`analyse` turns a command string into every simple command it would
run: the real program behind wrappers (``sudo``, ``env``, ``timeout``,
``xargs``, ``find -exec``, ...), its arguments as evaluated words, its
redirections, where its standard input comes from (a pipe, a heredoc, a
here-string), the commands inside command and process substitutions, and the
code handed to shells (``bash -c``, ``eval``, heredocs into ``sh``) and
interpreters (``python -c``, ``perl -e``, ``awk``). Nested shell code is
analysed recursively. What cannot be seen through (a parse error, a program
named by a variable, code built at run time, a script file) is reported as
*opaque*; callers fail closed on it.

Nothing here splits or cleans a string by hand: words come from the grammar,
quote removal follows bash's rules (:mod:`anna_common.shell.words`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.shell.arith import loop_taint, statement_arithmetic
from anna_common.shell.assign import WORD_TYPES as _WORD_TYPES
from anna_common.shell.assign import Assignments
from anna_common.shell.longopts import canonical_args
from anna_common.shell.model import (
    MAX_SOURCE,
    Analysis,
    Budget,
    EmbeddedCode,
    OverBudget,
    Redirect,
    SimpleCommand,
    Stdin,
    stdin_from,
)
from anna_common.shell.nested import NestedCode, found_by, printed_text
from anna_common.shell.parser import bash_parser
from anna_common.shell.unwrap import peel, program_name
from anna_common.shell.words import Word, WordBuilder

__all__ = ["Analysis", "EmbeddedCode", "Redirect", "SimpleCommand", "Stdin", "Word", "analyse",
           "bash_parser"]

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_DEPTH = 8
"""Nesting depth (``bash -c "eval '...'"``) beyond which analysis stops and reports opaque."""

_REDIRECT_TYPES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


def analyse(source: str, *, depth: int = 0, budget: Budget | None = None,
            stdin: Stdin | None = None) -> Analysis:
    """Parse ``source`` with tree-sitter-bash and collect what it would run.

    The work is bounded (:data:`~anna_common.shell.model.LIMITS`): past the budget the
    analysis stops and says why in ``too_large``. Nested code shares its parent's budget.
    """
    result = Analysis(source=source)
    if len(source) > MAX_SOURCE:
        result.too_large.append(f"{len(source)} characters (more than {MAX_SOURCE})")
        return result
    own = budget is None
    try:
        _Walker(result, depth=depth, budget=budget or Budget()).run(source, stdin or Stdin())
    except OverBudget as exc:
        if not own:
            raise
        result.too_large.append(str(exc))
    return result


class _Walker(NestedCode, Assignments):
    """Visits a tree-sitter tree and fills an :class:`Analysis`."""

    def __init__(self, result: Analysis, *, depth: int, budget: Budget) -> None:
        self.result = result
        self.depth = depth
        self.budget = budget
        self.nested = 0
        self.scope = budget.new_scope() if depth else 0
        self._collect: list[list[SimpleCommand]] = []
        self._words = WordBuilder(self._substitution, budget.spend, budget.nest)

    def run(self, source: str, stdin: Stdin) -> None:
        if self.depth > MAX_DEPTH:
            self.result.parse_ok = False
            self.result.opaque.append("nesting too deep to analyse")
            return
        root = bash_parser().parse(source.encode("utf-8", "surrogatepass")).root_node
        if root.has_error:
            self.result.parse_ok = False
            self.result.opaque.append("the command does not parse as bash")
        self.visit(root, "top", stdin)
        self._arithmetic(self._words.arithmetic)
        self.result.too_large.extend(self._words.too_large)

    def _arithmetic(self, texts: list[str]) -> None:
        """Record arithmetic text, paid per character: nested subscripts repeat the inner
        text at every level (``${a[${a[…]}]}``), and every copy is judged."""
        self.budget.spend("arithmetic characters", sum(len(t) for t in texts))
        self.result.arithmetic.extend(texts)

    def _emit(self, cmd: SimpleCommand) -> None:
        self.budget.spend("commands")
        self.result.commands.append(cmd)
        for bucket in self._collect:
            bucket.append(cmd)

    def _analyse_nested(self, code: str, stdin: Stdin | None = None) -> Analysis:
        return analyse(code, depth=self.depth + 1, budget=self.budget, stdin=stdin)

    # -- statements -------------------------------------------------------------

    def visit(self, node: Node, origin: str, stdin: Stdin) -> list[SimpleCommand]:
        """Visit a statement; return the commands whose output it produces. Each level costs
        one of the budget's (the walk recurses on it): never a RecursionError."""
        self.budget.nest(1)
        try:
            return self._visit(node, origin, stdin)
        finally:
            self.budget.nest(-1)

    def _visit(self, node: Node, origin: str, stdin: Stdin) -> list[SimpleCommand]:
        kind = node.type
        if kind == "command":
            return self._command(node, origin, stdin, [])
        if kind == "pipeline":
            return self._pipeline(node, origin, stdin)
        if kind == "redirected_statement":
            return self._redirected(node, origin, stdin)
        if kind == "function_definition":
            return self._function(node)
        if kind in ("variable_assignment", "variable_assignments"):
            self._assignments(node)
            return []
        if kind in ("declaration_command", "unset_command"):
            return self._declaration(node, origin)
        if kind == "comment":
            return []
        if kind in ("compound_statement", "c_style_for_statement", "test_command"):
            self._arithmetic(statement_arithmetic(node))
        elif kind == "for_statement":
            self.result.tainted.extend(loop_taint(node))
        if kind in _WORD_TYPES:
            self._words.build(node)
            return []
        produced: list[SimpleCommand] = []
        for child in node.children:
            if child.type == "&" and produced:
                produced[-1].background = True
            if child.is_named:
                produced.extend(self.visit(child, origin, stdin))
        return produced

    def _pipeline(self, node: Node, origin: str, stdin: Stdin) -> list[SimpleCommand]:
        producers: list[SimpleCommand] = []
        first = True
        for child in node.children:
            if not child.is_named:
                continue
            stage_stdin = stdin if first else Stdin("pipe", producers)
            producers = self.visit(child, origin, stage_stdin)
            first = False
        return producers

    def _redirected(self, node: Node, origin: str, stdin: Stdin) -> list[SimpleCommand]:
        body: Node | None = None
        redirects: list[Redirect] = []
        tails: list[tuple[str, Node]] = []
        feeding: list[SimpleCommand] = []  # substitutions in the redirections (< <(curl …))
        self._collect.append(feeding)
        try:
            for child in node.children:
                if child.type in _REDIRECT_TYPES:
                    redirects.extend(self._redirect(child, tails))
                elif child.is_named and body is None:
                    body = child
        finally:
            self._collect.pop()
        if body is None:  # ``> /etc/passwd`` alone: bash opens (truncates) it all the same
            return self._null_command(redirects, feeding, origin, stdin, node.start_byte)
        # tree-sitter-bash hangs ``a && b < in > out`` on the whole list; bash gives the
        # redirections to its last pipeline only (``b``): the others run as written
        earlier: list[SimpleCommand] = []
        while body.type == "list":
            *head, body = [c for c in body.children if c.is_named]
            for statement in head:
                earlier.extend(self.visit(statement, origin, stdin))
        new_stdin = stdin_from(redirects) or stdin
        if body.type == "command":
            produced = self._command(body, origin, new_stdin, redirects)
        else:
            produced = self.visit(body, origin, new_stdin)
            for cmd in produced:
                cmd.redirects.extend(redirects)
        for cmd in produced:
            cmd.substitutions.extend(feeding)
        for op, tail in tails:
            if op == "|":
                produced = self.visit(tail, origin, Stdin("pipe", produced))
            else:
                self.visit(tail, origin, stdin)
        return earlier + produced

    def _function(self, node: Node) -> list[SimpleCommand]:
        for child in node.children:
            if child.type == "word":
                self.result.functions.append((child.text or b"").decode("utf-8", "replace"))
                break
        name = self.result.functions[-1] if self.result.functions else "?"
        for child in node.named_children:
            if child.type != "word":
                self.visit(child, f"function {name}", Stdin())
        return []

    # -- redirects ------------------------------------------------------------

    def _redirect(self, node: Node, tails: list[tuple[str, Node]]) -> list[Redirect]:
        fd: int | None = None
        op = ""
        target: Word | None = None
        heredoc_body: Word | None = None
        expands = True
        pending_op = ""
        extra: list[Redirect] = []
        for child in node.children:
            ctype = child.type
            if ctype == "file_descriptor":
                text = (child.text or b"").decode()
                fd = int(text) if text.isdigit() else None
            elif ctype == "heredoc_start":
                raw = (child.text or b"").decode("utf-8", "replace")
                expands = not any(q in raw for q in "'\"\\")
            elif ctype == "heredoc_body":
                heredoc_body = self._heredoc_body(child, expands)
            elif ctype in ("heredoc_end",):
                continue
            elif ctype == "file_redirect":
                extra.extend(self._redirect(child, tails))
            elif not child.is_named:
                if not op:
                    op = ctype
                else:
                    pending_op = ctype
            elif ctype in _WORD_TYPES and target is None and node.type != "heredoc_redirect":
                target = self._words.build(child)
            elif child.is_named:
                tails.append((pending_op or "|", child))
                pending_op = ""
        if node.type == "heredoc_redirect":
            return [Redirect(op or "<<", fd, heredoc_body), *extra]
        return [Redirect(op, fd, target), *extra]

    def _heredoc_body(self, node: Node, expands: bool) -> Word:
        text = (node.text or b"").decode("utf-8", "replace")
        if not expands:
            return Word.of(text)
        # An unquoted heredoc expands $VAR and $(cmd): analyse the substitutions it holds.
        literal = True
        for child in node.named_children:
            if child.type in ("command_substitution", "process_substitution"):
                self._substitution(child, "heredoc")
                literal = False
            elif child.type in ("simple_expansion", "expansion"):
                self._words.build(child)  # ${a[$(cmd)]}: the subscript runs cmd
                literal = False
        return Word(text=text, literal=literal)

    # -- substitutions ----------------------------------------------------------

    def _substitution(self, node: Node, origin: str) -> str | None:
        """Analyse the code in a substitution; return its output if it is a literal echo."""
        produced: list[SimpleCommand] = []
        before = len(self.result.commands)
        redirects: list[Redirect] = []
        for child in node.named_children:
            if child.type in _REDIRECT_TYPES:  # ``$(< file)``: bash's ``$(cat file)``
                redirects.extend(self._redirect(child, []))
            else:
                produced.extend(self.visit(child, origin, Stdin()))
        produced.extend(self._null_command(redirects, [], origin, Stdin(), node.start_byte))
        inner = self.result.commands[before:]
        if len(inner) == 1 and len(produced) == 1 and origin == "command_substitution":
            text = printed_text(produced)
            if text is not None and text.literal:
                return text.text.rstrip("\n")
        return None

    # -- commands ---------------------------------------------------------------

    def _command(
        self, node: Node, origin: str, stdin: Stdin, outer: list[Redirect]
    ) -> list[SimpleCommand]:
        bucket: list[SimpleCommand] = []
        self._collect.append(bucket)
        try:
            words, assignments, redirects, tails = self._command_parts(node)
        finally:
            self._collect.pop()
        redirects = redirects + outer
        stdin = stdin_from(redirects) or stdin
        inv = peel(words) if words else None
        redirects += [Redirect("<", None, w) for w in inv.inputs] if inv else []  # xargs -a F
        found_below: list[Word] = []
        if inv is not None and inv.stdin_args:
            # xargs feeds its input as arguments; the command itself reads /dev/null (or the tty)
            found_below = found_by(stdin.producers) if stdin.kind == "pipe" else []
            stdin = Stdin("args", stdin.producers)  # its input becomes arguments, not stdin
        if inv is None:
            if assignments:
                self.result.assignments.extend(assignments)
            if redirects:  # ``x=1 > /etc/passwd``: the redirection still happens
                return self._null_command(redirects, bucket, origin, stdin, node.start_byte)
            return []
        prog_words = inv.words
        if inv.stdin_args and prog_words and not inv.stdin_replaces:
            # xargs appends what it reads to the arguments: unknown until run time
            prog_words = [*prog_words, Word.unknown("{xargs input}")]
        program = program_name(prog_words[0]) if prog_words else (
            inv.wrappers[-1] if inv.wrappers else None)
        cmd = SimpleCommand(
            program=program,
            name=prog_words[0] if prog_words else words[0],
            args=canonical_args(program, list(prog_words[1:])),  # ``--recur`` is --recursive
            redirects=redirects,
            assignments=assignments + inv.assignments,
            wrappers=inv.wrappers,
            privileged=inv.privileged,
            stdin=stdin,
            origin=origin,
            start=node.start_byte, scope=self.scope,
            depth=self.depth,
            substitutions=bucket,
            interactive_shell=inv.interactive_shell,
            stdin_args=inv.stdin_args,
            wrapper_options=inv.wrapper_options,
            found_below=found_below,
        )
        if prog_words and program is None:
            self.result.opaque.append(f"the program name is computed at run time: {cmd.name.text}"
                                      if cmd.name else "the program name is computed at run time")
        self._emit(cmd)
        for language, code in inv.code:
            self._embed(cmd, language, "code", code)
        if program is not None and prog_words:
            self._inspect_program(cmd, program)
        elif cmd.interactive_shell and stdin.kind != "inherit":
            self._stdin_code(cmd, "sh")  # ``sudo -s <<< CODE``: the shell reads CODE
        produced = [cmd]
        for op, tail in tails:
            if op == "|":
                produced = self.visit(tail, origin, Stdin("pipe", produced))
            else:
                self.visit(tail, origin, Stdin())
        return produced

    def _null_command(self, redirects: list[Redirect], substitutions: list[SimpleCommand],
                      origin: str, stdin: Stdin, start: int = 0) -> list[SimpleCommand]:
        """Redirections with no command: judged as the null command ``:`` with them."""
        if not redirects:
            return []
        cmd = SimpleCommand(program=":", name=Word.of(":"), args=[], redirects=redirects,
                            stdin=stdin_from(redirects) or stdin, origin=origin, start=start,
                            scope=self.scope, depth=self.depth, substitutions=substitutions)
        self._emit(cmd)
        return [cmd]

    def _command_parts(
        self, node: Node
    ) -> tuple[list[Word], list[tuple[str, Word]], list[Redirect], list[tuple[str, Node]]]:
        words: list[Word] = []
        assignments: list[tuple[str, Word]] = []
        redirects: list[Redirect] = []
        tails: list[tuple[str, Node]] = []
        for child in node.children:
            ctype = child.type
            if ctype == "command_name":
                inner = child.named_children[0] if child.named_children else child
                words.append(self._words.build(inner))
            elif ctype == "variable_assignment":
                before = len(self.result.assignments)
                self._assignments(child)
                assignments.extend(self.result.assignments[before:])
                del self.result.assignments[before:]
            elif ctype in _REDIRECT_TYPES:
                redirects.extend(self._redirect(child, tails))
            elif ctype in _WORD_TYPES:
                words.append(self._words.build(child))
        return words, assignments, redirects, tails
