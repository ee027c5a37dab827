"""Issue 34 item 7 on the real root daemon: ``deny path="/**/id_rsa"`` lets every write that
cannot reach a key through, and still stops the ones that can — predicted from the command
at submit, or observed in the capture when the prediction could not see it (a planted link).

Found on main at 8a1b4b5: with that rule every write of every plan was denied (``echo hi >
/tmp/x``, ``sed -i`` on /etc/hosts, ``cp a b``), because each written path was matched as a
directory whose contents the command might reach. The daemon runs in a private mount
namespace with a copy of /etc bound over /etc (tests/decoyns.py): /etc/hosts here is the
decoy's.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from tests.daemonfix import IS_ROOT, RunningDaemon, decoy_etc_daemon, make_plan, stop_and_remove
from tests.treeprint import fingerprint

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="captured steps need a root daemon")

POLICY = '[[rule]]\nid = "no-keys"\naction = "deny"\npath = "/**/id_rsa"\n' \
    'note = "never touch a private key anywhere"\n'


@pytest.fixture(scope="module")
def decoy() -> Iterator[RunningDaemon]:
    daemon = decoy_etc_daemon()
    (daemon.base / "policy.toml").write_text(POLICY)
    try:
        yield daemon.start()
    finally:
        stop_and_remove(daemon)


def _top(daemon: RunningDaemon, name: str) -> Path:
    top = daemon.base / "w" / name
    (top / "keys").mkdir(parents=True)
    (top / "keys" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    (top / "src").write_text("source\n")
    (top / "f").write_text("alpha\n")
    return top


def _run(daemon: RunningDaemon, command: str, risk: str = "MEDIUM") -> list[object]:
    client = daemon.client()
    response = client.submit(ActionPlan.model_validate(make_plan([("s", command, risk)])))
    annotated = response.annotated
    assert annotated.steps[0].policy is None, annotated.steps[0].policy
    high = annotated.final_risk == "HIGH"
    return list(client.execute(response.plan_id, response.digest, confirmed=True,
                               high_confirmed=high,
                               confirm_word=tiers.plan_word(annotated) if high else None))


@pytest.mark.parametrize(("name", "command", "landed"), [
    ("redirect", "echo hi > {T}/x", lambda t: (t / "x").read_text() == "hi\n"),
    ("sed_hosts", "sed -i 's/^/# anna /' /etc/hosts",
     lambda t: True),
    ("sed_file", "sed -i s/alpha/ALPHA/ {T}/f", lambda t: (t / "f").read_text() == "ALPHA\n"),
    ("cp", "cp {T}/src {T}/copy", lambda t: (t / "copy").read_text() == "source\n"),
    ("tee", "printf 'x\\n' | tee -a {T}/f", lambda t: (t / "f").read_text() == "alpha\nx\n"),
    ("chmod", "chmod 600 {T}/f", lambda t: (t / "f").stat().st_mode & 0o777 == 0o600),
])
def test_writes_that_cannot_reach_a_key_run_and_land(decoy: RunningDaemon, name: str,
                                                     command: str, landed: object) -> None:
    top = _top(decoy, name)
    hosts = (decoy.extra["etc"] / "hosts").read_text()
    events = _run(decoy, command.replace("{T}", str(top)))
    assert events[-1].status == "succeeded", [(e.type, e.message) for e in events]  # type: ignore[attr-defined]
    assert landed(top)  # type: ignore[operator]
    if name == "sed_hosts":
        assert (decoy.extra["etc"] / "hosts").read_text() != hosts
        (decoy.extra["etc"] / "hosts").write_text(hosts)
    assert (top / "keys" / "id_rsa").read_text().endswith("secret\n")


@pytest.mark.parametrize("command", [
    "cp {T}/src {T}/keys/id_rsa",
    "cp {T}/keys/id_rsa {T}/backup-dir/",
    "echo x > {T}/keys/id_rsa",
    "rm -rf {T}/keys",
    "chmod 644 {T}/keys/id_rsa",
])
def test_writes_that_can_reach_a_key_are_denied_at_submit(decoy: RunningDaemon,
                                                          command: str) -> None:
    top = _top(decoy, "denied")
    before = fingerprint(top)
    with pytest.raises(AnnaError) as caught:
        decoy.client().submit(ActionPlan.model_validate(make_plan([
            ("s", command.replace("{T}", str(top)), "HIGH")])))
    assert caught.value.code is ErrorCode.POLICY_DENIED, caught.value
    assert caught.value.detail["rule"] == "no-keys"
    assert fingerprint(top) == before
    shutil.rmtree(top)


def test_a_write_through_a_planted_link_is_refused_as_observed(decoy: RunningDaemon) -> None:
    """``echo x > OUT`` is a file write the rule lets through at submit; OUT is a link to a
    key. The capture sees the key written, the policy is asked again on that path, and
    nothing lands."""
    top = _top(decoy, "planted")
    (top / "out").symlink_to(top / "keys" / "id_rsa")
    before = fingerprint(top)
    events = _run(decoy, f"echo x > {top}/out")
    finished = [e for e in events if e.type == "step_finished"]  # type: ignore[attr-defined]
    assert finished[-1].status == "failed", [(e.type, e.message) for e in events]  # type: ignore[attr-defined]
    assert finished[-1].code == "OBSERVED_CHANGE_REFUSED", finished[-1].message
    assert "policy rule no-keys" in (finished[-1].message or ""), finished[-1].message
    assert fingerprint(top) == before
    assert (top / "keys" / "id_rsa").read_text().endswith("secret\n")
