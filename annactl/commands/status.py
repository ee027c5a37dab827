"""``annactl status``: the machine at a glance, from the daemon's telemetry, no model involved.

This command must start fast (``bench/startup.py``: within 12× a bare
``python3 -c pass``), so its common path uses only the standard library to
reach the daemon: one small HTTP/1.1 client over the Unix socket
(:func:`unix_get`) and plain dicts instead of pydantic models and httpx. Only
when no daemon answers does it take the full path (``daemon_client.connect``,
which may autostart a per-user daemon).

Every string in telemetry is untrusted: it goes through :func:`annactl.ui.console.inert`.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anna_common.errors import AnnaError, DaemonError, ErrorCode
from annactl.core.peercheck import check_daemon
from annactl.ui.console import inert

if TYPE_CHECKING:
    from rich.console import RenderableType

    from annactl.ui.console import Consoles

API_VERSION = 1
"""Must equal ``anna_common.protocol.models.API_VERSION`` (a test checks; importing it costs
pydantic)."""
SESSION_KEYS = ("XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
                "LANG", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE", "DESKTOP_SESSION",
                "HYPRLAND_INSTANCE_SIGNATURE", "SWAYSOCK")
"""``SessionEnv``'s fields (a test checks they agree)."""
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""A daemon answer larger than this is refused."""
BAR_WIDTH = 24
"""Characters in a usage bar."""


# --------------------------------------------------------------------------- socket discovery


def _config_socket_keys() -> dict[str, Any]:
    """``socket`` and ``system_socket`` from the TOML config file, if it sets them.

    Mirrors :func:`annactl.core.config.config_file` without importing pydantic-settings;
    a test checks both agree.
    """
    import tomllib

    override = os.environ.get("ANNA_CONFIG")
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    path = Path(override) if override else Path(base) / "anna" / "config.toml"
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, ValueError):
        return {}  # the full path (load_settings) reports a broken file with its code
    return {k: data[k] for k in ("socket", "system_socket") if isinstance(data.get(k), str)}


def user_socket() -> Path:
    """Where a per-user daemon listens: ``runtime_dir()/annad.sock``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "anna" / "annad.sock"
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "anna" / "annad.sock"


def candidate_sockets() -> list[Path]:
    """``ANNA_SOCKET`` (or the config's ``socket``) alone, else the system then the user socket."""
    config = _config_socket_keys()
    explicit = os.environ.get("ANNA_SOCKET") or config.get("socket")
    if explicit:
        return [Path(explicit)]
    system = os.environ.get("ANNA_SYSTEM_SOCKET") or config.get("system_socket") or \
        "/run/anna/annad.sock"
    return [Path(system), user_socket()]


# --------------------------------------------------------------------------- a tiny HTTP client


def _read_response(sock: socket.socket) -> tuple[int, bytes]:
    chunks: list[bytes] = []
    size = 0
    while True:
        data = sock.recv(65536)
        if not data:
            break
        chunks.append(data)
        size += len(data)
        if size > MAX_RESPONSE_BYTES:
            raise DaemonError("the daemon's answer is too large")
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        raise DaemonError("the daemon answered outside HTTP") from None
    headers = {k.strip().lower(): v.strip() for k, _, v in
               (line.partition(b":") for line in lines[1:])}
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = _dechunk(body)
    return status, body


def _dechunk(body: bytes) -> bytes:
    out = bytearray()
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return bytes(out)


def unix_get(socket_path: Path, route: str, *, timeout: float = 5.0,
             headers: dict[str, str] | None = None) -> Any:
    """GET ``route`` from the daemon at ``socket_path``; the JSON body, or a coded error.

    Raises :class:`DaemonError` when nothing answers there, and the daemon's own error
    (``AnnaError.from_dict``) for a non-2xx answer.
    """
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    request = (f"GET {route} HTTP/1.1\r\nHost: annad\r\nAccept: application/json\r\n"
               f"Connection: close\r\n{extra}\r\n").encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(socket_path))
            check_daemon(sock, socket_path)  # nothing is sent to a daemon not ours or root's
            sock.sendall(request)
            status, body = _read_response(sock)
    except OSError as exc:
        from annactl.core.sysdaemon import reason_of

        raise DaemonError(f"no daemon at {socket_path}: {exc.strerror or exc}",
                          detail={"reason": reason_of(exc)}) from None
    try:
        data = json.loads(body) if body else {}
    except ValueError:
        raise DaemonError(f"the daemon at {socket_path} sent something other than JSON") \
            from None
    if not 200 <= status < 300:
        raise AnnaError.from_dict(data if isinstance(data, dict) else {})
    return data


