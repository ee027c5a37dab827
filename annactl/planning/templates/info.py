"""Read-only answers from telemetry: system status, failed services, disk usage (why a disk
is full and its health: :mod:`annactl.planning.templates.disks`)."""

from __future__ import annotations

import re

from annactl.planning.templates.base import Context, PlanBuilder, TemplateMatch, gb

_STATUS_FULL = re.compile(
    r"(?i)^(?:hey |hi )?(?:anna[, ]+)?(?:how(?:'s| is| are)? (?:my |the |this )?(?:system|computer|"
    r"machine|pc|laptop|box)(?: doing| running)?|(?:show |give me )?(?:a |the |my )?(?:system|"
    r"machine) (?:status|health|overview|summary)|status|health ?check|is (?:my |the |this )?"
    r"(?:system|computer|machine|pc|laptop) (?:ok|okay|fine|healthy|alright|all right))"
    r"[?.! ]*$")
_STATUS_WORDS = re.compile(r"(?i)\b(status|health|how is my|overview)\b")
_FAILED_FULL = re.compile(
    r"(?i)^(?:show |list |what are |which are |are there )?(?:me )?(?:the |my |any )?"
    r"(?:failed|failing|broken) (?:services|units|systemd units)(?: are there)?[?.! ]*$"
    r"|^(?:what|which) (?:services|units) (?:have )?failed[?.! ]*$")
_FAILED_WORDS = re.compile(r"(?i)\bfail(ed|ing)?\b.*\b(service|unit)s?\b")
_DISK_FULL = re.compile(
    r"(?i)^(?:show |check |what(?:'s| is) )?(?:my |the )?(?:disk|storage) (?:usage|space|use)"
    r"[?.! ]*$|^how much (?:disk |free )?(?:space|storage)(?: do i have| is left| is free)?"
    r"(?: left)?[?.! ]*$|^free (?:disk )?space[?.! ]*$")
_DISK_WORDS = re.compile(r"(?i)\b(disk|storage|space)\b")


def _status_notes(ctx: Context) -> str:
    t = ctx.telemetry
    parts = []
    cpu = t.cpu
    load = f"load {cpu.load_1:.2f}/{cpu.load_5:.2f}/{cpu.load_15:.2f}"
    parts.append(f"CPU: {cpu.model or 'unknown model'}, {cpu.cores_logical} threads, {load}"
                 + (f", {cpu.percent:.0f}% busy" if cpu.percent is not None else "") + ".")
    m = t.memory
    parts.append(f"Memory: {gb(m.used_bytes)} of {gb(m.total_bytes)} used ({m.percent:.0f}%)"
                 + (f"; swap {m.swap_percent:.0f}% used" if m.swap_total_bytes else "") + ".")
    parts.append(_disk_summary(ctx))
    hot = [x for x in t.temperatures if x.celsius >= 80]
    if hot:
        parts.append("Hot sensors: " + ", ".join(f"{x.label} {x.celsius:.0f}°C" for x in hot[:3])
                     + ".")
    parts.append(_failed_summary(ctx))
    if t.errors:
        parts.append(f"({len(t.errors)} telemetry collector(s) failed, so this is partial.)")
    return " ".join(parts)


def _disk_summary(ctx: Context) -> str:
    disks = ctx.telemetry.disks
    if not disks:
        return "Disks: no filesystem information."
    listed = ", ".join(f"{d.mountpoint} {d.percent:.0f}% used ({gb(d.free_bytes)} free)"
                       for d in disks[:6])
    full = [d.mountpoint for d in disks if d.percent >= 90]
    warning = f" Nearly full: {', '.join(full)}." if full else ""
    return f"Disks: {listed}.{warning}"


def _failed_summary(ctx: Context) -> str:
    services = ctx.telemetry.services
    if not services.available:
        return f"Services: unknown ({services.reason or 'systemd not reachable'})."
    if not services.failed:
        return "No failed services."
    names = ", ".join(u.name for u in services.failed[:8])
    more = f" and {len(services.failed) - 8} more" if len(services.failed) > 8 else ""
    return f"Failed services ({len(services.failed)}): {names}{more}."


def system_status(ctx: Context) -> TemplateMatch | None:
    """"How is my system?" → a summary of CPU, memory, disks and failed units; no steps."""
    request = ctx.request
    confident = bool(_STATUS_FULL.match(request))
    if not confident and not _STATUS_WORDS.search(request):
        return None
    builder = PlanBuilder(ctx, "system_status_v1", ["Summarise system health"])
    plan = builder.build("Answered from the daemon's telemetry by an offline template.",
                         _status_notes(ctx))
    return TemplateMatch(builder.template, confident, plan)


def failed_services(ctx: Context) -> TemplateMatch | None:
    """"Show failed services" → the failed units now, from telemetry and a read-only step."""
    confident = bool(_FAILED_FULL.match(ctx.request))
    if not confident and not _FAILED_WORDS.search(ctx.request):
        return None
    builder = PlanBuilder(ctx, "failed_services_v1", ["Show failed services"])
    if not ctx.telemetry.services.available:
        # no systemd to ask: a step would only fail (and offer a fix from a model)
        plan = builder.build("systemd is not reachable here, so there is nothing to list.",
                             _failed_summary(ctx))
        return TemplateMatch(builder.template, confident, plan)
    builder.step("list_failed", "List failed systemd units",
                 "systemctl list-units --failed --no-pager")
    plan = builder.build("Failed units from telemetry; the step shows the live list.",
                         _failed_summary(ctx))
    return TemplateMatch(builder.template, confident, plan)


def disk_usage(ctx: Context) -> TemplateMatch | None:
    """"Disk usage" → filesystems from telemetry and ``df``."""
    confident = bool(_DISK_FULL.match(ctx.request))
    if not confident and not _DISK_WORDS.search(ctx.request):
        return None
    builder = PlanBuilder(ctx, "disk_usage_v1", ["Show disk usage"])
    builder.step("show_df", "Show usage of every real filesystem",
                 "df -h -x tmpfs -x devtmpfs")
    plan = builder.build("Filesystems from telemetry; the step shows live numbers.",
                         _disk_summary(ctx))
    return TemplateMatch(builder.template, confident, plan)
