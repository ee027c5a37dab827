"""The queue takes the ids ``history`` prints: an unambiguous start or end of a plan id;
ambiguous pieces are a coded error listing the candidates; the table never wraps an id;
running a recipe whose identical plan already waits refreshes that entry."""

from __future__ import annotations

from tests.recipes.test_recipes_daemon import MEDIUM

from .conftest import RecipeSite


def test_short_ids_prefixes_duplicates_and_ambiguity(site: RecipeSite) -> None:
    (site.work / "old").mkdir()
    site.recipe("clear", MEDIUM.replace("{work}", str(site.work)))
    rc, first = site.json("recipe", "run", "clear")
    assert rc == 0 and first["outcome"] == "queued", first
    # the same recipe, the same plan: the waiting entry is refreshed, not doubled
    rc, again = site.json("recipe", "run", "clear")
    assert rc == 0 and again["plan_id"] == first["plan_id"] and again["notified"] == 0
    rc, queue = site.json("queue")
    assert [e["plan_id"] for e in queue["entries"]] == [first["plan_id"]]
    plan_id = first["plan_id"]
    # the table prints the short id history prints, on one line, even at 60 columns
    table = site.annactl("queue", env={"COLUMNS": "60"}).stdout
    assert plan_id[-6:] in table and plan_id not in table
    # a second, different plan waits too (another recipe)
    (site.work / "older").mkdir()
    site.recipe("clear2", MEDIUM.replace("{work}", str(site.work)).replace("/old", "/older"))
    rc, second = site.json("recipe", "run", "clear2")
    assert second["plan_id"] != plan_id
    # both ids start with the date: a prefix that both share is ambiguous, coded, listed
    common = plan_id[:4]
    assert second["plan_id"].startswith(common)
    rc, error = site.json("queue", "show", common)
    assert rc == 2 and error["code"] == "PLAN_NOT_FOUND", error
    assert set(error["detail"]["candidates"]) == {plan_id, second["plan_id"]}
    # history's short id (the end) and an unambiguous start both work
    rc, shown = site.json("queue", "show", plan_id[-6:])
    assert rc == 0 and shown["plan_id"] == plan_id
    rc, ran = site.json("queue", "approve", plan_id[-6:], "--yes")
    assert rc == 0 and ran["status"] == "succeeded" and not (site.work / "old").exists()
    rc, dismissed = site.json("queue", "dismiss", second["plan_id"][-6:])
    assert rc == 0 and dismissed["state"] == "dismissed"
