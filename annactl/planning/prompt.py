"""The messages sent to the model, built from versioned prompt files.

``annactl/planning/prompts/registry.json`` names each prompt file with its sha256; the
files are checked against it when loaded, so a prompt cannot change without
its recorded hash (and therefore every cache key and trace) changing too.

The **system message** is the file ``system_v1.txt`` verbatim: static and
byte-identical across requests (no telemetry, no clock, no preferences), so a
server can reuse its cached prefix, and nothing from the machine can reach the
instructions. The **user message** carries the request, the mode, the user's
remembered preferences (trusted: the user's own settings) and the trimmed
telemetry as JSON inside a block labelled untrusted. That JSON is escaped so
no string in it can close the block (``<``, ``>`` and backticks become
``\\uXXXX`` escapes, which JSON readers decode back).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import canonical_json
from annactl.planning.packet import (
    TASKS,
    Document,
    RequestSpec,
    Trace,
    check_results_document,
    conversation_document,
    memory_document,
    render,
    request_packet,
    telemetry_document,
)
from annactl.planning.packet import untrusted_json as _untrusted_json
from annactl.planning.schemahash import schema_sha256
from annactl.planning.telemetry_trim import DEFAULT_BUDGET, cut, trim

if TYPE_CHECKING:
    from anna_common.findings import Finding
    from anna_common.protocol.models import CheckResult
    from anna_common.telemetry import Telemetry

log = logging.getLogger(__name__)

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
"""Where the prompt files and registry.json live."""
MODES = ("one-shot", "repl", "tui")
"""Interaction modes the user message names."""
MAX_REQUEST_CHARS = 2000
"""Longest request sent to the model (longer ones are refused by the planner)."""
MAX_REPLY_ECHO = 6000
"""At most this much of a failed reply is sent back in a repair call."""
untrusted_json = _untrusted_json
"""Compact JSON that cannot close a tag block (defined in :mod:`annactl.planning.packet`)."""
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class PromptSet:
    """The loaded prompt files."""

    version: str
    """The registry's version string (``planner-2``)."""
    sha256: str
    """sha256 over the files' hashes: goes into cache keys and traces."""
    texts: dict[str, str]
    """Prompt id → text."""

    def text(self, prompt_id: str) -> str:
        """One prompt's text."""
        return self.texts[prompt_id]


