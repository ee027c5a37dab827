"""The model's claims about the machine, checked against the telemetry Anna sent.

Anna holds the telemetry, so Anna is the judge of what is true about the
machine. Claims in the model's prose (CPU model and core count, memory, disk
use per mount, load, failed units, installed packages, desktop) and in
``meta.detection_results`` are extracted with narrow patterns and compared with
the snapshot. A claim Anna cannot read is ignored (no flag); a claim that
disagrees beyond rounding (GB against GiB, a sample taken a moment later) is a
:class:`Contradiction`. Every string here is untrusted model text: it is
data, rendered through :func:`annactl.ui.console.inert` only.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from annactl.core.lazyre import lazy

if TYPE_CHECKING:
    from anna_common.plan import ActionPlan
    from anna_common.telemetry import Telemetry

GIB = 1024 ** 3
SIZE_TOLERANCE = 0.12
"""Relative slack for sizes: a model may say GB for GiB (7 %) and round."""
PERCENT_TOLERANCE = 10.0
"""Percentage points of slack (memory and disks move between samples)."""
DESKTOPS = ("hyprland", "sway", "gnome", "kde", "plasma", "xfce", "i3", "bspwm", "awesome",
            "openbox", "cinnamon", "mate", "lxqt", "lxde", "budgie", "river", "wayfire",
            "labwc", "niri", "qtile", "dwm", "herbstluftwm", "enlightenment", "deepin")
"""Desktop and window manager names a claim can be about (not example text)."""


@dataclass(frozen=True)
class Contradiction:
    """One claim of the model that the telemetry contradicts."""

    fact: str
    """``cpu_model``, ``cpu_cores``, ``memory_total``, ``memory_used``, ``memory_percent``,
    ``disk``, ``load``, ``failed_units``, ``package``, ``desktop``."""
    claim: str
    """What the model said (untrusted, short)."""
    telemetry: str
    """What the telemetry says."""
    where: str
    """The plan field the claim is in (``analysis``, ``notes_for_user``, ``meta``)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


_CPU = lazy(r"\b(intel|amd|apple|arm|qualcomm)\b(?:[ \w()®™@-]|\.(?=\w)){0,40}",
                  re.IGNORECASE)
_CPU_END = lazy(r"\s+(?:with|and|at|on|running|has|having|is|which)\b.*", re.IGNORECASE)
_MODEL_NO = lazy(r"\b(?=[\w-]*\d)[a-z]+\d*-?\d{3,5}[a-z]{0,3}\b|\b(?:epyc|xeon|ryzen|"
                       r"threadripper|celeron|pentium|atom|core|opteron)\b", re.IGNORECASE)
_CORES = lazy(r"\b(\d{1,4})\s*(?:-\s*)?(?:cpu\s+)?(cores?|threads?|cpus?|vcpus?|"
                    r"logical (?:cpus?|cores?|processors?))\b", re.IGNORECASE)
_MEM_OF = lazy(r"\b(\d+(?:\.\d+)?)\s*(gib|gb|g|mib|mb)\s*(?:of|/|out of)\s*"
                     r"(\d+(?:\.\d+)?)\s*(gib|gb|g|mib|mb)\b", re.IGNORECASE)
_MEM_TOTAL = lazy(r"\b(\d+(?:\.\d+)?)\s*(gib|gb|g)\s*(?:of\s+)?(?:ram|memory|total "
                        r"memory)\b", re.IGNORECASE)
_MEM_PCT = lazy(r"\bmemory\b[^.;\n%]{0,40}?(\d{1,3}(?:\.\d+)?)\s*%", re.IGNORECASE)
_DISK = lazy(r"(?:^|[\s(,:])(/[\w./-]*?)\s*(?::|is|at)?\s*(\d{1,3}(?:\.\d+)?)\s*%",
                   re.IGNORECASE)
_ROOT_DISK = lazy(r"\broot (?:disk|filesystem|partition)\b[^.;\n%]{0,20}?"
                        r"(\d{1,3}(?:\.\d+)?)\s*%", re.IGNORECASE)
_LOAD = lazy(r"\bload(?: average)?\s*(?:is|of|:|=)?\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_NO_FAILED = lazy(r"\bno failed (?:units|services)\b|\bno services? (?:have )?failed\b",
                        re.IGNORECASE)
_N_FAILED = lazy(r"\b(\d+) failed (?:units?|services?)\b", re.IGNORECASE)
_NOT_NAMES = frozenset({"it", "this", "that", "nothing", "everything", "something", "what",
                        "which", "package", "software", "one", "program", "tool", "all",
                        "driver", "update", "version", "kernel", "already"})
