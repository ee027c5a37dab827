"""Model providers: one interface (:mod:`.base`), Ollama and OpenAI-compatible adapters,
the deterministic cache, record/replay and traces.

:func:`make_provider` picks and wraps the provider the settings ask for. It
imports the HTTP adapters only when a network provider is needed.
"""


from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings
    from annactl.planning.llm.base import Provider


def make_provider(settings: ClientSettings) -> Provider:
    """The provider for ``settings``: replay, or a network adapter with cache and recorder."""
    if settings.llm_replay is not None:
        from annactl.planning.llm.replay import ReplayProvider

        return ReplayProvider(settings.llm_replay, provider=settings.llm_provider,
                              model=settings.llm_model)
    inner: Provider
    if settings.llm_provider == "openai":
        from annactl.planning.llm.openai_compat import OpenAIProvider

        inner = OpenAIProvider(settings)
    else:
        from annactl.planning.llm.ollama import OllamaProvider

        inner = OllamaProvider(settings)
    if settings.llm_cache == "off" and settings.llm_record is None:
        return inner
    from annactl.planning.llm.cache import ResponseCache, StoredProvider
    from annactl.planning.llm.replay import Recorder

    cache = (ResponseCache(settings.state_dir / "llm_cache", settings.llm_cache)
             if settings.llm_cache != "off" else None)
    recorder = Recorder(settings.llm_record) if settings.llm_record is not None else None
    return StoredProvider(inner, cache=cache, recorder=recorder)
