"""The event stream of a running plan has no read timeout.

A step may print nothing for longer than the client's ordinary timeout (a large download,
``pacman -Syu`` resolving); the client must keep reading. It once reported
DAEMON_UNAVAILABLE after 30 s of silence while the plan went on in the daemon.
"""

from __future__ import annotations

from anna_common.plan import ActionPlan
from annactl.core.daemon_client import DaemonClient
from tests.daemonfix import RunningDaemon, make_plan


def test_a_silent_step_longer_than_the_client_timeout_streams_to_the_end(
        user_daemon: RunningDaemon) -> None:
    client = DaemonClient(user_daemon.socket, timeout=1.0)  # ordinary answers: 1 s
    marker = user_daemon.base / "after"
    plan = make_plan([("quiet", f"sleep 3 && touch {marker}", "LOW")])
    # stored with the default client: a caller's timeout bounds submit too, and a submit
    # (validation, judging, a preview run twice) may take longer than 1 s on a loaded machine
    submitted = user_daemon.client().submit(ActionPlan.model_validate(plan))
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=False))
    assert events[-1].type == "plan_finished" and events[-1].status == "succeeded"
    assert marker.exists()
    # and the ordinary calls still use the client's own timeout
    assert client.get_plan(submitted.plan_id).status == "succeeded"
