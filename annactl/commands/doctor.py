"""``annactl doctor``: is everything Anna needs in place? Each check says how to fix it.

Checks, in order: configuration valid; a daemon reachable (system or per-user
socket) with room on its state disk; the model server reachable; the configured
model present (``/api/tags`` or ``/v1/models``; on an OpenAI-compatible server that does not
list it, the probe below decides: llama-server answers any name); structured output
honoured (one tiny chat
whose reply must follow a two-field JSON Schema); the pacman database
readable (as the daemon sees it). Nothing here changes the machine.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from anna_common.errors import AnnaError
from annactl.core.exit_codes import ExitStatus
from annactl.ui.console import inert

if TYPE_CHECKING:
    from annactl.core.config import ClientSettings
    from annactl.ui.console import Consoles

PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "word": {"type": "string"}},
    "required": ["ok", "word"],
    "additionalProperties": False,
}
"""What the structured-output probe asks the model to follow."""
PROBE_TIMEOUT_S = 60.0
"""The probe may have to wait for the model to load."""
PACMAN_LOCAL = Path("/var/lib/pacman/local")
"""Where pacman keeps its local database (checked only when no daemon answers)."""


@dataclass
class Check:
    """One diagnosis."""

    name: str
    """Stable name (``config``, ``daemon``, ``model_server``, ``model``, ...)."""
    status: Literal["ok", "warn", "fail", "skip"]
    """``fail`` stops Anna from working; ``warn`` degrades it."""
    detail: str
    """What was found (may quote outside text: made inert before printing)."""
    fix: str = ""
    """What to do about it."""


FAIL_STATUS = {"config": ExitStatus.USAGE, "daemon": ExitStatus.DAEMON_UNAVAILABLE,
               "model_server": ExitStatus.MODEL_UNAVAILABLE, "model": ExitStatus.MODEL_UNAVAILABLE,
               "structured_output": ExitStatus.MODEL_UNAVAILABLE, "pacman": ExitStatus.ERROR}
"""The exit status of ``doctor`` when that check fails (the first failure decides)."""
FAIL_CODE = {"config": "CONFIG_INVALID", "daemon": "DAEMON_UNAVAILABLE",
             "model_server": "LLM_UNAVAILABLE", "model": "LLM_MODEL_NOT_FOUND",
             "structured_output": "LLM_BAD_REPLY"}
"""``--json``'s ``code`` when that check fails first (others: ``INTERNAL_ERROR``)."""


def check_config() -> tuple[Check, ClientSettings]:
    """The settings load (file and ANNA_* variables)."""
    from annactl.core.config import ClientSettings, config_file, load_settings

    try:
        settings = load_settings()
    except AnnaError as exc:
        # go on with defaults so the other checks still say something useful
        return (Check("config", "fail", exc.message, exc.hint or ""),
                ClientSettings.model_construct())
    where = config_file()
    found = f"{where}" if where.exists() else f"defaults (no {where})"
    profile = f" (profile {settings.profile})" if settings.profile else ""
    return Check("config", "ok", f"valid: {found}; provider {settings.llm_provider}, model "
                 f"{settings.llm_model} at {settings.resolved_llm_url}{profile}"), settings


def check_daemon() -> tuple[Check, dict[str, Any] | None, Path | None]:
    """Which socket answers /v1/health, in the order annactl tries them."""
    from annactl.commands.status import API_VERSION, candidate_sockets, unix_get

    tried = []
    for path in candidate_sockets():
        try:
            health = unix_get(path, "/v1/health", timeout=2.0)
        except AnnaError as exc:
            tried.append(f"{path}: {exc.message}")
            continue
        if health.get("api_version") != API_VERSION:
            return Check("daemon", "fail", f"{path} speaks protocol {health.get('api_version')}, "
                         f"annactl speaks {API_VERSION}", "restart annad after upgrading anna"), \
                None, None
        mode = health.get("mode", "?")
        problem = health.get("state_problem")
        if problem:  # it answers, but cannot journal or back up: it says what it needs
            return Check("daemon", "warn", f"{mode} daemon at {path}: {problem}",
                         "free space on annad's state disk (see docs/operations.md, "
                         "\"When the disk is full\"); annad resumes by itself"), health, path
        note = "" if health.get("caller_authorised") else " (read-only for you)"
        check = Check("daemon", "ok" if note == "" else "warn",
                      f"{mode} daemon {health.get('daemon_version', '?')} at {path}{note}",
                      "" if not note else "add yourself to group anna: "
                      "sudo usermod -aG anna $USER (then log in again)")
        return check, health, path
    explicit = bool(os.environ.get("ANNA_SOCKET"))
    fix = ("check ANNA_SOCKET, or unset it" if explicit else
           "set up the system daemon: annactl setup; or let annactl "
           "start a per-user one (autostart = true in the config)")
    return Check("daemon", "fail", "no daemon answered: " + "; ".join(tried), fix), None, None