def _session_header() -> dict[str, str]:
    session = {k: os.environ[k][:512] for k in SESSION_KEYS if os.environ.get(k)}
    return {"X-Anna-Session": json.dumps(session, separators=(",", ":"))}


def fetch_fast() -> dict[str, Any] | None:
    """Health and telemetry from the first socket that answers, or None when none does; a
    system daemon that is installed but cannot serve is said, never skipped
    (:mod:`annactl.core.sysdaemon`)."""
    sockets = candidate_sockets()
    for path in sockets:
        try:
            health = _health(path, system=len(sockets) > 1 and path == sockets[0])
        except _NotAnswering as stuck:  # said, never skipped for a per-user daemon's view
            raise stuck.error from None
        except DaemonError as exc:
            if exc.code is ErrorCode.DAEMON_UNTRUSTED:  # said, never skipped
                raise
            continue
        if health.get("api_version") != API_VERSION:
            raise AnnaError(f"the daemon at {path} speaks protocol "
                            f"{health.get('api_version')}, this annactl {API_VERSION}",
                            code=ErrorCode.API_VERSION_MISMATCH,
                            hint="restart annad after upgrading anna")
        telemetry = unix_get(path, "/v1/telemetry", headers=_session_header())
        return {"socket": str(path), "health": health, **telemetry}
    return None


def _health(path: Path, *, system: bool) -> Any:
    """``/v1/health`` at ``path``: 2 s for the first try; the system socket, when it accepted
    the connection but was silent, gets the rest of the probe's time, and then its state."""
    try:
        return unix_get(path, "/v1/health", timeout=2.0)
    except DaemonError as exc:
        if not system or exc.code is ErrorCode.DAEMON_UNTRUSTED:
            raise
        reason = exc.detail.get("reason")
    from annactl.core.sysdaemon import PROBE_TIMEOUT_S, not_answering

    if reason == "silent":  # a busy machine, or a hung daemon: ask once more, longer
        try:
            return unix_get(path, "/v1/health", timeout=PROBE_TIMEOUT_S - 2.0)
        except DaemonError as again:
            reason = again.detail.get("reason")
    stuck = not_answering(path, reason)
    if stuck is not None:
        raise _NotAnswering(stuck)
    raise DaemonError(f"no system daemon at {path}", detail={"reason": reason})


class _NotAnswering(Exception):
    """The system daemon is installed but cannot serve (:func:`not_answering`'s ``error``):
    told apart from "no system daemon here", which lets the per-user socket answer. Before,
    a per-user daemon left running by an earlier command answered instead, silently."""

    def __init__(self, error: DaemonError) -> None:
        super().__init__(str(error))
        self.error = error


def fetch_full() -> dict[str, Any]:
    """The slow path: find or autostart a daemon with the full client."""
    from annactl.core.config import load_settings
    from annactl.core.daemon_client import connect

    client = connect(load_settings())
    try:
        from annactl.commands.flow import session_env

        health = client.health()
        response = client.telemetry(session=session_env())
        return {"socket": str(client.socket_path), "health": health.model_dump(mode="json"),
                **response.model_dump(mode="json")}
    finally:
        client.close()


# --------------------------------------------------------------------------- rendering


def _bar(percent: float) -> Any:
    from rich.text import Text

    filled = round(max(0.0, min(percent, 100.0)) / 100 * BAR_WIDTH)
    colour = "green" if percent < 70 else ("yellow" if percent < 90 else "red")
    bar = Text("█" * filled, style=colour)
    bar.append("░" * (BAR_WIDTH - filled), style="dim")
    bar.append(f" {percent:5.1f}%")
    return bar


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} TiB"


