"""Service templates (systemd, system scope): restart and enable a unit, enable the firewall.

A template claims confidence only for what it checked: the unit is looked up in the
machine's installed unit files (telemetry's ``services.unit_files``), case included, so
"networkmanager" is ``NetworkManager.service`` and a unit the machine lacks is an answer;
without that list the unit's package is looked up in the telemetry's package list (Arch's
OpenSSH unit is ``sshd.service``, not Debian's ``ssh.service``). A firewall is enabled only
when one is installed, and a unit that telemetry cannot vouch for gets a *required* check
that it exists (``systemctl cat``), so the plan stops there instead of failing half way.
"""

from __future__ import annotations

import re
import shlex

from annactl.planning.templates.base import (
    UNIT_NAME,
    Context,
    PlanBuilder,
    TemplateMatch,
    installed,
)

_SERVICE = re.compile(r"(?i)^(?:please )?(restart|enable|start)(?: the)?(?: service| unit)? "
                      r"(\S+)(?: service| unit| daemon| server)?(?: please)?[.! ]*$")
_FIREWALL = re.compile(r"(?i)^(?:please )?(?:enable|turn on|start|activate)(?: the| my| a)? "
                       r"firewall(?: please)?[.! ]*$")
_SUFFIXES = (".service", ".socket", ".timer", ".path", ".target", ".mount")

KNOWN_UNITS: dict[str, tuple[str, str]] = {
    "ssh": ("sshd.service", "openssh"), "sshd": ("sshd.service", "openssh"),
    "openssh": ("sshd.service", "openssh"), "docker": ("docker.service", "docker"),
    "nginx": ("nginx.service", "nginx"), "apache": ("httpd.service", "apache"),
    "httpd": ("httpd.service", "apache"), "bluetooth": ("bluetooth.service", "bluez"),
    "cups": ("cups.service", "cups"), "printing": ("cups.service", "cups"),
    "networkmanager": ("NetworkManager.service", "networkmanager"),
    "cron": ("cronie.service", "cronie"), "cronie": ("cronie.service", "cronie"),
    "postgresql": ("postgresql.service", "postgresql"),
    "mariadb": ("mariadb.service", "mariadb"), "mysql": ("mariadb.service", "mariadb"),
    "libvirtd": ("libvirtd.service", "libvirt"), "tailscale": ("tailscaled.service", "tailscale"),
    "tailscaled": ("tailscaled.service", "tailscale"), "sddm": ("sddm.service", "sddm"),
    "gdm": ("gdm.service", "gdm"), "ufw": ("ufw.service", "ufw"),
    "firewalld": ("firewalld.service", "firewalld"), "nftables": ("nftables.service", "nftables"),
}
"""A word people use → (the Arch unit, the Arch package that ships it)."""

FIREWALL_TEMPLATE = "firewall_enable_v1"
"""Template id of "enable the firewall"."""
FIREWALLS = (("ufw", "ufw.service"), ("firewalld", "firewalld.service"),
             ("nftables", "nftables.service"), ("iptables", "iptables.service"))
"""Firewall packages in the order one is preferred, with their unit."""


def _unit(raw: str) -> str | None:
    name = raw.strip().strip("'\"")
    if not UNIT_NAME.match(name):
        return None
    return name if name.endswith(_SUFFIXES) else f"{name}.service"


def _known(ctx: Context, word: str) -> tuple[str, str | None, str]:
    """(unit, its package or None, what Anna found) for the word in the request."""
    key = word.lower().removesuffix(".service")
    packages = ctx.telemetry.packages
    if key not in KNOWN_UNITS:
        unit = _unit(word) or ""
        return unit, None, f"telemetry cannot vouch for {unit}: a required check looks it up"
    unit, package = KNOWN_UNITS[key]
    if not packages.available:  # the usual spelling of the unit; the required check decides
        return unit, None, f"telemetry cannot vouch for {unit}: a required check looks it up"
    return unit, package, f"the {unit} unit comes from the {package} package"


def unit_file(ctx: Context, word: str) -> tuple[str | None, list[str]]:
    """The installed unit file ``word`` names, spelled as systemd spells it, and the names
    looked for; (None, []) when telemetry holds no unit list.

    Case counts to systemd: "networkmanager" is ``NetworkManager.service`` on Arch and
    Debian alike, and ``systemctl restart networkmanager.service`` fails. The word as given
    comes first, then the usual Arch spelling."""
    files = ctx.telemetry.services.unit_files
    if not files:
        return None, []
    by_lower = {name.lower(): name for name in files}
    key = word.lower().removesuffix(".service")
    wanted = [_unit(word) or "", f"{key}.service"]
    if key in KNOWN_UNITS:
        wanted.append(KNOWN_UNITS[key][0])
    wanted = [w for w in dict.fromkeys(wanted) if w]
    for name in wanted:
        if name.lower() in by_lower:
            return by_lower[name.lower()], wanted
    return None, wanted


def _failed_note(ctx: Context, unit: str) -> str:
    failed = {u.name for u in ctx.telemetry.services.failed}
    return f" {unit} is in a failed state now." if unit in failed else ""