def check_capture(health: dict[str, Any]) -> Check:
    """What the daemon says it cannot do with a step's files or its network."""
    if "capture_problem" not in health:
        return Check("capture", "skip", "this daemon does not say whether it captures steps")
    if problem := health.get("capture_problem"):
        return Check("capture", "warn", f"file steps run live (HIGH; Anna cannot undo them): "
                     f"{problem}", "see docs/security.md §4.4, \"Anna judges what happened\"")
    if problem := health.get("network_problem"):
        return Check("capture", "warn", f"captured steps run with no network: {problem}",
                     "see docs/security.md §4.4, \"Anna judges what happened\"")
    return Check("capture", "ok", "file steps are captured, judged before they land, undone")


UNLISTED = "unlisted"
"""The ``model`` check's detail prefix while an OpenAI-compatible server's answer decides it."""


def check_model(settings: ClientSettings) -> list[Check]:
    """Server reachable, model listed. An OpenAI-compatible server that does not list the
    name is not failed here: some serve whatever name is sent (llama-server, one model per
    process), so the structured-output probe, which sends that name, decides
    (:func:`settle_unlisted`). Ollama loads models by name: there an unlisted one fails."""
    from annactl.planning.llm.listing import list_models

    ollama = settings.llm_provider == "ollama"
    try:
        listing = list_models(settings)
    except AnnaError as exc:
        return [Check("model_server", "fail", exc.message, exc.hint or ""),
                Check("model", "skip", "server not reachable")]
    names = sorted(m.name for m in listing.models)
    server = Check("model_server", "ok", f"{settings.llm_provider} server at {listing.url} "
                   f"answers, {len(names)} model(s)")
    wanted = settings.llm_model
    if listing.has(wanted):
        return [server, Check("model", "ok", f"{wanted} is available")]
    shown = ", ".join(names[:8]) or "none"
    if not ollama:
        return [server, Check("model", "warn", f"{UNLISTED}: {wanted} is not listed (the "
                              f"server lists: {shown})")]
    return [server, Check("model", "fail", f"{wanted} is not on the server (it has: "
                          f"{shown})", f"ollama pull {wanted}, or set ANNA_LLM_MODEL to one "
                          "it has (annactl models lists them)")]


def settle_unlisted(model: Check, probe: Check, settings: ClientSettings) -> Check:
    """The ``model`` check of a name the server does not list, once a request sent with it
    was answered (the server ignores names) or refused (it enforces them)."""
    listed = model.detail.partition("(")[2].rstrip(")")
    wanted = settings.llm_model
    if probe.status in ("ok", "warn"):
        return Check("model", "ok", f"{wanted}: the server does not check model names; it "
                     f"answered a request for it ({listed})")
    if "LLM_MODEL_NOT_FOUND" in probe.detail:
        return Check("model", "fail", f"{wanted} is not on the server ({listed})",
                     "load the model in the server, or set ANNA_LLM_MODEL to one it has "
                     "(annactl models lists them)")
    return Check("model", "warn", f"{wanted} is not listed, and the server could not be "
                 f"asked whether it serves it ({listed})", "see structured_output below")


def check_structured_output(settings: ClientSettings) -> Check:
    """One tiny chat that must come back as JSON following :data:`PROBE_SCHEMA`."""
    from annactl.planning.llm.base import ChatRequest

    provider: Any
    if settings.llm_provider == "openai":
        from annactl.planning.llm.openai_compat import OpenAIProvider

        provider = OpenAIProvider(settings.model_copy(update={"llm_timeout": PROBE_TIMEOUT_S}))
    else:
        from annactl.planning.llm.ollama import OllamaProvider

        provider = OllamaProvider(settings.model_copy(update={"llm_timeout": PROBE_TIMEOUT_S}))
    request = ChatRequest(
        messages=({"role": "system", "content": "Reply with JSON only."},
                  {"role": "user", "content": 'Reply {"ok": true, "word": "anna"}.'}),
        schema=PROBE_SCHEMA, purpose="doctor",
        options={"temperature": 0, "max_tokens": 64, "num_ctx": 2048})
    try:
        result = provider.chat(request)
    except AnnaError as exc:
        return Check("structured_output", "fail", f"{exc.code}: {exc.message}", exc.hint or "")
    finally:
        provider.close()
    try:
        value = json.loads(result.text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("ok"), bool):
        return Check("structured_output", "fail", f"the reply did not follow the schema "
                     f"(format {result.response_format}): {result.text[:80]!r}",
                     "use a server with JSON Schema output: Ollama >= 0.5, llama.cpp server, "
                     "vLLM, LM Studio")
    if result.response_format in {"ollama_schema", "json_schema"}:
        return Check("structured_output", "ok", f"JSON Schema honoured "
                     f"({result.response_format}, {result.latency_s:.1f} s)")
    return Check("structured_output", "warn", f"the server refused JSON Schema; Anna falls back "
                 f"to {result.response_format}, and small models then fail more often",
                 "use a server with JSON Schema output (llama.cpp server, vLLM, Ollama >= 0.5)")


