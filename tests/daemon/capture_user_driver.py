"""The owner's client of a per-user daemon that is not root (tests/daemon/test_capture_user.py).

A per-user daemon serves its owner only (the kernel's peer uid), so its requests are made
by this script, run as that uid: ``capture_user_driver.py SOCKET run STEPS_JSON`` submits and
executes the plan (HIGH steps with the daemon's own word) and prints what happened as JSON;
``capture_user_driver.py SOCKET rollback PLAN_ID`` rolls a plan back; ``health`` says
whether it answers its owner; ``submit STEPS_JSON``, ``execute PLAN_ID DIGEST WORD`` and
``status PLAN_ID`` do one thing each (the fault trials kill the daemon between them).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from annactl.core.daemon_client import DaemonClient
from tests.daemonfix import make_plan


def run(client: DaemonClient, steps: list[tuple[str, str, str]]) -> dict[str, object]:
    """Submit and execute ``steps``; everything the test looks at, as JSON values."""
    response = client.submit(ActionPlan.model_validate(make_plan(steps)))
    annotated = response.annotated
    high = annotated.final_risk == "HIGH"
    started = time.perf_counter()
    events = list(client.execute(response.plan_id, response.digest, confirmed=True,
                                 high_confirmed=high,
                                 confirm_word=tiers.plan_word(annotated) if high else None))
    return {"plan_id": response.plan_id, "execute_s": time.perf_counter() - started, "final_risk": str(annotated.final_risk),
            "rollback_status": annotated.rollback_status,
            "reasons": [r for s in annotated.steps for r in s.reasons],
            "events": [{"type": str(e.type), "status": e.status, "code": e.code,
                        "message": e.message, "output": e.output} for e in events]}


def main(argv: list[str]) -> int:
    """See the module text."""
    client = DaemonClient(Path(argv[1]))
    if argv[2] == "health":
        out = {"ok": client.health().running_plan is None}
    elif argv[2] == "submit":
        response = client.submit(ActionPlan.model_validate(make_plan(
            [tuple(s) for s in json.loads(argv[3])])))  # type: ignore[misc]
        out = {"plan_id": response.plan_id, "digest": response.digest,
               "word": tiers.plan_word(response.annotated)}
    elif argv[2] == "execute":
        events = list(client.execute(argv[3], argv[4], confirmed=True, high_confirmed=True,
                                     confirm_word=argv[5] or None))
        out = {"status": events[-1].status, "code": events[-1].code,
               "message": events[-1].message}
    elif argv[2] == "status":
        out = {"status": str(client.get_plan(argv[3]).status)}
    elif argv[2] == "run":
        out = run(client, [tuple(s) for s in json.loads(argv[3])])  # type: ignore[misc]
    else:
        result = client.rollback(argv[3])
        out = {"status": str(result.status),
               "undo": [{"action": u.action, "target": u.target, "ok": u.ok,
                         "message": u.message} for u in result.undo]}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
