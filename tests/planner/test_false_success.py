"""False "it worked" evaluations: a plan that failed or was rolled back, summarised as done.

Twenty summaries a small model writes for a failed copy (the journal says copy exited 1,
and for ``rolled_back`` that mark's change was undone), each claiming, in its own words,
that the work is done or the result is in place. Each must be flagged as contradicting the
journal; honest summaries of the same runs, and true summaries of a run that succeeded,
must not be. ``test_figure`` prints the count (the closing note's measurement).
"""

from __future__ import annotations

import pytest

from annactl.planning.evalclaims import check_evaluation
from tests.planner.test_evalclaims import _evaluation, _record

FALSE_SUCCESS = [
    ("failed", "Done! The file has been copied."),
    ("failed", "The file is now in place at /tmp/anna-ec/y."),
    ("rolled_back", "Everything went fine."),
    ("failed", "Success: the file was copied."),
    ("rolled_back", "The copy is complete and ready to use."),
    ("failed", "I have copied the file for you."),
    ("rolled_back", "All good, the changes are in place."),
    ("failed", "Task completed."),
    ("rolled_back", "Completed without issues."),
    ("failed", "Your request has been fulfilled."),
    ("rolled_back", "The file was copied to /tmp/anna-ec/y"),
    ("failed", "Changes applied."),
    ("rolled_back", "No problems were encountered."),
    ("failed", "It worked."),
    ("rolled_back", "The operation finished as expected."),
    ("failed", "Everything is set up."),
    ("rolled_back", "The goal was achieved."),
    ("failed", "Copying the file: done."),
    ("rolled_back", "The file has been successfully duplicated"),
    ("failed", "Finished. y now contains the copied data."),
]
"""(status, summary): the plan did not succeed; the summary says it did."""

HONEST = [
    ("failed", "The copy failed: the source file does not exist."),
    ("rolled_back", "The copy failed, so mark's change was rolled back."),
    ("failed", "mark ran successfully, but copy failed with exit code 1"),
    ("rolled_back", "Nothing remains of the plan: its changes were undone."),
    ("failed", "The plan completed with errors"),
    ("failed", "The file could not be copied."),
    ("rolled_back", "The file was not copied; the note was restored."),
    ("failed", "Copying did not work because /tmp/anna-ec/x is missing."),
    ("rolled_back", "The operation was attempted and then reverted."),
    ("failed", "The plan was executed but the copy step failed."),
    ("succeeded", "Done! The file has been copied."),
    ("succeeded", "Everything went fine and the copy is in place."),
    ("succeeded", "Task completed without issues."),
]
"""(status, summary) that agree with the journal."""


@pytest.mark.parametrize(("status", "summary"), FALSE_SUCCESS)
def test_a_false_it_worked_is_flagged(status: str, summary: str) -> None:
    found = check_evaluation(_evaluation(summary), _record(status))
    assert [c.fact for c in found] == ["succeeded"], (summary, found)


@pytest.mark.parametrize(("status", "summary"), HONEST)
def test_an_honest_summary_is_not_flagged(status: str, summary: str) -> None:
    assert check_evaluation(_evaluation(summary), _record(status)) == []


def test_figure() -> None:
    flagged = sum(bool(check_evaluation(_evaluation(s), _record(st))) for st, s in FALSE_SUCCESS)
    print(f"false 'it worked' summaries flagged: {flagged} of {len(FALSE_SUCCESS)}")
    assert flagged == len(FALSE_SUCCESS)
