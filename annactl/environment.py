"""Facts about the machine annactl runs on that the contract needs (distro family, home)."""

from __future__ import annotations

from pathlib import Path

from anna_common.rules.base import AssessContext
from anna_common.rules.packages import ARCH_FAMILY

_FAMILIES = {
    "arch": ARCH_FAMILY,
    "debian": frozenset({"debian", "ubuntu", "linuxmint", "pop", "raspbian", "kali", "elementary",
                         "zorin", "neon"}),
    "fedora": frozenset({"fedora", "rhel", "centos", "rocky", "almalinux", "nobara", "ol"}),
    "suse": frozenset({"opensuse", "opensuse-leap", "opensuse-tumbleweed", "sles", "suse"}),
    "alpine": frozenset({"alpine"}),
    "gentoo": frozenset({"gentoo"}),
    "void": frozenset({"void"}),
}
DISTRO_FAMILIES = tuple(_FAMILIES)
"""Values accepted by ``--distro``."""


def _os_release(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return values
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip("\"'")
    return values


def family_of(distro_id: str | None, like: list[str] | None = None) -> str | None:
    """Map an os-release ``ID``/``ID_LIKE`` to a family name (``arch``, ``debian``, ...)."""
    for candidate in [distro_id or "", *(like or [])]:
        for family, ids in _FAMILIES.items():
            if candidate.lower() in ids:
                return family
    return None


def detect_distro(os_release: Path = Path("/etc/os-release")) -> str | None:
    """This machine's distribution family, from /etc/os-release."""
    values = _os_release(os_release)
    return family_of(values.get("ID"), values.get("ID_LIKE", "").split())


def local_context(distro: str | None = None) -> AssessContext:
    """An assessment context for this machine (used by assess/validate without a daemon)."""
    return AssessContext(distro=distro if distro is not None else detect_distro(),
                         home=str(Path.home()))
