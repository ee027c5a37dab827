"""``annactl models``: what the model server has, which one Anna asks, and the profiles.

The list is the server's own (:mod:`annactl.planning.llm.listing`); names are untrusted
text, shown inert. ``--model NAME`` and ``--profile NAME`` work here as on every command
that asks a model, so ``annactl models --profile fast`` lists that profile's server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annactl.core.exit_codes import ExitStatus

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings
    from annactl.planning.llm.listing import ServerModels
    from annactl.ui.console import Consoles


def profiles_json(settings: ClientSettings) -> dict[str, dict[str, Any]]:
    """The profiles' model settings (never their API keys)."""
    return {name: {k: v for k, v in p.model_dump(exclude_none=True).items()
                   if k != "llm_api_key"}
            for name, p in sorted(settings.profiles.items())}


def run(consoles: Consoles, *, as_json: bool) -> int:
    """``annactl models [--json]``."""
    from annactl.commands.failures import json_failures
    from annactl.core.config import load_settings
    from annactl.planning.llm.listing import list_models

    with json_failures(consoles, as_json=as_json):
        settings = load_settings()
        listing = list_models(settings)
    if as_json:
        from annactl.ui.console import emit_json

        emit_json(consoles, {
            "code": "OK", "provider": listing.provider, "url": listing.url,
            "model": settings.llm_model, "listed": listing.has(settings.llm_model),
            "profile": settings.profile, "profiles": profiles_json(settings),
            "models": [{"name": m.name, "size": m.size, "detail": m.detail}
                       for m in listing.models]})
        return ExitStatus.SUCCESS
    consoles.out.print(_view(settings, listing))
    return ExitStatus.SUCCESS


def _size(size: int | None) -> str:
    if size is None:
        return ""
    return f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size / 2**20:.0f} MiB"


def _view(settings: ClientSettings, listing: ServerModels) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from annactl.ui.console import inert, inert_text

    table = Table(box=None, padding=(0, 2), show_edge=False)
    table.add_column("MODEL", overflow="fold")
    table.add_column("SIZE", justify="right", no_wrap=True)
    table.add_column("DETAIL", overflow="fold")
    for model in listing.models:
        used = listing.has(settings.llm_model) and model.name in (
            settings.llm_model, f"{settings.llm_model}:latest")
        table.add_row(inert_text(model.name, "bold" if used else ""), _size(model.size),
                      inert_text(model.detail + ("  ← Anna asks this one" if used else "")))
    profile = f" (profile {settings.profile})" if settings.profile else ""
    head = Text(f"{inert(listing.provider)} server at {inert(listing.url)}: "
                f"{len(listing.models)} model(s)")
    lines: list[Any] = [head, table]
    if not listing.has(settings.llm_model):
        lines.append(Text(f"Anna asks for {inert(settings.llm_model)}{profile}, which the "
                          "server does not list (an OpenAI-compatible server may serve any "
                          "name: annactl doctor asks it)", style="yellow"))
    else:
        lines.append(Text(f"Anna asks for {inert(settings.llm_model)}{profile}; another: "
                          "annactl -m NAME …", style="dim"))
    for name, values in profiles_json(settings).items():
        words = " ".join(f"{k.removeprefix('llm_')}={v}" for k, v in values.items())
        lines.append(Text(f"profile {inert(name)}: {inert(words)}  (--profile {inert(name)})",
                          style="dim"))
    return Group(*lines)
