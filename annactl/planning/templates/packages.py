"""Package templates (pacman): install, remove, clean the package cache."""

from __future__ import annotations

import re
import shlex

from annactl.planning.templates.base import (
    PACKAGE_NAME,
    Context,
    PlanBuilder,
    TemplateMatch,
    installed,
    is_arch,
)

_INSTALL = re.compile(r"(?i)^(?:please )?(?:install|add)(?: the)?(?: package)? (\S+)(?: package)?"
                      r"(?: please)?[.! ]*$")
_REMOVE = re.compile(r"(?i)^(?:please )?(?:remove|uninstall)(?: the)?(?: package)? (\S+)"
                     r"(?: package)?(?: please)?[.! ]*$")
_CLEAN = re.compile(r"(?i)^(?:please )?(?:clean|clear|prune|empty)(?: up)?(?: the| my)?"
                    r"(?: pacman| package)*(?: pacman)? cache[.! ]*$")


def _name(raw: str) -> str | None:
    name = raw.strip().strip("'\"").lower()
    return name if PACKAGE_NAME.match(name) else None


def install_package(ctx: Context) -> TemplateMatch | None:
    """"install NAME" → pacman -S, with pacman -Rns as its rollback."""
    found = _INSTALL.match(ctx.request)
    if found is None or not is_arch(ctx):
        return None
    template = "package_install_v1"
    name = _name(found.group(1))
    if name is None:
        return TemplateMatch(template, True, rejected=f"{found.group(1)!r} is not a valid "
                             "package name")
    quoted = shlex.quote(name)
    builder = PlanBuilder(ctx, template, [f"Install {name}"])
    have = installed(ctx)
    if name in have:
        plan = builder.build(f"{name} is already installed (version {have[name]}).",
                             f"{name} is already installed; nothing to do.")
        return TemplateMatch(template, True, plan)
    builder.check("check_repo", f"Verify {name} is in the package repositories",
                  f"pacman -Si {quoted}")
    builder.step("install", f"Install {name} with pacman",
                 f"pacman -S --needed --noconfirm {quoted}",
                 undo=(f"Remove {name} and the dependencies it pulled in",
                       f"pacman -Rns --noconfirm {quoted}"))
    plan = builder.build(f"{name} is not installed; pacman installs it from the repositories.",
                         f"I will install {name} with pacman. Risk: MEDIUM (a package change; "
                         "the rollback removes it again).")
    return TemplateMatch(template, True, plan)


def remove_package(ctx: Context) -> TemplateMatch | None:
    """"remove NAME" → pacman -Rs (configs kept as .pacsave), reinstall as rollback."""
    found = _REMOVE.match(ctx.request)
    if found is None or not is_arch(ctx):
        return None
    template = "package_remove_v1"
    name = _name(found.group(1))
    if name is None:
        return TemplateMatch(template, True, rejected=f"{found.group(1)!r} is not a valid "
                             "package name")
    builder = PlanBuilder(ctx, template, [f"Remove {name}"])
    if name not in installed(ctx):
        plan = builder.build(f"{name} is not installed.", f"{name} is not installed; nothing "
                             "to remove.")
        return TemplateMatch(template, True, plan)
    quoted = shlex.quote(name)
    builder.check("check_dependents", f"See which installed packages need {name}",
                  f"pacman -Qi {quoted}")
    builder.step("remove", f"Remove {name} and dependencies nothing else needs",
                 f"pacman -Rs --noconfirm {quoted}",
                 undo=(f"Install {name} again", f"pacman -S --needed --noconfirm {quoted}"))
    plan = builder.build(f"{name} is installed; pacman removes it (its changed configuration "
                         "files are kept as .pacsave).",
                         f"I will remove {name} with pacman. Risk: MEDIUM (the rollback "
                         "installs the current repository version again).")
    return TemplateMatch(template, True, plan)


def clean_cache(ctx: Context) -> TemplateMatch | None:
    """"clean the package cache" → paccache keeping two versions of each package."""
    if _CLEAN.match(ctx.request) is None or not is_arch(ctx):
        return None
    if "pacman-contrib" not in installed(ctx):
        return None  # paccache comes from pacman-contrib; let the model plan otherwise
    builder = PlanBuilder(ctx, "package_cache_clean_v1", ["Clean the pacman package cache"])
    builder.check("cache_size", "Measure the package cache", "du -sh /var/cache/pacman/pkg")
    builder.check("dry_run", "List what paccache would remove", "paccache -dk2")
    builder.step("clean", "Remove cached package files, keeping the two newest versions",
                 "paccache -rk2")
    plan = builder.build("pacman keeps every downloaded package; paccache removes all but the "
                         "two newest versions of each.",
                         "I will clean the pacman cache with paccache, keeping two versions of "
                         "each package so a downgrade stays possible. Removed files cannot be "
                         "restored by Anna, but pacman can download them again.")
    return TemplateMatch(builder.template, True, plan)