def file_sha(path: Path) -> str:
    """sha256 (hex) of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _prompt_error(code: ErrorCode, message: str) -> AnnaError:
    return AnnaError(message, code=code,
                     hint="the installed prompt files are damaged or were edited; reinstall "
                          "Anna, or after a deliberate edit run `python -m "
                          "annactl.planning.prompt --rehash` and bump the version")


def _registry() -> dict[str, Any]:
    """registry.json, checked for shape (seed 003: invalid JSON and missing fields hard-fail)."""
    path = PROMPT_DIR / "registry.json"
    try:
        registry = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _prompt_error(ErrorCode.PROMPT_SCHEMA_INVALID,
                            f"cannot read the prompt registry {path}: {exc}") from None
    except ValueError as exc:
        raise _prompt_error(ErrorCode.PROMPT_JSON_INVALID,
                            f"the prompt registry {path} is not valid JSON: {exc}") from None
    entries = registry.get("prompts") if isinstance(registry, dict) else None
    if (not isinstance(registry, dict) or not isinstance(registry.get("version"), str)
            or not isinstance(entries, dict) or not entries):
        raise _prompt_error(ErrorCode.PROMPT_SCHEMA_INVALID,
                            f"the prompt registry {path} needs a version and prompts")
    for prompt_id, entry in entries.items():
        if (not isinstance(entry, dict) or not isinstance(entry.get("file"), str)
                or not isinstance(entry.get("sha256"), str)
                or Path(entry["file"]).name != entry["file"]):
            raise _prompt_error(ErrorCode.PROMPT_SCHEMA_INVALID,
                                f"prompt {prompt_id!r} in {path} needs a plain file and sha256")
    unknown = set(registry) - {"version", "prompts", "examples"}
    if unknown:
        log.warning("prompt registry: ignoring unknown keys %s", sorted(unknown))
    return registry


@cache
def prompts() -> PromptSet:
    """Load and verify the registry (once per process; :class:`Planner` does it at start).

    Codes (seed 003): ``PROMPT_JSON_INVALID``, ``PROMPT_SCHEMA_INVALID``,
    ``PROMPT_SEGMENT_EMPTY``, ``PROMPT_HASH_MISMATCH``.
    """
    registry = _registry()
    texts: dict[str, str] = {}
    hashes: dict[str, str] = {}
    for prompt_id, entry in registry["prompts"].items():
        path = PROMPT_DIR / entry["file"]
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise _prompt_error(ErrorCode.PROMPT_SCHEMA_INVALID,
                                f"prompt file {entry['file']} cannot be read: {exc}") from None
        actual = hashlib.sha256(data).hexdigest()
        if actual != entry["sha256"]:
            raise _prompt_error(ErrorCode.PROMPT_HASH_MISMATCH,
                                f"prompt file {entry['file']} does not match its registered "
                                "sha256")
        text = data.decode("utf-8", "replace")
        if not text.strip():
            raise _prompt_error(ErrorCode.PROMPT_SEGMENT_EMPTY,
                                f"prompt file {entry['file']} is empty")
        texts[prompt_id] = text
        hashes[prompt_id] = actual
    digest = hashlib.sha256(canonical_json({"version": registry["version"],
                                            "files": hashes})).hexdigest()
    return PromptSet(version=str(registry["version"]), sha256=digest, texts=texts)


def fill(template: str, values: dict[str, str]) -> str:
    """Replace ``{{name}}`` placeholders in one pass (inserted text is never re-expanded)."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


SYSTEM_BY_FORM = {"plan": "system", "answer": "system_answer", "package": "system_fill",
                  "service": "system_fill", "wallpaper": "system_fill"}
"""The system prompt of each request form (:mod:`annactl.planning.forms`)."""
SMALL_BUDGET = {"answer": 2600, "package": 1400, "service": 1400, "wallpaper": 1400}
"""Telemetry characters a small form's user message carries (the full plan: 4,200)."""


def system_message(form: str = "plan") -> str:
    """The static system message of ``form`` (identical bytes on every request of it)."""
    return prompts().text(SYSTEM_BY_FORM[form])


def small_spec(request: str, form: str, *, telemetry: Telemetry,
               preferences: dict[str, str] | None = None,
               turns: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (),
               piped: Document | None = None) -> RequestSpec:
    """A small form's request: memory, recent turns (a follow-up question needs them), the
    piped text (:mod:`annactl.planning.piped`) and a shorter trimmed telemetry."""
    docs = [d for d in (memory_document(preferences), conversation_document(turns), piped) if d]
    docs.append(telemetry_document(trim(telemetry, request, budget=SMALL_BUDGET[form])))
    task = "anna.answer" if form == "answer" else "anna.fill"
    return RequestSpec(request, task, {"form": form}, docs)


def plan_spec(request: str, *, mode: str, telemetry: Telemetry,
              preferences: dict[str, str] | None = None,
              turns: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (),
              budget: int = DEFAULT_BUDGET, piped: Document | None = None) -> RequestSpec:
    """The planning request as packet parts: memory, recent turns, the piped text,
    trimmed telemetry."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    docs = [d for d in (memory_document(preferences), conversation_document(turns), piped) if d]
    docs.append(telemetry_document(trim(telemetry, request, budget=budget)))
    return RequestSpec(request, "anna.plan", {"mode": mode}, docs)


def render_packet(request_packet: dict[str, Any]) -> str:
    """The user message rendered from a request packet with its task's prompt file."""
    return render(request_packet, prompts().text(TASKS[request_packet["input"]["task"]["name"]]))


