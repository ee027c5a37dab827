"""What a person approves is an effect: only the effect the preview showed may land.

A root daemon in a private mount namespace with a decoy /etc (tests/decoyns.py, as in
tests/daemon/test_observe_writers.py). Each test submits a plan, reads the preview the
person would see, changes the world the way an attacker could between preview and
execution (a file's content, a name read at run time, a directory swapped for a link),
executes, and checks that an observed change the preview did not show is refused before
anything landed — and that the same effect as shown lands.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from anna_common.plan import ActionPlan, RiskLevel
from anna_common.protocol.models import ExecEvent
from anna_common.protocol.preview import FileChange
from anna_common.risk import tiers
from annactl.core.daemon_client import DaemonClient
from tests.daemonfix import (
    IS_ROOT,
    RunningDaemon,
    decoy_etc_daemon,
    layers_left,
    make_plan,
    stop_and_remove,
)
from tests.treeprint import fingerprint

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="captured steps need a root daemon")


@pytest.fixture(scope="module")
def decoy() -> Iterator[RunningDaemon]:
    """A system daemon whose /etc is a copy (the real one is out of its reach)."""
    daemon = decoy_etc_daemon()
    try:
        yield daemon.start()
    finally:
        stop_and_remove(daemon)


def case_dir(daemon: RunningDaemon, name: str) -> Path:
    """A fresh directory for one case, in the daemon's temporary tree."""
    top = daemon.base / "vp" / name
    top.mkdir(parents=True)
    return top


class Submitted:
    """A plan submitted (and so previewed), not yet executed."""

    def __init__(self, client: DaemonClient, command: str) -> None:
        self.client = client
        self.response = client.submit(ActionPlan.model_validate(make_plan([
            ("s", command, "LOW")])))
        self.preview = client.preview(self.response.plan_id)

    def shown(self) -> dict[str, FileChange]:
        """What the preview showed the step change, by path."""
        assert self.preview.steps[0].reason is None, self.preview.steps[0]
        return {f.path: f for f in self.preview.steps[0].files}

    def execute(self) -> ExecEvent:
        """Run it; the step's last event."""
        high = self.response.annotated.final_risk == RiskLevel.HIGH
        events = list(self.client.execute(
            self.response.plan_id, self.response.digest, confirmed=True, high_confirmed=high,
            confirm_word=tiers.plan_word(self.response.annotated) if high else None))
        return [e for e in events if e.type == "step_finished"][-1]


def refused(finished: ExecEvent, *words: str) -> None:
    assert finished.status == "failed", finished
    assert finished.code == "OBSERVED_CHANGE_REFUSED", finished.message
    for word in words:
        assert word in (finished.message or ""), finished.message


def test_the_same_effect_as_shown_lands(decoy: RunningDaemon) -> None:
    top = case_dir(decoy, "same")
    plan = Submitted(decoy.client(), f"printf 'hello\\n' > {top}/out && mkdir {top}/d")
    shown = plan.shown()
    assert set(shown) == {str(top / "out"), str(top / "d")}
    assert shown[str(top / "out")].sha256 is not None and not shown[str(top / "out")].varying
    finished = plan.execute()
    assert finished.status == "succeeded", finished.message
    assert (top / "out").read_text() == "hello\n" and (top / "d").is_dir()


def test_a_path_the_preview_did_not_show_is_refused(decoy: RunningDaemon) -> None:
    """The name is read at run time; it changed after the preview: the step now writes a
    path nobody saw. Refused, nothing landed, the message names the path, never the content."""
    top = case_dir(decoy, "unshown")
    (top / "name").write_text("a\n")
    plan = Submitted(decoy.client(), f"echo data > {top}/$(cat {top}/name)")
    assert list(plan.shown()) == [str(top / "a")]
    (top / "name").write_text("b\n")
    before = fingerprint(top)
    finished = plan.execute()
    refused(finished, f"{top}/b", "the preview did not show a change there",
            "observed 5 bytes; the content is not shown")
    assert "data" not in (finished.message or "").replace(str(top), "")
    assert fingerprint(top) == before
    assert not layers_left(decoy.state)