def _uptime(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    return (f"{days}d " if days else "") + f"{hours}h {rest // 60}m"


def _rows(t: dict[str, Any]) -> list[tuple[str, RenderableType]]:
    from rich.text import Text

    cpu, mem, sysinfo = t.get("cpu", {}), t.get("memory", {}), t.get("system", {})
    cpu_pct = cpu.get("percent")
    rows: list[tuple[str, RenderableType]] = [
        ("Host", Text(inert(f"{sysinfo.get('hostname', '')}  {sysinfo.get('distro_name') or ''}"
                            f"  kernel {sysinfo.get('kernel', '')}  up "
                            f"{_uptime(sysinfo.get('uptime_seconds', 0))}", max_chars=160))),
        ("CPU", _bar(cpu_pct) if cpu_pct is not None else Text("(sampling)", style="dim")),
        ("", Text(inert(f"{cpu.get('model') or 'unknown CPU'}, {cpu.get('cores_logical', 0)} "
                        "threads", max_chars=120), style="dim")),
        ("Load", Text(f"{cpu.get('load_1', 0):.2f} {cpu.get('load_5', 0):.2f} "
                      f"{cpu.get('load_15', 0):.2f}")),
        ("Memory", _bar(mem.get("percent", 0.0)) + Text(
            f"  {_size(mem.get('used_bytes', 0))} / {_size(mem.get('total_bytes', 0))}")),
    ]
    if mem.get("swap_total_bytes"):
        rows.append(("Swap", _bar(mem.get("swap_percent", 0.0))))
    for disk in t.get("disks", [])[:8]:
        rows.append((inert(disk.get("mountpoint", "?"), max_chars=24),
                     _bar(disk.get("percent", 0.0)) +
                     Text(f"  {_size(disk.get('used_bytes', 0))} / "
                          f"{_size(disk.get('total_bytes', 0))}")))
    for temp in t.get("temperatures", [])[:4]:
        rows.append(("Temp", Text(inert(f"{temp.get('label', '')}: "
                                        f"{temp.get('celsius', 0):.0f} °C", max_chars=60))))
    return rows + _more_rows(t)


def _more_rows(t: dict[str, Any]) -> list[tuple[str, RenderableType]]:
    from rich.text import Text

    services, desktop, packages = t.get("services", {}), t.get("desktop", {}), \
        t.get("packages", {})
    failed = services.get("failed", [])
    if not services.get("available"):
        units = Text(inert(f"unknown ({services.get('reason') or 'systemd not reachable'})",
                           max_chars=120), style="dim")
    elif failed:
        units = Text(inert(", ".join(u.get("name", "?") for u in failed[:10]),
                           max_chars=300), style="bold red")
    else:
        units = Text("none", style="green")
    wallpaper = desktop.get("wallpaper_backends_running") or \
        desktop.get("wallpaper_backends_installed") or []
    session = Text(inert(f"{desktop.get('de') or '-'} / {desktop.get('wm') or '-'}  "
                         f"{desktop.get('display_protocol') or 'no display'}  wallpaper: "
                         f"{', '.join(wallpaper) or '-'}", max_chars=160))
    if packages.get("available"):
        pkgs = Text(f"{packages.get('count', 0)} installed "
                    f"({packages.get('explicit_count', 0)} explicit) via "
                    f"{inert(packages.get('manager', ''), max_chars=20)}")
    else:
        pkgs = Text(inert(packages.get("reason") or "unavailable", max_chars=160), style="dim")
    return [("Failed", units), ("Desktop", session), ("Packages", pkgs)]


def status_view(data: dict[str, Any]) -> RenderableType:
    """The status table, then where it came from."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from annactl.ui.units import Unsplit

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for label, value in _rows(data.get("telemetry", {})):
        # a narrow terminal folds a cell, never between a number and its unit (issue 23)
        table.add_row(label, Unsplit(value) if isinstance(value, Text) else value)
    health = data.get("health", {})
    errors = data.get("telemetry", {}).get("errors", [])
    foot = Text(f"{health.get('mode', '?')} daemon at {data.get('socket', '?')}; telemetry "
                f"{data.get('age_s', 0):.1f} s old", style="dim")
    if errors:
        foot.append("\n" + inert("collector errors: " + "; ".join(errors[:5]), max_chars=400),
                    style="yellow")
    return Group(table, Unsplit(foot))


def settings_problem() -> str | None:
    """What is wrong with the client's settings (``ANNA_*``, the TOML file), or None.

    The settings are read the quick way when that is exact; anything it cannot reproduce
    (a number, a list, an odd spelling) is read by the full settings, whose refusal is
    reported here: ``status`` still shows the machine, and says what every planning
    command would refuse (``ANNA_LLM_TIMEOUT=abc``)."""
    from annactl.core.quicksettings import quick_settings

    if quick_settings() is not None:
        return None
    from annactl.core.config import load_settings

    try:
        load_settings()
    except AnnaError as exc:
        return exc.message + (f" ({exc.hint})" if exc.hint else "")
    return None


def run(consoles: Consoles, *, as_json: bool) -> int:
    """``annactl status [--json]``."""
    problem = settings_problem()
    data = fetch_fast() or fetch_full()
    if as_json:
        from annactl.ui.console import emit_json

        emit_json(consoles, {"status": "ok", "settings_problem": problem, **data})
    else:
        consoles.out.print(status_view(data))
        if problem:
            consoles.out.print("settings: " + inert(problem, max_chars=400), style="yellow",
                               markup=False, highlight=False)
    return 0
