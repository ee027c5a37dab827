"""Routes: run a recipe, list the approval queue, dismiss an entry."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from anna_common.protocol.models import Route
from anna_common.protocol.queue import QueueEntry, QueueList, RecipeRunRequest, RecipeRunResponse
from annad.api.deps import PeerDep
from annad.recipes.run import RecipeService

router = APIRouter()


def get_recipes(request: Request) -> RecipeService:
    """The app's one RecipeService (made with the app, around its PlanService)."""
    recipes: RecipeService = request.app.state.recipes
    return recipes


RecipesDep = Annotated[RecipeService, Depends(get_recipes)]


@router.post(Route.RECIPE_RUN)
def run_recipe(recipes: RecipesDep, peer: PeerDep, name: str,
               body: RecipeRunRequest | None = None) -> RecipeRunResponse:
    """Run the recipe unattended, or queue its plan for a person."""
    return recipes.run(peer, name, body or RecipeRunRequest())


@router.get(Route.QUEUE)
def queue(recipes: RecipesDep, peer: PeerDep) -> QueueList:
    """Plans waiting for approval."""
    return recipes.waiting(peer)


@router.post(Route.QUEUE_DISMISS)
def dismiss(recipes: RecipesDep, peer: PeerDep, plan_id: str) -> QueueEntry:
    """Drop a plan from the queue (it stays in history)."""
    return recipes.dismiss(peer, plan_id)