def check_pacman(socket_path: Path | None) -> Check:
    """The pacman database, as the daemon reads it (or locally when no daemon answers)."""
    if socket_path is not None:
        from annactl.commands.status import unix_get

        try:
            packages = unix_get(socket_path, "/v1/telemetry")["telemetry"]["packages"]
        except (AnnaError, KeyError, TypeError) as exc:
            return Check("pacman", "warn", f"telemetry unavailable: {exc}", "see annad's log")
        if packages.get("available"):
            return Check("pacman", "ok", f"{packages.get('count', 0)} packages in "
                         f"{packages.get('dbpath') or 'the pacman database'}")
        return Check("pacman", "warn", str(packages.get("reason") or "not readable"),
                     "on Arch, check /var/lib/pacman and annad's --pacman-dbpath")
    if (PACMAN_LOCAL).is_dir() and os.access(PACMAN_LOCAL, os.R_OK | os.X_OK):
        return Check("pacman", "ok", f"{PACMAN_LOCAL} is readable (no daemon to ask)")
    return Check("pacman", "warn", f"no readable {PACMAN_LOCAL}: not an Arch system?",
                 "package steps need pacman; the rest of Anna works without it")


def check_forms(settings: ClientSettings) -> Check:
    """What Anna learned about the configured model's replies, and the forms it gets
    (annactl/planning/profile.py, issue 39.2)."""
    from annactl.planning import profile

    key = profile.key_of(settings.llm_provider, settings.resolved_llm_url, settings.llm_model)
    known = profile.load(settings.state_dir, key)
    return Check("model_forms", "ok", profile.describe(known, pin=settings.llm_forms,
                                                       budget=settings.llm_budget))


def collect() -> list[Check]:
    """Every check, in order."""
    config, settings = check_config()
    daemon, health, socket_path = check_daemon()
    checks = [config, daemon]
    if health is not None:
        checks.append(check_capture(health))
    if settings.llm_replay is not None:
        checks.append(Check("model_server", "skip", f"replay mode: answers come from "
                            f"{settings.llm_replay}"))
    else:
        server, model = check_model(settings)
        unlisted = model.detail.startswith(UNLISTED)
        if model.status == "ok" or unlisted:
            probe = check_structured_output(settings)
            if unlisted:
                model = settle_unlisted(model, probe, settings)
        else:
            probe = Check("structured_output", "skip", "no model to ask")
        checks.extend([server, model, probe])
    checks.append(check_forms(settings))
    checks.append(check_pacman(socket_path))
    return checks


def exit_status(checks: list[Check]) -> ExitStatus:
    """The first failure's status, or success."""
    for check in checks:
        if check.status == "fail":
            return FAIL_STATUS.get(check.name, ExitStatus.ERROR)
    return ExitStatus.SUCCESS


_MARKS = {"ok": ("✔", "green"), "warn": ("!", "yellow"), "fail": ("✘", "bold red"),
          "skip": ("–", "dim")}


def run(consoles: Consoles, *, as_json: bool) -> int:
    """``annactl doctor [--json]``."""
    from annactl.ui.console import emit_json

    checks = collect()
    status = exit_status(checks)
    if as_json:
        failed = next((c.name for c in checks if c.status == "fail"), None)
        emit_json(consoles, {"status": "ok" if failed is None else "failed",
                             "code": "OK" if failed is None else
                             FAIL_CODE.get(failed, "INTERNAL_ERROR"),
                             "failed": failed, "checks": [asdict(c) for c in checks]})
        return status
    consoles.out.print(_table(checks))
    return status


def _table(checks: list[Check]) -> Any:
    """One row per check: its mark and name, then what was found and the fix, which fold
    under themselves at 80 columns (not under the names)."""
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for check in checks:
        mark, style = _MARKS[check.status]
        found = Text(inert(check.detail, max_chars=400))
        if check.fix and check.status != "ok":
            found.append("\nfix: " + inert(check.fix, max_chars=400), style="dim")
        table.add_row(Text(f"{mark} {check.name}", style=style), found)
    return table
