"""Why a disk is full (planned twice, like the wallpaper) and a disk's health (SMART).

"Why is my disk full?" first measures, read-only: the fullest filesystem's and the home's
biggest directories, the package cache and the journal. The plan offered is the second
round's (:func:`annactl.planning.templates.records_first`), written from what the checks
printed: it proposes cleaning only what they measured as worth it, so a journal measured
at 0 B is never offered for vacuuming. Without those results (no daemon ran them) nothing
is proposed, only what the checks will show.

"Check disk health" means SMART: ``smartctl -H`` on each disk telemetry's filesystems sit
on; when smartmontools is known to be missing, the answer says so instead of showing
``df`` (free space is not health).
"""

from __future__ import annotations

import re
import shlex

from annactl.planning.templates.base import Context, PlanBuilder, TemplateMatch, installed
from annactl.planning.templates.info import _DISK_WORDS, _disk_summary
from annactl.planning.templates.managers import knows_installed, manager

DISK_FULL_TEMPLATE = "disk_full_v1"
"""Template id of "why is my disk full" (a recording template: planned twice)."""
_WHY_FULL = re.compile(
    r"(?i)^(?:why is |is )?(?:my |the )?(?:disk|drive|storage|root|/)(?: partition| filesystem)?"
    r" (?:is |so |almost |nearly )*full[?.! ]*$|^what(?:'s| is) (?:using|filling|taking(?: up)?|"
    r"eating) (?:all )?(?:my |the )?(?:disk|space|storage|drive)(?: space)?[?.! ]*$|^(?:where "
    r"(?:did|has|is) (?:all )?(?:my |the )?(?:disk )?space (?:gone|go(?:ne)?)|(?:find|show|list)"
    r" (?:me )?(?:what is using |the |my )?(?:big|large|biggest|largest) (?:directories|"
    r"folders|files)(?: in my home)?)"
    r"[?.! ]*$")
_FULL_WORDS = re.compile(r"(?i)\b(full|biggest|largest|filling|fills|eating)\b")
_MOUNT_OK = re.compile(r"^/[A-Za-z0-9._/@+-]{0,200}$")
DU_SECONDS = 20
"""How long each biggest-directories check may take before ``timeout`` ends it."""
WORTH_BYTES = 200 * 1024**2
"""A cache or journal smaller than this is not worth proposing to clean."""
_SIZE = re.compile(r"(?i)(\d+(?:\.\d+)?)\s*([KMGTP]?)i?B?\b")
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}


def _plain(path: str) -> bool:
    return bool(_MOUNT_OK.match(path)) and ".." not in path.split("/")


def fullest_mount(ctx: Context) -> str:
    """The mount point of the fullest filesystem (telemetry), or ``/``; only a plain path is
    ever put into a command (telemetry is untrusted)."""
    for disk in sorted(ctx.telemetry.disks, key=lambda d: d.percent, reverse=True):
        if _plain(disk.mountpoint):
            return disk.mountpoint
    return "/"


def size_of(text: str | None, after: str = "") -> int | None:
    """Bytes of the first size in ``text`` (after the words ``after``), or None: reads
    ``du -sh``'s ``1.2G`` and journalctl's ``take up 24.0M``."""
    if not text:
        return None
    start = text.find(after) + len(after) if after and after in text else 0
    found = _SIZE.search(text, start)
    if found is None:
        return None
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


def _human(size: int) -> str:
    for unit in ("P", "T", "G", "M", "K"):
        if size >= _UNITS[unit]:
            return f"{size / _UNITS[unit]:.1f} {unit}B"
    return f"{size} B"


def _du(builder: PlanBuilder, check_id: str, what: str, path: str) -> None:
    builder.check(check_id, f"Biggest directories in {what} (at most {DU_SECONDS} s)",
                  f"timeout {DU_SECONDS} du -xh -d1 {shlex.quote(path)} 2>/dev/null "
                  "| sort -rh | head -n 12", required=False)


def _proposals(ctx: Context, recorded: dict[str, str]) -> str:
    """What is worth cleaning, from what the checks measured (sizes said either way)."""
    tool = manager(ctx)
    said, offer = [], []
    cache = size_of(recorded.get("package_cache"))
    if cache is not None and tool is not None:
        said.append(f"package cache {_human(cache)}")
        if cache >= WORTH_BYTES:
            offer.append("old package files (ask \"clean the package cache\")")
    journal = size_of(recorded.get("journal_size"), "take up")
    if journal is not None:
        said.append(f"journal {_human(journal)}")
        if journal >= WORTH_BYTES:
            offer.append("old journal files (journalctl --vacuum-time=2weeks)")
    if not said:
        return ("The checks could not measure the package cache or the journal; the biggest "
                "directories above are where the space went.")
    measured = f"Measured: {', '.join(said)}."
    if not offer:
        return (f"{measured} Not worth cleaning; the biggest directories above are where the "
                "space went.")
    return f"{measured} Worth cleaning, each only when you ask: {'; '.join(offer)}."