"""Words before "is installed" that are not package names."""
_PKG = lazy(r"\b([a-z0-9][a-z0-9+._-]{1,60}) is (not )?(?:already )?installed\b",
                  re.IGNORECASE)


def _bytes(value: str, unit: str) -> float:
    scale = GIB if unit.lower().startswith("g") else 1024 ** 2
    return float(value) * scale


def _near(claim: float, actual: float) -> bool:
    return abs(claim - actual) <= max(actual * SIZE_TOLERANCE, 0.2 * GIB)


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


def _cpu_summary(t: Telemetry) -> str:
    return f"{t.cpu.model or 'unknown CPU'}, {t.cpu.cores_logical} threads"


def cpu_claims(text: str, where: str, t: Telemetry) -> list[Contradiction]:
    """The CPU model and core/thread count."""
    found: list[Contradiction] = []
    actual = (t.cpu.model or "").lower()
    for m in _CPU().finditer(text) if actual else ():
        claim = _CPU_END().sub("", m.group(0)).strip(" .,")
        keys = [k.lower() for k in _MODEL_NO().findall(claim)]
        vendor = m.group(1).lower()
        if vendor not in actual or any(k not in actual for k in keys):
            found.append(Contradiction("cpu_model", claim, _cpu_summary(t), where))
    counts = {c for c in (t.cpu.cores_logical, t.cpu.cores_physical) if c}
    for m in _CORES().finditer(text) if counts else ():
        if int(m.group(1)) not in counts:
            found.append(Contradiction("cpu_cores", m.group(0), _cpu_summary(t), where))
    return found


def memory_claims(text: str, where: str, t: Telemetry) -> list[Contradiction]:
    """Memory used of total, total alone, and percent used."""
    mem = t.memory
    if not mem.total_bytes:
        return []
    actual = f"{_gib(mem.used_bytes)} of {_gib(mem.total_bytes)} used ({mem.percent:.0f}%)"
    found: list[Contradiction] = []
    spans: list[tuple[int, int]] = []
    for m in _MEM_OF().finditer(text):
        used, total = _bytes(m.group(1), m.group(2)), _bytes(m.group(3), m.group(4))
        spans.append(m.span())
        if not _near(total, mem.total_bytes) or not _near(used, mem.used_bytes):
            found.append(Contradiction("memory_used", m.group(0), actual, where))
    for m in _MEM_TOTAL().finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        if not _near(_bytes(m.group(1), m.group(2)), mem.total_bytes):
            found.append(Contradiction("memory_total", m.group(0), actual, where))
    for m in _MEM_PCT().finditer(text):
        if abs(float(m.group(1)) - mem.percent) > PERCENT_TOLERANCE:
            found.append(Contradiction("memory_percent", m.group(0).strip(), actual, where))
    return found


def disk_claims(text: str, where: str, t: Telemetry) -> list[Contradiction]:
    """Percent used per mount point."""
    disks = {d.mountpoint: d for d in t.disks}
    if not disks:
        return []
    claims = [(m.group(1).rstrip(".:") or "/", m.group(2), m.group(0).strip())
              for m in _DISK().finditer(text)]
    claims += [("/", m.group(1), m.group(0)) for m in _ROOT_DISK().finditer(text)]
    found: list[Contradiction] = []
    for mount, pct, said in claims:
        disk = disks.get(mount)
        if disk is None:
            if mount in {"/", "/home", "/boot", "/var", "/tmp"} or mount.count("/") == 1:
                mounts = ", ".join(sorted(disks)[:6])
                found.append(Contradiction("disk", said, f"no mount {mount} (mounts: "
                                                         f"{mounts})", where))
        elif abs(float(pct) - disk.percent) > PERCENT_TOLERANCE:
            found.append(Contradiction("disk", said, f"{mount} {disk.percent:.0f}% used",
                                       where))
    return found


def load_claims(text: str, where: str, t: Telemetry) -> list[Contradiction]:
    """The load average (any of the 1, 5, 15 minute values, with slack)."""
    loads = (t.cpu.load_1, t.cpu.load_5, t.cpu.load_15)
    found = []
    for m in _LOAD().finditer(text):
        claim = float(m.group(1))
        if all(abs(claim - x) > max(0.5, x * 0.5) for x in loads):
            found.append(Contradiction("load", m.group(0),
                                       "load " + " ".join(f"{x:.2f}" for x in loads), where))
    return found


