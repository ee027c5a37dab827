"""Unix-socket escape attempts, run by tests/daemon/test_confine_unix.py under ``unshare -m``.

In its own mount namespace (private propagation: nothing reaches the machine) it mounts a
tmpfs over /run and listens where annad, D-Bus (system and session bus) and systemd listen,
then makes confined attempts to reach them: from a check (as the owner and as capless
root), from a previewed step, and from a bus read verb (``busctl --address=…``), which is
the one kind of run allowed a Unix socket — and whose /run keeps only D-Bus's and systemd's
sockets. It prints one JSON object: each attempt's output and which listeners were reached.

``python confine_unix_driver.py REPO PROBE``; root only.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading

sys.path.insert(0, sys.argv[1])

from annad.confine.credentials import Identity
from annad.confine.runner import run_confined, run_overlay
from annad.confine.spec import protect
from annad.preview.overlay import tree_plan

NOBODY = 65534
SOCKETS = {"annad": "/run/anna/annad.sock", "dbus": "/run/dbus/system_bus_socket",
           "systemd": "/run/systemd/private", "session": f"/run/user/{NOBODY}/bus"}


def listen(name: str, path: str, reached: dict[str, int]) -> socket.socket:
    """A listener at ``path`` that counts and drops connections."""
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o666)  # anyone may connect: only the confinement stops them
    server.listen(8)

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            reached[name] += 1
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    return server


def main() -> None:
    """Mount, listen, attempt, report."""
    probe = sys.argv[2]
    libc_mount = __import__("ctypes").CDLL(None, use_errno=True).mount
    if libc_mount(b"none", b"/run", b"tmpfs", 0, b"mode=0755") != 0:
        raise SystemExit("cannot mount a tmpfs over /run in the private namespace")
    reached = dict.fromkeys(SOCKETS, 0)
    servers = [listen(name, path, reached) for name, path in SOCKETS.items()]
    protect("/run/anna")  # as the daemon does for its socket directory
    owner = Identity(uid=NOBODY, gid=NOBODY, groups=(NOBODY,), home="/", user="nobody")
    session = {"XDG_RUNTIME_DIR": f"/run/user/{NOBODY}"}
    out: dict[str, object] = {}
    attempts = " ; ".join(f"/usr/bin/python3 {probe} unix {path}" for path in SOCKETS.values())
    for mode, root in (("check", False), ("root-check", True)):
        result = run_confined(attempts, owner, root_read=root, timeout=60, session=session)
        out[mode] = result.error or result.output
    step = {"uid": NOBODY, "gid": NOBODY, "groups": str(NOBODY), "cwd": "/", "validate": [],
            "env": {"PATH": "/usr/bin:/bin", "HOME": "/"}, "command": attempts}
    spec = {"steps": [step], "plan": tree_plan(userns=False)[0], "userns": False,
            "limits": {"file": 4096, "total": 65536, "entries": 10, "tmpfs": 1 << 20,
                       "output": 8192}}
    result, report = run_overlay(json.dumps(spec), timeout=60, max_output=8192)
    out["preview"] = result.error or json.loads(report.splitlines()[0])["output"]
    before = dict(reached)
    verbs = {name: run_confined(f"busctl --timeout=2 --address=unix:path={path} list",
                                owner, timeout=60, session=session)
             for name, path in SOCKETS.items()}
    out["verbs"] = {name: r.error or r.output for name, r in verbs.items()}
    # the kept sockets' listeners count in a thread: wait (bounded) for what was reached
    done = threading.Event()
    for _ in range(100):
        if reached["dbus"] > before["dbus"] and reached["session"] > before["session"]:
            break
        done.wait(0.05)
    out["reached_by_attempts"] = before
    out["reached_by_verbs"] = {k: reached[k] - before[k] for k in reached}
    for server in servers:
        server.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
