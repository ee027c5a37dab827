"""Facts about the machine annactl runs on that the contract needs (distro family, home)."""

from __future__ import annotations

from pathlib import Path

from anna_common.distro import FAMILIES, family_of, parse_os_release
from anna_common.risk.rules.base import AssessContext

DISTRO_FAMILIES = tuple(FAMILIES)
"""Values accepted by ``--distro``."""


def detect_distro(os_release: Path = Path("/etc/os-release")) -> str | None:
    """This machine's distribution family, from /etc/os-release."""
    try:
        values = parse_os_release(os_release.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return family_of(values.get("ID"), values.get("ID_LIKE", "").split())


def local_context(distro: str | None = None) -> AssessContext:
    """An assessment context for this machine (used by assess/validate without a daemon)."""
    return AssessContext(distro=distro if distro is not None else detect_distro(),
                         home=str(Path.home()))
