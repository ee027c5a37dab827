"""Telemetry trimmed to what one request needs (the "context diet" of the user message).

A full snapshot can hold 1,500 package names and long command lines; sending
it whole would cost thousands of tokens and bury the facts that matter. This
module keeps: the machine summary (distro, CPU, memory, disks, desktop, boot,
failed units), the top processes when the request is about them (by CPU, by memory,
or both), and only the *relevant* packages, meaning
names the request mentions plus the backends its intent needs (a wallpaper
request gets hyprpaper, swaybg, ...), never the whole list. Long strings are
cut head-and-tail with a marker, and the result is shrunk step by step until
it fits the character budget.

Volatile figures are rounded to a documented granularity (docs/planning.md) before they
are sent, so the same request a few minutes later on an unchanged machine sends the same
bytes: the deterministic cache (keyed on what is sent) hits, and the server's prompt cache
holds. The 5-minute load moves in steps of 0.5 below 4, 1 below 16 and 4 above (the
1-minute figure and the CPU's momentary share are not sent); memory and swap shares and disk
use in whole percent, as ``annactl status`` and the templates print them, so the model cites
the number the person sees (issue 39: a 5 % step sent 30 where the screen showed 28); free
disk space in steps of 1 % of the disk (at least 0.5 GB) (memory as a share only);
temperatures in steps of 5 °C; a process's CPU share in steps of 5 % and its memory share
in steps of 1 %; uptime in whole hours (whole days past two days). Top processes are sent
only to a request about them, listed by name rather than by momentary rank, without the
process count.

Every string here is still untrusted; :mod:`annactl.planning.prompt` puts the result in
the user message inside a block labelled untrusted, escaped so it cannot close
that block.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anna_common.telemetry import Telemetry

DEFAULT_BUDGET = 4200
"""Characters of compact JSON the trimmed telemetry may take (the user message stays < 6,000)."""

GB = 1024**3

GRANULARITY: dict[str, float] = {"load": 0.5, "percent": 1.0, "gb": 0.5,
                                 "celsius": 5.0, "process_cpu": 5.0, "process_memory": 1.0}
"""Steps the volatile figures are rounded to (see the module docstring)."""


def step(value: float, unit: str) -> float:
    """``value`` rounded to the nearest multiple of ``GRANULARITY[unit]``."""
    size = GRANULARITY[unit]
    rounded = round(round(value / size) * size, 2)
    return int(rounded) if rounded.is_integer() else rounded  # "40", not "40.0"


def load_step(load: float) -> float:
    """The 5-minute load in steps that grow with it: 0.5 below 4, 1 below 16, then 4 (a busy
    machine's load moves by more than 0.5 a minute, and the model needs its size, not its
    decimals)."""
    size = 0.5 if load < 4 else 1.0 if load < 16 else 4.0
    rounded = round(round(load / size) * size, 2)
    return int(rounded) if rounded.is_integer() else rounded


def free_step(free_bytes: int, total_bytes: int) -> float:
    """Free disk space in steps of 1 % of the disk (at least 0.5 GB), in GB."""
    size = max(GRANULARITY["gb"], total_bytes / GB / 100)
    rounded = round(round(free_bytes / GB / size) * size, 1)
    return int(rounded) if rounded.is_integer() else rounded


def uptime_hours(seconds: float) -> int:
    """Uptime in whole hours, or whole days (as hours) past two days."""
    hours = seconds / 3600
    return round(hours) if hours < 48 else round(hours / 24) * 24

INTENT_PACKAGES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("wallpaper", "background", "backdrop"): (
        "hyprpaper", "swaybg", "swww", "feh", "nitrogen", "xwallpaper", "variety", "hyprland",
        "sway", "gnome-shell", "xfdesktop", "xfconf", "plasma-workspace", "wpaperd"),
    ("install", "remove", "uninstall", "package", "upgrade", "update", "aur"): (
        "pacman", "pacman-contrib", "yay", "paru", "base-devel"),
    ("cache", "clean", "paccache", "space"): ("pacman-contrib",),
    ("service", "restart", "enable", "disable", "failed", "systemd", "unit", "daemon"): (
        "systemd",),
    ("editor", "vim", "nvim", "edit"): ("vim", "neovim", "nano", "emacs", "helix", "code",
                                       "kate", "gedit"),
    ("network", "wifi", "wi-fi", "internet", "ethernet", "dns"): (
        "networkmanager", "iwd", "wpa_supplicant", "dhcpcd", "systemd-resolvconf"),
    ("sound", "audio", "speaker", "microphone", "volume"): (
        "pipewire", "pipewire-pulse", "wireplumber", "pulseaudio", "alsa-utils"),
    ("bluetooth",): ("bluez", "bluez-utils", "blueman"),
    ("firewall", "port", "ports"): ("ufw", "firewalld", "nftables", "iptables", "iptables-nft"),
    ("boot", "kernel", "grub", "initramfs"): (
        "linux", "linux-lts", "linux-zen", "grub", "efibootmgr", "mkinitcpio", "dracut"),
    ("docker", "container", "podman"): ("docker", "docker-compose", "podman"),
    ("shell", "zsh", "fish", "bash"): ("bash", "zsh", "fish"),
    ("font", "fonts"): ("fontconfig", "noto-fonts", "ttf-dejavu", "ttf-liberation"),
    ("gpu", "graphics", "driver", "nvidia", "display", "monitor"): (
        "mesa", "nvidia", "nvidia-utils", "xorg-server", "xf86-video-amdgpu", "vulkan-radeon"),
}
"""Request keywords → packages whose presence the plan depends on."""

_STOP = frozenset("""the and for with from into onto that this what which how why when where who
please could would should can you your my mine me our install remove uninstall package packages
delete add update upgrade show list check make change set use using get give tell about need want
enable disable restart start stop service services status system machine computer is are was
it its to of in on at by an a do does did not all any some new old now""".split())  # noqa: SIM905
_WORD = re.compile(r"[a-z0-9][a-z0-9@._+-]*")
MAX_MATCHED = 30
"""At most this many packages matched by name."""


def cut(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, keeping head and tail around a marker."""
    if len(text) <= limit:
        return text
    head = max(1, int(limit * 0.6))
    tail = max(1, limit - head - 20)
    return f"{text[:head]}…[cut {len(text) - head - tail} chars]…{text[-tail:]}"


