"""Each supported distribution family's package manager, as the package templates speak it.

One row per family (pacman, apt, dnf, zypper): the commands to look a package up, install,
remove, clean the download cache and upgrade the system. Every check is a read-only
command Anna assesses INFO (``apt-get -s`` simulates, ``dpkg -s`` and ``rpm -q`` read the
database), so it runs unasked and a required one stops the plan before any change: a
package the repositories do not have, or one that is not installed, is found before the
step. ``{}`` is replaced by the package name, already checked and quoted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annactl.planning.templates.base import Context


@dataclass(frozen=True)
class Manager:
    """How one family's package manager does what the templates offer."""

    name: str
    """The tool people know (``pacman``, ``apt``, ``dnf``, ``zypper``)."""
    in_repos: str
    """Required check: the package is in the repositories (fails when it is not)."""
    is_installed: str
    """Required check: the package is installed (fails when it is not)."""
    install: str
    """Install without asking (the person approved the plan)."""
    remove: str
    """Remove, keeping what other packages need."""
    cache_size: str
    """Measures the download cache."""
    clean: str | None
    """Empties the download cache (None: the family's tool needs an extra package)."""
    upgrade: tuple[str, ...]
    """Steps of a full system upgrade, in order."""
    upgrade_check: str | None
    """What an upgrade would change, read-only (None: no read-only way)."""


MANAGERS: dict[str, Manager] = {
    "arch": Manager("pacman", "pacman -Si {}", "pacman -Qi {}",
                    "pacman -S --needed --noconfirm {}", "pacman -Rs --noconfirm {}",
                    "du -sh /var/cache/pacman/pkg", "paccache -rk2",
                    ("pacman -Syu --noconfirm",), "pacman -Qu"),
    "debian": Manager("apt", "apt-get -s install {}", "dpkg -s {}", "apt-get install -y {}",
                      "apt-get remove -y {}", "du -sh /var/cache/apt/archives",
                      "apt-get clean", ("apt-get update", "apt-get upgrade -y"),
                      "apt-get -s upgrade"),
    "fedora": Manager("dnf", "dnf info {}", "rpm -q {}", "dnf install -y {}", "dnf remove -y {}",
                      "du -sh /var/cache/dnf", "dnf clean packages", ("dnf upgrade -y",),
                      "dnf check-update"),
    "suse": Manager("zypper", "zypper --non-interactive search --match-exact {}", "rpm -q {}",
                    "zypper --non-interactive install {}", "zypper --non-interactive remove {}",
                    "du -sh /var/cache/zypp/packages", "zypper clean",
                    ("zypper --non-interactive update",), None),
}
"""Distribution family (:func:`anna_common.distro.family_of`) → its package manager."""


def manager(ctx: Context) -> Manager | None:
    """The machine's package manager, or None for a family the templates do not speak.

    Arch also needs a readable pacman database (telemetry reads it: "already installed"
    is then an answer, not a check)."""
    family = ctx.assess_context.distro
    if family == "arch":
        packages = ctx.telemetry.packages
        return MANAGERS["arch"] if packages.manager == "pacman" and packages.available else None
    return MANAGERS.get(family or "")


def knows_installed(ctx: Context) -> bool:
    """Whether telemetry lists the installed packages (only pacman's database is read)."""
    packages = ctx.telemetry.packages
    return packages.manager == "pacman" and packages.available