def _plan(ctx: Context, action: str, unit: str, found: str, *,
          template: str | None = None) -> TemplateMatch:
    quoted = shlex.quote(unit)
    template = template or f"service_{action}_v1"
    builder = PlanBuilder(ctx, template, [f"{action.capitalize()} {unit}"])
    builder.check("unit_exists", f"Verify that {unit} exists", f"systemctl cat {quoted}")
    builder.check("unit_state", f"Show the state of {unit}",
                  f"systemctl status {quoted} --no-pager", required=False)
    if action == "restart":
        builder.step("restart", f"Restart {unit}", f"systemctl restart {quoted}")
        notes = (f"I will restart {unit}. It is briefly unavailable while it restarts; a "
                 "restart has nothing to roll back.")
    elif action == "start":
        builder.step("start", f"Start {unit}", f"systemctl start {quoted}",
                     undo=(f"Stop {unit}", f"systemctl stop {quoted}"))
        notes = f"I will start {unit} (not at boot: say \"enable\" for that)."
    elif template == FIREWALL_TEMPLATE:
        # switching a firewall off is hard-banned, so it has no undo command (Anna never
        # writes one for it; the person turns it off themselves if they must)
        builder.step("enable", f"Enable {unit} at boot and start it now",
                     f"systemctl enable --now {quoted}")
        notes = (f"I will enable {unit} so it starts at boot, and start it now. Anna never "
                 "switches a firewall off, so there is no rollback command for this step.")
    else:
        builder.step("enable", f"Enable {unit} at boot and start it now",
                     f"systemctl enable --now {quoted}",
                     undo=(f"Disable and stop {unit}", f"systemctl disable --now {quoted}"))
        notes = f"I will enable {unit} so it starts at boot, and start it now."
    plan = builder.build(f"A systemd action on {unit} (system scope, runs as root). Found: "
                         f"{found}.{_failed_note(ctx, unit)}", notes + _failed_note(ctx, unit))
    return TemplateMatch(template, True, plan)


def _not_installed(ctx: Context, template: str, goal: str, analysis: str,
                   notes: str) -> TemplateMatch:
    builder = PlanBuilder(ctx, template, [goal])
    return TemplateMatch(template, True, builder.build(analysis, notes))


def service_action(ctx: Context) -> TemplateMatch | None:
    """"restart|start|enable UNIT": the unit checked against telemetry's packages, then one
    systemctl step (start and enable have their undo)."""
    found = _SERVICE.match(ctx.request)
    if found is None or _FIREWALL.match(ctx.request):
        return None
    action = found.group(1).lower()
    template = f"service_{action}_v1"
    if _unit(found.group(2)) is None:
        return TemplateMatch(template, True, rejected=f"{found.group(2)!r} is not a valid unit "
                             "name")
    if found.group(2).lower() in ("failed", "failing", "broken", "crashed"):
        return _the_failed_unit(ctx, action, template)
    real, looked = unit_file(ctx, found.group(2))
    if looked and real is None:
        names = " or ".join(looked)
        return _not_installed(
            ctx, template, f"{action.capitalize()} {found.group(2)}",
            f"No unit file named {names} is installed "
            f"({len(ctx.telemetry.services.unit_files)} unit files listed).",
            f"There is no {names} on this machine, so there is nothing to {action}. Say the "
            "unit's name as `systemctl list-unit-files` prints it, or install the program "
            "that ships it.")
    if real is not None:
        return _plan(ctx, action, real, f"{real} is an installed unit file")
    unit, package, what = _known(ctx, found.group(2))
    if package is not None:
        have = installed(ctx)
        if package not in have:
            return _not_installed(
                ctx, template, f"{action.capitalize()} {unit}",
                f"{unit} comes from the {package} package, which is not installed.",
                f"{package} is not installed, so there is no {unit} to {action}. To install "
                f"it: annactl \"install {package}\".")
        what = f"{what}, installed (version {have[package]})"
    return _plan(ctx, action, unit, what)


def _the_failed_unit(ctx: Context, action: str, template: str) -> TemplateMatch | None:
    """"restart the failed service": the one failed unit telemetry lists; with none or
    several, which one is the person's to say (the model asks, or they name it)."""
    failed = ctx.telemetry.services.failed
    if not ctx.telemetry.services.available or len(failed) != 1 or not UNIT_NAME.match(
            failed[0].name):
        names = ", ".join(u.name for u in failed[:8]) or "none"
        return _not_installed(
            ctx, template, f"{action.capitalize()} a failed unit",
            f"Failed units now: {names}.",
            f"Which unit? Failed units now: {names}. Name the one to {action}.")
    unit = failed[0].name
    return _plan(ctx, action, unit, f"{unit} is the one failed unit telemetry lists")


def enable_firewall(ctx: Context) -> TemplateMatch | None:
    """"enable the firewall": the firewall that is installed, or an answer saying none is."""
    if _FIREWALL.match(ctx.request) is None:
        return None
    files = set(ctx.telemetry.services.unit_files)
    if ctx.telemetry.packages.available:
        have = installed(ctx)
        present = [(package, unit) for package, unit in FIREWALLS if package in have]
    elif files:  # no package list (not Arch): the installed unit files tell
        have = {package: "unit file present" for package, unit in FIREWALLS if unit in files}
        present = [(package, unit) for package, unit in FIREWALLS if unit in files]
    else:
        return None
    if not present:
        names = ", ".join(p for p, _ in FIREWALLS)
        return _not_installed(
            ctx, FIREWALL_TEMPLATE, "Enable the firewall",
            f"No firewall package is installed (looked for {names}).",
            f"No firewall is installed (none of {names}). Install one first, e.g. annactl "
            "\"install ufw\", then ask again; a firewall with no rules of yours may block "
            "services you use.")
    package, unit = present[0]
    found = f"{package} ({have[package]}) is installed"
    if len(present) > 1:
        found += " (also installed: " + ", ".join(p for p, _ in present[1:]) + ")"
    return _plan(ctx, "enable", unit, found, template=FIREWALL_TEMPLATE)
