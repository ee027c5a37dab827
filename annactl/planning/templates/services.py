"""Service templates (systemd, system scope): restart and enable a unit."""

from __future__ import annotations

import re
import shlex

from annactl.planning.templates.base import UNIT_NAME, Context, PlanBuilder, TemplateMatch

_SERVICE = re.compile(r"(?i)^(?:please )?(restart|enable)(?: the)?(?: service| unit)? (\S+)"
                      r"(?: service| unit| daemon)?(?: please)?[.! ]*$")
_SUFFIXES = (".service", ".socket", ".timer", ".path", ".target", ".mount")


def _unit(raw: str) -> str | None:
    name = raw.strip().strip("'\"")
    if not UNIT_NAME.match(name):
        return None
    return name if name.endswith(_SUFFIXES) else f"{name}.service"


def service_action(ctx: Context) -> TemplateMatch | None:
    """"restart UNIT" or "enable UNIT": one systemctl step; enable has disable as rollback."""
    found = _SERVICE.match(ctx.request)
    if found is None:
        return None
    action = found.group(1)
    template = f"service_{action}_v1"
    unit = _unit(found.group(2))
    if unit is None:
        return TemplateMatch(template, True, rejected=f"{found.group(2)!r} is not a valid unit "
                             "name")
    quoted = shlex.quote(unit)
    builder = PlanBuilder(ctx, template, [f"{action.capitalize()} {unit}"])
    builder.check("unit_state", f"Show the state of {unit}",
                  f"systemctl status {quoted} --no-pager", required=False)
    if action == "restart":
        builder.step("restart", f"Restart {unit}", f"systemctl restart {quoted}")
        notes = (f"I will restart {unit}. It is briefly unavailable while it restarts; a "
                 "restart has nothing to roll back.")
    else:
        builder.step("enable", f"Enable {unit} at boot and start it now",
                     f"systemctl enable --now {quoted}",
                     undo=(f"Disable and stop {unit}", f"systemctl disable --now {quoted}"))
        notes = f"I will enable {unit} so it starts at boot, and start it now."
    plan = builder.build(f"A systemd action on {unit} (system scope, runs as root).", notes)
    return TemplateMatch(template, True, plan)