def user_message(request: str, *, mode: str, telemetry: Telemetry,
                 preferences: dict[str, str] | None = None,
                 turns: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (),
                 budget: int = DEFAULT_BUDGET) -> str:
    """The user message: request, mode, memory, recent turns, trimmed telemetry."""
    spec = plan_spec(request, mode=mode, telemetry=telemetry, preferences=preferences,
                     turns=turns, budget=budget)
    return render_packet(packet_for(spec, Trace("")))


def repair_message(findings: list[Finding], *, truncated: bool = False,
                   form: str = "plan") -> str:
    """Ask for corrected JSON, naming what was wrong, in the words of the request's form: a
    small form's repair names its own fields, never the ActionPlan's it does not have."""
    from annactl.planning import forms

    lines = [f"- {f.code}{' at ' + f.path if f.path else ''}: {cut(f.message, 300)}"
             for f in findings[:12]]
    if truncated:
        lines.insert(0, "- the reply was cut off at the token limit; write a shorter "
                        + ("plan" if form not in forms.SMALL_FORMS else "reply"))
    values = {"findings": "\n".join(lines) or "- unknown"}
    if form in forms.SMALL_FORMS:
        values["fields"] = ", ".join(forms.schema(form)["properties"])
        return fill(prompts().text("repair_small"), values)
    return fill(prompts().text("repair"), values)


def echo_reply(reply: str) -> str:
    """A failed reply as sent back in the repair call (cut, so garbage cannot blow the budget)."""
    return cut(reply, MAX_REPLY_ECHO) if reply.strip() else "(empty reply)"


def refine_spec(request: str, results: list[CheckResult], *,
                output_chars: int = 1200, form: str = "plan") -> RequestSpec:
    """The necessary checks' outcomes as packet parts, for a refined plan (or, in the answer
    form, for the answer from what the checks showed)."""
    rows = [{"id": r.id, "ran": r.ran, "exit_code": r.exit_code,
             "output": cut(r.output, output_chars), "reason": r.reason} for r in results[:20]]
    if form == "answer":
        return RequestSpec(request, "anna.refine_answer", {"form": "answer"},
                           [check_results_document(rows)])
    return RequestSpec(request, "anna.refine", {}, [check_results_document(rows)])


def refine_message(results: list[CheckResult], *, output_chars: int = 1200,
                   request: str = "") -> str:
    """The necessary checks' outcomes, for a refined plan (rendered from its packet)."""
    spec = refine_spec(request, results, output_chars=output_chars)
    return render_packet(packet_for(spec, Trace("")))


def packet_for(spec: RequestSpec, trace: Trace, *,
               conversation: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request packet for ``spec`` naming its schema (a small form's, or the ActionPlan's)
    and that schema's sha256."""
    form = str(spec.args.get("form", "plan"))
    if form != "plan":
        from annactl.planning.forms import schema

        return request_packet(spec, trace, conversation=conversation, schema=f"anna.{form}",
                              schema_sha=hashlib.sha256(canonical_json(schema(form)))
                              .hexdigest())
    return request_packet(spec, trace, conversation=conversation, schema_sha=schema_sha256())


def rehash() -> dict[str, Any]:
    """The registry with every file's current sha256 (for maintainers after an edit)."""
    registry: dict[str, Any] = json.loads((PROMPT_DIR / "registry.json").read_text("utf-8"))
    for entry in registry["prompts"].values():
        entry["sha256"] = file_sha(PROMPT_DIR / entry["file"])
    return registry


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--rehash"]:
        (PROMPT_DIR / "registry.json").write_text(json.dumps(rehash(), indent=2) + "\n",
                                                  encoding="utf-8")
    else:
        print("usage: python -m annactl.planning.prompt --rehash", file=sys.stderr)
