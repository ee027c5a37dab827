"""Which rule judges which program."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anna_common.risk.rules.boot import BOOT_RULES, grub
from anna_common.risk.rules.desktop import DESKTOP_RULES
from anna_common.risk.rules.disk import DISK_RULES, mkfs
from anna_common.risk.rules.files import FILE_RULES
from anna_common.risk.rules.general import GENERAL_RULES
from anna_common.risk.rules.ipc import IPC_RULES
from anna_common.risk.rules.network import NETWORK_RULES
from anna_common.risk.rules.packages import PACKAGE_RULES
from anna_common.risk.rules.security import SECURITY_RULES
from anna_common.risk.rules.services import SERVICE_RULES
from anna_common.risk.rules.tools import TOOL_RULES
from anna_common.risk.rules.volumes import VOLUME_RULES, fs_tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.risk.rules.base import Out
    from anna_common.shell.grammar import SimpleCommand

    Rule = Callable[[SimpleCommand, Out], None]

RULES: dict[str, Rule] = {
    **GENERAL_RULES,
    **FILE_RULES,
    **TOOL_RULES,
    **DESKTOP_RULES,
    **PACKAGE_RULES,
    **SERVICE_RULES,
    **NETWORK_RULES,
    **SECURITY_RULES,
    **BOOT_RULES,
    **VOLUME_RULES,
    **DISK_RULES,
    **IPC_RULES,
}
"""Program name → rule. Later tables win: storage, boot and security rules are the strictest."""

_PREFIXES: tuple[tuple[str, Rule], ...] = (
    ("mkfs.", mkfs),
    ("mkfs", mkfs),
    ("fsck.", fs_tool),
    ("grub-", grub),
    ("grub2-", grub),
)


def rule_for(program: str) -> Rule | None:
    """The rule for ``program``, by exact name or by a family prefix (``mkfs.*``, ``grub-*``)."""
    rule = RULES.get(program)
    if rule is not None:
        return rule
    for prefix, prefixed in _PREFIXES:
        if program.startswith(prefix):
            return prefixed
    return None
