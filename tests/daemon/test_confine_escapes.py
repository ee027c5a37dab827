"""Escape attempts from a check and from a preview: each is made for real and must fail.

Four places an unasked command runs: a check as its owner (``nobody`` here, with a home it
owns, so only the confinement stops a write), a check as capless root (a root read), a
previewed step as the owner and a previewed step as root (which keeps the file
capabilities). Every attempt is checked from the outside too — the listener received
nothing, the process is alive and not traced, the file is not there, no key was added, no
process is left — never by the printout alone. The attempts needing Python use
tests/daemon/confine_probe.py (copied into the owner's home, run with the system Python).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from annad.confine import cgroups
from annad.confine.credentials import Identity
from annad.confine.runner import run_confined, run_overlay
from annad.confine.stepenv import step_environment
from annad.preview.overlay import tree_plan
from tests.uids import private_uid

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces as root")
NOBODY = private_uid()
"""The owner's uid: one of this test process's own (tests/uids.py), not ``nobody`` — the fork
bomb below fills its RLIMIT_NPROC headroom, which is counted machine-wide per uid."""
PROBE = Path(__file__).with_name("confine_probe.py")
MODES = ("check", "root-check", "preview", "root-preview")


@dataclass
class Place:
    """Where the attempts run from: the owner, their home, an overlaid directory."""

    owner: Identity
    home: Path
    overlay: Path
    mode: str

    @property
    def probe(self) -> str:
        """The probe command prefix (inside the home, readable by the owner)."""
        return f"/usr/bin/python3 {self.home}/confine_probe.py"

    def run(self, command: str, timeout: float = 30) -> str:
        """Run ``command`` the way ``mode`` says; its output."""
        if self.mode in ("check", "root-check"):
            result = run_confined(command, self.owner, root_read=self.mode == "root-check",
                                  timeout=timeout)
            assert result.error is None, result.error
            return result.output
        root = self.mode == "root-preview"
        env = step_environment(None if root else self.owner, None, home=str(self.home))
        step = {"uid": 0 if root else NOBODY, "gid": 0 if root else NOBODY,
                "groups": "" if root else str(NOBODY), "env": env, "cwd": str(self.home),
                "command": command}
        spec = {"steps": [step], "plan": tree_plan(userns=False)[0], "userns": False,
                "limits": {"file": 65536, "total": 1 << 20, "entries": 100,
                           "tmpfs": 1 << 24, "output": 8192}}
        result, report = run_overlay(json.dumps(spec), timeout=timeout, max_output=8192)
        assert result.error is None, result.error
        assert report, result
        return str(json.loads(report.splitlines()[0])["output"])


@pytest.fixture(params=MODES)
def place(request: pytest.FixtureRequest) -> Iterator[Place]:
    """A home owned by ``nobody`` (so writes there would succeed unconfined), the probe in it."""
    home = Path(f"/tmp/anna-escape-{secrets.token_hex(4)}")
    home.mkdir(mode=0o755)
    (home / "overlaid").mkdir()
    shutil.copy(PROBE, home / "confine_probe.py")
    for path in (home, home / "overlaid", home / "confine_probe.py"):
        os.chown(path, NOBODY, NOBODY)
    try:
        yield Place(Identity(uid=NOBODY, gid=NOBODY, groups=(NOBODY,), home=str(home),
                             user="nobody"), home, home / "overlaid", request.param)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _blocked(output: str, count: int = 1) -> None:
    assert output.count("BLOCKED") == count and "ESCAPED" not in output, output


def test_write_a_file(place: Place) -> None:
    target = place.home / f"written-{secrets.token_hex(3)}"
    out = place.run(f"echo x > {target} || echo BLOCKED; touch /etc/anna-escape || echo BLOCKED")
    if place.mode.endswith("preview"):
        # a preview's writes land in its overlay of the whole tree (and are shown): the
        # owner cannot touch /etc there either, root can — in the overlay only
        assert out.count("BLOCKED") == (0 if place.mode == "root-preview" else 1), out
    else:
        _blocked(out, 2)
    assert not target.exists() and not Path("/etc/anna-escape").exists()


def test_write_a_fifo(place: Place) -> None:
    """A FIFO on the real tree with a reader waiting: nothing may reach the reader (a check
    is refused the open; a preview's overlay has a pipe of its own, whose open waits for a
    reader that never comes)."""
    fifo = place.home / "fifo"
    os.mkfifo(fifo, 0o666)
    os.chown(fifo, NOBODY, NOBODY)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        out = place.run(f"timeout 3 sh -c 'echo injected > {fifo}' || echo BLOCKED")
        _blocked(out)
        assert os.read(reader, 100) == b""
    finally:
        os.close(reader)


def test_write_a_device(place: Place) -> None:
    """A terminal's node made outside /dev: writing to it would type into that terminal."""
    master, slave = os.openpty()
    node = place.home / "tty-node"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.fstat(slave).st_rdev)
    try:
        out = place.run(f"echo injected > {node} || echo BLOCKED; "
                        "echo x > /dev/sda || echo BLOCKED")
        _blocked(out, 2)
        os.set_blocking(master, False)
        with pytest.raises(BlockingIOError):
            os.read(master, 100)
    finally:
        os.close(master)
        os.close(slave)