def test_a_name_chosen_at_run_time_lands_as_the_entry_shown(decoy: RunningDaemon) -> None:
    """The seed's backup, ``cp f f.bak-$(date +%s)``: a person approves seconds after the
    preview, so the name differs in its digits. The same entry (same directory, kind,
    content, mode, owner) under that name lands; one entry shown stands for one only, and
    content other than shown is still refused."""
    top = case_dir(decoy, "stamped")
    (top / "src").write_text("conf\n")
    (top / "n").write_text("1795762075\n")
    plan = Submitted(decoy.client(), f"cp {top}/src {top}/src.bak-$(cat {top}/n)")
    assert list(plan.shown()) == [str(top / "src.bak-1795762075")]
    (top / "n").write_text("1795762080\n")
    finished = plan.execute()
    assert finished.status == "succeeded", finished.message
    assert (top / "src.bak-1795762080").read_text() == "conf\n"
    assert not (top / "src.bak-1795762075").exists()
    # two entries renamed at run time: each stands for its own shown entry
    (top / "n").write_text("7\n")
    twice = Submitted(decoy.client(),
                      f"cp {top}/src {top}/x-$(cat {top}/n) && cp {top}/src {top}/x-9$(cat {top}/n)")
    assert set(twice.shown()) == {str(top / "x-7"), str(top / "x-97")}
    (top / "n").write_text("8\n")
    assert twice.execute().status == "succeeded"
    (top / "n").write_text("5\n")
    other = Submitted(decoy.client(), f"cp {top}/src {top}/y-$(cat {top}/n)")
    (top / "src").write_text("CONF\n")
    (top / "n").write_text("6\n")
    refused(other.execute(), f"{top}/y-6", "the content is not what the preview showed")


def test_a_file_swapped_after_the_preview_is_refused(decoy: RunningDaemon) -> None:
    """``cp src out`` showed src's content; src was replaced by text of the same size before
    the run (a size check would pass it): the content is not the one shown."""
    top = case_dir(decoy, "swapped")
    (top / "src").write_text("public\n")
    plan = Submitted(decoy.client(), f"cp {top}/src {top}/out")
    assert plan.shown()[str(top / "out")].size_after == 7
    (top / "src").write_text("secret\n")
    finished = plan.execute()
    refused(finished, f"{top}/out", "the content is not what the preview showed",
            "7 bytes shown, 7 written; the content is not shown")
    assert "secret" not in (finished.message or "")  # never the content (issue 34 item 5)
    assert not (top / "out").exists()


def test_a_directory_swapped_for_a_link_after_the_preview_is_refused(
        decoy: RunningDaemon) -> None:
    """The preview wrote into ``d``; before the run ``d`` became a link to another tree
    (anyone may plant one under /tmp): the write lands at a path the preview never showed."""
    top = case_dir(decoy, "planted")
    (top / "d").mkdir()
    elsewhere = top / "elsewhere"
    elsewhere.mkdir()
    plan = Submitted(decoy.client(), f"echo x > {top}/d/conf")
    assert list(plan.shown()) == [str(top / "d" / "conf")]
    (top / "d").rmdir()
    (top / "d").symlink_to(elsewhere)
    before = fingerprint(top)
    finished = plan.execute()
    refused(finished, f"{elsewhere}/conf", "the preview did not show a change there")
    assert fingerprint(top) == before


def test_a_mode_other_than_shown_is_refused(decoy: RunningDaemon) -> None:
    """``install -m "$(cat m)"``: the mode is read at run time and changed after the preview."""
    top = case_dir(decoy, "mode")
    (top / "m").write_text("0644\n")
    (top / "src").write_text("s\n")
    plan = Submitted(decoy.client(), f"install -m \"$(cat {top}/m)\" {top}/src {top}/dst")
    assert plan.shown()[str(top / "dst")].mode_after == "0644"
    (top / "m").write_text("0666\n")
    refused(plan.execute(), "the preview showed mode 0644, the step left 0666")
    assert not (top / "dst").exists()


def test_content_that_varies_is_marked_and_only_its_path_is_pinned(
        decoy: RunningDaemon) -> None:
    """``date +%N``: the two preview runs differ, the preview says the content varies; the
    run lands with its own content at the path shown."""
    top = case_dir(decoy, "varying")
    plan = Submitted(decoy.client(), f"date +%s.%N > {top}/stamp")
    change = plan.shown()[str(top / "stamp")]
    assert change.varying, change
    finished = plan.execute()
    assert finished.status == "succeeded", finished.message
    assert (top / "stamp").read_text().strip()


def test_content_that_did_not_vary_in_the_preview_is_pinned(decoy: RunningDaemon) -> None:
    """A step whose output depends on a file that changes between preview and run (here a
    "clock" file standing for ``date +%F`` across midnight): not varying in the preview,
    so the other content is refused."""
    top = case_dir(decoy, "clock")
    (top / "clock").write_text("2026-11-27\n")
    plan = Submitted(decoy.client(), f"cat {top}/clock > {top}/today")
    assert not plan.shown()[str(top / "today")].varying
    (top / "clock").write_text("2026-11-28\n")
    refused(plan.execute(), "the content is not what the preview showed")
    assert not (top / "today").exists()
