"""A login, as ``pam_loginuid`` makes one: a process given its own audit login session.

The lock-out guard keeps a plan only when ``confirm`` comes from a login made after the plan
finished (:mod:`annad.execution.guard`). These helpers start a child that writes its own
``/proc/self/loginuid`` before it runs (root only; the kernel then gives it a fresh session,
exactly as a console or ssh login does) and posts the confirmation from there. Only the
child's own audit identity changes; nothing else on the machine does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_CONFIRMER = r"""
import http.client, json, socket, sys
path, plan_id = sys.argv[1], sys.stdin.readline().strip()
conn = http.client.HTTPConnection("annad", timeout=30)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(path)
conn.sock = sock
conn.request("POST", f"/v1/plans/{plan_id}/confirm", body=b"",
             headers={"Content-Type": "application/json"})
response = conn.getresponse()
print(json.dumps({"status": response.status, "body": json.loads(response.read())}))
"""


def log_in() -> None:
    """In a child before it runs (``preexec_fn``): start a login session of its own."""
    with open("/proc/self/loginuid", "w", encoding="ascii") as handle:
        handle.write("0")


def start_login(socket_path: Path) -> subprocess.Popen[str]:
    """A new login that waits for a plan id on its stdin, then confirms that plan."""
    return subprocess.Popen([sys.executable, "-c", _CONFIRMER, str(socket_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            preexec_fn=log_in)  # noqa: PLW1509 - the login step itself


def confirm_from(login: subprocess.Popen[str], plan_id: str) -> tuple[int, dict[str, object]]:
    """Have ``login`` confirm ``plan_id``; the HTTP status and body it got."""
    out, _ = login.communicate(plan_id + "\n", timeout=60)
    answer = json.loads(out)
    return int(answer["status"]), dict(answer["body"])


def confirm_as_new_login(socket_path: Path, plan_id: str) -> tuple[int, dict[str, object]]:
    """Log in now and confirm ``plan_id`` from that login."""
    return confirm_from(start_login(socket_path), plan_id)