def disk_full(ctx: Context) -> TemplateMatch | None:
    """"Why is my disk full?" → the biggest directories of the fullest filesystem and of
    the home (``du``, bounded in time), the package cache and the journal's size; the
    second round proposes what they measured as worth cleaning."""
    confident = bool(_WHY_FULL.match(ctx.request))
    if not confident and not (_DISK_WORDS.search(ctx.request) and
                              _FULL_WORDS.search(ctx.request)):
        return None
    mount = fullest_mount(ctx)
    builder = PlanBuilder(ctx, DISK_FULL_TEMPLATE, [f"Find what fills {mount}"])
    _du(builder, "biggest_dirs", mount, mount)
    home = ctx.home.rstrip("/")
    if _plain(home) and home != mount:
        _du(builder, "home_dirs", "your home", home)
    tool = manager(ctx)
    if tool is not None:
        builder.check("package_cache", f"Size of the {tool.name} package cache",
                      tool.cache_size, required=False)
        if tool.name == "pacman":
            builder.check("paccache_dry_run", "Old package files paccache would remove",
                          "paccache -dk2", required=False)
    builder.check("journal_size", "Size of the systemd journal", "journalctl --disk-usage",
                  required=False)
    builder.step("show_df", "Show usage of every real filesystem", "df -h -x tmpfs -x devtmpfs")
    if ctx.recorded is None:
        tail = ("The checks measure the biggest directories, the package cache and the "
                "journal; what is worth cleaning follows from what they show.")
    else:
        tail = _proposals(ctx, ctx.recorded)
    plan = builder.build(f"{mount} is the fullest filesystem; the checks measure its and your "
                         "home's biggest directories, the package cache and the journal "
                         "(read-only).", _disk_summary(ctx) + " " + tail)
    return TemplateMatch(builder.template, confident, plan)


_HEALTH = re.compile(
    r"(?i)^(?:please )?(?:check|show|test|what(?:'s| is))?(?: me)?(?: the| my)? ?(?:disk|drive|"
    r"ssd|hdd|nvme|hard drive|hard disk|storage)s?(?:'s?)? (?:health|smart(?: status| data)?|"
    r"condition)[?.! ]*$|^(?:is|are) (?:my |the )?(?:disk|drive|ssd|hdd|nvme|hard drive|"
    r"hard disk)s? (?:healthy|ok|okay|fine|dying|failing|bad)[?.! ]*$|^(?:check |show |run )?"
    r"(?:the )?smart(?: status| data| test)?[?.! ]*$")
_DEVICE = re.compile(r"^/dev/(nvme\d+n\d+|mmcblk\d+|[shv]d[a-z]{1,2})(?:p?\d+)?$")


def _devices(ctx: Context) -> list[str]:
    """Whole disks under telemetry's filesystems (``/dev/nvme0n1p2`` → ``/dev/nvme0n1``)."""
    found = [_DEVICE.match(d.device) for d in ctx.telemetry.disks]
    return list(dict.fromkeys(f"/dev/{m.group(1)}" for m in found if m))[:8]


def disk_health(ctx: Context) -> TemplateMatch | None:
    """"Check disk health" → ``smartctl -H`` per disk, or why it cannot."""
    if _HEALTH.match(ctx.request) is None:
        return None
    builder = PlanBuilder(ctx, "disk_health_v1", ["Check the disks' SMART health"])
    if knows_installed(ctx) and "smartmontools" not in installed(ctx):
        plan = builder.build("Disk health is SMART, read by smartctl from smartmontools, which "
                             "is not installed.",
                             "smartctl (package smartmontools) is not installed, so I cannot "
                             "read the disks' SMART health. Install it with annactl \"install "
                             "smartmontools\", then ask again. (Free space is not health: "
                             "\"show disk usage\" shows that.)")
        return TemplateMatch(builder.template, True, plan)
    builder.check("smartctl", "Verify smartctl is installed", "smartctl --version")
    devices = _devices(ctx)
    for number, device in enumerate(devices, start=1):
        builder.step(f"health_{number}", f"SMART overall health of {device}",
                     f"smartctl -H {shlex.quote(device)}")
    if not devices:
        builder.step("scan", "List the disks smartctl can read", "smartctl --scan")
    listed = ", ".join(devices) or "the disks smartctl finds"
    plan = builder.build(f"SMART health of {listed} (read-only; smartctl needs root).",
                         f"I will ask each disk for its SMART verdict (smartctl -H {listed}): "
                         "PASSED means the drive reports no failure; a virtual disk has no "
                         "SMART. If the check finds no smartctl, install smartmontools.")
    return TemplateMatch(builder.template, True, plan)
