"""The lock-out guard through the real system daemon, on a scratch etc tree.

A plan that edits sshd_config (under ``ANNAD_ETC_ROOT``, a temporary tree) is rolled back
by the daemon unless ``confirm`` arrives from a login made after the plan finished (a child
given its own audit session, :mod:`tests.daemon.logins`);
the tests wait on the journal's state, never on a sleep.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from pathlib import Path

import pytest

from anna_common.errors import AnnaError, ErrorCode
from anna_common.plan import ActionPlan
from anna_common.risk import tiers
from annad.execution.lockout import cut_off_reasons
from tests.daemon.logins import confirm_as_new_login, confirm_from, start_login
from tests.daemonfix import IS_ROOT, RunningDaemon, make_plan, new_daemon, stop_and_remove
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="the system daemon needs root")

ORIGINAL = "Port 22\n#PermitRootLogin prohibit-password\n"


def guarded_daemon(revert_s: float) -> RunningDaemon:
    daemon = new_daemon(user_mode=False, env={"ANNAD_LOCKOUT_REVERT_S": str(revert_s)})
    etc = daemon.base / "etc"
    (etc / "ssh").mkdir(parents=True)
    (etc / "ssh" / "sshd_config").write_text(ORIGINAL)
    daemon.env["ANNAD_ETC_ROOT"] = str(etc)
    return daemon.start()


def run_sshd_edit(daemon: RunningDaemon) -> str:
    config = daemon.base / "etc" / "ssh" / "sshd_config"
    plan = make_plan([("harden", f"sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' {config}",
                       "HIGH")])
    client = daemon.client()
    submitted = client.submit(ActionPlan.model_validate(plan))
    events = list(client.execute(submitted.plan_id, submitted.digest, confirmed=True,
                                 high_confirmed=True,
                                 confirm_word=tiers.plan_word(submitted.annotated)))
    assert events[-1].status == "succeeded", [e.output for e in events]
    assert "PermitRootLogin no" in config.read_text()
    return submitted.plan_id


def stopped(daemon: RunningDaemon) -> None:
    stop_and_remove(daemon)  # (its directory too: nothing is read from it afterwards)


def test_no_confirmation_the_daemon_rolls_the_plan_back() -> None:
    daemon = guarded_daemon(1.5)
    try:
        plan_id = run_sshd_edit(daemon)
        client = daemon.client()
        record = client.get_plan(plan_id)
        assert record.guard is not None and record.guard.state == "armed"
        assert any("sshd_config" in r for r in record.guard.reasons)
        wait_until(lambda: client.get_plan(plan_id).status == "rolled_back",
                   "the guard to roll the plan back", saw=lambda: client.get_plan(plan_id))
        record = client.get_plan(plan_id)
        assert record.guard is not None and record.guard.state == "expired"
        assert (daemon.base / "etc/ssh/sshd_config").read_text() == ORIGINAL
        with pytest.raises(AnnaError) as late:
            client.confirm(plan_id)
        assert late.value.code is ErrorCode.PLAN_STATE
    finally:
        stopped(daemon)


def test_confirmation_from_a_new_login_keeps_the_plan() -> None:
    daemon = guarded_daemon(3.0)
    try:
        old = _open(daemon.socket)  # made before the plan ran: proves nothing afterwards
        earlier = start_login(daemon.socket)  # a login open before the plan finished
        plan_id = run_sshd_edit(daemon)
        status, body = _post(old, f"/v1/plans/{plan_id}/confirm")
        assert status == 403 and body["code"] == "PERMISSION_DENIED", body
        # a new connection from no login at all (a service, a process the plan started)
        with pytest.raises(AnnaError) as no_login:
            daemon.client().confirm(plan_id)
        assert no_login.value.code is ErrorCode.PERMISSION_DENIED
        assert "no login session" in no_login.value.message
        status, body = confirm_from(earlier, plan_id)
        assert status == 403 and "open before the plan finished" in str(body["message"]), body
        status, body = confirm_as_new_login(daemon.socket, plan_id)  # log in now
        assert status == 200, body
        record = daemon.client().get_plan(plan_id)
        assert record.guard is not None and record.guard.state == "confirmed"
        deadline = record.guard.deadline or time.time() + 3.0
        wait_until(lambda: time.time() > deadline + 1.0, "the old deadline to pass")
        record = daemon.client().get_plan(plan_id)
        assert record.status == "succeeded" and record.guard is not None
        assert record.guard.state == "confirmed"
        assert "PermitRootLogin no" in (daemon.base / "etc/ssh/sshd_config").read_text()
    finally:
        stopped(daemon)


def test_a_plan_rolled_back_by_hand_while_armed_disarms_the_guard() -> None:
    daemon = guarded_daemon(60.0)  # a deadline far off: the disarm is the rollback's doing
    try:
        plan_id = run_sshd_edit(daemon)
        client = daemon.client()
        assert client.rollback(plan_id).status == "rolled_back"
        record = client.get_plan(plan_id)  # at once, never "armed" after the rollback
        assert record.status == "rolled_back" and record.guard is not None
        assert record.guard.state == "disarmed", record.guard
        assert "rolled back by hand" in record.guard.message
        assert (daemon.base / "etc/ssh/sshd_config").read_text() == ORIGINAL
    finally:
        stopped(daemon)


def test_a_restart_while_armed_rolls_back_at_start() -> None:
    daemon = guarded_daemon(2.0)
    try:
        plan_id = run_sshd_edit(daemon)
        record = daemon.client().get_plan(plan_id)
        assert record.guard is not None and record.guard.deadline is not None
        deadline = record.guard.deadline
        daemon.kill()  # a crash while armed
        wait_until(lambda: time.time() > deadline, "the deadline to pass while it is down")
        daemon.start()
        client = daemon.client()
        wait_until(lambda: client.get_plan(plan_id).status == "rolled_back",
                   "the restarted daemon to roll the plan back",
                   saw=lambda: daemon.output()[-2000:])
        assert (daemon.base / "etc/ssh/sshd_config").read_text() == ORIGINAL
    finally:
        stopped(daemon)


CUTS = [
    "sed -i s/a/b/ /etc/ssh/sshd_config",
    "sudo sed -i 's/x/y/' /etc/ssh/sshd_config",
    "sed -i 's/x/y/' '/etc/ssh/sshd_config'",
    "sed -i 's/x/y/' \"/etc/ssh/sshd_config\"",
    "sed -i 's/x/y/' $'/etc/ssh/sshd_config'",
    "sed -i 's/x/y/' /etc/ssh/sshd_conf{ig,}",
    "sed -i 's/x/y/' /etc/ssh/sshd_c*fig",
    "sed -i 's/x/y/' /etc/ssh/sshd_config.d/*.conf",
    "echo 'PermitRootLogin no' | sudo tee -a /etc/ssh/sshd_config",
    "sudo bash -c \"echo 'PermitRootLogin no' >> /etc/ssh/sshd_config\"",
    "sh -c 'cat > /etc/ssh/sshd_config' <<< 'Port 2222'",
    "cd /etc/ssh && sed -i s/a/b/ sshd_config",
    "echo x > /etc/../etc/ssh/sshd_config",
    "rm -r /etc/ssh",
    "chmod 000 /etc/ssh/sshd_config",
    "sudo tee /etc/sudoers.d/anna <<< 'x ALL=(ALL) ALL'",
    "eval \"sed -i s/a/b/ /etc/sudoers\"",
    "cp /tmp/x /etc/sudoers",
    "install -m 440 /tmp/x /etc/sudoers.d/anna",
    "bash -c 'echo auth required pam_deny.so >> /etc/pam.d/sshd'",
    "env -i PATH=/usr/bin sed -i s/a/b/ /etc/pam.d/common-auth",
    "ln -sf /tmp/x /etc/pam.d/sshd",
    "find /etc/pam.d -name '*.bak' -delete",
    "truncate -s0 /etc/security/access.conf",
    "mv /tmp/new /etc/nftables.conf",
    "rm -f /etc/NetworkManager/system-connections/wifi.nmconnection",
    "cp new.conf /etc/X11/xorg.conf.d/10-x.conf",
    "touch /etc/nologin",
    "eval 'iptables -P INPUT DROP'",
    "bash -c 'iptables -F'",
    "xargs -a list iptables -D INPUT",
    "sudo iptables -A INPUT -j DROP",
    "env LC_ALL=C nft flush ruleset",
    "nft add rule inet filter input drop",
    "ufw default deny incoming",
    "ufw enable",
    "firewall-cmd --set-default-zone=drop",
    "sudo systemctl restart sshd.service",
    "sudo systemctl stop ssh",
    "systemctl mask --now sshd.service",
    "systemctl disable --now NetworkManager",
    "sudo -u root systemctl restart systemd-networkd",
    "systemctl isolate rescue.target",
    "systemctl restart gdm",
    "systemctl restart display-manager",
    "ip link set eth0 down",
    "ip route del default",
    "ip addr flush dev eth0",
    "ip -4 addr add 10.0.0.2/24 dev eth0",
    "nmcli networking off",
    "nmcli radio wifi off",
    "nmcli con mod eth0 ipv4.method manual",
    "netplan apply",
    "ifdown eth0",
    "usermod -L alice",
    "passwd -l root",
    "usermod -s /usr/bin/nologin alice",
    "echo 'ssh-ed25519 AAAA new' > ~/.ssh/authorized_keys",
    "rm -r ~/.ssh",
    "sed -i /old/d /root/.ssh/authorized_keys2",
]
"""Steps that can cut the person off, in many spellings (quoting, sudo, env, sh -c, eval,
here-strings, $'…', braces, globs, cd, ..)."""
KEEPS = [
    "cat /etc/ssh/sshd_config", "sshd -t", "iptables -L -n", "iptables -t nat -L",
    "nft list ruleset", "ufw status", "nmcli device status", "nmcli con show",
    "networkctl status", "ip addr show", "systemctl restart nginx", "systemctl status sshd",
    "cp x /etc/lynx.cfg", "rm /etc/*.bak", "cp x /etc/hostname", "echo hi > ~/notes.txt",
    "sed -i s/a/b/ ~/.ssh/config",
]
"""Steps that cannot: reads, other services, other files."""


@pytest.mark.parametrize(("command", "cuts"), [(c, True) for c in CUTS] +
                         [(c, False) for c in KEEPS])
def test_cut_off_steps_are_found_from_the_analysis(command: str, cuts: bool) -> None:
    assert bool(cut_off_reasons(command, home="/home/u", etc_roots=["/etc"])) is cuts


def _open(path: Path) -> http.client.HTTPConnection:
    conn = http.client.HTTPConnection("annad", timeout=30)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    conn.sock = sock
    conn.request("GET", "/v1/health")
    conn.getresponse().read()
    return conn


def _post(conn: http.client.HTTPConnection, path: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    conn.request("POST", path, body=b"", headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, json.loads(response.read())
