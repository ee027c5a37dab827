"""Package templates for every supported family (pacman, apt, dnf, zypper): install,
remove, clean the download cache, upgrade the system.

On Arch the telemetry lists the installed packages, so "already installed" and "not
installed" are answers; elsewhere a required read-only check (``dpkg -s``, ``rpm -q``, a
simulated install) finds that out and the plan stops there before any change.
"""

from __future__ import annotations

import re
import shlex

from annactl.planning.templates.base import (
    PACKAGE_NAME,
    Context,
    PlanBuilder,
    TemplateMatch,
    installed,
)
from annactl.planning.templates.managers import Manager, knows_installed, manager

_INSTALL = re.compile(r"(?i)^(?:please )?(?:install|add)(?: the)?(?: package)? (\S+)(?: package)?"
                      r"(?: please)?[.! ]*$")
_REMOVE = re.compile(r"(?i)^(?:please )?(?:remove|uninstall)(?: the)?(?: package)? (\S+)"
                     r"(?: package)?(?: please)?[.! ]*$")
_CLEAN = re.compile(r"(?i)^(?:please )?(?:clean|clear|prune|empty)(?: up)?(?: the| my)?"
                    r"(?: pacman| apt| dnf| zypper| package)*(?: pacman)? cache[.! ]*$")
_UPGRADE = re.compile(r"(?i)^(?:please )?(?:update|upgrade)(?: all)?(?: my| the| this)?"
                      r"(?: system| computer| machine| packages| everything| all packages)?"
                      r"(?: please)?[.! ]*$")


def _name(raw: str) -> str | None:
    name = raw.strip().strip("'\"").lower()
    return name if PACKAGE_NAME.match(name) else None


def _cmd(pattern: str, name: str = "") -> str:
    return pattern.replace("{}", shlex.quote(name)) if name else pattern


def install_package(ctx: Context) -> TemplateMatch | None:
    """"install NAME" → the family's install, with its removal as the rollback."""
    found = _INSTALL.match(ctx.request)
    tool = manager(ctx)
    if found is None or tool is None:
        return None
    template = "package_install_v1"
    name = _name(found.group(1))
    if name is None:
        return TemplateMatch(template, True, rejected=f"{found.group(1)!r} is not a valid "
                             "package name")
    builder = PlanBuilder(ctx, template, [f"Install {name}"])
    have = installed(ctx)
    if name in have:
        plan = builder.build(f"{name} is already installed (version {have[name]}).",
                             f"{name} is already installed; nothing to do.")
        return TemplateMatch(template, True, plan)
    builder.check("check_repo", f"Verify {name} is in the package repositories",
                  _cmd(tool.in_repos, name))
    undo = _cmd(tool.remove, name)
    if tool.name == "pacman":
        undo = _cmd("pacman -Rns --noconfirm {}", name)  # also the dependencies it pulled in
    builder.step("install", f"Install {name} with {tool.name}", _cmd(tool.install, name),
                 undo=(f"Remove {name} again", undo))
    known = "is not installed" if knows_installed(ctx) else "is installed unless the check "\
        "shows it already is"
    plan = builder.build(f"{name} {known}; {tool.name} installs it from the repositories.",
                         f"I will install {name} with {tool.name} once the check finds it in "
                         "the repositories. Risk: MEDIUM (a package change; the rollback "
                         "removes it again).")
    return TemplateMatch(template, True, plan)


def remove_package(ctx: Context) -> TemplateMatch | None:
    """"remove NAME" → the family's removal, reinstalling as the rollback."""
    found = _REMOVE.match(ctx.request)
    tool = manager(ctx)
    if found is None or tool is None:
        return None
    template = "package_remove_v1"
    name = _name(found.group(1))
    if name is None:
        return TemplateMatch(template, True, rejected=f"{found.group(1)!r} is not a valid "
                             "package name")
    builder = PlanBuilder(ctx, template, [f"Remove {name}"])
    if knows_installed(ctx) and name not in installed(ctx):
        plan = builder.build(f"{name} is not installed.", f"{name} is not installed; nothing "
                             "to remove.")
        return TemplateMatch(template, True, plan)
    builder.check("check_dependents" if tool.name == "pacman" else "check_installed",
                  f"Verify {name} is installed and see what needs it",
                  _cmd(tool.is_installed, name))
    builder.step("remove", f"Remove {name} and dependencies nothing else needs",
                 _cmd(tool.remove, name),
                 undo=(f"Install {name} again", _cmd(tool.install, name)))
    kept = " (its changed configuration files are kept as .pacsave)" if tool.name == "pacman" \
        else " (its configuration files are kept)"
    plan = builder.build(f"{name} is installed; {tool.name} removes it{kept}.",
                         f"I will remove {name} with {tool.name}. Risk: MEDIUM (the rollback "
                         "installs the current repository version again).")
    return TemplateMatch(template, True, plan)


def _clean_plan(ctx: Context, tool: Manager) -> TemplateMatch:
    builder = PlanBuilder(ctx, "package_cache_clean_v1",
                          [f"Clean the {tool.name} package cache"])
    builder.check("cache_size", "Measure the package cache", tool.cache_size)
    if tool.name == "pacman":
        builder.check("dry_run", "List what paccache would remove", "paccache -dk2")
        builder.step("clean", "Remove cached package files, keeping the two newest versions",
                     "paccache -rk2")
        return TemplateMatch(builder.template, True, builder.build(
            "pacman keeps every downloaded package; paccache removes all but the two newest "
            "versions of each.",
            "I will clean the pacman cache with paccache, keeping two versions of each package "
            "so a downgrade stays possible. Removed files cannot be restored by Anna, but "
            "pacman can download them again."))
    assert tool.clean is not None
    builder.step("clean", "Remove the downloaded package files", tool.clean)
    return TemplateMatch(builder.template, True, builder.build(
        f"{tool.name} keeps downloaded package files after installing them; they are not "
        "needed again.",
        f"I will empty the {tool.name} download cache ({tool.clean}); the check measures it "
        f"first. Removed files cannot be restored by Anna, but {tool.name} downloads them "
        "again when needed."))


def clean_cache(ctx: Context) -> TemplateMatch | None:
    """"clean the package cache" → paccache keeping two versions (Arch), or the family's
    own cache cleaning."""
    tool = manager(ctx)
    if _CLEAN.match(ctx.request) is None or tool is None or tool.clean is None:
        return None
    if tool.name == "pacman" and "pacman-contrib" not in installed(ctx):
        return None  # paccache comes from pacman-contrib; let the model plan otherwise
    return _clean_plan(ctx, tool)


def upgrade_system(ctx: Context) -> TemplateMatch | None:
    """"update my system" → the family's full upgrade (no rollback: Anna says so)."""
    tool = manager(ctx)
    if _UPGRADE.match(ctx.request) is None or tool is None:
        return None
    builder = PlanBuilder(ctx, "system_upgrade_v1", ["Upgrade every installed package"])
    if tool.upgrade_check:
        builder.check("pending", "List the packages an upgrade would change",
                      tool.upgrade_check, required=False)
    for number, command in enumerate(tool.upgrade, start=1):
        builder.step(f"upgrade_{number}", f"Run {command}", command)
    plan = builder.build(
        f"A full upgrade with {tool.name} (system scope, runs as root).",
        f"I will upgrade every package with {tool.name}. Anna cannot roll an upgrade back: "
        "old versions are not kept for it. A new kernel or core library takes effect after "
        "a reboot.")
    return TemplateMatch(builder.template, True, plan)
