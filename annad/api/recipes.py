"""Routes: run a recipe, list the approval queue, dismiss an entry."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from fastapi import APIRouter, Request

from anna_common.protocol.models import Route
from anna_common.protocol.queue import QueueEntry, QueueList, RecipeRunRequest, RecipeRunResponse
from annad.api.deps import PeerDep

if TYPE_CHECKING:
    from annad.recipes.run import RecipeService

router = APIRouter()

_making = threading.Lock()
"""One RecipeService per app even when the first recipe requests arrive together (its queue's
lock must be the only one)."""


def get_recipes(request: Request) -> RecipeService:
    """The app's one RecipeService, made on the first recipe or queue request.

    Made on first use rather than with the app (issue 22): most daemons never run a recipe,
    and importing annad.recipes costs ~0.6 MB in a bare interpreter, 0.1-0.3 MB of the running
    daemon's idle RSS (bench/daemon_memory.py). The endpoints call this
    instead of declaring it a FastAPI dependency so the type is not needed at import time."""
    state = request.app.state
    with _making:
        recipes: RecipeService | None = getattr(state, "recipes", None)
        if recipes is None:
            from annad.recipes.run import RecipeService

            recipes = RecipeService(state.service)
            state.recipes = recipes
    return recipes


@router.post(Route.RECIPE_RUN)
def run_recipe(request: Request, peer: PeerDep, name: str,
               body: RecipeRunRequest | None = None) -> RecipeRunResponse:
    """Run the recipe unattended, or queue its plan for a person."""
    return get_recipes(request).run(peer, name, body or RecipeRunRequest())


@router.get(Route.QUEUE)
def queue(request: Request, peer: PeerDep) -> QueueList:
    """Plans waiting for approval."""
    return get_recipes(request).waiting(peer)


@router.post(Route.QUEUE_DISMISS)
def dismiss(request: Request, peer: PeerDep, plan_id: str) -> QueueEntry:
    """Drop a plan from the queue (it stays in history)."""
    return get_recipes(request).dismiss(peer, plan_id)
