"""Two seed rules held whole: seed 000's "MEDIUM must have clear rollback" (a rollback that
changes nothing is no rollback) and seed 004's protected paths (``.env``, ``*.pem``,
``*.key``, ``id_rsa*``, ``**/secrets/**``), which are never approvable at LOW."""

from __future__ import annotations

import pytest

from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess
from tests.ui.plans import annotate_dict, plan_dict

CTX = AssessContext(distro="arch", home="/home/alice")

NO_OP_ROLLBACKS = ["true", ":", "echo restored", "printf 'undone\\n'", "ls /tmp",
                   "cat /etc/hostname", "echo 'rolled back' >&2", "sleep 0", "test -e /tmp",
                   "exit 0"]
"""Rollback commands that change nothing."""

MEDIUM_WITHOUT_SNAPSHOT = ["frobnicate --apply", "sysctl -w vm.swappiness=10",
                           "kill -HUP 1234"]
"""MEDIUM-or-more steps the daemon cannot undo by itself (no file it snapshots, no typed
inverse)."""


@pytest.mark.parametrize("rollback", NO_OP_ROLLBACKS)
def test_a_medium_step_whose_rollback_changes_nothing_is_high(rollback: str) -> None:
    plan = annotate_dict(plan_dict([("s", "frobnicate --apply", "MEDIUM")],
                                   rollback=[("undo", rollback)], rollback_ids={"s": "undo"}))
    step = plan.steps[0]
    assert step.final_risk == RiskLevel.HIGH, (rollback, step.reasons)
    assert "changes nothing" in step.reasons[0]


@pytest.mark.parametrize("command", MEDIUM_WITHOUT_SNAPSHOT)
def test_a_medium_step_without_any_rollback_is_high(command: str) -> None:
    step = annotate_dict(plan_dict([("s", command, "MEDIUM")])).steps[0]
    assert step.final_risk == RiskLevel.HIGH, step.reasons


def test_a_real_rollback_or_a_snapshot_keeps_medium() -> None:
    with_undo = annotate_dict(plan_dict([("s", "frobnicate --apply", "MEDIUM")],
                                        rollback=[("undo", "frobnicate --revert")],
                                        rollback_ids={"s": "undo"}))
    assert with_undo.steps[0].final_risk == RiskLevel.MEDIUM
    snapshot = annotate_dict(plan_dict([("s", "cp /tmp/x /etc/anna-test.conf", "MEDIUM")],
                                       rollback=[("undo", "true")], rollback_ids={"s": "undo"}))
    assert snapshot.steps[0].final_risk == RiskLevel.MEDIUM  # the daemon's snapshot undoes it
    package = annotate_dict(plan_dict([("s", "pacman -S htop", "MEDIUM")]))
    assert package.steps[0].final_risk == RiskLevel.MEDIUM  # the typed inverse undoes it


PROTECTED = [
    "echo X=1 > .env", "rm ~/proj/.env", "sed -i s/a/b/ ~/app/.env", "echo k=v >> prod.env",
    "cp a ~/certs/server.pem", "mv x ~/keys/tls.key", "touch ~/x.p12", "rm ~/.ssh/id_rsa.pub",
    "echo x >> id_rsa.pub", "cp k ~/backup/id_rsa_old", "echo x > ~/proj/secrets/token",
    "rm -f ~/proj/config/secrets/db.yml", "rm secrets/x", "tee ~/app/.env.local < /tmp/e",
    "cp /tmp/x ~/w/deploy/secrets/nested/key.txt", "truncate -s0 ~/.env",
]
"""Writes to seed 004's protected paths, in the forms a plan uses."""


@pytest.mark.parametrize("command", PROTECTED)
def test_protected_paths_are_never_low(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == RiskLevel.HIGH, (command, verdict.codes)


@pytest.mark.parametrize("command", ["cat .env.example", "cp .env.example ~/app/.env.example",
                                     "echo hi > ~/proj/notes.txt", "ls secrets"])
def test_look_alikes_stay_below_high(command: str) -> None:
    assert assess(command, CTX).risk < RiskLevel.HIGH
