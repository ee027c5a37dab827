"""``annactl explain`` as text: the command, its risk, what it runs, reads and writes, why.

Every value came from the command the person typed: it is shown with
:func:`annactl.ui.console.inert_text`, never as markup.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from annactl.ui.console import inert_text
from annactl.ui.render_plan import command_text, risk_badge


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


def explanation_view(data: dict[str, Any]) -> Group:
    """The explanation of one command (:func:`annactl.commands.explain.explanation`)."""
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
    parts.append(Text("From Anna's own analysis; nothing was run and no model was asked.",
                      style="dim"))
    return Group(*parts)
