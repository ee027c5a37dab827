""""What is using my memory/CPU?": the top processes from telemetry; no command runs."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from annactl.planning.templates.base import Context, PlanBuilder, TemplateMatch, gb

if TYPE_CHECKING:
    from anna_common.telemetry import ProcessInfo

_TOP = re.compile(
    r"(?i)^(?:what(?:'s| is)|which (?:process(?:es)?|programs?|apps?) (?:is|are)) "
    r"(?:using|eating|hogging|taking(?: up)?|consuming) (?:all |so much |the most |most )?"
    r"(?:of )?(?:my |the )?(memory|ram|cpu|processor)(?: usage)?[?.! ]*$"
    r"|^(?:what|which (?:process(?:es)?|programs?|apps?)) (?:uses|eats|hogs|takes(?: up)?|"
    r"consumes) (?:all |so much |the most |most )?"
    r"(?:of )?(?:my |the )?(memory|ram|cpu|processor)(?: usage)?[?.! ]*$"
    r"|^(?:show |list )?(?:the )?(?:top|biggest|heaviest) (?:processes|programs)"
    r"(?: by (memory|ram|cpu))?[?.! ]*$"
    r"|^(?:why is )?(?:my )?(memory|ram|cpu) (?:usage )?(?:so )?(?:high|full)[?.! ]*$")
_TOP_WORDS = re.compile(r"(?i)\b(memory|ram|cpu)\b.*\b(using|usage|hog|eat)|\btop processes\b"
                        r"|\b(us(es|ing)|eat(s|ing)|hog(s|ging))\b.*\b(memory|ram|cpu)\b")
SHOWN = 5
"""Processes listed."""


def _line(proc: ProcessInfo) -> str:
    rss = f", {gb(proc.rss_bytes)}" if proc.rss_bytes else ""
    return (f"{proc.name} (pid {proc.pid}, {proc.user or 'unknown user'}): "
            f"{proc.memory_percent:.1f}% memory{rss}, {proc.cpu_percent:.1f}% CPU")


def top_processes(ctx: Context) -> TemplateMatch | None:
    """The processes using the most memory or CPU, as telemetry sampled them."""
    found = _TOP.match(ctx.request)
    if found is None and not _TOP_WORDS.search(ctx.request):
        return None
    word = next((g for g in (found.groups() if found else ()) if g), None) or \
        ("cpu" if "cpu" in ctx.request.lower() else "memory")
    by_cpu = word.lower() in ("cpu", "processor")
    t = ctx.telemetry
    procs = t.processes.top_cpu if by_cpu else t.processes.top_memory
    what = "CPU" if by_cpu else "memory"
    builder = PlanBuilder(ctx, "top_processes_v1", [f"Show what uses the most {what}"])
    if not procs:
        notes = (f"Telemetry has no process list ({t.processes.count} processes counted), so "
                 f"I cannot say what uses the {what}.")
    else:
        head = (f"Memory: {gb(t.memory.used_bytes)} of {gb(t.memory.total_bytes)} used "
                f"({t.memory.percent:.0f}%)." if not by_cpu else
                f"CPU: load {t.cpu.load_1:.2f} on {t.cpu.cores_logical} threads.")
        lines = "; ".join(f"{n}. {_line(p)}" for n, p in enumerate(procs[:SHOWN], start=1))
        notes = (f"{head} The top {min(SHOWN, len(procs))} of {t.processes.count} processes "
                 f"by {what}: {lines}. (A snapshot from telemetry; `top` shows it live.)")
    plan = builder.build(f"Processes by {what} from the daemon's telemetry; nothing to run.",
                         notes)
    return TemplateMatch(builder.template, found is not None, plan)
