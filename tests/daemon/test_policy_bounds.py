"""Issue 21 item 4 with the real daemon: a user's own policy cannot stall it.

``/**/**/**/**/**/**/**/zz`` in ``~/.config/anna/policy.toml`` once made one submit take
30 s and every other client wait with it. Now the file is refused at parse (a coded
``POLICY_INVALID`` naming the file and line) and the costliest glob the parser accepts is
decided by automaton; meanwhile a second client is answered (bench/policy_stall.py has
the figures).
"""

from __future__ import annotations

import threading

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from tests.daemonfix import RunningDaemon, make_plan
from tests.waiting import wait_until


def _user_policy(daemon: RunningDaemon, glob: str) -> str:
    path = daemon.home / ".config" / "anna" / "policy.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'# mine\n[[rule]]\nid = "stall"\naction = "deny"\npath = "{glob}"\n')
    return str(path)


def _submit(daemon: RunningDaemon, command: str) -> AnnaError | None:
    client = daemon.client()
    try:
        client.submit(ActionPlan.model_validate(make_plan([("t", command, "LOW")])),
                      source="file")
    except AnnaError as exc:
        return exc
    finally:
        client.close()
    return None


def test_the_stalling_glob_is_refused_with_its_file_and_line(user_daemon: RunningDaemon
                                                             ) -> None:
    source = _user_policy(user_daemon, "/**/**/**/**/**/**/**/zz")
    error = _submit(user_daemon, "touch /tmp/" + "/".join(["a"] * 50))
    assert error is not None and error.code is ErrorCode.POLICY_INVALID
    assert error.detail == {"file": source, "line": 5}
    assert "'**' components; at most" in error.message


def test_the_costliest_accepted_glob_is_decided_while_another_client_is_served(
        user_daemon: RunningDaemon) -> None:
    _user_policy(user_daemon, "/**/**/**/**/*z*[!a]z")
    outcome: dict[str, AnnaError | None] = {}
    thread = threading.Thread(target=lambda: outcome.update(
        result=_submit(user_daemon, "touch /tmp/" + "/".join(["a"] * 2000) + "/zzz")))
    thread.start()
    healthy = 0
    client = user_daemon.client()
    try:
        while thread.is_alive() or not healthy:
            client.health()  # answered while the other submit is being judged
            healthy += 1
    finally:
        client.close()
        thread.join()
    wait_until(lambda: "result" in outcome, "the submit ended")
    error = outcome["result"]
    assert error is not None and error.code is ErrorCode.POLICY_DENIED, error
    assert error.detail["rule"] == "stall"
    assert healthy >= 1
