"""``annactl explain`` as text: the command, its risk, what it runs, reads and writes, why.

Every value came from the command the person typed: it is shown with
:func:`annactl.ui.console.inert_text`, never as markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text

from annactl.planning.explain_words import MAX_CHARS
from annactl.ui.console import inert_text
from annactl.ui.render_plan import command_text, risk_badge

if TYPE_CHECKING:
    from annactl.planning.explain_words import ModelWords


def _run_line(run: dict[str, Any]) -> Text:
    line = Text("  • ") + inert_text(str(run["program"]), "bold", max_chars=80)
    args = " ".join(str(a) for a in run["args"])
    if args:
        line += Text(" ") + inert_text(args, max_chars=200)
    extra = []
    if run["through"]:
        extra.append("through " + ", ".join(str(w) for w in run["through"]))
    if run["as_root"]:
        extra.append("as root")
    if run["nested"]:
        extra.append("inside another command")
    if extra:
        line += Text(f"  ({'; '.join(extra)})", style="dim")
    return line


def explanation_view(data: dict[str, Any], *, footer: bool = True) -> Group:
    """The explanation of one command (:func:`annactl.commands.explain.explanation`);
    ``footer``: end with the line saying nothing ran and no model was asked (without it,
    :func:`model_words_view` ends the explanation)."""
    parts: list[RenderableType] = [command_text(str(data["command"]))]
    head = Text("Risk: ") + risk_badge(str(data["risk"]), banned=bool(data["banned"]))
    head.append(f"  scope: {data['scope']}")
    if data["read_only"]:
        head.append("  read-only: runs without asking in a plan", style="green")
    if not data["parse_ok"]:
        head.append("  (does not parse as bash)", style="red")
    parts.append(head)
    parts.append(Text("Runs:", style="bold"))
    if data["runs"]:
        parts.extend(_run_line(run) for run in data["runs"])
    else:
        parts.append(Text("  nothing Anna can name", style="dim"))
    if data["reads"]:
        parts.append(Text("Reads (redirected in):", style="bold"))
        parts.extend(Text("  • ") + inert_text(str(p), max_chars=200) for p in data["reads"])
    parts.append(Text("Writes:", style="bold"))
    if data["writes"]:
        for target in data["writes"]:
            line = Text("  • ") + inert_text(str(target["path"]), max_chars=200)
            line += Text(f"  ({target['how']} by ") + inert_text(str(target["by"]),
                                                                max_chars=40)
            line += Text(", everything below it)" if target["recursive"] == "yes" else ")")
            parts.append(line)
    else:
        parts.append(Text("  no file Anna can name", style="dim"))
    parts.append(Text("Why this risk:", style="bold"))
    parts.extend(Text("  • ") + inert_text(str(r), max_chars=300) for r in data["reasons"])
    for unclear in data["unclear"]:
        parts.append(Text("unclear: ", style="yellow") + inert_text(str(unclear),
                                                                   max_chars=200))
    if data["confirm_word"]:
        parts.append(Text("In a plan it needs the typed word ") +
                     inert_text(str(data["confirm_word"]), "bold", max_chars=80))
    if footer:
        parts.append(OFFLINE_FOOTER)
    return Group(*parts)


OFFLINE_FOOTER = Text("From Anna's own analysis; nothing was run and no model was asked.",
                      style="dim")
"""The last line of an explanation no model added to."""


def model_words_view(words: ModelWords | None) -> Group:
    """The end of an explanation: the offline footer when no model was reached; otherwise
    the model's words, labelled as the model's and shown inert (or why there are none)."""
    if words is None:
        return Group(OFFLINE_FOOTER)
    if words.text is None:
        return Group(Text("From Anna's own analysis; nothing was run. The model gave no "
                          f"usable answer ({words.code}).", style="dim"))
    label = (Text("The model's words (", style="bold") + inert_text(words.model, "bold",
                                                                    max_chars=60)
             + Text("; not checked by Anna, which judged the command above):", style="bold"))
    return Group(Text("From Anna's own analysis above; nothing was run.", style="dim"), label,
                 Text("  ") + inert_text(words.text, max_chars=MAX_CHARS + 1))