def service_claims(text: str, where: str, t: Telemetry) -> list[Contradiction]:
    """Failed units: "no failed services" or "N failed units"."""
    if not t.services.available:
        return []
    failed = [u.name for u in t.services.failed]
    actual = f"{len(failed)} failed: {', '.join(failed[:5])}" if failed else "no failed units"
    found = []
    none = _NO_FAILED().search(text)
    if failed and none is not None:
        found.append(Contradiction("failed_units", none.group(0), actual, where))
    for m in _N_FAILED().finditer(text):
        if int(m.group(1)) != len(failed):
            found.append(Contradiction("failed_units", m.group(0), actual, where))
    return found


def package_claims(text: str, where: str, t: Telemetry) -> list[Contradiction]:
    """"X is installed" / "X is not installed", only against a complete package list."""
    pk = t.packages
    if not pk.available or not pk.packages or len(pk.packages) < pk.count:
        return []
    names = {p.name.lower() for p in pk.packages}
    found = []
    for m in _PKG().finditer(text):
        name, negated = m.group(1).lower(), bool(m.group(2))
        if negated and name in names:
            found.append(Contradiction("package", m.group(0), f"{name} is installed", where))
        elif not negated and name not in names and name not in _NOT_NAMES:
            found.append(Contradiction("package", m.group(0), f"{name} is not installed",
                                       where))
    return found


def _desktop_actual(t: Telemetry) -> str:
    d = t.desktop
    parts = [x for x in (d.de, d.wm, d.display_protocol) if x]
    return " / ".join(parts) if parts else "no desktop detected"


def desktop_claims(text: str, where: str, t: Telemetry) -> list[Contradiction]:
    """A desktop or window manager named as the one running here."""
    actual = _desktop_actual(t).lower()
    found = []
    for name in DESKTOPS:
        m = re.search(rf"\b(?:running|using|on|with|under|detected|shows?)\s+(?:the\s+)?"
                      rf"{name}\b", text, re.IGNORECASE)
        if m and name not in actual:
            found.append(Contradiction("desktop", m.group(0), _desktop_actual(t), where))
    return found


def meta_claims(plan: ActionPlan, t: Telemetry) -> list[Contradiction]:
    """``meta.detection_results`` against the detected desktop."""
    det = plan.meta.detection_results
    found = []
    for label, claim, actual in (("de", det.de, t.desktop.de), ("wm", det.wm, t.desktop.wm),
                                 ("display_protocol", det.display_protocol,
                                  t.desktop.display_protocol)):
        if claim and (claim or "").lower() != (actual or "").lower():
            found.append(Contradiction("desktop", f"{label} {claim}",
                                       _desktop_actual(t), "meta"))
    return found


CHECKS = (cpu_claims, memory_claims, disk_claims, load_claims, service_claims,
          package_claims, desktop_claims)
"""Every prose check, in display order."""


def contradictions(plan: ActionPlan, telemetry: Telemetry | None) -> list[Contradiction]:
    """Every claim in the plan's prose and meta that the telemetry contradicts."""
    if telemetry is None:
        return []
    found: list[Contradiction] = []
    for where, text in (("analysis", plan.analysis), ("notes_for_user", plan.notes_for_user)):
        for check in CHECKS:
            found.extend(check(text, where, telemetry))
    found.extend(meta_claims(plan, telemetry))
    unique: dict[tuple[str, str], Contradiction] = {}
    for c in found:
        unique.setdefault((c.fact, c.claim.lower()), c)
    return list(unique.values())[:20]


def confidence(found: list[Contradiction]) -> float:
    """1.0 for a plan whose claims agree with the telemetry; each contradiction costs 0.25."""
    return max(0.0, 1.0 - 0.25 * len(found))


def telemetry_facts(t: Telemetry) -> list[tuple[str, str]]:
    """The machine's facts as Anna renders them beside an answer (label, value)."""
    rows = [("CPU", f"{_cpu_summary(t)}, load {t.cpu.load_1:.2f} {t.cpu.load_5:.2f} "
                    f"{t.cpu.load_15:.2f}")]
    if t.memory.total_bytes:
        rows.append(("Memory", f"{_gib(t.memory.used_bytes)} of {_gib(t.memory.total_bytes)} "
                               f"used ({t.memory.percent:.0f}%)"))
    for d in t.disks[:6]:
        rows.append((f"Disk {d.mountpoint}", f"{d.percent:.0f}% used of {_gib(d.total_bytes)}"))
    if t.services.available:
        failed = [u.name for u in t.services.failed]
        rows.append(("Failed units", ", ".join(failed[:8]) if failed else "none"))
    rows.append(("Desktop", _desktop_actual(t)))
    return rows
