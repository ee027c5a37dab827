"""A recipe placeholder stands as a word of its own: inside quotes, a here-document,
arithmetic or a comment its shell-quoted value would not stay one literal word (``"{msg}"``
with ``$(touch PWN)`` ran ``touch`` unattended), so such a recipe is refused when loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from anna_common.errors import AnnaError, ErrorCode
from annad.recipes import model

from .conftest import RecipeSite

REFUSED = {
    'printf %s "{v}"': "double quotes",
    'printf %s "x{v}y"': "double quotes",
    "printf %s '{v}'": "single quotes",
    "printf %s $'{v}'": "$'...' quotes",
    'printf %s $"{v}"': "quotes",
    "cat <<EOF\n{v}\nEOF": "here-document",
    "true # {v}": "comment",
    "echo $(( {v} + 1 ))": "arithmetic",
    "(( {v} ))": "arithmetic",
    "[[ {v} == x ]]": "[[ ]] test",
    'sh -c "echo {v}"': "double quotes",
    'echo "$HOME/{v}"': "double quotes",
    "let x={v}": "let",
    "eval echo {v}": "eval",
}
"""Template → the context the refusal names."""

ALLOWED = ["printf %s {v}", "printf %s --x={v}", 'echo "$(printf %s {v})"',
           'echo "a" {v} "b"', "printf %s {v} > /tmp/anna-r/x", "printf %s {v}{v}",
           "printf '%s\\n' {v}"]
"""Templates where the value stays one word."""

HOSTILE = ["$(touch PWN)", "`touch PWN`", "x' ; touch PWN; '", "$'\\x27'; touch PWN"]


@pytest.mark.parametrize("template", sorted(REFUSED))
def test_a_placeholder_inside_quotes_is_refused(template: str) -> None:
    with pytest.raises(AnnaError) as refused:
        model.fill("t", template, {"v": "$(id)"})
    assert refused.value.code is ErrorCode.CONFIG_INVALID
    assert REFUSED[template] in refused.value.message


@pytest.mark.parametrize("template", ALLOWED)
@pytest.mark.parametrize("value", HOSTILE)
def test_a_placeholder_as_a_word_keeps_the_value_literal(template: str, value: str) -> None:
    from anna_common.shell.grammar import analyse

    filled = model.fill("t", template, {"v": value})
    analysis = analyse(filled)
    assert analysis.parse_ok, filled
    assert not [c for c in analysis.commands if c.program == "touch"], filled


def test_the_recipe_is_refused_at_load_and_nothing_runs(site: RecipeSite) -> None:
    site.recipe("say", f'''
description = "Write a message"
[params]
msg = "hello"
[[steps]]
id = "say"
description = "say"
command = "echo \\"{{msg}}\\" > {site.work}/said.txt"
'''.replace("{{msg}}", "{msg}"))
    for value in HOSTILE:
        rc, out = site.json("recipe", "run", "say", "--param", f"msg={value}")
        assert rc == 2 and out["code"] == "CONFIG_INVALID", (value, out)
        assert "double quotes" in out["message"]
    assert not (site.work / "said.txt").exists()
    assert not list(Path(site.daemon.base).rglob("PWN"))
