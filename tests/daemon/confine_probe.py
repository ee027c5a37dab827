"""Escape attempts, run *inside* a confinement by tests/daemon/test_confine_escapes.py.

``python3 confine_probe.py ACTION ARG...`` makes one attempt with raw system calls and prints
``ESCAPED …`` when it worked or ``BLOCKED <errno name>`` when the kernel refused. The test
checks the outside as well (nothing arrived, nothing changed): the printout alone proves
nothing. Standard library only (it runs with the system Python, as the confined uid).
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# x86_64 / aarch64 system call numbers
NR = {"x86_64": {"add_key": 248, "keyctl": 250, "request_key": 249, "unshare": 272,
                 "setns": 308, "bpf": 321, "io_uring_setup": 425, "perf_event_open": 298},
      "aarch64": {"add_key": 217, "keyctl": 219, "request_key": 218, "unshare": 97,
                  "setns": 268, "bpf": 280, "io_uring_setup": 425, "perf_event_open": 241}}
CALLS = NR[os.uname().machine]
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = -3, -4
KEYCTL_READ = 11
PTRACE_ATTACH = 16
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000


def result(ok: bool, what: str = "") -> None:
    """Print the verdict of one attempt."""
    if ok:
        print(f"ESCAPED {what}")
    else:
        print(f"BLOCKED {errno.errorcode.get(ctypes.get_errno(), what)}")


def syscall(name: str, *args: object) -> int:
    """A raw system call by name; -1 and errno on failure."""
    return int(libc.syscall(CALLS[name], *args))


def connect(family: int, kind: int, address: str | tuple[str, int], payload: bytes = b"x"
            ) -> None:
    """socket + connect + send: ESCAPED when the bytes left."""
    try:
        sock = socket.socket(family, kind)
        sock.settimeout(5)
        sock.connect(address)
        sock.send(payload)
    except OSError as exc:
        print(f"BLOCKED {errno.errorcode.get(exc.errno or 0, str(exc))}")
        return
    print("ESCAPED connected")


def main(action: str, args: list[str]) -> None:
    """One attempt."""
    if action == "tcp":
        connect(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", int(args[0])))
    elif action == "tcp-bind":
        try:
            socket.socket(socket.AF_INET, socket.SOCK_STREAM).bind(("127.0.0.1", 0))
            print("ESCAPED bound")
        except OSError as exc:
            print(f"BLOCKED {errno.errorcode.get(exc.errno or 0)}")
    elif action == "udp":
        connect(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", int(args[0])))
    elif action == "dns":
        # a DNS question for a name to the resolver at 127.0.0.1:PORT (the test's listener)
        query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04anna\x04test\x00\x00\x01\x00\x01"
        connect(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", int(args[0])), query)
    elif action == "unix":
        connect(socket.AF_UNIX, socket.SOCK_STREAM, args[0])
    elif action == "packet":
        try:
            socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            print("ESCAPED packet socket")
        except OSError as exc:
            print(f"BLOCKED {errno.errorcode.get(exc.errno or 0)}")
    elif action == "keyring-add":
        result(syscall("add_key", b"user", args[0].encode(), b"secret", 6,
                       KEY_SPEC_USER_KEYRING) >= 0)
    elif action == "keyring-read":
        buffer = ctypes.create_string_buffer(4096)
        result(syscall("keyctl", KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, buffer, 4096) >= 0)
    elif action == "ptrace":
        libc.ptrace.restype = ctypes.c_long
        result(libc.ptrace(PTRACE_ATTACH, int(args[0]), None, None) >= 0)
    elif action == "mount":
        result(libc.mount(b"none", args[0].encode(), b"tmpfs", 0, None) >= 0)
    elif action == "unshare":
        result(syscall("unshare", CLONE_NEWUSER | CLONE_NEWNS) >= 0)
    elif action == "bpf":
        result(syscall("bpf", 0, None, 0) >= 0 or ctypes.get_errno() != errno.EPERM)
    elif action == "io_uring":
        params = ctypes.create_string_buffer(120)
        result(syscall("io_uring_setup", 4, params) >= 0)
    elif action == "sysv-shm":
        libc.shmget.restype = ctypes.c_int
        result(libc.shmget(0, 1 << 20, 0o1000 | 0o600) >= 0)  # IPC_PRIVATE, IPC_CREAT
    elif action == "memory":
        try:
            block = bytearray(int(args[0]))
            block[-1] = 1
            print(f"ESCAPED allocated {len(block)}")
        except MemoryError:
            print("BLOCKED ENOMEM")
    elif action == "forks":
        forks(int(args[0]))


def forks(most: int) -> None:
    """Fork children that wait forever, up to ``most``; print how many could start."""
    started = 0
    while started < most:
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.close(1)
            while True:
                libc.pause()
        started += 1
    print(f"{'ESCAPED' if started >= most else 'BLOCKED EAGAIN'} {started}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
