"""The model's words on a command ``annactl explain`` has analysed (only when one answers).

Anna's own analysis (:mod:`annactl.commands.explain`) is the explanation; a model adds
plain words to it. One call, no repair, and never in the way: any failure is a
:class:`ModelWords` without text, saying why. The call has its own static system message
(prompt file ``system_explain``, byte-identical on every call); the command and Anna's
analysis go into the user message as escaped JSON inside blocks labelled untrusted, so a
command that says "ignore your instructions" is a command to explain. The reply is
untrusted too: it is cut to :data:`MAX_CHARS`, and shown only as inert text.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, ErrorCode

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings

MAX_CHARS = 600
"""Longest explanation the model may write (the schema's bound; longer is cut)."""
MAX_TOKENS = 400
"""Output token cap of the call (600 characters need about 150)."""
QUICK_CONNECT_S = 1.0
"""Connect timeout when no model URL is configured (the default local server may be absent:
the offline explanation must not wait for it)."""
SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["explanation"],
    "properties": {"explanation": {"type": "string", "maxLength": MAX_CHARS}}}
"""The reply's JSON Schema (structured output)."""
_ANALYSIS_KEYS = ("risk", "banned", "scope", "read_only", "parse_ok", "runs", "reads", "writes",
                  "reasons", "confirm_word", "unclear")


@dataclass(frozen=True)
class ModelWords:
    """The model's explanation, or why there is none."""

    text: str | None
    """The model's words (untrusted; None when it gave none)."""
    model: str
    """The model asked."""
    code: str | None = None
    """Why there are no words (an ``LLM_*`` code, ``LLM_BAD_REPLY``, ``CANCELLED``)."""

    @property
    def reached(self) -> bool:
        """A model server was reached (``LLM_UNAVAILABLE``: none was; Anna explains alone)."""
        return self.code != str(ErrorCode.LLM_UNAVAILABLE)

    def to_dict(self) -> dict[str, Any]:
        """The ``model_words`` object of ``--json``."""
        return {"text": self.text, "model": self.model, "code": self.code or "OK"}


def messages(data: dict[str, Any]) -> list[dict[str, str]]:
    """The two messages of the call: the static system message, then the command and the
    analysis as untrusted data."""
    from annactl.planning.packet import untrusted_json
    from annactl.planning.prompt import fill, prompts

    analysis = {key: data[key] for key in _ANALYSIS_KEYS if key in data}
    user = fill(prompts().text("explain"), {"command": untrusted_json(str(data["command"])),
                                            "analysis": untrusted_json(analysis)})
    return [{"role": "system", "content": prompts().text("system_explain")},
            {"role": "user", "content": user}]


def parse(text: str) -> str:
    """The explanation in a reply; raises :class:`AnnaError` (``LLM_BAD_REPLY``)."""
    from anna_common.extract import ExtractError, extract_json

    try:
        value = extract_json(text).get("explanation")
    except ExtractError as exc:
        raise AnnaError(str(exc), code=ErrorCode.LLM_BAD_REPLY) from None
    if not isinstance(value, str) or not value.strip():
        raise AnnaError("the reply has no explanation", code=ErrorCode.LLM_BAD_REPLY)
    words = " ".join(value.split())
    return words if len(words) <= MAX_CHARS else words[:MAX_CHARS - 1] + "…"


def model_words(settings: ClientSettings, data: dict[str, Any], *,
                cancel: threading.Event | None = None) -> ModelWords:
    """Ask the configured model about ``data`` (an explanation). Never raises."""
    from anna_common.plan import canonical_json
    from annactl.planning.llm import make_provider
    from annactl.planning.llm.base import DEFAULT_OPTIONS, ChatRequest
    from annactl.planning.prompt import prompts

    model = settings.llm_model
    try:
        provider = make_provider(settings)
    except AnnaError as exc:
        return ModelWords(None, model, str(exc.code))
    try:
        quick = getattr(provider, "quick", None)
        if callable(quick):  # one attempt: the analysis is shown, the words are extra
            quick(settings.llm_connect_timeout if settings.llm_url else QUICK_CONNECT_S)
        loaded = prompts()
        request = ChatRequest(
            messages=tuple(messages(data)), schema=SCHEMA,
            schema_sha=hashlib.sha256(canonical_json(SCHEMA)).hexdigest(),
            prompt_version=loaded.version, prompt_sha=loaded.sha256, purpose="explain",
            options={**DEFAULT_OPTIONS, "max_tokens": MAX_TOKENS}, form="explain",
            deadline=(time.monotonic() + settings.llm_budget) if settings.llm_budget else None)
        reply = provider.chat(request, cancel=cancel)
        if reply.truncated:
            return ModelWords(None, model, str(ErrorCode.LLM_BAD_REPLY))  # cut at the cap
        return ModelWords(parse(reply.text), reply.model or model)
    except AnnaError as exc:
        return ModelWords(None, model, str(exc.code))
    finally:
        provider.close()
