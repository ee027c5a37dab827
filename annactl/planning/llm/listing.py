"""What a model server has: Ollama's ``GET /api/tags``, an OpenAI-compatible ``GET /v1/models``.

``annactl models`` prints it and ``annactl doctor`` checks the configured name against it.
Names and details come from the server: untrusted text, made inert where they are shown.
Only names are compared; nothing here decides whether a server *enforces* them (llama-server
answers whatever name is sent: doctor asks it, see :mod:`annactl.commands.doctor`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anna_common.errors import ErrorCode, LLMError
from annactl.planning.llm.errors import llm_error

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings

LIST_TIMEOUT_S = 10.0
"""A listing is one small GET: a server that takes longer is not answering."""
MAX_MODELS = 500
"""Entries read from one listing (a hostile server cannot make the list unbounded)."""


@dataclass(frozen=True)
class ServerModel:
    """One model the server lists."""

    name: str
    """Its name as the server knows it (what ``--model`` takes)."""
    size: int | None = None
    """Bytes on disk (Ollama), when the server says."""
    detail: str = ""
    """Parameter size and quantisation (Ollama), or the owner (OpenAI)."""


@dataclass(frozen=True)
class ServerModels:
    """A server's listing."""

    provider: str
    """``ollama`` or ``openai``."""
    url: str
    """The server's base URL (a password in it masked)."""
    models: tuple[ServerModel, ...]
    """What it lists, in its order."""

    def has(self, name: str) -> bool:
        """``name`` is listed (Ollama's ``name`` stands for ``name:latest``)."""
        names = {m.name for m in self.models}
        return name in names or (self.provider == "ollama" and f"{name}:latest" in names)


def list_models(settings: ClientSettings) -> ServerModels:
    """The server's models; a coded :class:`LLMError` when it cannot say."""
    from annactl.planning.llm.trace import mask, settings_secrets
    from annactl.planning.llm.transport import Client, HTTPError, Timeout

    ollama = settings.llm_provider == "ollama"
    path = "/api/tags" if ollama else "/models"
    where = mask(settings.resolved_llm_url, settings_secrets(settings))
    headers = {"User-Agent": "annactl"}
    if settings.llm_api_key is not None:
        headers["Authorization"] = f"Bearer {settings.llm_api_key.get_secret_value()}"
    try:
        # like the providers: no proxy variable is read, local traffic stays local
        client = Client(settings.resolved_llm_url, headers=headers,
                        timeout=Timeout(LIST_TIMEOUT_S, connect=settings.llm_connect_timeout))
        response = client.get(path)
    except (HTTPError, ValueError) as exc:
        fix = ("start Ollama (systemctl start ollama, or ollama serve) or set ANNA_LLM_URL"
               if ollama else "start the server or set ANNA_LLM_URL (with /v1)")
        raise llm_error(ErrorCode.LLM_UNAVAILABLE, f"cannot reach the model server at "
                        f"{where} ({type(exc).__name__})", fix) from None
    if response.status_code >= 400:
        raise llm_error(ErrorCode.LLM_HTTP_ERROR, f"the model server at {where} answered "
                        f"{response.status_code} on {path}", "check ANNA_LLM_PROVIDER and "
                        "ANNA_LLM_URL", status=response.status_code)
    try:
        body = response.json()
    except ValueError:
        body = None
    entries = body.get("models" if ollama else "data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        raise _not_a_listing(where, path)
    models = tuple(m for m in (_entry(e, ollama) for e in entries[:MAX_MODELS]) if m)
    return ServerModels(settings.llm_provider, where, models)


def _not_a_listing(where: str, path: str) -> LLMError:
    return llm_error(ErrorCode.LLM_HTTP_ERROR, f"the server at {where} answered {path} "
                     "without a model list", "check ANNA_LLM_PROVIDER and ANNA_LLM_URL")


def _entry(entry: Any, ollama: bool) -> ServerModel | None:
    if not isinstance(entry, dict):
        return None
    name = entry.get("name") or entry.get("model") or entry.get("id")
    if not isinstance(name, str) or not name:
        return None
    size = entry.get("size")
    if ollama:
        found = entry.get("details")
        details: dict[str, Any] = found if isinstance(found, dict) else {}
        words = [str(details.get(k)) for k in ("parameter_size", "quantization_level")
                 if details.get(k)]
        detail = " ".join(words)
    else:
        detail = str(entry.get("owned_by") or "")
    return ServerModel(name=name[:200], detail=detail[:100],
                       size=size if isinstance(size, int) and size >= 0 else None)
