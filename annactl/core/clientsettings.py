"""The client's settings model, without pydantic-settings.

:func:`annactl.core.config.load_settings` builds it from the ``ANNA_*`` variables and the TOML
file. Planning reads every setting, and importing pydantic-settings (it pulls in asyncio, ssl
and importlib.metadata) cost a sixth of answering "how is my system?" offline
(``bench/startup.py``); so the model lives here, plain pydantic, and the environment source
(:mod:`annactl.core.envsettings`) is imported only when the values need its parsing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from annactl.core.quicksettings import state_dir

__all__ = ["DEFAULT_URLS", "ClientSettings", "Profile"]


DEFAULT_URLS = {"ollama": "http://127.0.0.1:11434", "openai": "http://127.0.0.1:8080/v1"}
"""Where each provider listens by default."""


class Profile(BaseModel):
    """A named set of model settings (``[profiles.NAME]`` in config.toml), chosen with
    ``--profile NAME`` or ``profile = "NAME"``; what it leaves out keeps its usual value."""

    model_config = ConfigDict(extra="forbid")

    llm_provider: Literal["ollama", "openai"] | None = None
    """``ollama`` or ``openai``."""
    llm_url: str | None = None
    """Server base URL."""
    llm_model: str | None = None
    """Model name as the server knows it."""
    llm_api_key: SecretStr | None = None
    """Bearer token for this server (never logged, never shown)."""
    llm_budget: float | None = Field(default=None, ge=0, le=3600)
    """Seconds one request may wait on this model in all."""
    llm_timeout: float | None = Field(default=None, gt=0, le=3600)
    """Seconds to wait for a reply."""
    llm_compact: bool | None = None
    """The compact plan form for a small model."""


class ClientSettings(BaseModel):
    """Everything ``annactl`` can be configured with (read by
    :func:`annactl.core.config.load_settings`)."""

    # the field docstrings document the settings (docs/configuration.md lists each one);
    # no use_attribute_docstrings: nothing reads them at run time, and extracting them cost
    # every command's start-up (bench/startup.py)
    # defer_build: most commands construct it from exactly parsed values
    # (annactl.core.config.load_settings) and never validate one: the schema is built then
    model_config = ConfigDict(extra="forbid", validate_default=True, defer_build=True)

    llm_provider: Literal["ollama", "openai"] = "ollama"
    """``ollama`` (``POST /api/chat``) or ``openai`` (any OpenAI-compatible server)."""
    llm_url: str = ""
    """Server base URL; empty means the provider's default (see ``DEFAULT_URLS``)."""
    llm_model: str = "qwen2.5:7b-instruct"
    """Model name as the server knows it."""
    llm_api_key: SecretStr | None = None
    """Bearer token for OpenAI-compatible servers. Never logged, never shown."""
    llm_timeout: float = Field(default=120.0, gt=0, le=3600)
    """Seconds to wait for a reply (read timeout)."""
    llm_budget: float = Field(default=60.0, ge=0, le=3600)
    """Seconds one request may wait on the model in all (every call, repair and refinement;
    shown while waiting). When it runs out, or the reply is bad or cut at the token cap, a
    matching offline template answers with a note saying why; without one the request fails
    with ``LLM_TIMEOUT``. 0: no budget beyond ``llm_timeout`` per call."""
    llm_connect_timeout: float = Field(default=5.0, gt=0, le=120)
    """Seconds to wait for a connection."""
    llm_keep_alive: str = "30m"
    """Ollama ``keep_alive``: how long the model stays loaded."""
    llm_ids: Literal["positional", "free"] = "positional"
    """``positional``: the decoder writes per-position ids (c1, s1, r1; see
    anna_common/positional.py); ``free``: the model writes ids (the plain schema)."""
    llm_compact: bool = False
    """With positional ids: the compact plan form for small models (at most 3 checks, 4 steps,
    4 rollback steps, 2 goals, shorter prose; anna_common/positional.py ``COMPACT_BOUNDS``),
    so a small output budget still closes the reply. Measured in docs/golden.md."""
    llm_forms: Literal["auto", "contract", "small"] = "auto"
    """Which forms the model is asked in (issue 39.2): ``auto`` learns it per model from its
    replies (annactl/planning/profile.py, shown by ``annactl doctor``); ``contract`` pins the
    full contract (the runtime prompt and its checks loop) for every request; ``small`` pins
    the small forms sized to the request."""
    llm_cache: Literal["off", "read", "write", "readwrite"] = "off"
    """Deterministic response cache mode."""
    llm_record: Path | None = None
    """Append every request/response pair to this JSONL file."""
    llm_replay: Path | None = None
    """Answer only from this JSONL recording; never touch the network."""
    max_model_calls: int = Field(default=4, ge=1, le=32)
    """Model calls allowed per request (repairs and refinements included)."""
    max_prompt_bytes: int = Field(default=96_000, ge=1024)
    """Largest prompt (all messages) sent to the model."""
    max_session_calls: int = Field(default=64, ge=1)
    """Model calls allowed per session (one command, REPL or TUI), over all its requests."""
    max_session_tokens: int = Field(default=500_000, ge=1000)
    """Tokens (prompt + reply, as servers report them) allowed per session."""
    allowed_models: list[str] = Field(default_factory=list)
    """If non-empty, only these model names may be used."""
    trace: bool = False
    """Write a trace per request (``ANNA_TRACE=1``)."""
    trace_raw: bool = False
    """Include raw model text in traces, secrets masked (``ANNA_TRACE_RAW=1``)."""
    templates: bool = True
    """Answer common requests from offline templates when they match."""
    evaluate: bool = True
    """After a plan ran, the model evaluates its results (``ANNA_EVALUATE``); when off, or
    when the model fails, Anna summarises them itself."""
    socket: Path | None = None
    """Daemon socket to use (``ANNA_SOCKET``); else the system socket, else a per-user one."""
    system_socket: Path = Path("/run/anna/annad.sock")
    """Where the system daemon listens."""
    autostart: bool = True
    """Start a per-user annad when no daemon answers."""
    reconnect_wait_s: float = Field(default=300.0, ge=0, le=86400)
    """How long ``apply`` waits for a daemon that stopped answering mid-plan to come back."""
    state_dir: Path = Field(default_factory=state_dir)
    """History, memory, cache and traces."""
    language: str | None = None
    """Preferred language for answers (a remembered preference)."""
    profile: str | None = None
    """The profile (a key of ``profiles``) used when ``--profile`` names none."""
    profiles: dict[str, Profile] = Field(default_factory=dict)
    """Named model settings (``[profiles.NAME]`` tables); a chosen one's values win over the
    environment and the file's top-level keys, ``--model`` wins over its model."""

    @field_validator("llm_api_key", mode="before")
    @classmethod
    def _empty_key(cls, value: Any) -> Any:
        return None if value in ("", None) else value

    @property
    def resolved_llm_url(self) -> str:
        """The URL to use: the configured one, or the provider's default."""
        return (self.llm_url or DEFAULT_URLS[self.llm_provider]).rstrip("/")
