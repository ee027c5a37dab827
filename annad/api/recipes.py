"""Routes: run a recipe, list the approval queue, dismiss an entry."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from anna_common.protocol.models import Route
from anna_common.protocol.queue import QueueEntry, QueueList, RecipeRunRequest, RecipeRunResponse
from annad.api.routing import Call, Endpoint

if TYPE_CHECKING:
    from annad.recipes.run import RecipeService

_making = threading.Lock()
"""One RecipeService per app even when the first recipe requests arrive together (its queue's
lock must be the only one)."""


def get_recipes(call: Call) -> RecipeService:
    """The app's one RecipeService, made on the first recipe or queue request.

    Made on first use rather than with the app (issue 22): most daemons never run a recipe,
    and importing annad.recipes costs ~0.6 MB in a bare interpreter, 0.1-0.3 MB of the running
    daemon's idle RSS (bench/daemon_memory.py)."""
    state = call.request.app.state
    with _making:
        recipes: RecipeService | None = getattr(state, "recipes", None)
        if recipes is None:
            from annad.recipes.run import RecipeService

            recipes = RecipeService(state.service)
            state.recipes = recipes
    return recipes


def run_recipe(call: Call) -> RecipeRunResponse:
    """Run the recipe unattended, or queue its plan for a person."""
    return get_recipes(call).run(call.peer, call.param("name"),
                                 call.body_as(RecipeRunRequest) or RecipeRunRequest())


def queue(call: Call) -> QueueList:
    """Plans waiting for approval."""
    return get_recipes(call).waiting(call.peer)


def dismiss(call: Call) -> QueueEntry:
    """Drop a plan from the queue (it stays in history)."""
    return get_recipes(call).dismiss(call.peer, call.param("plan_id"))


ENDPOINTS = (
    Endpoint("POST", Route.RECIPE_RUN, run_recipe, body=RecipeRunRequest),
    Endpoint("GET", Route.QUEUE, queue),
    Endpoint("POST", Route.QUEUE_DISMISS, dismiss),
)
"""This module's routes."""
