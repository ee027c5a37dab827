"""Plans for the fleet tests, annotated by Anna's real validation."""

from __future__ import annotations

import json
import re
from typing import Any

from anna_common.findings import AnnotatedPlan
from annactl.commands.playbook import ApprovalRecord, Mode, build
from tests.ui.plans import annotate_dict, plan_dict

__all__ = ["annotate_dict", "approval_for", "command_at", "exported", "load_unsafe",
           "plan_dict", "playbook"]


def approval_for(plan: AnnotatedPlan, *, word: str | None = None) -> ApprovalRecord:
    """The approval ``export`` records for ``plan`` (HIGH when ``word`` is given)."""
    return ApprovalRecord(risk=str(plan.final_risk), confirmations=2 if word else 1,
                          word=word, by="tester", at="2026-11-23T07:00:00+00:00",
                          digest=plan.digest)


def playbook(plan: AnnotatedPlan, mode: Mode, *, plan_id: str = "p-test",
             word: str | None = None) -> str:
    """The exported playbook text."""
    return build(plan, plan_id=plan_id, approval=approval_for(plan, word=word), mode=mode)


class Unsafe(str):
    """A string that carried ``!unsafe``."""


def load_unsafe(text: str) -> Any:
    """The playbook parsed by PyYAML, ``!unsafe`` strings as :class:`Unsafe`."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: Unsafe(loader.construct_scalar(node)))
    return yaml.load(text, Loader=Loader)


def exported(text: str) -> dict[str, Any]:
    """The ``anna_export`` JSON of a playbook, with ``plan`` parsed too (``plan_text``: as
    written)."""
    raw = load_unsafe(text)[0]["vars"]["anna_export"]
    assert isinstance(raw, Unsafe)
    data: dict[str, Any] = json.loads(raw)
    data["plan_text"] = data["plan"]
    data["plan"] = json.loads(data["plan"])
    return data


def command_at(template: str, plan: dict[str, Any]) -> str:
    """The plan command a task's ``{{ anna_plan.KEY[N].command }}`` stands for."""
    found = re.fullmatch(r"\{\{ anna_plan\.(\w+)\[(\d+)\]\.command \}\}", template)
    assert found is not None, template
    return str(plan[found.group(1)][int(found.group(2))]["command"])