def test_tcp_connect_and_bind(place: Place) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        port = listener.getsockname()[1]
        out = place.run(f"{place.probe} tcp {port}; {place.probe} tcp-bind; "
                        f"echo hi > /dev/tcp/127.0.0.1/{port} || echo BLOCKED")
        _blocked(out, 3)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


@pytest.mark.parametrize("kind", ["udp", "dns"])
def test_udp_and_dns(place: Place, kind: str) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    try:
        out = place.run(f"{place.probe} {kind} {server.getsockname()[1]}; "
                        f"{place.probe} packet")
        _blocked(out, 2)
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.recv(512)
    finally:
        server.close()


def test_signal_another_process(place: Place) -> None:
    """The machine's processes are visible (checks) but no signal reaches them."""
    mine = subprocess.Popen(["sleep", "300"], user=NOBODY, group=NOBODY, extra_groups=[])
    root = subprocess.Popen(["sleep", "300"])
    try:
        out = place.run(f"kill -9 {mine.pid} || echo BLOCKED; kill -9 {root.pid} || "
                        "echo BLOCKED; kill -9 -1; true")
        assert "BLOCKED" in out
        assert mine.poll() is None and root.poll() is None
    finally:
        for proc in (mine, root):
            proc.kill()
            proc.wait()


def test_ptrace(place: Place) -> None:
    target = subprocess.Popen(["sleep", "300"], user=NOBODY, group=NOBODY, extra_groups=[])
    try:
        out = place.run(f"{place.probe} ptrace {target.pid}; "
                        f"strace -p {target.pid} -e none 2>/dev/null & sleep 0.3; "
                        f"grep TracerPid /proc/{target.pid}/status; kill %1 2>/dev/null; "
                        f"cat /proc/{target.pid}/environ >/dev/null 2>&1 || echo BLOCKED; "
                        f"head -c1 /proc/{target.pid}/mem >/dev/null 2>&1 || echo BLOCKED")
        assert out.count("BLOCKED") == 3 and "ESCAPED" not in out, out
        status = Path(f"/proc/{target.pid}/status").read_text()
        assert "TracerPid:\t0" in status and target.poll() is None
    finally:
        target.kill()
        target.wait()


def test_keyring_add_and_read(place: Place) -> None:
    name = f"anna-escape-{secrets.token_hex(4)}"
    out = place.run(f"{place.probe} keyring-add {name}; {place.probe} keyring-read")
    _blocked(out, 2)
    assert name not in Path("/proc/keys").read_text()


def test_mount_and_unshare(place: Place) -> None:
    target = place.home / "mnt"
    target.mkdir()
    out = place.run(f"{place.probe} mount {target}; {place.probe} unshare; "
                    f"{place.probe} io_uring; unshare -Ur id -u 2>/dev/null || echo BLOCKED")
    _blocked(out, 4)
    assert str(target) not in Path("/proc/self/mountinfo").read_text()


def test_setuid_binary(place: Place) -> None:
    """A setuid-root copy of ``id`` (harmless) in the owner's home: runs, but not as root."""
    binary = place.home / "id-setuid"
    shutil.copy("/usr/bin/id", binary)
    os.chmod(binary, 0o4755)
    out = place.run(f"{binary} -u; {binary} -un; command sudo -n id -u 2>&1 | tail -1")
    expected_uid = "0" if place.mode.startswith("root") else str(NOBODY)
    assert out.splitlines()[0] == expected_uid, out
    assert "euid" not in out


def test_memory_bomb(place: Place) -> None:
    """Allocated memory is capped; SysV shared memory (which outlives a run) is refused."""
    out = place.run(f"{place.probe} memory {3 * 1024 ** 3}; {place.probe} sysv-shm")
    _blocked(out, 2)


def test_fork_bomb_and_nothing_left_behind(place: Place) -> None:
    """A thousand waiting children: capped (the owner's by RLIMIT_NPROC or the run's cgroup,
    a capless-root check's and a root preview's by their cgroup); whatever started is gone."""
    if place.mode == "root-preview" and cgroups.prepare() is not None:
        pytest.skip("the kernel exempts uid 0 from RLIMIT_NPROC and this machine gives a "
                    "preview no cgroup: its processes are bounded by its time and killed at "
                    f"its end (the next test): {cgroups.prepare()}")
    token = secrets.token_hex(4)
    out = place.run(f"{place.probe} forks 1000 {token}")
    assert out.startswith("BLOCKED EAGAIN"), out
    assert int(out.split()[2]) <= 300
    assert _with_token(token) == []


def test_a_process_left_behind_is_killed(place: Place) -> None:
    token = f"{secrets.randbelow(10 ** 6) + 1}.{secrets.randbelow(999) + 1}"
    out = place.run(f"(setsid sleep {token} &) ; nohup sleep {token} >/dev/null 2>&1 & "
                    "disown; echo started")
    assert out.strip() == "started"
    assert _with_token(token) == []


def _with_token(token: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if proc.name.isdigit() and token.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
    return found
