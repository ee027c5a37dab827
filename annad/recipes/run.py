"""Run a recipe: make its plan, store it like any plan, then run it or queue it.

The plan goes through :meth:`PlanService.submit` (the daemon validates and classifies it
with its own context, exactly as for a model's plan) and, when :func:`gate.decide`
allows, through :meth:`PlanService.execute` with the one confirmation the recipe stands
for: the same snapshots, journal and rollback as any plan. A plan the gate refuses is
stored and queued for a person, and the owner's desktop is told.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from anna_common.protocol.models import ExecuteRequest, PlanList, PlanStatus
from anna_common.protocol.queue import (
    QueueEntry,
    QueueList,
    RecipeRunRequest,
    RecipeRunResponse,
)
from anna_common.risk import tiers
from annad.recipes import gate, model, notify
from annad.recipes.queue import Queue

if TYPE_CHECKING:
    from annad.peer import Peer
    from annad.service import PlanService

log = logging.getLogger(__name__)
ROLLBACKABLE = frozenset({PlanStatus.SUCCEEDED, PlanStatus.INTERRUPTED,
                          PlanStatus.ROLLBACK_FAILED, PlanStatus.ROLLBACK_INCOMPLETE})
"""States a later rollback starts from (``PlanService`` state machine)."""
# an undo an agent asked for (annad.recipes.agent_plans) waits while there is one to do
_WAITS = {"plan": frozenset({PlanStatus.SUBMITTED}), "rollback": ROLLBACKABLE}
"""The plan states in which a queue entry of each kind is still waiting."""


class RecipeService:
    """Recipes and the queue, on top of the daemon's one :class:`PlanService`."""

    def __init__(self, plans: PlanService) -> None:
        self.plans = plans
        self.settings = plans.settings
        self.queue = Queue(self.settings.state_path / "queue")

    def run(self, peer: Peer | None, name: str, request: RecipeRunRequest) -> RecipeRunResponse:
        """``POST /v1/recipes/{name}/run``."""
        self.plans.authorise(peer)
        recipe = model.load(self.settings.recipes_dir, name)
        submitted = self.plans.submit(peer, {"plan": recipe.plan(request.params),
                                             "request": f"recipe {name}",
                                             "source": "template"})
        annotated = submitted.annotated
        risk = tiers.plan_risk(annotated)
        allowed, reasons = gate.decide(annotated)
        journal = self.plans.journal
        if allowed:
            journal.event("recipe_run", submitted.plan_id, recipe=name, trigger=request.trigger,
                          risk=str(risk))
            execute = ExecuteRequest(digest=submitted.digest, confirmed=True)
            for _line in self.plans.execute(peer, submitted.plan_id, execute):
                pass  # the events are journalled by the run itself
            status = self.plans.get(peer, submitted.plan_id).status
            return RecipeRunResponse(recipe=name, plan_id=submitted.plan_id, outcome="ran",
                                     status=status, risk=risk)
        same = self._same_waiting(peer, name, submitted.digest)
        if same is not None:
            return self._requeued(same, submitted.plan_id, reasons, request.trigger)
        goal = annotated.plan.goals[0] if annotated.plan.goals else name
        entry = QueueEntry(plan_id=submitted.plan_id, recipe=name, goal=goal, risk=risk,
                           reasons=reasons, queued_at=time.time())
        self.queue.put(entry)
        journal.event("recipe_queued", submitted.plan_id, recipe=name, trigger=request.trigger,
                      risk=str(risk), reasons=reasons)
        sent = notify.notify(self.settings, user_mode=self.plans.user_mode,
                             summary="Anna: a plan waits for you",
                             body=f"Recipe {name} made a {risk} plan that needs your "
                             "approval: annactl queue")
        return RecipeRunResponse(recipe=name, plan_id=submitted.plan_id, outcome="queued",
                                 status=PlanStatus.SUBMITTED, risk=risk, reasons=reasons,
                                 notified=sent)

    def _same_waiting(self, peer: Peer | None, name: str, digest: str) -> QueueEntry | None:
        """A waiting entry of this recipe whose plan is identical (the same digest)."""
        for entry in self.waiting(peer).entries:
            if entry.recipe == name and self.plans.get(peer, entry.plan_id).digest == digest:
                return entry
        return None

    def _requeued(self, entry: QueueEntry, duplicate: str, reasons: list[str],
                  trigger: str) -> RecipeRunResponse:
        """The identical plan already waits: refresh its entry, and record the new copy as
        never run, so the queue holds one entry per decision and no one is notified twice."""
        refreshed = entry.model_copy(update={"queued_at": time.time(), "reasons": reasons})
        self.queue.put(refreshed)
        self.plans.journal.mark_unrun(duplicate, PlanStatus.DRY_RUN)
        self.plans.journal.event("recipe_requeued", entry.plan_id, recipe=entry.recipe,
                                 trigger=trigger, duplicate=duplicate)
        return RecipeRunResponse(recipe=entry.recipe, plan_id=entry.plan_id, outcome="queued",
                                 status=PlanStatus.SUBMITTED, risk=entry.risk, reasons=reasons,
                                 notified=False)

    def waiting(self, peer: Peer | None) -> QueueList:
        """``GET /v1/queue``: the caller's waiting plans (root: everyone's)."""
        self.plans.authorise(peer)
        listed = self.plans.list(peer)  # a page of 200: never the streamed long list
        visible = {p.plan_id: p for p in listed.plans} if isinstance(listed, PlanList) else {}
        entries = [e for e in self.queue.entries() if e.state == "waiting"
                   and e.plan_id in visible
                   and visible[e.plan_id].status in _WAITS[e.kind]]
        return QueueList(entries=entries)

    def dismiss(self, peer: Peer | None, plan_id: str) -> QueueEntry:
        """``POST /v1/queue/{id}/dismiss``: the plan stays in history, never runs from here."""
        self.plans.get(peer, plan_id)  # the caller's own plan (root: anyone's), else not found
        entry = self.queue.dismiss(plan_id)
        self.plans.journal.event("queue_dismissed", plan_id, recipe=entry.recipe,
                                 **({"agent": entry.agent, "entry": entry.kind}
                                    if entry.agent else {}))
        return entry
