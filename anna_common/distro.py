"""Distribution families, and the assessment context built from telemetry (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anna_common.risk.context import AssessContext
    from anna_common.telemetry import Telemetry

ARCH_FAMILY = frozenset({"arch", "manjaro", "endeavouros", "garuda", "artix", "cachyos",
                         "arcolinux", "archcraft", "parabola", "steamos", "blackarch"})
"""``ID``/``ID_LIKE`` values that use pacman (the package rules' Arch family,
:mod:`anna_common.risk.rules.packages`, is this one: defined here, where importing it does
not load the package rules and the bash grammar under them)."""

FAMILIES: dict[str, frozenset[str]] = {
    "arch": ARCH_FAMILY,
    "debian": frozenset({"debian", "ubuntu", "linuxmint", "pop", "raspbian", "kali", "elementary",
                         "zorin", "neon"}),
    "fedora": frozenset({"fedora", "rhel", "centos", "rocky", "almalinux", "nobara", "ol"}),
    "suse": frozenset({"opensuse", "opensuse-leap", "opensuse-tumbleweed", "sles", "suse"}),
    "alpine": frozenset({"alpine"}),
    "gentoo": frozenset({"gentoo"}),
    "void": frozenset({"void"}),
}
"""Family name → os-release ``ID`` values in it."""


def family_of(distro_id: str | None, like: list[str] | None = None) -> str | None:
    """Map an os-release ``ID`` (and ``ID_LIKE``) to a family name, or None when unknown."""
    for candidate in [distro_id or "", *(like or [])]:
        for family, ids in FAMILIES.items():
            if candidate.lower() in ids:
                return family
    return None


def parse_os_release(text: str) -> dict[str, str]:
    """``KEY=value`` lines of /etc/os-release, quotes removed."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.startswith("#"):
            values[key.strip()] = value.strip().strip("\"'")
    return values


def context_from_telemetry(telemetry: Telemetry, home: str | None) -> AssessContext:
    """The assessment context a plan is judged in: distro family, home, boot evidence."""
    from anna_common.risk.context import AssessContext

    system = telemetry.system
    return AssessContext(
        distro=family_of(system.distro_id, system.distro_like),
        home=home,
        bootloader=telemetry.boot.bootloader,
        initramfs_tool=telemetry.boot.initramfs_tool,
        efi=telemetry.boot.efi,
    )
