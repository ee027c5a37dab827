"""Shared parts of the offline templates: the match type, safe values, the plan builder.

Templates build ordinary ActionPlans that go through the same validation as a
model's. Every value taken from the request is checked against a strict
pattern first and, if it passes, quoted with :func:`shlex.quote`; a value
that does not pass makes the template *reject* the request (it never cleans
a value up). Each step's ``risk_level`` is Anna's own assessment of the
command, so a template never under-labels a step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anna_common.plan import (
    ActionPlan,
    CommandStep,
    DetectionResults,
    NecessaryCheck,
    PlanMeta,
    RiskLevel,
    RollbackStep,
)

if TYPE_CHECKING:
    from anna_common.risk.rules.base import AssessContext
    from anna_common.telemetry import Telemetry

GB = 1024**3

PACKAGE_NAME = re.compile(r"^[a-z0-9@_+][a-z0-9@._+-]{0,99}$")
"""pacman's package name rule: lower case, no leading hyphen or dot."""
UNIT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9@._:\\-]{0,150}$")
"""A systemd unit name (no leading hyphen, so it can never read as an option)."""
_PATH_BAD = re.compile(r"[\x00-\x1f\x7f$`\\\"';|&<>*?!{}\[\]]")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".jxl", ".tif", ".tiff",
                  ".avif", ".svg")


@dataclass
class TemplateMatch:
    """A template's answer to a request."""

    template: str
    """Template id (goes into ``meta.template_used``)."""
    confident: bool
    """The request's whole shape matched: answer without asking the model."""
    plan: ActionPlan | None = None
    """The plan, or None when rejected."""
    rejected: str | None = None
    """Why the template refused the request's values."""


@dataclass
class Context:
    """What a template builds from."""

    request: str
    telemetry: Telemetry
    assess_context: AssessContext
    home: str
    recorded: dict[str, str] | None = None
    """A recording template's second round: its checks' outputs (id → output of the checks
    that ran and exited 0); None in the first round."""
    sent: str = ""
    """The user message a model was shown for this request (a family form's values must
    be named there: the request or the telemetry); empty for a template's own match."""


@dataclass
class PlanBuilder:
    """Collects checks, steps and rollbacks; labels each with Anna's own assessment."""

    ctx: Context
    template: str
    goals: list[str]
    checks: list[NecessaryCheck] = field(default_factory=list)
    steps: list[CommandStep] = field(default_factory=list)
    rollback: list[RollbackStep] = field(default_factory=list)

    def risk(self, command: str) -> RiskLevel:
        """Anna's floor for ``command`` on this machine (the assessment is imported here: a
        template that answers without commands never needs it)."""
        from anna_common.risk.assess import assess

        return assess(command, self.ctx.assess_context).risk

    def check(self, check_id: str, description: str, command: str, *,
              required: bool = True) -> None:
        """Add a read-only check (its risk is Anna's assessment; tests require INFO)."""
        self.checks.append(NecessaryCheck(id=check_id, description=description, command=command,
                                          risk_level=self.risk(command), required=required))

    def step(self, step_id: str, description: str, command: str, *,
             undo: tuple[str, str] | None = None) -> None:
        """Add a step, and its rollback command when given as (description, command)."""
        rollback_id = None
        if undo is not None:
            rollback_id = f"undo_{step_id}"
            self.rollback.append(RollbackStep(id=rollback_id, description=undo[0],
                                              command=undo[1]))
        risk = self.risk(command)
        self.steps.append(CommandStep(id=step_id, description=description, command=command,
                                      risk_level=risk, rollback_id=rollback_id,
                                      requires_confirmation=risk > RiskLevel.INFO))

    def build(self, analysis: str, notes: str) -> ActionPlan:
        """The finished plan."""
        return ActionPlan(analysis=analysis, goals=self.goals, necessary_checks=self.checks,
                          command_plan=self.steps, rollback_plan=self.rollback,
                          notes_for_user=notes,
                          meta=PlanMeta(detection_results=detection(self.ctx.telemetry),
                                        template_used=self.template))


def detection(telemetry: Telemetry) -> DetectionResults:
    """``meta.detection_results`` from telemetry."""
    desktop = telemetry.desktop
    backends = list(dict.fromkeys([*desktop.wallpaper_backends_running,
                                   *desktop.wallpaper_backends_installed]))
    return DetectionResults(de=desktop.de, wm=desktop.wm, wallpaper_backends=backends[:10],
                            display_protocol=desktop.display_protocol)


def installed(ctx: Context) -> dict[str, str]:
    """Installed package name → version (empty when telemetry could not read the database:
    then nothing is known to be installed, or missing)."""
    packages = ctx.telemetry.packages
    return {p.name: p.version for p in packages.packages} if packages.available else {}


def safe_path(raw: str, home: str) -> str | None:
    """An absolute path from the request (``~/`` expanded), or None when it looks unsafe."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    if value.startswith("~/"):
        value = home.rstrip("/") + value[1:]
    if not value.startswith("/") or len(value) > 1024 or _PATH_BAD.search(value):
        return None
    if any(part == ".." for part in value.split("/")):
        return None
    return value


def gb(value: int) -> str:
    """Bytes as ``12.3 GB``."""
    return f"{value / GB:.1f} GB"
