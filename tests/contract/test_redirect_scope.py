"""A redirection belongs to the command bash gives it to: in a list (``&&``, ``||``) only
the last pipeline's last command has it, while a compound command (``{ …; }``, a subshell)
passes it to every command inside. tree-sitter-bash parses ``a && b > out`` as the whole
list redirected; the analysis must not give ``a`` the redirection (nor its standard input).
"""

from __future__ import annotations

import pytest

from anna_common.shell.grammar import analyse


def _redirects(source: str) -> dict[str, list[tuple[str, int | None, str | None]]]:
    analysis = analyse(source)
    assert analysis.parse_ok, source
    return {c.program or "?": [(r.op, r.fd, r.target.text if r.target else None)
                               for r in c.redirects] for c in analysis.commands}


CASES: list[tuple[str, dict[str, list[tuple[str, int | None, str | None]]]]] = [
    ("a && b <in >out", {"a": [], "b": [("<", None, "in"), (">", None, "out")]}),
    ("a && b < in > out", {"a": [], "b": [("<", None, "in"), (">", None, "out")]}),
    ("a; b > out", {"a": [], "b": [(">", None, "out")]}),
    ("a || b 2>err", {"a": [], "b": [(">", 2, "err")]}),
    ("a | b > out", {"a": [], "b": [(">", None, "out")]}),
    ("a && b > out && c", {"a": [], "b": [(">", None, "out")], "c": []}),
    ("a || b && c 2>err", {"a": [], "b": [], "c": [(">", 2, "err")]}),
    ("a && b | c > out", {"a": [], "b": [], "c": [(">", None, "out")]}),
    ("sudo a && sudo b >> out", {"a": [], "b": [(">>", None, "out")]}),
    # compound commands: the redirection applies to everything inside
    ("{ a; b; } > out", {"a": [(">", None, "out")], "b": [(">", None, "out")]}),
    ("(a; b) 2>err", {"a": [(">", 2, "err")], "b": [(">", 2, "err")]}),
    ("a && { b; c; } > out", {"a": [], "b": [(">", None, "out")], "c": [(">", None, "out")]}),
    ("a && (b) > out", {"a": [], "b": [(">", None, "out")]}),
]


@pytest.mark.parametrize(("source", "expected"), CASES)
def test_a_redirection_belongs_to_the_command_bash_gives_it_to(
        source: str, expected: dict[str, list[tuple[str, int | None, str | None]]]) -> None:
    assert _redirects(source) == expected


@pytest.mark.parametrize("source", ["a && b < in", "a || b <<EOF\nx\nEOF", "a && b <<< x"])
def test_only_the_last_command_reads_the_redirected_input(source: str) -> None:
    first, last = analyse(source).commands
    assert first.stdin.kind == "inherit" and not first.redirects
    assert last.stdin.kind in ("file", "heredoc", "herestring")

