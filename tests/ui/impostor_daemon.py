"""A stand-in for a socket someone else planted: it answers every request like annad's health,
and counts the bytes it was sent (written to COUNT after each connection closes).

Run as ``python impostor_daemon.py SOCKET COUNT`` (the test runs it as another uid).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

HEALTH = json.dumps({"api_version": 1, "daemon_version": "0", "mode": "system",
                     "caller_uid": 0, "caller_authorised": True}).encode()


def main() -> None:
    path, count = Path(sys.argv[1]), Path(sys.argv[2])
    received = 0
    count.write_text("0")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        os.chmod(path, 0o777)
        server.listen(8)
        (path.parent / "listening").write_text("yes")
        while True:
            conn, _ = server.accept()
            with conn:
                conn.settimeout(5)
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                received += len(data)
                if data:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: " + str(len(HEALTH)).encode() +
                                 b"\r\nConnection: close\r\n\r\n" + HEALTH)
            count.write_text(str(received))


if __name__ == "__main__":
    main()