def request_words(request: str) -> list[str]:
    """Lower-case words of the request that could name a package."""
    words = _WORD.findall(request.lower())
    return [w.strip("._-") for w in words if len(w) >= 2 and w not in _STOP]


def intent_packages(request: str) -> set[str]:
    """Packages the request's intent depends on (backends, tools)."""
    words = set(_WORD.findall(request.lower()))
    wanted: set[str] = set()
    for keys, packages in INTENT_PACKAGES.items():
        if words & set(keys):
            wanted.update(packages)
    return wanted


def relevant_packages(telemetry: Telemetry, request: str) -> dict[str, Any]:
    """Package summary, the intent's backends (installed or not) and name matches."""
    pk = telemetry.packages
    installed = {p.name: p.version for p in pk.packages}
    summary: dict[str, Any] = {"manager": pk.manager, "available": pk.available,
                               "count": pk.count, "explicit_count": pk.explicit_count}
    if pk.reason:
        summary["reason"] = cut(pk.reason, 120)
    backends = sorted(intent_packages(request))
    if backends:
        summary["intent_packages"] = {name: cut(installed[name], 40) if name in installed
                                      else "not installed" for name in backends}
    words = request_words(request)
    exact = [w for w in words if w in installed]
    partial = sorted({n for n in installed for w in words
                      if len(w) >= 4 and w in n and n not in exact},
                     key=lambda n: (len(n), n))
    matched = (exact + partial)[:MAX_MATCHED]
    if matched:
        summary["matching_installed"] = {n: cut(installed[n], 40) for n in matched}
    missing = [w for w in words if w not in installed and len(w) >= 3]
    if missing and pk.available:
        summary["not_installed_words"] = missing[:10]
    return summary


def _process(p: Any, cmd_chars: int, which: str = "both") -> dict[str, Any]:
    entry: dict[str, Any] = {"pid": p.pid, "name": cut(p.name, 48), "user": p.user}
    if which != "memory":  # a memory question does not carry the (jumpy) CPU shares
        entry["cpu"] = step(p.cpu_percent, "process_cpu")
    if which != "cpu":
        entry["mem"] = step(p.memory_percent, "process_memory")
    if cmd_chars and p.cmdline:
        entry["cmd"] = cut(p.cmdline, cmd_chars)
    return entry


_PROCESS_WORDS = re.compile(
    r"(?i)\b(process(es)?|programs?|apps?|applications?|cpu|memory|ram|load|slow|sluggish|"
    r"lag(gy)?|freez\w*|fans?|hot|heat|temperature|us(es|ing)|hog\w*|eat\w*|performance|"
    r"run(s|ning)?|kill|top|busy|swap|status|health|overview|how('s| is| are)|doing)\b")
_MEMORY_WORDS = re.compile(r"(?i)\b(memory|ram|swap|oom)\b")
_CPU_WORDS = re.compile(r"(?i)\b(cpu|load|fans?|hot|heat|temperature|slow|busy)\b")


def wants_processes(request: str) -> str | None:
    """Which top processes a request needs: ``memory``, ``cpu``, ``both`` or None.

    Processes are the most volatile part of a snapshot (their ranking and shares change
    every second); a request that is not about them does not carry them, so its key holds.
    """
    if not _PROCESS_WORDS.search(request):
        return None
    memory, cpu = bool(_MEMORY_WORDS.search(request)), bool(_CPU_WORDS.search(request))
    return "memory" if memory and not cpu else "cpu" if cpu and not memory else "both"


