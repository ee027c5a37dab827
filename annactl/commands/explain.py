"""``annactl explain 'CMD'``: what a shell command does, from Anna's own analysis, offline.

The command is parsed with the same bash grammar and judged by the same rules as any
step (:func:`anna_common.shell.grammar.analyse`, :func:`anna_common.risk.assess.assess`,
:func:`anna_common.risk.writes.write_targets`): the programs it runs (and through what:
``sudo``, ``env``, ``bash -c``…), the files it reads from redirects, the paths it writes
and how, its risk tier, scope and the reasons. Nothing is run, so the explanation is the
same on every machine with the same distribution. Untrusted text (the command itself) is
shown inert.

When a model answers (:mod:`annactl.planning.explain_words`), its words follow Anna's
analysis, labelled as the model's; they never change the analysis. With no model
reachable (or ``--no-model``) the output is Anna's analysis alone, as it always was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from anna_common.shell.model import Analysis
    from annactl.planning.explain_words import ModelWords
    from annactl.ui.console import Consoles

MAX_LISTED = 20
"""Programs, reads or writes listed at most (a longer list says how many more)."""
_READ_OPS = frozenset({"<", "<&", "<>", "0<"})


def explanation(command: str, *, distro: str | None = None) -> dict[str, Any]:
    """Anna's explanation of ``command`` as a JSON-ready mapping."""
    from anna_common.risk.assess import assess
    from anna_common.shell.grammar import analyse
    from annactl.core.environment import local_context

    verdict = assess(command, local_context(distro))
    analysis = analyse(command)
    return {"command": command, "risk": str(verdict.risk), "banned": verdict.banned,
            "scope": str(verdict.scope), "read_only": verdict.read_only,
            "parse_ok": verdict.parse_ok, "runs": _runs(analysis), "reads": _reads(analysis),
            "writes": _writes(analysis, verdict.writes), "reasons": list(verdict.reasons),
            "codes": list(verdict.codes), "confirm_word": verdict.confirm_word,
            "unclear": [*analysis.opaque, *analysis.too_large][:MAX_LISTED]}


def _runs(analysis: Analysis) -> list[dict[str, Any]]:
    runs = []
    for cmd in analysis.commands[:MAX_LISTED]:
        runs.append({"program": cmd.program or (cmd.name.text if cmd.name else "?"),
                     "args": [w.text for w in cmd.args][:12], "through": list(cmd.wrappers),
                     "as_root": cmd.privileged, "nested": cmd.origin != "top"})
    return runs


def _reads(analysis: Analysis) -> list[str]:
    reads = []
    for cmd in analysis.commands:
        reads += [r.target.text for r in cmd.redirects
                  if r.op in _READ_OPS and r.target is not None]
    return list(dict.fromkeys(reads))[:MAX_LISTED]


def _writes(analysis: Analysis, resolved: list[str]) -> list[dict[str, str]]:
    from anna_common.risk.writes import write_targets

    merged: dict[tuple[str, str], dict[str, str]] = {}
    for cmd in analysis.commands:
        for target in write_targets(cmd):
            key = (target.word.text, target.how)
            by = target.program or cmd.program or "?"
            entry = merged.setdefault(key, {"path": key[0], "how": key[1], "by": by,
                                            "recursive": "no"})
            if by not in entry["by"].split(", "):
                entry["by"] += f", {by}"
            if target.recursive:
                entry["recursive"] = "yes"
    found = list(merged.values())
    if not found:  # the verdict's own list (e.g. writes a rule found without a target)
        found = [{"path": p, "how": "write", "by": "?", "recursive": "no"} for p in resolved]
    return found[:MAX_LISTED]


def explain(consoles: Consoles, command: str, *, as_json: bool, distro: str | None = None,
            use_model: bool = True) -> int:
    """Print the explanation (text, or one JSON document), then the model's words when a
    model gives some (``use_model``)."""
    from anna_common.errors import UsageError

    if not command.strip():
        raise UsageError("give a command to explain, in quotes",
                         hint="annactl explain 'tar -xzf backup.tgz -C ~/restore'")
    data = explanation(command, distro=distro)
    if as_json:
        from annactl.ui.console import emit_json

        words = _ask_model(consoles, data, spinner=False) if use_model else None
        doc = {"status": "ok", **data}
        if words is not None and words.reached:
            doc["model_words"] = words.to_dict()
        emit_json(consoles, doc)
        return ExitStatus.SUCCESS
    from annactl.ui.render_explain import explanation_view, model_words_view

    consoles.out.print(explanation_view(data, footer=False))
    words = _ask_model(consoles, data, spinner=consoles.err.is_terminal) if use_model else None
    consoles.out.print(model_words_view(words if words is not None and words.reached
                                        else None))
    return ExitStatus.SUCCESS


def _ask_model(consoles: Consoles, data: dict[str, Any], *, spinner: bool
               ) -> ModelWords | None:
    """The model's words, asked in a thread (a spinner on a terminal; Ctrl-C cancels, exit
    130); None when the settings cannot be loaded (said on stderr: the analysis stands)."""
    import threading

    from anna_common.errors import AnnaError
    from annactl.commands.spinner import CANCEL_GRACE_S, interrupted
    from annactl.core.config import load_settings
    from annactl.planning.explain_words import model_words

    try:
        settings = load_settings()
    except AnnaError as exc:
        from annactl.ui.console import inert

        consoles.err.print(f"note: no model was asked: {exc.code}: {inert(exc.message)}",
                           style="yellow", markup=False, highlight=False)
        return None
    cancel = threading.Event()
    box: list[ModelWords] = []
    thread = threading.Thread(target=lambda: box.append(model_words(settings, data,
                                                                    cancel=cancel)),
                              name="explain-model", daemon=True)
    thread.start()
    try:
        if spinner:
            with consoles.err.status("Asking the model for its words…", spinner="dots"):
                while thread.is_alive():
                    thread.join(0.1)
        while thread.is_alive():
            thread.join(0.1)
    except KeyboardInterrupt:
        cancel.set()
        thread.join(CANCEL_GRACE_S)
        raise interrupted("cancelled while the model was asked; Anna's analysis is above"
                          ) from None
    return box[0] if box else None
