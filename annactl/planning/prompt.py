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
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import canonical_json
from annactl.planning.telemetry_trim import DEFAULT_BUDGET, compact, cut, trim

if TYPE_CHECKING:
    from anna_common.findings import Finding
    from anna_common.protocol import CheckResult
    from anna_common.telemetry import Telemetry

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
"""Where the prompt files and registry.json live."""
MODES = ("one-shot", "repl", "tui")
"""Interaction modes the user message names."""
MAX_REQUEST_CHARS = 2000
"""Longest request sent to the model (longer ones are refused by the planner)."""
MAX_REPLY_ECHO = 6000
"""At most this much of a failed reply is sent back in a repair call."""
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class PromptSet:
    """The loaded prompt files."""

    version: str
    """The registry's version string (``planner-1``)."""
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


@cache
def prompts() -> PromptSet:
    """Load and verify the registry (once per process)."""
    registry = json.loads((PROMPT_DIR / "registry.json").read_text(encoding="utf-8"))
    texts: dict[str, str] = {}
    hashes: dict[str, str] = {}
    for prompt_id, entry in registry["prompts"].items():
        path = PROMPT_DIR / entry["file"]
        actual = file_sha(path)
        if actual != entry["sha256"]:
            raise AnnaError(
                f"prompt file {entry['file']} does not match its registered sha256",
                code=ErrorCode.INTERNAL_ERROR,
                hint="a prompt changed without a registry update; run "
                     "`python -m annactl.planning.prompt --rehash` and bump the version")
        texts[prompt_id] = path.read_text(encoding="utf-8")
        hashes[prompt_id] = actual
    digest = hashlib.sha256(canonical_json({"version": registry["version"],
                                            "files": hashes})).hexdigest()
    return PromptSet(version=str(registry["version"]), sha256=digest, texts=texts)


def fill(template: str, values: dict[str, str]) -> str:
    """Replace ``{{name}}`` placeholders in one pass (inserted text is never re-expanded)."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def untrusted_json(value: Any) -> str:
    """Compact JSON whose strings cannot close a tag block or open a code fence."""
    return (compact(value).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("`", "\\u0060"))


def system_message() -> str:
    """The static system message (identical bytes on every request)."""
    return prompts().text("system")


def _preferences(preferences: dict[str, str] | None) -> str:
    if not preferences:
        return ""
    ordered = dict(sorted(preferences.items()))
    return f"USER PREFERENCES (the user's own settings): {compact(ordered)}\n"


def _turns(turns: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    if not turns:
        return ""
    recent = [{"request": cut(r, 200), "answer": cut(a, 300)} for r, a in list(turns)[-4:]]
    return f"EARLIER IN THIS CONVERSATION (untrusted): {untrusted_json(recent)}\n"


def user_message(request: str, *, mode: str, telemetry: Telemetry,
                 preferences: dict[str, str] | None = None,
                 turns: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (),
                 budget: int = DEFAULT_BUDGET) -> str:
    """The user message: request, mode, preferences, recent turns, trimmed telemetry."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    return fill(prompts().text("user"), {
        "request": " ".join(request.split()),
        "mode": mode,
        "preferences": _preferences(preferences),
        "turns": _turns(turns),
        "telemetry": untrusted_json(trim(telemetry, request, budget=budget)),
    })


def repair_message(findings: list[Finding], *, truncated: bool = False) -> str:
    """Ask for corrected JSON, naming what was wrong."""
    lines = [f"- {f.code}{' at ' + f.path if f.path else ''}: {cut(f.message, 300)}"
             for f in findings[:12]]
    if truncated:
        lines.insert(0, "- the reply was cut off at the token limit; write a shorter plan")
    return fill(prompts().text("repair"), {"findings": "\n".join(lines) or "- unknown"})


def echo_reply(reply: str) -> str:
    """A failed reply as sent back in the repair call (cut, so garbage cannot blow the budget)."""
    return cut(reply, MAX_REPLY_ECHO) if reply.strip() else "(empty reply)"


def refine_message(results: list[CheckResult], *, output_chars: int = 1200) -> str:
    """The necessary checks' outcomes, for a refined plan."""
    rows = [{"id": r.id, "ran": r.ran, "exit_code": r.exit_code,
             "output": cut(r.output, output_chars), "reason": r.reason} for r in results[:20]]
    return fill(prompts().text("refine"), {"results": untrusted_json(rows)})


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