def _processes(telemetry: Telemetry, top: int, cmd_chars: int,
               which: str = "both") -> dict[str, Any]:
    pr = telemetry.processes
    seen: set[int] = set()
    listed = []
    by_cpu = pr.top_cpu[:top] if which != "memory" else []
    by_memory = (pr.top_memory[:top] if which == "memory" else [] if which == "cpu"
                 else pr.top_memory[: max(1, top // 2)])
    for p in [*by_cpu, *by_memory]:
        if p.pid not in seen:
            seen.add(p.pid)
            listed.append(_process(p, cmd_chars, which))
    listed.sort(key=lambda e: (e["name"], e["pid"]))  # not by momentary rank
    return {"top": listed}  # the count changes with every short-lived process


def _machine(t: Telemetry, disks: int, failed: int) -> dict[str, Any]:
    m = t.memory
    return {
        "system": {"distro": t.system.distro_id, "distro_name": cut(t.system.distro_name or "", 60),
                   "kernel": cut(t.system.kernel, 60), "hostname": cut(t.system.hostname, 40),
                   "uptime_h": uptime_hours(t.system.uptime_seconds)},
        # the 5-minute load only: the 1-minute figure is noise between two requests
        "cpu": {"model": cut(t.cpu.model or "", 60), "cores": t.cpu.cores_logical,
                "load_5": load_step(t.cpu.load_5)},  # not the momentary CPU share: noise
        # the share only: used GB would repeat it in a finer, more volatile unit
        "memory": {"total_gb": round(m.total_bytes / GB, 1),
                   "percent": step(m.percent, "percent"),
                   "swap_percent": step(m.swap_percent, "percent")},
        "disks": [{"mount": cut(d.mountpoint, 60), "fs": d.fstype,
                   "size_gb": round(d.total_bytes / GB, 1),
                   "free_gb": free_step(d.free_bytes, d.total_bytes),
                   "percent": step(d.percent, "percent")} for d in t.disks[:disks]],
        "temperatures_c": {cut(x.label, 40): step(x.celsius, "celsius")
                           for x in sorted(t.temperatures, key=lambda x: -x.celsius)[:3]},
        "desktop": t.desktop.model_dump(mode="json"),
        "boot": t.boot.model_dump(mode="json"),
        "failed_units": {"count": len(t.services.failed), "available": t.services.available,
                         "units": [{"name": cut(u.name, 60), "description": cut(u.description, 60)}
                                   for u in t.services.failed[:failed]]},
    }


_NETWORK_WORDS = re.compile(r"(?i)\b(ip|ips|address(es)?|network|listen\w*|ports?|interfaces?|"
                            r"lan|wifi|ethernet)\b")
_SESSION_WORDS = re.compile(r"(?i)\b(who|users?|logged|log(ged)?[- ]?in|logins?|sessions?)\b")


def _network(telemetry: Telemetry, request: str, rows: int) -> dict[str, Any]:
    """Addresses, listeners and login sessions, for a request about them (exact values:
    they change rarely, so sending them keeps the key stable)."""
    extra: dict[str, Any] = {}
    net = telemetry.network
    if net.available and _NETWORK_WORDS.search(request):
        extra["network"] = {
            "addresses": [f"{cut(a.interface, 20)} {a.address}" + (f"/{a.prefix}" if a.prefix
                                                                   else "")
                          for a in net.addresses[:rows]],
            "listening": [f"{x.proto} {x.address}:{x.port}"
                          + (f" {cut(x.process, 30)}" if x.process else "")
                          for x in net.listeners[:rows]]}
    if telemetry.sessions is not None and _SESSION_WORDS.search(request):
        extra["logged_in"] = [f"{cut(s.user, 32)} {cut(s.terminal, 16)}"
                              + (f" from {cut(s.host, 40)}" if s.host else "")
                              for s in telemetry.sessions[:rows]]
    return extra


_LEVELS = (  # (top processes, cmdline chars, matched packages, disks, failed units)
    (6, 80, MAX_MATCHED, 8, 8),
    (4, 40, 15, 6, 5),
    (3, 0, 8, 4, 3),
    (0, 0, 3, 2, 1),
)


def trim(telemetry: Telemetry, request: str, *, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    """The telemetry a request needs, as a JSON-ready dict of at most ``budget`` characters."""
    result: dict[str, Any] = {}
    for top, cmd_chars, matched, disks, failed in _LEVELS:
        result = _machine(telemetry, disks, failed)
        which = wants_processes(request)
        if top and which is not None:
            result["processes"] = _processes(telemetry, top, cmd_chars, which)
        packages = relevant_packages(telemetry, request)
        if "matching_installed" in packages:
            kept = list(packages["matching_installed"].items())[:matched]
            packages["matching_installed"] = dict(kept)
        result["packages"] = packages
        result.update(_network(telemetry, request, max(disks, 2) * 2))
        if telemetry.errors:
            result["collector_errors"] = [cut(e, 80) for e in telemetry.errors[:3]]
        if len(compact(result)) <= budget:
            return result
    # Last resort: keep only the summary sections, each cut hard.
    for key in ("temperatures_c", "collector_errors", "boot", "processes", "network",
                "logged_in"):
        result.pop(key, None)
        if len(compact(result)) <= budget:
            return result
    return {"system": result["system"], "note": "telemetry cut to fit the prompt budget"}


def compact(value: Any) -> str:
    """Compact JSON text (how the block is measured and sent)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
